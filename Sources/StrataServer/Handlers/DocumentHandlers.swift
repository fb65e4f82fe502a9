import Foundation
import HTTPTypes
import StrataDocuments

/// One document: read, write, delete, `COPY`; design documents and `_local`
/// ones too. The engine runs the rules (validation, design documents for
/// database admins only, conflicts).
@available(macOS 14, iOS 17, tvOS 17, *)
struct DocumentHandlers: Sendable {
    let server: CouchServer

    /// `POST /{db}`: a new document, its id made here when it has none
    /// (CouchDB's answer has its Location, no ETag).
    func create(_ db: DocumentDatabase, _ r: CouchRequest) async throws -> HTTPAnswer {
        var answer = try await save(db, r, id: nil)
        answer.headers[.eTag] = nil
        return answer
    }

    /// `/{db}/{doc}`.
    func document(_ db: DocumentDatabase, _ r: CouchRequest) async throws -> HTTPAnswer {
        try await document(db, r, id: r.parameter("doc"))
    }

    /// `/{db}/_design/{ddoc}`.
    func design(_ db: DocumentDatabase, _ r: CouchRequest) async throws -> HTTPAnswer {
        try await document(db, r, id: DocumentDatabase.designID(r.parameter("ddoc")))
    }

    func document(_ db: DocumentDatabase, _ r: CouchRequest, id: String) async throws -> HTTPAnswer {
        switch r.method {
        case .put: return try await save(db, r, id: id)
        case .copy: return try await copy(db, r, id: id)
        case .delete: return try await delete(db, r, id: id)
        default: return try await read(db, r, id: id)
        }
    }

    func read(_ db: DocumentDatabase, _ r: CouchRequest, id: String) async throws -> HTTPAnswer {
        var options = try r.readOptions
        if let openRevs = r.query["open_revs"] {
            let revisions: [String]?
            if openRevs == "all" { revisions = nil } else {
                guard let list = try r.jsonQuery("open_revs")?.arrayValue else { throw DocumentError(.badRequest, "open_revs must be all or a JSON array") }
                revisions = list.compactMap(\.stringValue)
                guard revisions?.count == list.count else { throw DocumentError(.badRequest, "Invalid rev format") }
            }
            // As CouchDB answers a replicator (multipart/mixed): each
            // revision with the attachments its target lacks (all of them
            // without atts_since) following the JSON, encoded as stored.
            let multipart = r.accepts("multipart/mixed")
            if multipart { (options.attachments, options.attachmentEncodingInfo) = (true, true) }
            let asked = options
            let results = try await offload { try db.openRevisions(id: id, revisions: revisions, options: asked) }
            if multipart { return try Self.multipartMixed(results) }
            return .json(.array(results.map {
                switch $0 {
                case .ok(let doc): return .object(["ok": .object(doc)])
                case .missing(let rev): return .object(["missing": .string(rev)])
                }
            }))
        }
        let multipart = options.attachments && r.accepts("multipart/related")
        if multipart { options.attachmentEncodingInfo = true }
        let asked = options
        let doc = try await offload { try db.document(id: id, options: asked) }
        if multipart, doc["_attachments"]?.objectValue?.contains(where: { $0.value["data"] != nil }) == true {
            // CouchDB's answer to a client that takes multipart/related: the
            // attachments' bytes after the JSON, not base64 inside it.
            let (type, body) = try MultipartRelated.encode(doc, boundary: CouchServer.makeUUID())
            return HTTPAnswer(status: .ok, json: nil, raw: (type, body))
        }
        // CouchDB's ETag is the revision, for a document without meta
        // (revs_info, local_seq, conflicts) only.
        guard ["_revs_info", "_local_seq", "_conflicts", "_deleted_conflicts"].allSatisfy({ doc[$0] == nil }) else { return .json(.object(doc)) }
        let etag = "\"\(doc["_rev"]?.stringValue ?? "")\""
        if let match = r.headers[.ifNoneMatch], match == etag { return .notModified(etag: etag) }
        var headers: HTTPFields = [:]
        headers[.eTag] = etag
        return .json(.object(doc), headers: headers)
    }

