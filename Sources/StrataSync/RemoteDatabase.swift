import Foundation
import Strata
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import StrataDocuments

/// A database on a CouchDB-protocol server, with the calls of CouchDB's
/// HTTP API as Swift methods. Documents are `JSONObject`s or `Codable`
/// values; the option and result types are the embedded store's, so code
/// moves between a local `DocumentDatabase` and a remote one unchanged.
///
/// ```swift
/// let votes = server.database("voting")
/// try await votes.createIfMissing()
/// let saved = try await votes.put(["_id": "q1", "question": "Tabs or spaces?"])
/// let question = try await votes.document(id: "q1")
/// ```
public struct RemoteDatabase: DocumentStore {
    /// The server.
    public let client: CouchClient
    /// The database name.
    public let name: String

    /// Whether `_bulk_get` answered (see ``openRevisions(_:options:)``).
    let bulkGetWorks = Locked(true)

    /// The database's URL, without credentials.
    public var url: URL { client.url([name]) }

    /// Path segments of a document: `_design/x` and `_local/x` keep their slash.
    func segments(_ id: String) -> [String] {
        for prefix in [DocumentDatabase.designPrefix, "_local/"] where id.hasPrefix(prefix) {
            return [name, String(prefix.dropLast()), String(id.dropFirst(prefix.count))]
        }
        return [name, id]
    }

    // MARK: - The database

    /// `GET /{db}`: `doc_count`, `update_seq`, sizes.
    public func info() async throws -> DocumentDatabaseInfo {
        DocumentDatabaseInfo(json: try await client.json("GET", [name]))
    }

    public var location: String { url.absoluteString }

    /// The server's uuid and the database's URL.
    public func identity() async throws -> String {
        let uuid = try await client.serverInfo()["uuid"]?.stringValue ?? ""
        return "\(uuid)|\(url.absoluteString)"
    }

    /// Whether the database exists.
    public func exists() async throws -> Bool {
        // A GET rather than HEAD: a refusal then carries CouchDB's reason.
        let answer = try await client.sendRaw("GET", [name])
        if answer.status == 404 { return false }
        guard answer.status < 400 else { throw CouchClient.error(answer) }
        return true
    }

    /// `PUT /{db}`; throws 412 `file_exists` when it exists.
    public func create() async throws {
        _ = try await client.send("PUT", [name])
    }

    /// Creates the database unless it exists.
    public func createIfMissing() async throws {
        do { try await create() } catch let error as RemoteError where error.status == 412 {}
    }

    /// `DELETE /{db}`.
    public func delete() async throws {
        _ = try await client.send("DELETE", [name])
    }

    /// `POST /{db}/_ensure_full_commit`.
    public func ensureFullCommit() async throws {
        _ = try await client.json("POST", [name, "_ensure_full_commit"], body: .object([:]))
    }

    // MARK: - Documents

    /// `GET /{db}/{id}` with CouchDB's read options.
    public func document(id: String, options: DocumentReadOptions = DocumentReadOptions()) async throws -> JSONObject {
        try await client.json("GET", segments(id), query: Self.query(options))
    }


    /// `GET /{db}/{id}?open_revs=…`: the given revisions (nil: every leaf),
    /// each with its body or as missing.
    public func openRevisions(id: String, revisions: [String]?, options: DocumentReadOptions = DocumentReadOptions()) async throws -> [OpenRevision] {
        var query = Self.query(options)
        query.append(("open_revs", revisions.map { JSON.array($0.map(JSON.string)).text } ?? "all"))
        let answer = try await client.send("GET", segments(id), query: query)
        guard let rows = (try? JSON(parsing: answer.body))?.arrayValue else {
            throw RemoteError(status: answer.status, error: "bad_response", reason: "open_revs did not answer a JSON array")
        }
        return rows.compactMap { row in
            if let doc = row["ok"]?.objectValue { return .ok(doc) }
            if let missing = row["missing"]?.stringValue { return .missing(missing) }
            return nil
        }
    }

