import Foundation
import HTTPTypes
import Hummingbird
import StrataDocuments

/// Many documents at once: `_all_docs`, `_design_docs`, `_bulk_docs`,
/// `_bulk_get` and `_revs_diff`.
@available(macOS 14, iOS 17, tvOS 17, *)
struct BulkHandlers: Sendable {
    let server: CouchServer

    func allDocuments(_ db: DocumentDatabase, _ r: CouchRequest) async throws -> HTTPAnswer {
        try await listing(db, r, .all)
    }

    /// `_design_docs`: the design documents, counted alone.
    func designDocuments(_ db: DocumentDatabase, _ r: CouchRequest) async throws -> HTTPAnswer {
        try await listing(db, r, .design)
    }

    /// `_local_docs`: the documents that never replicate (checkpoints).
    func localDocuments(_ db: DocumentDatabase, _ r: CouchRequest) async throws -> HTTPAnswer {
        try await listing(db, r, .local)
    }

    /// A listing of ids as CouchDB answers it: `key` is a range of one id
    /// (no row when it is missing), `keys` a row per id in order (an error
    /// row for a missing one, and `offset` null).
    func listing(_ db: DocumentDatabase, _ r: CouchRequest, _ namespace: AllDocumentsNamespace) async throws -> HTTPAnswer {
        try r.checkBooleans(CouchRequest.listingBooleans)
        var parameters: [String: JSON] = [:]
        for name in ["key", "keys", "startkey", "start_key", "endkey", "end_key"] { parameters[name] = try r.jsonQuery(name) }
        for name in ["include_docs", "descending", "inclusive_end", "conflicts", "update_seq"] where r.query[name] != nil {
            parameters[name] = .bool(r.flag(name))
        }
        for name in ["limit", "skip"] { parameters[name] = try r.int(name).map(JSON.int) }
        if r.method == .post {
            for (name, value) in try r.object() { parameters[name] = value }
        }
        // Streamed as CouchDB streams it, a page at a time: a listing of a
        // million documents costs the memory of one page. Each page goes on
        // from the last id the one before answered.
        let options = try Self.listingOptions(parameters, namespace)
        let limit = options.limit, pageSize = Self.pageSize
        var first = options
        if options.keys == nil { first.limit = min(limit ?? .max, pageSize) }
        let page = first
        let (result, seq) = try await offload { (try db.allDocuments(page), try db.updateSequence()) }
        var head = "{\"total_rows\":" + (result.totalRows.map(JSON.int) ?? .null).text + ",\"offset\":" + (result.offset.map(JSON.int) ?? .null).text
        if parameters["update_seq"]?.boolValue == true { head += ",\"update_seq\":" + seq.json.text }
        head += ",\"rows\":["
        if r.method == .head { return HTTPAnswer(status: .ok, json: nil, stream: ResponseBody()) }
        return .streamedRows(head: head, first: result.rows, tail: { "\r\n]}" }) { last, sent in
            guard options.keys == nil, last.count == pageSize, sent < limit ?? .max, let id = last.last?["id"]?.stringValue else { return [] }
            var next = options
            (next.startKey, next.skip, next.limit, next.countsRows) = (id, 1, min(pageSize, (limit ?? .max) - sent), false)
            let page = next
            return try await offload { try db.allDocuments(page) }.rows
        }
    }

    /// The rows a page of a streamed listing holds.
    static let pageSize = 1000

    /// `POST /{db}/_all_docs/queries {"queries": […]}`: one listing per
    /// query, each with its own parameters.
    func allDocumentsQueries(_ db: DocumentDatabase, _ r: CouchRequest) async throws -> HTTPAnswer {
        var results: [JSON] = []
        for parameters in try CouchRequest.queries(r.object()) { results.append(try await listing(db, parameters, .all)) }
        return .json(["results": .array(results)])
    }

    func listing(_ db: DocumentDatabase, _ parameters: [String: JSON], _ namespace: AllDocumentsNamespace) async throws -> JSON {
        let final = try Self.listingOptions(parameters, namespace)
        let (result, seq) = try await offload { (try db.allDocuments(final), try db.updateSequence()) }
        var o: JSONObject = ["total_rows": result.totalRows.map(JSON.int) ?? .null, "offset": result.offset.map(JSON.int) ?? .null, "rows": .array(result.rows)]
        if parameters["update_seq"]?.boolValue == true { o["update_seq"] = seq.json }
        return .object(o)
    }

