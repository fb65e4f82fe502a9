import Foundation
import Hummingbird
import HTTPTypes
import StrataDocuments
import StrataQueryServers

/// A design document's functions: views, `_info`, and the update, show
/// and list functions. The engine chooses each function's runtime (Swift
/// registered under the design's name, or the stored JavaScript).
@available(macOS 14, iOS 17, tvOS 17, *)
struct DesignHandlers: Sendable {
    let server: CouchServer

    /// The view group of a design, as the engine builds it (registered
    /// Swift functions, or the stored design document's JavaScript).
    func viewGroup(_ db: DocumentDatabase, design id: String) async throws -> ViewGroup {
        try await offload { try db.viewGroup(design: id) }
    }

    /// CouchDB's view query parameters, from the query string and, for a
    /// POST, the body (`keys` and any other parameter).
    func viewOptions(_ r: CouchRequest) throws -> ViewQueryOptions {
        var parameters: [String: JSON] = [:]
        for (key, text) in r.query {
            // JSON-valued parameters; the others are plain words and numbers.
            if ["key", "keys", "startkey", "start_key", "endkey", "end_key"].contains(key) {
                do { parameters[key] = try JSON(parsing: text) } catch {
                    throw DocumentError(.badRequest, "invalid_json")
                }
            } else {
                parameters[key] = .string(text)
            }
        }
        if r.method == .post, !r.body.isEmpty {
            guard let body = try r.json().objectValue else { throw DocumentError(.badRequest, "Request body must be a JSON object") }
            for (key, value) in body { parameters[key] = value }
        }
        return try Self.viewOptions(parameters)
    }

    /// The options named by view query parameters (JSON values, or the
    /// query string's words).
    static func viewOptions(_ parameters: [String: JSON]) throws -> ViewQueryOptions {
        func flag(_ name: String) throws -> Bool? {
            guard let value = parameters[name] else { return nil }
            switch value {
            case .bool(let b): return b
            case .string("true"): return true
            case .string("false"): return false
            default: throw DocumentError(.queryParseError, "Invalid boolean parameter: \"\(value.stringValue ?? value.text)\"")
            }
        }
        func integer(_ name: String) throws -> Int? {
            guard let value = parameters[name] else { return nil }
            let n = value.intValue ?? value.stringValue.flatMap { Int($0) }
            guard let n, n >= 0 else {
                throw DocumentError(.queryParseError, "Invalid value for \(name == "limit" || name == "skip" ? "positive " : "")integer: \"\(value.stringValue ?? value.text)\"")
            }
            return n
        }
        func string(_ names: String...) -> String? {
            for name in names { if let s = parameters[name]?.stringValue { return s } }
            return nil
        }
        var options = ViewQueryOptions()
        options.key = parameters["key"]
        if let keys = parameters["keys"] {
            guard let list = keys.arrayValue else { throw DocumentError(.badRequest, "`keys` member must be an array.") }
            options.keys = list
        }
        options.startKey = parameters["startkey"] ?? parameters["start_key"]
        options.endKey = parameters["endkey"] ?? parameters["end_key"]
        options.startKeyDocID = string("startkey_docid", "start_key_doc_id")
        options.endKeyDocID = string("endkey_docid", "end_key_doc_id")
        options.inclusiveEnd = try flag("inclusive_end") ?? true
        options.descending = try flag("descending") ?? false
        options.limit = try integer("limit")
        options.skip = try integer("skip") ?? 0
        options.reduce = try flag("reduce")
        options.group = try flag("group") ?? false
        options.groupLevel = try integer("group_level")
        options.includeDocs = try flag("include_docs") ?? false
        options.conflicts = try flag("conflicts") ?? false
        options.updateSeq = try flag("update_seq") ?? false
        switch string("update") ?? parameters["update"].map(\.text) {
        case nil, "true": break
        case "false": options.update = .no
        case "lazy": options.update = .lazy
        case let other?: throw DocumentError(.queryParseError, "Invalid value for `update`: \"\(other)\"")
        }
        switch string("stale") {
        case nil: break
        case "ok": options.update = .no
        case "update_after": options.update = .lazy
        case let other?: throw DocumentError(.queryParseError, "Invalid value for `stale`: \"\(other)\"")
        }
        return options
    }