    /// `PUT /{db}/{doc}` (JSON, or `multipart/related` with attachments) and
    /// `POST /{db}`.
    func save(_ db: DocumentDatabase, _ r: CouchRequest, id: String?) async throws -> HTTPAnswer {
        var doc: JSONObject
        if let type = r.headers[.contentType], type.hasPrefix("multipart/related") {
            doc = try MultipartRelated.document(body: r.body, contentType: type)
        } else {
            guard let object = try r.json().objectValue else { throw DocumentError(.badRequest, "Document must be a JSON object") }
            doc = object
        }
        if let id {
            if let given = doc["_id"]?.stringValue, given != id {
                throw DocumentError(.badRequest, "Document id must match the URL")
            }
            doc["_id"] = .string(id)
        } else if doc["_id"] == nil {
            doc["_id"] = .string(CouchServer.makeUUID())
        }
        // The revision edited, from the body, `?rev=` or `If-Match`: given
        // twice, the two must agree (CouchDB's couch_doc_from_req).
        let queryRev = r.query["rev"], headerRev = r.headers[.ifMatch].map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
        if let bodyRev = doc["_rev"]?.stringValue {
            if let queryRev, queryRev != bodyRev {
                throw DocumentError(.badRequest, "Document rev from request body and query string have different values")
            }
        } else if let queryRev, let headerRev, queryRev != headerRev {
            throw DocumentError(.badRequest, "Document rev and etag have different values")
        } else if let rev = queryRev ?? headerRev {
            doc["_rev"] = .string(rev)
        }
        let newEdits = r.query["new_edits"] != "false"
        if r.databaseName == DatabaseRegistry.usersDatabase { doc = try await server.prepareUserDocument(db, doc, r) }
        let result = try await put(db, doc, newEdits: newEdits, r)
        if r.query["batch"] == "ok" {
            // CouchDB answers a batched write before it has a revision to give.
            return .json(["ok": true, "id": .string(result.id)], status: .accepted)
        }
        return Self.written(result, status: .created, r)
    }

    func delete(_ db: DocumentDatabase, _ r: CouchRequest, id: String) async throws -> HTTPAnswer {
        guard let rev = r.query["rev"] ?? r.headers[.ifMatch].map({ $0.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }) else {
            throw DocumentError.conflict
        }
        let deletion: JSONObject = ["_id": .string(id), "_rev": .string(rev), "_deleted": true]
        return Self.written(try await put(db, deletion, newEdits: true, r), status: .ok, r)
    }

    /// `COPY /{db}/{id}` with `Destination: target[?rev=…]`: the source's
    /// body (and attachments) saved under the target id; an existing target
    /// needs its current rev, as in CouchDB.
    func copy(_ db: DocumentDatabase, _ r: CouchRequest, id: String) async throws -> HTTPAnswer {
        guard let destination = r.headers[HTTPField.Name("Destination")!], !destination.isEmpty else {
            throw DocumentError(.badRequest, "Destination header is mandatory for COPY.")
        }
        let parts = destination.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        let target = String(parts[0]).removingPercentEncoding ?? String(parts[0])
        guard !target.isEmpty else { throw DocumentError(.badRequest, "Destination header names no document.") }
        var targetRev: String?
        if parts.count == 2 {
            for pair in parts[1].split(separator: "&") where pair.hasPrefix("rev=") {
                targetRev = String(pair.dropFirst(4)).removingPercentEncoding
            }
        }
        if target.hasBytePrefix("_") && !target.hasBytePrefix(DocumentDatabase.designPrefix) {
            throw DocumentError(.illegalDocumentID, "Only reserved document ids may start with underscore.")
        }
        let source = try await offload { try db.document(id: id, options: DocumentReadOptions(rev: r.query["rev"], attachments: true)) }
        var copy = JSONObject(source.pairs.filter { !$0.key.hasBytePrefix("_") || $0.key == "_attachments" })
        copy["_id"] = .string(target)
        if let targetRev { copy["_rev"] = .string(targetRev) }
        if var attachments = copy["_attachments"]?.objectValue {
            for (name, value) in attachments {
                guard var o = value.objectValue else { continue }
                for key in ["revpos", "digest", "length", "stub"] { o[key] = nil }
                attachments[name] = .object(o)
            }
            copy["_attachments"] = .object(attachments)
        }
        return Self.written(try await put(db, copy, newEdits: true, r), status: .created, r)
    }