    /// The options a listing's parameters name.
    static func listingOptions(_ parameters: [String: JSON], _ namespace: AllDocumentsNamespace) throws -> AllDocumentsOptions {
        func id(_ name: String, _ alias: String) throws -> String? {
            guard let value = parameters[name] ?? parameters[alias] else { return nil }
            guard let id = value.stringValue else { throw DocumentError(.queryParseError, "`\(name)` must be a document id (a string).") }
            return id
        }
        var options = AllDocumentsOptions()
        options.namespace = namespace
        options.includeDocs = parameters["include_docs"]?.boolValue ?? false
        options.conflicts = parameters["conflicts"]?.boolValue ?? false
        options.descending = parameters["descending"]?.boolValue ?? false
        options.inclusiveEnd = parameters["inclusive_end"]?.boolValue ?? true
        options.limit = parameters["limit"]?.intValue
        options.skip = parameters["skip"]?.intValue ?? 0
        options.startKey = try id("startkey", "start_key")
        options.endKey = try id("endkey", "end_key")
        if let key = try id("key", "key") {
            (options.startKey, options.endKey, options.inclusiveEnd) = (key, key, true)
        }
        if let keys = parameters["keys"] {
            guard let list = keys.arrayValue else { throw DocumentError(.badRequest, "`keys` member must be an array.") }
            options.keys = list.compactMap(\.stringValue)
        }
        return options
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
        guard let newEdits = body["new_edits"].map({ $0.boolValue }) ?? true else {
            throw DocumentError(.badRequest, "`new_edits` parameter must be a boolean.")
        }
        // A document of the wrong shape refuses the whole batch (the engine
        // checks them all before it writes any).
        for document in objects { try DocumentDatabase.checkStructure(document) }
        if newEdits, body["all_or_nothing"] == .bool(true) {
            // CouchDB 3 writes nothing and says so for every document.
            return .json(.array(objects.map { document in
                .object(["id": document["_id"] ?? "", "rev": document["_rev"] ?? "0-", "error": "not_implemented",
                         "reason": "all_or_nothing is not supported"])
            }), status: .expectationFailed)
        }
        // Validation (in the engine) refuses documents one by one and the
        // others are written, each with its own result.
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

    /// `POST /{db}/_missing_revs`: the revisions of each document this
    /// database lacks (`_revs_diff` without its possible ancestors).
    func missingRevisions(_ db: DocumentDatabase, _ r: CouchRequest) async throws -> HTTPAnswer {
        let request = try Self.revisionsRequest(r.object())
        let diff = try await offload { try db.revisionsDiff(request) }
        let missing = diff.sorted { $0.id < $1.id }.map { (key: $0.id, value: JSON.array($0.missing.map(JSON.string))) }
        return .json(["missing_revs": .object(JSONObject(missing))])
    }

    /// `{"id": ["rev", …], …}`, as `_revs_diff`, `_missing_revs` and
    /// `_purge` take it.
    /// Ids in the body's order, kept apart by their bytes.
    static func revisionsRequest(_ body: JSONObject) throws -> [(id: String, revisions: [String])] {
        try body.map { id, revs in
            guard let list = revs.arrayValue else { throw DocumentError(.badRequest, "revs must be a list") }
            return (id, list.compactMap(\.stringValue))
        }
    }

    func revisionsDiff(_ db: DocumentDatabase, _ r: CouchRequest) async throws -> HTTPAnswer {
        let body = try r.object()
        let request = try Self.revisionsRequest(body)
        let diff = try await offload { try db.revisionsDiff(request) }
        let out = diff.map { d -> (key: String, value: JSON) in
            var o: JSONObject = ["missing": .array(d.missing.map(JSON.string))]
            if !d.possibleAncestors.isEmpty { o["possible_ancestors"] = .array(d.possibleAncestors.map(JSON.string)) }
            return (d.id, .object(o))
        }
        return .json(.object(JSONObject(out)))
    }
}