    /// The design document the route names.
    func design(_ r: CouchRequest) -> String { DocumentDatabase.designID(r.parameter("ddoc")) }

    /// `GET|POST /{db}/_design/{ddoc}/_view/{view}`, streamed as CouchDB
    /// streams it: a map view a page at a time, each going on from the
    /// last key and document id the one before answered.
    func view(_ db: DocumentDatabase, _ r: CouchRequest) async throws -> HTTPAnswer {
        var options = try viewOptions(r)
        let group = try await viewGroup(db, design: design(r))
        let view = r.parameter("view")
        guard group.views.contains(view) else { throw DocumentError(.notFound, "missing_named_view") }
        let reducing = options.reduce ?? (group.reduces[view] != nil)
        let pages = !reducing && options.keys == nil
        if pages, let key = options.key { (options.key, options.startKey, options.endKey, options.inclusiveEnd) = (nil, key, key, true) }
        let limit = options.limit, pageSize = BulkHandlers.pageSize
        var first = options
        if pages { first.limit = min(limit ?? .max, pageSize) }
        let page = first
        let result = try await offload { try db.queryView(group, view: view, options: page) }
        var meta = result.json.objectValue ?? JSONObject()
        meta["rows"] = nil
        var head = meta.isEmpty ? "{" : String(JSON.object(meta).text.dropLast()) + ","
        head += "\"rows\":["
        if r.method == .head { return HTTPAnswer(status: .ok, json: nil, stream: ResponseBody()) }
        // Later pages read the index as it is, as the first page left it.
        var rest = options
        (rest.update, rest.countsRows) = (.no, false)
        let following = rest
        return .streamedRows(head: head, first: result.rows, tail: { "\r\n]}" }) { last, sent in
            guard pages, last.count == pageSize, sent < limit ?? .max, let end = last.last, let key = end["key"], let id = end["id"]?.stringValue else { return [] }
            var next = following
            // Rows of the same key and document as the last one were sent.
            let same = last.reversed().prefix { $0["key"] == key && $0["id"]?.stringValue == id }.count
            (next.startKey, next.startKeyDocID, next.skip, next.limit) = (key, id, same, min(pageSize, (limit ?? .max) - sent))
            let page = next
            return try await offload { try db.queryView(group, view: view, options: page) }.rows
        }
    }

    /// `POST /{db}/_design/{ddoc}/_view/{view}/queries {"queries": […]}`:
    /// one result per query, each with its own parameters.
    func viewQueries(_ db: DocumentDatabase, _ r: CouchRequest) async throws -> HTTPAnswer {
        let queries = try CouchRequest.queries(r.object())
        let group = try await viewGroup(db, design: design(r))
        let view = r.parameter("view")
        guard group.views.contains(view) else { throw DocumentError(.notFound, "missing_named_view") }
        var results: [JSON] = []
        for parameters in queries {
            let options = try Self.viewOptions(parameters)
            results.append(try await offload { try db.queryView(group, view: view, options: options) }.json)
        }
        return .json(["results": .array(results)])
    }

    /// `GET /{db}/_design/{ddoc}/_info`.
    func info(_ db: DocumentDatabase, _ r: CouchRequest) async throws -> HTTPAnswer {
        let design = design(r)
        let group = try await viewGroup(db, design: design)
        let (info, seq) = try await offload { (try db.viewGroupInfo(design: design), try db.updateCount()) }
        let current = info?.signature == group.signature ? info : nil
        let pending = seq - (current?.updateSequence ?? 0)
        return HTTPAnswer(status: .ok, json: .object([
            "name": .string(DocumentDatabase.designName(design)),
            "view_index": .object([
                "updates_pending": .object(["minimum": .int(pending), "preferred": .int(pending), "total": .int(pending)]),
                "waiting_commit": .bool(false),
                "waiting_clients": .int(0),
                "updater_running": .bool(false),
                "update_seq": .int(current?.updateSequence ?? 0),
                "sizes": .object(["file": .int(0), "external": .int(0), "active": .int(0)]),
                "signature": .string(group.signature),
                "purge_seq": .int(0),
                "language": .string("javascript"),
                "compact_running": .bool(false),
                "collator_versions": .array([]),
            ]),
        ]))
    }

