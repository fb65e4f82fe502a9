import Foundation
import HTTPTypes
import StrataDocuments

/// Many documents at once: `_all_docs`, `_design_docs`, `_bulk_docs`,
/// `_bulk_get` and `_revs_diff`.
@available(macOS 14, iOS 17, tvOS 17, *)
struct BulkHandlers: Sendable {
    let server: CouchServer

    func allDocuments(_ db: DocumentDatabase, _ r: CouchRequest) async throws -> HTTPAnswer {
        try r.checkBooleans(CouchRequest.listingBooleans)
        var options = AllDocumentsOptions()
        options.includeDocs = r.flag("include_docs")
        options.conflicts = r.flag("conflicts")
        options.descending = r.flag("descending")
        options.inclusiveEnd = r.query["inclusive_end"] != "false"
        options.limit = try r.int("limit")
        options.skip = try r.int("skip") ?? 0
        options.startKey = try (r.jsonQuery("startkey") ?? r.jsonQuery("start_key"))?.stringValue
        options.endKey = try (r.jsonQuery("endkey") ?? r.jsonQuery("end_key"))?.stringValue
        if let key = try r.jsonQuery("key")?.stringValue { options.keys = [key] }
        if let keys = try r.jsonQuery("keys") {
            guard let list = keys.arrayValue else { throw DocumentError(.badRequest, "`keys` parameter must be an array.") }
            options.keys = list.compactMap(\.stringValue)
        }
        if r.method == .post {
            let body = try r.object()
            if let keys = body["keys"] {
                guard let list = keys.arrayValue else { throw DocumentError(.badRequest, "`keys` member must be an array.") }
                options.keys = list.compactMap(\.stringValue)
            }
            if let b = body["include_docs"]?.boolValue { options.includeDocs = b }
            if let n = body["limit"]?.intValue { options.limit = n }
            if let n = body["skip"]?.intValue { options.skip = n }
            if let s = body["startkey"]?.stringValue ?? body["start_key"]?.stringValue { options.startKey = s }
            if let s = body["endkey"]?.stringValue ?? body["end_key"]?.stringValue { options.endKey = s }
        }
        let final = options
        let (result, seq) = try await offload { (try db.allDocuments(final), try db.updateSequence()) }
        var o: JSONObject = ["total_rows": .int(result.totalRows), "offset": result.offset.map(JSON.int) ?? .null, "rows": .array(result.rows)]
        if r.flag("update_seq") { o["update_seq"] = seq.json }
        return .json(.object(o))
    }

    /// `_design_docs`: `_all_docs` over the design documents' ids.
    func designDocuments(_ db: DocumentDatabase, _ r: CouchRequest) async throws -> HTTPAnswer {
        var q = r
        q.query["startkey"] = q.query["startkey"] ?? JSON.string(DocumentDatabase.designPrefix).text
        q.query["endkey"] = q.query["endkey"] ?? "\"_design0\""
        return try await allDocuments(db, q)
    }

    func write(_ db: DocumentDatabase, _ r: CouchRequest) async throws -> HTTPAnswer {
        let body = try r.object()
        guard let docs = body["docs"]?.arrayValue else { throw DocumentError(.badRequest, "POST body must include `docs` parameter.") }
        var objects = try docs.map { d -> JSONObject in
            guard let o = d.objectValue else { throw DocumentError(.badRequest, "Document must be a JSON object") }
            return o
        }
        if r.databaseName == DatabaseRegistry.usersDatabase {
            for i in objects.indices { objects[i] = try await server.prepareUserDocument(db, objects[i], r) }
        }
        let newEdits = body["new_edits"]?.boolValue ?? true
        // CouchDB 3 accepts and ignores `all_or_nothing` (pycouchdb sends it):
        // each document gets its own result; validation (in the engine)
        // refuses documents one by one and the others are written.
        let final = objects
        let context = r.userContext
        let results = try await offload { try db.bulkPut(final, newEdits: newEdits, userContext: context) }
        var out: [JSON] = []
        for (doc, result) in zip(objects, results) {
            switch result {
            case .success(let w):
                if newEdits { out.append(.object(["ok": true, "id": .string(w.id), "rev": .string(w.rev)])) }
            case .failure(let e):
                out.append(.object(["id": doc["_id"] ?? .null, "error": .string(e.error), "reason": .string(e.reason)]))
            }
        }
        return .json(.array(out), status: .created)
    }

    func read(_ db: DocumentDatabase, _ r: CouchRequest) async throws -> HTTPAnswer {
        let body = try r.object()
        guard let docs = body["docs"]?.arrayValue else { throw DocumentError(.badRequest, "Missing JSON list of 'docs'.") }
        let options = DocumentReadOptions(revs: r.flag("revs"), attachments: r.flag("attachments"), latest: r.flag("latest"))
        var requests: [(id: String, revisions: [String]?)] = []
        for spec in docs {
            guard spec.objectValue != nil else { throw DocumentError(.badRequest, "Document must be a JSON object") }
            requests.append((spec["id"]?.stringValue ?? "", spec["rev"]?.stringValue.map { [$0] }))
        }
        let wanted = requests
        // Those with a rev in one read; those without (the winner) one by one.
        let read = try await offload { try db.openRevisions(wanted.filter { $0.revisions != nil }, options: options) }
        var withRev = read.makeIterator()
        var results: [JSON] = []
        results.reserveCapacity(requests.count)
        for (id, revisions) in requests {
            var answers: [JSON] = []
            let rev = revisions?.first
            let outcome: Result<[OpenRevision], DocumentError>
            if revisions != nil {
                outcome = withRev.next()!
            } else {
                var o = options
                o.latest = false
                let winner = o
                do {
                    outcome = .success([.ok(try await offload { try db.document(id: id, options: winner) })])
                } catch let e as DocumentError {
                    outcome = .failure(e)
                }
            }
            switch outcome {
            case .success(let revisions):
                for result in revisions {
                    switch result {
                    case .ok(let doc): answers.append(.object(["ok": .object(doc)]))
                    case .missing(let missing): answers.append(.object(["error": .object(["id": .string(id), "rev": .string(missing), "error": "not_found", "reason": "missing"])]))
                    }
                }
            case .failure(let e):
                answers.append(.object(["error": .object(["id": .string(id), "rev": .string(rev ?? "undefined"), "error": .string(e.error), "reason": .string(e.reason)])]))
            }
            results.append(.object(["id": .string(id), "docs": .array(answers)]))
        }
        return .json(["results": .array(results)])
    }

    func revisionsDiff(_ db: DocumentDatabase, _ r: CouchRequest) async throws -> HTTPAnswer {
        let body = try r.object()
        var request: [String: [String]] = [:]
        for (id, revs) in body {
            guard let list = revs.arrayValue else { throw DocumentError(.badRequest, "revs must be a list") }
            request[id] = list.compactMap(\.stringValue)
        }
        let final = request
        let diff = try await offload { try db.revisionsDiff(final) }
        var out: [(key: String, value: JSON)] = []
        for (id, _) in body {
            guard let d = diff[id] else { continue }
            var o: JSONObject = ["missing": .array(d.missing.map(JSON.string))]
            if !d.possibleAncestors.isEmpty { o["possible_ancestors"] = .array(d.possibleAncestors.map(JSON.string)) }
            out.append((id, .object(o)))
        }
        return .json(.object(JSONObject(out)))
    }
}