    /// One document write, group-committed unless the server says not
    /// (the engine runs the design documents' validation).
    func put(_ db: DocumentDatabase, _ document: JSONObject, newEdits: Bool, _ r: CouchRequest) async throws -> DocumentWriteResult {
        let context = r.userContext
        if server.groupCommit {
            return try await db.commit(document, newEdits: newEdits, userContext: context)
        }
        return try await offload { try db.put(document, newEdits: newEdits, userContext: context) }
    }

    /// CouchDB's answer to a write: the id and revision, the revision as
    /// ETag, and the document's absolute URL as `Location`.
    static func written(_ result: DocumentWriteResult, status: HTTPResponse.Status, _ r: CouchRequest, attachment: String? = nil) -> HTTPAnswer {
        var headers: HTTPFields = [:]
        headers[.eTag] = "\"\(result.rev)\""
        var segments = [r.databaseName] + DocumentDatabase.pathSegments(ofID: result.id)
        if let attachment { segments += attachment.split(separator: "/", omittingEmptySubsequences: false).map(String.init) }
        headers[.location] = r.location(of: segments)
        return .json(["ok": true, "id": .string(result.id), "rev": .string(result.rev)], status: status, headers: headers)
    }

    /// `/{db}/_local/{id}`: documents that never replicate (checkpoints).
    func local(_ db: DocumentDatabase, _ r: CouchRequest) async throws -> HTTPAnswer {
        let id = "_local/" + r.parameter("id")
        switch r.method {
        case .put:
            var doc = try r.object()
            doc["_id"] = .string(id)
            let final = doc
            let result = try await offload { try db.putLocal(final) }
            return Self.written(result, status: .created, r)
        case .delete:
            try await offload { try db.deleteLocal(id: id) }
            return .json(["ok": true, "id": .string(id), "rev": "0-0"])
        default:
            guard let document = try await offload({ try db.localDocument(id: id) }) else { throw DocumentError.missing }
            var headers: HTTPFields = [:]
            if let rev = document["_rev"]?.stringValue { headers[.eTag] = "\"\(rev)\"" }
            return .json(.object(document), headers: headers)
        }
    }

    /// `open_revs` as `multipart/mixed`, a part a revision (a revision with
    /// attachments to send is itself `multipart/related`), laid out as
    /// CouchDB's `send_docs_multipart` writes it.
    static func multipartMixed(_ results: [OpenRevision]) throws -> HTTPAnswer {
        let outer = CouchServer.makeUUID()
        var body = Data("--\(outer)".utf8)
        for result in results {
            switch result {
            case .ok(let doc):
                let (type, part) = try MultipartRelated.encode(doc, boundary: CouchServer.makeUUID())
                body += Data("\r\nContent-Type: \(type)\r\n\r\n".utf8)
                body += part
            case .missing(let rev):
                body += Data("\r\nContent-Type: application/json; error=\"true\"\r\n\r\n".utf8)
                body += Data(JSON.object(["missing": .string(rev)]).text.utf8)
            }
            body += Data("\r\n--\(outer)".utf8)
        }
        body += Data("--".utf8)
        return HTTPAnswer(status: .ok, json: nil, raw: ("multipart/mixed; boundary=\"\(outer)\"", body))
    }
}