    /// The design document `id` and the JavaScript query servers, for a
    /// function of kind `kind` (`shows`, `lists`) named `function`.
    func designFunction(_ db: DocumentDatabase, _ id: String, _ kind: String, _ function: String) async throws -> (JSONObject, QueryServers) {
        let ddoc: JSONObject = try await offload {
            do { return try db.document(id: id) } catch let error as DocumentError where error.kind == .notFound {
                throw DocumentError(.notFound, "missing")
            }
        }
        guard ddoc[kind]?[function] != nil else { throw DocumentError(.notFound, "missing json key: \(function)") }
        guard let queryServers = server.queryServers else {
            throw DocumentError.noQueryServer("design functions")
        }
        return (ddoc, queryServers)
    }

    /// `GET|POST /{db}/_design/{ddoc}/_show/{func}[/{docid}]` (deprecated in
    /// CouchDB 3, still served): the function renders a document (or null).
    func show(_ db: DocumentDatabase, _ r: CouchRequest) async throws -> HTTPAnswer {
        let function = r.parameter("function")
        let (ddoc, queryServers) = try await designFunction(db, design(r), "shows", function)
        let docID = r.parameters["id"]
        // With `_revisions`, as CouchDB hands a show its document.
        let doc: JSON = try await offload { try docID.flatMap { try db.documentForFunction(id: $0) }.map(JSON.object) ?? .null }
        // CouchDB's ETag of a show: the design document's and the
        // document's revisions, what the client accepts and who it is.
        let tagged: [JSON] = [ddoc["_rev"] ?? .null, doc["_rev"] ?? .null, .string(r.headers[.accept] ?? ""), .array(r.user.roles.map(JSON.string)), .string(r.rawQuery)]
        let etag = "\"" + MD5.hex(Array(JSON.array(tagged).text.utf8)) + "\""
        if r.headers[.ifNoneMatch] == etag { return .notModified(etag: etag) }
        let request = try await r.functionRequest(db, docID: docID)
        let answer = try await queryServers.call(tenant: db.instanceID, ddoc, ["shows", function], [doc, request])
        guard let parts = answer.arrayValue, parts.count == 2, parts[0] == .string("resp") else {
            throw DocumentError(status: 500, error: "render_error", reason: "the show function's answer is not a response")
        }
        var shown = try Self.answer(UpdateHandlerAnswer(rendering: parts[1], written: nil))
        if shown.headers[.eTag] == nil { shown.headers[.eTag] = etag }
        return shown
    }

    /// `GET|POST /{db}/_design/{ddoc}/_list/{func}/{view}` or
    /// `…/_list/{func}/{other-ddoc}/{view}` (deprecated in CouchDB 3, still
    /// served): the function renders the view's rows, read with `getRow()`.
    func list(_ db: DocumentDatabase, _ r: CouchRequest) async throws -> HTTPAnswer {
        let function = r.parameter("function")
        let (ddoc, queryServers) = try await designFunction(db, design(r), "lists", function)
        let viewDesign = r.parameters["other"].map(DocumentDatabase.designID) ?? design(r)
        let view = r.parameter("view")
        let options = try viewOptions(r)
        let group = try await viewGroup(db, design: viewDesign)
        guard group.views.contains(view) else { throw DocumentError(.notFound, "missing_named_view") }
        let result = try await offload { [options] in try db.queryView(group, view: view, options: options) }
        var head = JSONObject()
        if let total = result.totalRows { head["total_rows"] = .int(total) }
        if let offset = result.offset { head["offset"] = .int(offset) }
        let request = try await r.functionRequest(db, docID: nil)
        let answer = try await queryServers.call(tenant: db.instanceID, ddoc, ["lists", function], [.object(head), request, .array(result.rows)])
        guard let parts = answer.arrayValue, parts.count == 3, parts[0] == .string("list") else {
            throw DocumentError(status: 500, error: "render_error", reason: "the list function's answer is not a response")
        }
        var response = parts[1].objectValue ?? JSONObject()
        response["body"] = parts[2]
        if response["headers"]?["Content-Type"] == nil {
            var headers = response["headers"]?.objectValue ?? JSONObject()
            headers["Content-Type"] = .string("application/json")
            response["headers"] = .object(headers)
        }
        return try Self.answer(UpdateHandlerAnswer(rendering: .object(response), written: nil))
    }