    /// Saves a document: `PUT /{db}/{id}`, or `POST /{db}` for a new id when
    /// the document has no `_id`. Throws 409 `conflict` on a stale `_rev`.
    @discardableResult
    public func put(_ document: JSONObject, newEdits: Bool = true) async throws -> DocumentWriteResult {
        let body = Data(JSON.object(document).text.utf8)
        let query: [(String, String)] = newEdits ? [] : [("new_edits", "false")]
        let answer: CouchClient.Answer
        if let id = document["_id"]?.stringValue {
            answer = try await client.send("PUT", segments(id), query: query, body: body)
        } else {
            answer = try await client.send("POST", [name], query: query, body: body)
        }
        return try Self.writeResult(CouchClient.object(answer.body), id: document["_id"]?.stringValue)
    }


    /// `DELETE /{db}/{id}?rev=…`: a deletion revision.
    @discardableResult
    public func delete(id: String, rev: String) async throws -> DocumentWriteResult {
        let answer = try await client.send("DELETE", segments(id), query: [("rev", rev)])
        return try Self.writeResult(CouchClient.object(answer.body), id: id)
    }

    /// `GET|POST /{db}/_all_docs` (`_design_docs`, `_local_docs` for those
    /// namespaces).
    public func allDocuments(_ options: AllDocumentsOptions = AllDocumentsOptions()) async throws -> AllDocumentsResult {
        var query: [(String, String)] = []
        if let startKey = options.startKey { query.append(("startkey", JSON.string(startKey).text)) }
        if let endKey = options.endKey { query.append(("endkey", JSON.string(endKey).text)) }
        if !options.inclusiveEnd { query.append(("inclusive_end", "false")) }
        if options.descending { query.append(("descending", "true")) }
        if let limit = options.limit { query.append(("limit", String(limit))) }
        if options.skip > 0 { query.append(("skip", String(options.skip))) }
        if options.includeDocs { query.append(("include_docs", "true")) }
        if options.conflicts { query.append(("conflicts", "true")) }
        let object: JSONObject
        let path = switch options.namespace {
        case .all: "_all_docs"
        case .design: "_design_docs"
        case .local: "_local_docs"
        }
        if let keys = options.keys {
            object = try await client.json("POST", [name, path], query: query, body: .object(["keys": .array(keys.map(JSON.string))]))
        } else {
            object = try await client.json("GET", [name, path], query: query)
        }
        return AllDocumentsResult(totalRows: object["total_rows"]?.intValue, offset: object["offset"]?.intValue,
                                  rows: object["rows"]?.arrayValue ?? [])
    }

    /// `POST /{db}/_bulk_docs`: one result per document, in order (not
    /// atomic). With `newEdits: false` the documents carry their revisions
    /// (`_rev` and `_revisions`) and only failures are answered.
    public func bulkPut(_ documents: [JSONObject], newEdits: Bool = true) async throws -> [Result<DocumentWriteResult, DocumentError>] {
        var body = JSONObject()
        body["docs"] = .array(documents.map(JSON.object))
        if !newEdits { body["new_edits"] = .bool(false) }
        let answer = try await client.send("POST", [name, "_bulk_docs"], body: Data(JSON.object(body).text.utf8))
        guard let rows = (try? JSON(parsing: answer.body))?.arrayValue else {
            throw RemoteError(status: answer.status, error: "bad_response", reason: "_bulk_docs did not answer a JSON array")
        }
        return rows.map { row in
            if let error = row["error"]?.stringValue {
                // The server's name kept; the status its kind has (a row of
                // _bulk_docs carries none).
                return .failure(DocumentError(status: DocumentError.Kind(rawValue: error)?.status ?? 500, error: error, reason: row["reason"]?.stringValue ?? error))
            }
            return .success(DocumentWriteResult(id: row["id"]?.stringValue ?? "", rev: row["rev"]?.stringValue ?? ""))
        }
    }

    /// `POST /{db}/_bulk_get`: the asked revisions (a nil rev: the winner),
    /// by id, each with its body or as missing. `revs` adds `_revisions`,
    /// `attachments` the attachments' data inline.
    public func bulkGet(_ requests: [(id: String, rev: String?)], revs: Bool = true, latest: Bool = true,
                        attachments: Bool = false) async throws -> [(id: String, docs: [OpenRevision])] {
        var query: [(String, String)] = []
        if revs { query.append(("revs", "true")) }
        if latest { query.append(("latest", "true")) }
        if attachments { query.append(("attachments", "true")) }
        let docs = requests.map { request -> JSON in
            var o: JSONObject = ["id": .string(request.id)]
            if let rev = request.rev { o["rev"] = .string(rev) }
            return .object(o)
        }
        let object = try await client.json("POST", [name, "_bulk_get"], query: query, body: .object(["docs": .array(docs)]))
        return (object["results"]?.arrayValue ?? []).map { result in
            let id = result["id"]?.stringValue ?? ""
            let docs = (result["docs"]?.arrayValue ?? []).compactMap { entry -> OpenRevision? in
                if let doc = entry["ok"]?.objectValue { return .ok(doc) }
                if let error = entry["error"] { return .missing(error["rev"]?.stringValue ?? "") }
                return nil
            }
            return (id, docs)
        }
    }

    /// Many documents' revisions in as few requests as the server allows:
    /// one `_bulk_get` when every request names its revisions and the
    /// server has `_bulk_get` (a 400, 404, 405 or 501 turns it off for
    /// this value, as PouchDB does), else one `open_revs` GET per document
    /// (`revisions == nil`: every leaf).
    public func openRevisions(_ requests: [(id: String, revisions: [String]?)],
                              options: DocumentReadOptions = DocumentReadOptions()) async throws -> [Result<[OpenRevision], DocumentError>] {
        if !requests.isEmpty, bulkGetWorks.value, requests.allSatisfy({ $0.revisions != nil }) {
            do {
                let flat = requests.flatMap { request in request.revisions!.map { (id: request.id, rev: Optional($0)) } }
                let answered = try await bulkGet(flat, revs: options.revs, latest: options.latest, attachments: options.attachments)
                // By id, compared in bytes, as the server keeps ids apart.
                var byID: [ExactString: [OpenRevision]] = [:]
                for (id, docs) in answered { byID[ExactString(id), default: []] += docs }
                return requests.map { .success(byID[ExactString($0.id)] ?? []) }
            } catch let error as RemoteError where [400, 404, 405, 501].contains(error.status) {
                bulkGetWorks.value = false
            }
        }
        var results: [Result<[OpenRevision], DocumentError>] = []
        for request in requests {
            do {
                results.append(.success(try await openRevisions(id: request.id, revisions: request.revisions, options: options)))
            } catch let error as RemoteError where error.status == 404 {
                results.append(.failure(error))
            }
        }
        return results
    }

    /// `POST /{db}/_revs_diff`: of the given revisions by id, those this
    /// database lacks, with the leaves they could descend from.
    public func revisionsDiff(_ request: [String: [String]]) async throws -> [String: (missing: [String], possibleAncestors: [String])] {
        var diff: [String: (missing: [String], possibleAncestors: [String])] = [:]
        for entry in try await revisionsDiff(request.sorted { $0.key < $1.key }.map { (id: $0.key, revisions: $0.value) }) {
            diff[entry.id] = (entry.missing, entry.possibleAncestors)
        }
        return diff
    }