    /// `POST|PUT /{db}/_design/{ddoc}/_update/{function}[/{docid}]`: the
    /// function gets the document (or null) and CouchDB's request object,
    /// and answers `[doc, response]`; a returned document is saved.
    ///
    /// The engine runs calls on one document in batches (one transaction
    /// and one commit, each call answered with its own revision, so none
    /// fails with 409 where CouchDB would refuse all but one), chooses the
    /// function (Swift or the stored JavaScript), validates what it answers
    /// and refuses a design document from a non-admin.
    ///
    /// Any method but `GET` calls the function, as CouchDB's do (its
    /// `render.js` refuses `GET` alone).
    func update(_ db: DocumentDatabase, _ r: CouchRequest) async throws -> HTTPAnswer {
        if r.method == .get || r.method == .head {
            throw DocumentError(.methodNotAllowed, "Update functions do not allow GET")
        }
        let docID = r.parameters["id"]
        let request = try await r.functionRequest(db, docID: docID)
        let outcome = try await db.runUpdate(design: r.parameter("ddoc"), function: r.parameter("function"), id: docID,
                                             request: request, userContext: r.userContext)
        return try Self.answer(UpdateHandlerAnswer(rendering: outcome.response, written: outcome.written))
    }

    /// `_rewrite` went with CouchDB 3's deprecations; Strata never served it.
    func rewrite(_ db: DocumentDatabase, _ r: CouchRequest) async throws -> HTTPAnswer {
        throw DocumentError(.notFound, "design document functions (_rewrite) are not served")
    }

    /// A design function's answer, rendered by the engine
    /// (`UpdateHandlerAnswer(rendering:written:)`), as HTTP. Everything the
    /// function answers is untrusted: a header HTTP cannot carry is the
    /// function's error, never the server's trap.
    static func answer(_ answer: UpdateHandlerAnswer) throws -> HTTPAnswer {
        var headers: HTTPFields = [:]
        if let id = answer.documentID { headers[HTTPField.Name("X-Couch-Id")!] = id }
        if let rev = answer.newRevision { headers[HTTPField.Name("X-Couch-Update-NewRev")!] = rev }
        for (name, value) in answer.headers.sorted(by: { $0.key < $1.key }) {
            guard let field = HTTPField.Name(name) else {
                throw DocumentError(status: 500, error: "render_error", reason: "the function's response has an invalid header name \(JSON.string(name).text)")
            }
            guard HTTPAnswer.isValidFieldValue(value) else {
                throw DocumentError(status: 500, error: "render_error", reason: "the function's response has an invalid value for header \(name): control characters are not allowed")
            }
            headers[field] = value
        }
        guard HTTPAnswer.isValidFieldValue(answer.contentType) else {
            throw DocumentError(status: 500, error: "render_error", reason: "the function's response has an invalid value for header Content-Type: control characters are not allowed")
        }
        var rendered = HTTPAnswer(status: .init(code: answer.status), json: nil, headers: headers, raw: (answer.contentType, answer.body))
        rendered.revalidates = false
        return rendered
    }
}