    /// `POST /{db}/_revs_diff` for a list of ids, each with revisions: the
    /// ids with revisions this database lacks, as the server answers them.
    /// Ids are kept apart by their bytes, as CouchDB keeps them.
    public func revisionsDiff(_ request: [(id: String, revisions: [String])]) async throws -> [(id: String, missing: [String], possibleAncestors: [String])] {
        let merged = DocumentDatabase.mergingRevisionsByID(request)
        let body = JSONObject(merged.map { (key: $0.id, value: JSON.array($0.revisions.map(JSON.string))) })
        let object = try await client.json("POST", [name, "_revs_diff"], body: .object(body))
        return object.map { id, entry in
            (id, entry["missing"]?.arrayValue?.compactMap(\.stringValue) ?? [],
             entry["possible_ancestors"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        }
    }

    /// `POST /{db}/_find`: a Mango query.
    public func find(_ query: FindQuery) async throws -> FindResult {
        let object = try await client.json("POST", [name, "_find"], body: Self.json(query))
        return FindResult(docs: object["docs"]?.arrayValue?.compactMap(\.objectValue) ?? [],
                          bookmark: object["bookmark"]?.stringValue ?? "nil",
                          warning: object["warning"]?.stringValue,
                          executionStats: object["execution_stats"])
    }


    /// `POST /{db}/_index`: a Mango index on `fields`.
    @discardableResult
    public func createIndex(fields: [String], name indexName: String? = nil, design: String? = nil) async throws -> JSONObject {
        var index: JSONObject = ["index": .object(["fields": .array(fields.map(JSON.string))])]
        if let indexName { index["name"] = .string(indexName) }
        if let design { index["ddoc"] = .string(design) }
        return try await client.json("POST", [name, "_index"], body: .object(index))
    }

    /// `GET /{db}/_design/{design}/_view/{view}` (a POST when `keys` are given).
    public func view(design: String, view: String, options: ViewQueryOptions = ViewQueryOptions()) async throws -> ViewResult {
        var query: [(String, String)] = []
        if let key = options.key { query.append(("key", key.text)) }
        if let startKey = options.startKey { query.append(("startkey", startKey.text)) }
        if let endKey = options.endKey { query.append(("endkey", endKey.text)) }
        if let id = options.startKeyDocID { query.append(("startkey_docid", id)) }
        if let id = options.endKeyDocID { query.append(("endkey_docid", id)) }
        if !options.inclusiveEnd { query.append(("inclusive_end", "false")) }
        if options.descending { query.append(("descending", "true")) }
        if let limit = options.limit { query.append(("limit", String(limit))) }
        if options.skip > 0 { query.append(("skip", String(options.skip))) }
        if let reduce = options.reduce { query.append(("reduce", String(reduce))) }
        if options.group { query.append(("group", "true")) }
        if let level = options.groupLevel { query.append(("group_level", String(level))) }
        if options.includeDocs { query.append(("include_docs", "true")) }
        if options.conflicts { query.append(("conflicts", "true")) }
        if options.update != .yes { query.append(("update", options.update.rawValue)) }
        if options.updateSeq { query.append(("update_seq", "true")) }
        let path = [name, "_design", design, "_view", view]
        let object: JSONObject
        if let keys = options.keys {
            object = try await client.json("POST", path, query: query, body: .object(["keys": .array(keys)]))
        } else {
            object = try await client.json("GET", path, query: query)
        }
        return ViewResult(totalRows: object["total_rows"]?.intValue, offset: object["offset"]?.intValue,
                          rows: object["rows"]?.arrayValue ?? [],
                          updateSequence: object["update_seq"].flatMap { ChangeSequence($0).number })
    }

    /// `POST|PUT /{db}/_design/{design}/_update/{function}[/{id}]`: runs
    /// an update handler on the server with `request`'s body, type,
    /// query and headers.
    public func update(design: String, function: String, id: String?, request: UpdateRequest) async throws -> UpdateHandlerAnswer {
        var path = [name, "_design", design, "_update", function]
        if let id { path.append(id) }
        let answer = try await client.send(request.method, path, query: request.query.sorted { $0.key < $1.key }.map { ($0.key, $0.value) },
                                           body: request.body, contentType: request.contentType, accept: "*/*", headers: request.headers)
        var headers = answer.headers
        let contentType = headers.removeValue(forKey: "content-type") ?? "application/octet-stream"
        let documentID = headers.removeValue(forKey: "x-couch-id")
        let newRevision = headers.removeValue(forKey: "x-couch-update-newrev")
        return UpdateHandlerAnswer(status: answer.status, body: answer.body, contentType: contentType, headers: headers,
                                   documentID: documentID, newRevision: newRevision)
    }

    // MARK: - Attachments

    /// `GET /{db}/{id}/{name}`: an attachment's bytes and type.
    public func attachment(id: String, name attachment: String, rev: String? = nil) async throws -> Attachment {
        let answer = try await client.send("GET", segments(id) + [attachment], query: rev.map { [("rev", $0)] } ?? [], accept: "*/*")
        // CouchDB's attachment ETag is the digest's base64 MD5, quoted.
        let etag = answer.headers["etag"].map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
        let md5 = (etag ?? answer.headers["content-md5"]).map { "md5-" + $0 } ?? ""
        return Attachment(contentType: answer.headers["content-type"] ?? "application/octet-stream", data: answer.body,
                          digest: md5, revpos: 0)
    }

    /// `PUT /{db}/{id}/{name}?rev=…`: adds or replaces an attachment (a new
    /// document when `rev` is nil and the document does not exist).
    @discardableResult
    public func putAttachment(id: String, name attachment: String, rev: String?, contentType: String, data: Data) async throws -> DocumentWriteResult {
        let answer = try await client.send("PUT", segments(id) + [attachment], query: rev.map { [("rev", $0)] } ?? [],
                                           body: data, contentType: contentType)
        return try Self.writeResult(CouchClient.object(answer.body), id: id)
    }

    /// `DELETE /{db}/{id}/{name}?rev=…`.
    @discardableResult
    public func deleteAttachment(id: String, name attachment: String, rev: String) async throws -> DocumentWriteResult {
        let answer = try await client.send("DELETE", segments(id) + [attachment], query: [("rev", rev)])
        return try Self.writeResult(CouchClient.object(answer.body), id: id)
    }

    // MARK: - Local documents

    /// `GET /{db}/_local/{id}`; nil when there is none. `id` is given with
    /// its `_local/` prefix or without, as on a `DocumentDatabase`.
    public func localDocument(id: String) async throws -> JSONObject? {
        let answer = try await client.sendRaw("GET", [name, "_local", Self.localName(id)])
        if answer.status == 404 { return nil }
        guard answer.status < 400 else { throw CouchClient.error(answer) }
        return try CouchClient.object(answer.body)
    }

    /// `PUT /{db}/_local/{id}`: a document that is never replicated (`id`
    /// with its prefix or without).
    @discardableResult
    public func putLocal(id: String, _ document: JSONObject) async throws -> DocumentWriteResult {
        let answer = try await client.send("PUT", [name, "_local", Self.localName(id)], body: Data(JSON.object(document).text.utf8))
        return try Self.writeResult(CouchClient.object(answer.body), id: "_local/" + Self.localName(id))
    }

    /// `DELETE /{db}/_local/{id}` (`id` with its prefix or without).
    public func deleteLocal(id: String) async throws {
        _ = try await client.send("DELETE", [name, "_local", Self.localName(id)])
    }

    /// A local document's id without its `_local/` prefix, as the URL has it.
    static func localName(_ id: String) -> String {
        id.hasBytePrefix("_local/") ? String(Substring(id.utf8.dropFirst("_local/".utf8.count))) : id
    }

    // MARK: - Security

    /// `GET /{db}/_security`: the database's admins and members (`{}` when
    /// none were set).
    public func security() async throws -> JSONObject {
        try CouchClient.object(try await client.send("GET", [name, "_security"]).body)
    }

    /// `PUT /{db}/_security`: replaces the admins and members (a database
    /// admin's right).
    public func setSecurity(_ security: JSONObject) async throws {
        _ = try await client.send("PUT", [name, "_security"], body: Data(JSON.object(security).text.utf8))
    }

    // MARK: - Encoding

    static func query(_ options: DocumentReadOptions) -> [(String, String)] {
        var query: [(String, String)] = []
        if let rev = options.rev { query.append(("rev", rev)) }
        if options.revs { query.append(("revs", "true")) }
        if options.revsInfo { query.append(("revs_info", "true")) }
        if options.conflicts { query.append(("conflicts", "true")) }
        if options.deletedConflicts { query.append(("deleted_conflicts", "true")) }
        if options.attachments { query.append(("attachments", "true")) }
        if options.localSequence { query.append(("local_seq", "true")) }
        if options.latest { query.append(("latest", "true")) }
        return query
    }

    static func writeResult(_ object: JSONObject, id: String?) throws -> DocumentWriteResult {
        guard let rev = object["rev"]?.stringValue else {
            throw RemoteError(status: 0, error: "bad_response", reason: "the server answered no rev: \(JSON.object(object).text)")
        }
        return DocumentWriteResult(id: object["id"]?.stringValue ?? id ?? "", rev: rev)
    }

    static func json(_ query: FindQuery) -> JSON {
        var o: JSONObject = ["selector": query.selector]
        if let fields = query.fields { o["fields"] = .array(fields.map(JSON.string)) }
        if !query.sort.isEmpty {
            o["sort"] = .array(query.sort.map { .object([$0.field: .string($0.ascending ? "asc" : "desc")]) })
        }
        o["limit"] = .int(query.limit)
        if query.skip > 0 { o["skip"] = .int(query.skip) }
        if let bookmark = query.bookmark { o["bookmark"] = .string(bookmark) }
        if let index = query.useIndex { o["use_index"] = .string(index) }
        if query.executionStats { o["execution_stats"] = .bool(true) }
        return .object(o)
    }
}
