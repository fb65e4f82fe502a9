import Foundation
import Hummingbird
import HTTPTypes
import CompressNIO
import NIOCore
import StrataDocuments
import StrataSync

@available(macOS 14, iOS 17, tvOS 17, *)
struct CouchResponder: HTTPResponder {
    typealias Context = CouchContext
    let server: CouchServer

    func respond(to request: Request, context: CouchContext) async throws -> Response {
        var request = request
        if let preflight = corsPreflight(request) {
            return Response(status: .noContent, headers: preflight, body: ResponseBody())
        }
        var answer: HTTPAnswer
        var renewSession: UserContext?
        do {
            var couch = try await parse(&request, peer: context.peer)
            couch.rawPath = request.uri.path
            couch.rawQuery = request.uri.query ?? ""
            couch.authority = request.head.authority
            renewSession = couch.renewsSession ? couch.user : nil
            defer { if let file = couch.bodyFile { try? FileManager.default.removeItem(at: file) } }
            answer = try await route(couch)
        } catch let error as DocumentError {
            answer = HTTPAnswer(status: .init(code: error.status), json: error.status >= 500 ? scrubbed(error.json) : error.json)
        } catch {
            answer = HTTPAnswer(status: .internalServerError, json: scrubbed(.object(["error": .string("unknown_error"), "reason": .string(String(describing: error))])))
        }
        // A session cookie more than a tenth of the way to its expiry is
        // replaced, unless the answer sets one itself (sign in, sign out).
        if let renewSession, answer.headers[.setCookie] == nil {
            answer.headers[.setCookie] = server.sessions.cookie(server.sessions.make(for: renewSession))
        }
        var headers = answer.headers
        headers[.server] = "CouchDB/3.4.3 (Strata)"
        headers[.cacheControl] = "must-revalidate"
        if answer.stream != nil {
            headers[.contentType] = headers[.contentType] ?? "application/json"
        } else if let raw = answer.raw {
            headers[.contentType] = raw.contentType
        } else {
            headers[.contentType] = "application/json"
        }
        addCORSHeaders(&headers, origin: request.headers[.origin])
        if let stream = answer.stream {
            return Response(status: answer.status, headers: headers, body: stream)
        }
        if let raw = answer.raw {
            return Response(status: answer.status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: raw.data)))
        }
        let text = (answer.json?.text ?? "") + "\n"
        if request.method == .head {
            headers[.contentLength] = String(text.utf8.count)
            return Response(status: answer.status, headers: headers, body: ResponseBody())
        }
        return Response(status: answer.status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }

    /// An error's JSON without the server's own paths: a client learns what
    /// failed, not where the server keeps its files.
    func scrubbed(_ json: JSON) -> JSON {
        guard var object = json.objectValue, let reason = object["reason"]?.stringValue else { return json }
        var text = reason
        for path in [server.registry.directory.path, server.registry.directory.standardizedFileURL.path] where path.count > 1 {
            text = text.replacingOccurrences(of: path, with: "<data>")
        }
        object["reason"] = .string(text)
        return .object(object)
    }

    func parse(_ request: inout Request, peer: String?) async throws -> CouchRequest {
        let rawPath = request.uri.path
        let segments = try rawPath.split(separator: "/", omittingEmptySubsequences: true).map { segment in
            guard let decoded = String(segment).removingPercentEncoding else {
                throw DocumentError(.badRequest, "The path is not valid percent-encoded UTF-8")
            }
            return decoded
        }
        var query: [String: String] = [:]
        for (k, v) in request.uri.queryParameters {
            query[String(k).removingPercentEncoding ?? String(k)] = String(v).removingPercentEncoding ?? String(v)
        }
        // Neither a session cookie nor Basic credentials a browser cached
        // vouch for a request another site's page made (a form posted to
        // this server): such a request is anonymous, whatever it carries.
        // Clients that are not browsers send no Origin, and the origins CORS
        // lets in are trusted by the server's configuration. Credentials are
        // checked before the body is read: a wrong password uploads nothing.
        let origin = request.headers[.origin]
        let isCrossSiteWrite = request.method != .get && request.method != .head && request.method != .options
            && Self.isCrossSite(origin: origin, host: request.head.authority)
            && !(origin.map(server.configuration.cors.allows) ?? false)
        let (user, renewsSession) = isCrossSiteWrite ? (.anonymous, false) : try await authenticate(request.headers, peer: peer)
        var body: [UInt8] = []
        var bodyFile: URL?
        if request.method == .put, Self.isAttachment(segments), request.headers[.contentEncoding] == nil {
            bodyFile = try await spool(&request)
        } else if request.method != .get, request.method != .head {
            do {
                let buffer = try await request.collectBody(upTo: server.maximumBodySize)
                body = Array(buffer.readableBytesView)
            } catch {
                throw DocumentError(.tooLarge, "the request entity is too large (over \(server.maximumBodySize) bytes)")
            }
            if let encoding = request.headers[.contentEncoding]?.lowercased(), encoding != "identity" {
                body = try decompress(body, encoding: encoding)
            }
        }
        var parsed = CouchRequest(method: request.method, segments: segments, query: query, headers: request.headers, body: body, user: user)
        parsed.bodyFile = bodyFile
        parsed.peer = peer
        parsed.renewsSession = renewsSession
        return parsed
    }

    /// Whether a path names an attachment (`/{db}/{doc}/{name…}`,
    /// `/{db}/_design/{ddoc}/{name…}`), whose `PUT` body is streamed.
    static func isAttachment(_ segments: [String]) -> Bool {
        guard segments.count >= 3, !segments[0].hasPrefix("_") else { return false }
        if segments[1] == "_design" {
            return segments.count >= 4 && !segments[3].hasPrefix("_")
        }
        return !segments[1].hasPrefix("_")
    }

    /// Streams a request's body to a temporary file, a buffer at a time:
    /// an attachment of any size up to the limit costs no more memory than
    /// a small one.
    func spool(_ request: inout Request) async throws -> URL {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("strata-upload-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: file.path, contents: nil) else {
            throw DocumentError(.internalError, "could not create a temporary file for the attachment")
        }
        do {
            let handle = try FileHandle(forWritingTo: file)
            defer { try? handle.close() }
            var size = 0
            for try await buffer in request.body {
                size += buffer.readableBytes
                guard size <= server.maximumAttachmentSize else {
                    throw DocumentError(.tooLarge, "the attachment is larger than \(server.maximumAttachmentSize) bytes")
                }
                try buffer.withUnsafeReadableBytes { try handle.write(contentsOf: $0) }
            }
            return file
        } catch {
            try? FileManager.default.removeItem(at: file)
            throw error
        }
    }

    /// Whether `Origin` names another site than the `Host` the request came to.
    static func isCrossSite(origin: String?, host: String?) -> Bool {
        guard let origin else { return false }
        guard let parts = URLComponents(string: origin), let originHost = parts.host else { return true }
        let originAuthority = originHost + (parts.port.map { ":\($0)" } ?? "")
        return originAuthority.lowercased() != (host ?? "").lowercased()
    }

    /// A `gzip` or `deflate` body (ibmcloudant gzips its requests), held to
    /// the same size limit once inflated.
    func decompress(_ body: [UInt8], encoding: String) throws -> [UInt8] {
        let algorithm: CompressionAlgorithm
        switch encoding {
        case "gzip", "x-gzip": algorithm = .gzip()
        case "deflate": algorithm = .zlib()
        default: throw DocumentError(.unsupportedMediaType, "Content-Encoding \(encoding) is not supported; send gzip, deflate or identity")
        }
        var buffer = ByteBuffer(bytes: body)
        do {
            let inflated = try buffer.decompress(with: algorithm, maxSize: server.maximumBodySize)
            return Array(inflated.readableBytesView)
        } catch let error as CompressNIOError where error == .bufferOverflow {
            throw DocumentError(.tooLarge, "the request body is larger than \(server.maximumBodySize) bytes once inflated")
        } catch {
            throw DocumentError(.badRequest, "the \(encoding) request body is corrupt")
        }
    }

    /// The user a request's Basic credentials or session cookie name, and
    /// whether the cookie is due for a refresh. Credentials that do not match are refused (401), as CouchDB
    /// does, rather than treated as anonymous; a name locked out from
    /// `peer` after repeated failures is refused with 403.
    func authenticate(_ headers: HTTPFields, peer: String?) async throws -> (UserContext, renewsSession: Bool) {
        if let auth = headers[.authorization], auth.hasPrefix("Basic ") {
            guard let decoded = Data(base64Encoded: String(auth.dropFirst(6))).flatMap({ String(data: $0, encoding: .utf8) }),
                  let colon = decoded.firstIndex(of: ":") else {
                throw DocumentError(.badRequest, "Authorization header has invalid base64 value")
            }
            let name = String(decoded[..<colon]), password = String(decoded[decoded.index(after: colon)...])
            let authenticator = server.authenticator
            guard let user = try await authenticator.authenticate(name: name, password: password, peer: peer) else {
                throw DocumentError(.unauthorized, "Name or password is incorrect.")
            }
            return (user, false)
        }
        if let cookie = headers[.cookie] {
            for part in cookie.split(separator: ";") {
                let kv = part.trimmingCharacters(in: .whitespaces)
                guard kv.hasPrefix("AuthSession=") else { continue }
                let token = String(kv.dropFirst(12))
                guard let session = server.sessions.session(for: token) else { continue }
                let authenticator = server.authenticator
                if let user = try await offload({ authenticator.sessionUser(name: session.name, salt: session.salt) }) {
                    return (user, session.refresh)
                }
                server.sessions.remove(token)
            }
        }
        return (.anonymous, false)
    }

    static let unauthorized = DocumentError(.unauthorized, "You are not a server admin.")

    func requireAdmin(_ r: CouchRequest) throws {
        guard r.isAdmin else { throw CouchResponder.unauthorized }
    }

    // MARK: routing

    func route(_ r: CouchRequest) async throws -> HTTPAnswer {
        guard let first = r.segments.first else {
            guard r.method == .get || r.method == .head else { return methodNotAllowed("GET,HEAD") }
            return try welcome(r)
        }
        switch first {
        case "_up": return HTTPAnswer(status: .ok, json: .object(["status": .string("ok"), "seeds": .object([:])]))
        case "_uuids":
            let count = min(max(try r.int("count") ?? 1, 1), 1000)
            return HTTPAnswer(status: .ok, json: .object(["uuids": .array((0..<count).map { _ in .string(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()) })]))
        case "_all_dbs":
            // CouchDB 3 lists databases to server admins only (admin_only_all_dbs).
            try requireAdmin(r)
            return HTTPAnswer(status: .ok, json: .array(server.registry.names().map(JSON.string)))
        case "_session": return try await session(r)
        case "_replicate":
            if r.method == .post { try Self.requireJSONContentType(r) }
            return try await replicate(r)
        case "_active_tasks":
            try requireAdmin(r)
            return HTTPAnswer(status: .ok, json: .array(server.replications.activeTasks() + server.replicatorDatabase.activeTasks()))
        case "_scheduler": return try scheduler(r)
        case "_utils": return try utilities(r)
        case "_sqlite": return try await sqlite(r)
        case "_config", "_node", "_membership", "_stats":
            return HTTPAnswer(status: .notFound, json: DocumentError(.notFound, "Strata does not serve \(first) yet").json)
        default:
            if first.hasPrefix("_"), !DatabaseRegistry.isValidName(first) {
                // A path CouchDB has no handler for names no database.
                if r.method != .put { throw DatabaseRegistry.missing }
                throw DocumentError(.illegalDatabaseName, "Name: '\(first)'. Only lowercase characters (a-z), digits (0-9), and any of the characters _, $, (, ), +, -, and / are allowed. Must begin with a letter.")
            }
            return try await database(first, r)
        }
    }

    func welcome(_ r: CouchRequest) throws -> HTTPAnswer {
        HTTPAnswer(status: .ok, json: .object([
            "couchdb": .string("Welcome"),
            "version": .string("3.4.3"),
            "git_sha": .string("strata"),
            "uuid": .string(server.uuid),
            "features": .array([.string("access-ready"), .string("pluggable-storage-engines"), .string("reshard"), .string("partitioned"), .string("scheduler")]),
            "vendor": .object(["name": .string("Strata")]),
        ]))
    }

    func session(_ r: CouchRequest) async throws -> HTTPAnswer {
        switch r.method {
        case .get:
            var info: JSONObject = ["authentication_handlers": .array([.string("cookie"), .string("default")])]
            if r.user.name != nil {
                info["authenticated"] = .string(r.headers[.authorization] != nil ? "default" : "cookie")
            }
            return HTTPAnswer(status: .ok, json: .object(["ok": .bool(true), "userCtx": r.user.json, "info": .object(info)]))
        case .post:
            var name: String?, password: String?
            if let o = try? JSON(parsing: r.body).objectValue {
                name = o["name"]?.stringValue ?? o["username"]?.stringValue
                password = o["password"]?.stringValue
            } else if let form = String(bytes: r.body, encoding: .utf8) {
                for pair in form.split(separator: "&") {
                    let kv = pair.split(separator: "=", maxSplits: 1).map { String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String($0) }
                    if kv.count == 2, kv[0] == "name" || kv[0] == "username" { name = kv[1] }
                    if kv.count == 2, kv[0] == "password" { password = kv[1] }
                }
            }
            // A failed sign-in also clears the browser's session, as
            // CouchDB's does.
            var refused = HTTPAnswer(status: .unauthorized, json: DocumentError(.unauthorized, "Name or password is incorrect.").json)
            refused.headers[.setCookie] = SessionStore.clearingCookie
            guard let name, let password else { return refused }
            let authenticator = server.authenticator
            guard let user = try await authenticator.authenticate(name: name, password: password, peer: r.peer) else {
                return refused
            }
            let token = server.sessions.make(for: user)
            var headers: HTTPFields = [:]
            headers[.setCookie] = server.sessions.cookie(token)
            return HTTPAnswer(status: .ok, json: .object(["ok": .bool(true), "name": .string(name), "roles": .array(user.roles.map(JSON.string))]), headers: headers)
        case .delete:
            if let cookie = r.headers[.cookie], let range = cookie.range(of: "AuthSession=") {
                server.sessions.remove(String(cookie[range.upperBound...].prefix { $0 != ";" }))
            }
            var headers: HTTPFields = [:]
            headers[.setCookie] = SessionStore.clearingCookie
            return HTTPAnswer(status: .ok, json: .object(["ok": .bool(true)]), headers: headers)
        default:
            return methodNotAllowed("GET,POST,DELETE")
        }
    }

    func methodNotAllowed(_ allowed: String) -> HTTPAnswer {
        var headers: HTTPFields = [:]
        headers[.allow] = allowed
        return HTTPAnswer(status: .methodNotAllowed, json: .object(["error": .string("method_not_allowed"), "reason": .string("Only \(allowed) allowed")]), headers: headers)
    }

    // MARK: databases

    /// CouchDB's member check: anonymous gets 401 (sign in), a signed-in
    /// user who is not a member 403.
    func checkMember(_ r: CouchRequest) throws {
        try checkAccess(r, allowed: r.security.isMember(r.user))
    }

    /// CouchDB's refusal of a database: 401 for anonymous, 403 otherwise.
    func checkAccess(_ r: CouchRequest, allowed: Bool) throws {
        if allowed { return }
        if r.user.name == nil { throw DocumentError(.unauthorized, "You are not authorized to access this db.") }
        throw DocumentError(.forbidden, "You are not allowed to access this db.")
    }

    /// Design documents, `_security`, indexes and compaction need a database
    /// admin (named in `_security`) or a server admin.
    func checkDatabaseAdmin(_ r: CouchRequest) throws {
        guard r.security.isAdmin(r.user) else {
            // 401 asks anonymous to sign in; a signed-in user lacks the right.
            throw DocumentError(r.user.name == nil ? .unauthorized : .forbidden, "You are not a db or server admin.")
        }
    }

    /// `_users` for someone who is not a server admin: their own user
    /// document, and signing up (a new user document, no `_rev`); nothing else.
    func checkUsersDatabaseAccess(_ r: CouchRequest, _ rest: [String]) throws {
        if r.isAdmin { return }
        if rest.count == 1, rest[0].hasPrefix(UserDocuments.prefix), [.get, .head, .put, .delete].contains(r.method) {
            if let name = r.user.name, rest[0] == UserDocuments.prefix + name { return }
            let givesRev = r.query["rev"] != nil || r.headers[.ifMatch] != nil || (try? r.object())?["_rev"] != nil
            if r.method == .put, !givesRev { return }
        }
        if r.user.name == nil { throw DocumentError(.unauthorized, "You are not a server admin.") }
        throw DocumentError(.forbidden, "Only admins can access other users' documents and the listings of system databases.")
    }

    /// The POST endpoints that take only JSON, as CouchDB's
    /// `chttpd:validate_ctype` checks them (the database itself is `""`).
    static let jsonEndpoints: Set<String> = [
        "", "_all_docs", "_design_docs", "_bulk_docs", "_bulk_get", "_revs_diff", "_changes", "_find", "_explain",
        "_index", "_compact", "_view_cleanup", "_ensure_full_commit", "_purge", "_missing_revs",
    ]

    /// CouchDB answers 415 `bad_content_type` when a JSON endpoint gets a
    /// body of another type: so does Strata, which also keeps a page of
    /// another site from posting a form (`text/plain`,
    /// `application/x-www-form-urlencoded`, `multipart/form-data`) there. A
    /// request without a body and without a type is let through.
    func checkJSONBody(_ r: CouchRequest, _ rest: [String]) throws {
        guard r.method == .post else { return }
        let isView = rest.count >= 4 && rest[0] == "_design" && rest[2] == "_view"
        guard isView || Self.jsonEndpoints.contains(rest.first ?? "") else { return }
        try Self.requireJSONContentType(r)
    }

    static func requireJSONContentType(_ r: CouchRequest) throws {
        guard let type = r.headers[.contentType] else {
            if r.body.isEmpty { return }
            throw DocumentError(.unsupportedMediaType, "Content-Type must be application/json")
        }
        let essence = type.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        guard essence.trimmingCharacters(in: .whitespaces).lowercased() == "application/json" else {
            throw DocumentError(.unsupportedMediaType, "Content-Type must be application/json")
        }
    }

    func database(_ name: String, _ r: CouchRequest) async throws -> HTTPAnswer {
        let rest = Array(r.segments.dropFirst())
        if rest.isEmpty {
            switch r.method {
            case .put:
                try requireAdmin(r)
                try await offload { [registry = server.registry] in try registry.create(name) }
                if name == ReplicatorDatabase.name { server.replicatorDatabase.reset(server.registry) }
                var headers: HTTPFields = [:]
                headers[.location] = "/\(name)"
                return HTTPAnswer(status: .created, json: .object(["ok": .bool(true)]), headers: headers)
            case .delete:
                try requireAdmin(r)
                // A script whose document id came out empty: nothing is deleted.
                if r.query["rev"] != nil {
                    throw DocumentError(.badRequest, "You tried to DELETE a database with a ?=rev parameter. Did you mean to DELETE a document instead?")
                }
                try await offload { [registry = server.registry] in try registry.delete(name) }
                server.replications.databaseDeleted(name)
                if name == ReplicatorDatabase.name { server.replicatorDatabase.reset(server.registry) }
                return HTTPAnswer(status: .ok, json: .object(["ok": .bool(true)]))
            default: break
            }
        }
        let registry = server.registry
        // Open databases and their `_security` are kept in memory: only the
        // first request to a database reads its file, off the event loop.
        let db: DocumentDatabase, security: SecurityObject
        if let known = registry.opened(name) {
            (db, security) = known
        } else {
            (db, security) = try await offload { (try registry.database(name), try registry.security(name)) }
        }
        var r = r
        r.security = security
        if name == DatabaseRegistry.usersDatabase {
            try checkUsersDatabaseAccess(r, rest)
        } else if name == ReplicatorDatabase.name {
            // Replication documents hold credentials: server admins only,
            // whatever `_security` says (CouchDB 3 keeps it admin-only too).
            try checkAccess(r, allowed: r.isAdmin)
        } else {
            try checkMember(r)
        }
        try checkJSONBody(r, rest)
        guard let first = rest.first else {
            switch r.method {
            case .get, .head: return HTTPAnswer(status: .ok, json: try await info(name, db))
            case .post: return try await saveDocument(db, r, id: nil)
            default: return methodNotAllowed("DELETE,GET,HEAD,POST,PUT")
            }
        }
        switch first {
        case "_temp_view": return HTTPAnswer(status: .gone, json: DocumentError(status: 410, error: "gone", reason: "Temporary views are not supported in CouchDB").json)
        case "_all_docs": return try await allDocs(db, r)
        case "_design_docs":
            var q = r
            q.query["startkey"] = q.query["startkey"] ?? JSON.string(DocumentDatabase.designPrefix).text
            q.query["endkey"] = q.query["endkey"] ?? "\"_design0\""
            return try await allDocs(db, q)
        case "_bulk_docs": return try await bulkDocs(db, r)
        case "_bulk_get": return try await bulkGet(db, r)
        case "_revs_diff": return try await revsDiff(db, r)
        case "_changes": return try await changes(db, r)
        case "_find": return try await find(db, r, explain: false)
        case "_explain": return try await find(db, r, explain: true)
        case "_index": return try await index(db, r, rest)
        case "_ensure_full_commit":
            let start = try await offload { try db.metadata("instance_start_time")?.stringValue ?? "0" }
            return HTTPAnswer(status: .created, json: .object(["ok": .bool(true), "instance_start_time": .string(start)]))
        case "_compact":
            try checkDatabaseAdmin(r)
            try await offload { try db.compact() }
            return HTTPAnswer(status: .accepted, json: .object(["ok": .bool(true)]))
        case "_view_cleanup":
            try checkDatabaseAdmin(r)
            try await viewCleanup(db)
            return HTTPAnswer(status: .accepted, json: .object(["ok": .bool(true)]))
        case "_security":
            if r.method == .put {
                try checkDatabaseAdmin(r)
                guard let security = try r.json().objectValue else { throw DocumentError(.badRequest, "Security object must be a JSON object") }
                try await offload { try registry.setSecurity(security, of: name) }
                return HTTPAnswer(status: .ok, json: .object(["ok": .bool(true)]))
            }
            let security = try await offload { try db.metadata("_security") ?? .object([:]) }
            return HTTPAnswer(status: .ok, json: security)
        case "_revs_limit":
            if r.method == .put {
                try checkDatabaseAdmin(r)
                guard let n = try r.json().intValue else { throw DocumentError(.badRequest, "revs_limit must be a positive integer") }
                try await offload { try db.setRevisionsLimit(n) }
                return HTTPAnswer(status: .ok, json: .object(["ok": .bool(true)]))
            }
            return HTTPAnswer(status: .ok, json: .int(try await offload { try db.revisionsLimit() }))
        case "_local":
            guard rest.count >= 2 else { throw DocumentError.missing }
            return try await localDocument(db, r, id: "_local/" + rest[1...].joined(separator: "/"))
        case "_design":
            guard rest.count >= 2 else { throw DocumentError.missing }
            let id = DocumentDatabase.designID(rest[1])
            if rest.count >= 3, rest[2] == "_update" {
                return try await updateHandler(db, r, ddoc: id, rest: Array(rest.dropFirst(3)))
            }
            if rest.count >= 3, rest[2] == "_view" {
                return try await viewRoute(db, r, design: id, rest: Array(rest.dropFirst(3)))
            }
            if rest.count == 3, rest[2] == "_info" {
                return try await designInfo(db, r, design: id)
            }
            if rest.count >= 4, rest[2] == "_show" {
                return try await showRoute(db, r, design: id, rest: Array(rest.dropFirst(3)))
            }
            if rest.count >= 5, rest[2] == "_list" {
                return try await listRoute(db, r, design: id, rest: Array(rest.dropFirst(3)))
            }
            if rest.count >= 3, rest[2] == "_show" || rest[2] == "_list" || rest[2] == "_rewrite" {
                throw DocumentError(.notFound, "design document functions (\(rest[2])) are not served yet")
            }
            if r.method != .get, r.method != .head { try checkDatabaseAdmin(r) }
            if rest.count >= 3 { return try await attachmentRoute(db, r, id: id, name: rest[2...].joined(separator: "/")) }
            return try await documentRoute(db, r, id: id)
        default:
            if first.hasPrefix("_") { throw DocumentError(.badRequest, "Only reserved document ids may start with underscore.") }
            if rest.count >= 2 { return try await attachmentRoute(db, r, id: first, name: rest[1...].joined(separator: "/")) }
            return try await documentRoute(db, r, id: first)
        }
    }

    func info(_ name: String, _ db: DocumentDatabase) async throws -> JSON {
        let (info, start) = try await offload { (try db.info(), try db.metadata("instance_start_time")?.stringValue ?? "0") }
        var object = info.json
        object["db_name"] = .string(name)
        object["instance_start_time"] = .string(start)
        return .object(object)
    }

    // MARK: documents

    func readOptions(_ r: CouchRequest) -> DocumentReadOptions {
        DocumentReadOptions(rev: r.query["rev"], revs: r.flag("revs"), revsInfo: r.flag("revs_info"), conflicts: r.flag("conflicts"),
                            deletedConflicts: r.flag("deleted_conflicts"), attachments: r.flag("attachments"),
                            localSequence: r.flag("local_seq"), latest: r.flag("latest"))
    }

    func documentRoute(_ db: DocumentDatabase, _ r: CouchRequest, id: String) async throws -> HTTPAnswer {
        switch r.method {
        case .get, .head:
            if let openRevs = r.query["open_revs"] {
                let revisions: [String]?
                if openRevs == "all" { revisions = nil } else {
                    guard let list = try r.jsonQuery("open_revs")?.arrayValue else { throw DocumentError(.badRequest, "open_revs must be all or a JSON array") }
                    revisions = list.compactMap(\.stringValue)
                    guard revisions?.count == list.count else { throw DocumentError(.badRequest, "Invalid rev format") }
                }
                let options = readOptions(r)
                let results = try await offload { try db.openRevisions(id: id, revisions: revisions, options: options) }
                let json = JSON.array(results.map {
                    switch $0 {
                    case .ok(let doc): return .object(["ok": .object(doc)])
                    case .missing(let rev): return .object(["missing": .string(rev)])
                    }
                })
                if r.headers[.accept]?.contains("multipart/mixed") == true {
                    return multipartMixed(results)
                }
                return HTTPAnswer(status: .ok, json: json)
            }
            let options = readOptions(r)
            let doc = try await offload { try db.document(id: id, options: options) }
            let rev = doc["_rev"]?.stringValue ?? ""
            var headers: HTTPFields = [:]
            headers[.eTag] = "\"\(rev)\""
            if let match = r.headers[.ifNoneMatch], match == "\"\(rev)\"" {
                return HTTPAnswer(status: .notModified, json: nil, headers: headers, raw: ("application/json", Data()))
            }
            return HTTPAnswer(status: .ok, json: .object(doc), headers: headers)
        case .put:
            return try await saveDocument(db, r, id: id)
        case HTTPRequest.Method("COPY")!:
            return try await copyDocument(db, r, id: id)
        case .delete:
            guard let rev = r.query["rev"] ?? r.headers[.ifMatch].map({ $0.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }) else {
                throw DocumentError.conflict
            }
            let deletion: JSONObject = ["_id": .string(id), "_rev": .string(rev), "_deleted": .bool(true)]
            let result = try await put(db, deletion, newEdits: true, r)
            return written(result, status: .ok)
        default:
            return methodNotAllowed("DELETE,GET,HEAD,POST,PUT")
        }
    }

    /// `COPY /{db}/{id}` with `Destination: target[?rev=…]`: the source's
    /// body (and attachments) saved under the target id; an existing target
    /// needs its current rev, as in CouchDB.
    func copyDocument(_ db: DocumentDatabase, _ r: CouchRequest, id: String) async throws -> HTTPAnswer {
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
        if target.hasPrefix(DocumentDatabase.designPrefix) { try checkDatabaseAdmin(r) }
        if target.hasPrefix("_") && !target.hasPrefix(DocumentDatabase.designPrefix) {
            throw DocumentError(.badRequest, "Only reserved document ids may start with underscore.")
        }
        let source = try await offload { try db.document(id: id, options: DocumentReadOptions(rev: r.query["rev"], attachments: true)) }
        var copy = JSONObject(source.pairs.filter { !$0.key.hasPrefix("_") || $0.key == "_attachments" })
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
        let result = try await put(db, copy, newEdits: true, r)
        return written(result, status: .created)
    }

    /// One document write, group-committed unless the server says not
    /// (the engine runs the design documents' validation).
    func put(_ db: DocumentDatabase, _ document: JSONObject, newEdits: Bool, _ r: CouchRequest) async throws -> DocumentWriteResult {
        if server.groupCommit {
            return try await db.commit(document, newEdits: newEdits, userContext: userContext(r))
        }
        let context = userContext(r)
        return try await offload { try db.put(document, newEdits: newEdits, userContext: context) }
    }

    func written(_ result: DocumentWriteResult, status: HTTPResponse.Status) -> HTTPAnswer {
        var headers: HTTPFields = [:]
        headers[.eTag] = "\"\(result.rev)\""
        headers[.location] = "/\(result.id)"
        return HTTPAnswer(status: status, json: .object(["ok": .bool(true), "id": .string(result.id), "rev": .string(result.rev)]), headers: headers)
    }

    func saveDocument(_ db: DocumentDatabase, _ r: CouchRequest, id: String?) async throws -> HTTPAnswer {
        var doc: JSONObject
        if r.headers[.contentType]?.hasPrefix("multipart/related") == true {
            doc = try MultipartRelated.document(body: r.body, contentType: r.headers[.contentType]!)
        } else {
            doc = try r.object()
        }
        if let id {
            if let given = doc["_id"]?.stringValue, given != id {
                throw DocumentError(.badRequest, "Document id must match the URL")
            }
            doc["_id"] = .string(id)
        } else if doc["_id"] == nil {
            doc["_id"] = .string(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased())
        }
        if let docID = doc["_id"]?.stringValue, docID.hasPrefix(DocumentDatabase.designPrefix) { try checkDatabaseAdmin(r) }
        if doc["_rev"] == nil {
            if let rev = r.query["rev"] { doc["_rev"] = .string(rev) }
            else if let match = r.headers[.ifMatch] { doc["_rev"] = .string(match.trimmingCharacters(in: CharacterSet(charactersIn: "\""))) }
        }
        let newEdits = r.query["new_edits"] != "false"
        if r.segments.first == DatabaseRegistry.usersDatabase { doc = try await prepareUserDocument(db, doc, r) }
        let result = try await put(db, doc, newEdits: newEdits, r)
        if r.query["batch"] == "ok" {
            // CouchDB answers a batched write before it has a revision to give.
            return HTTPAnswer(status: .accepted, json: .object(["ok": .bool(true), "id": .string(result.id)]))
        }
        return written(result, status: .created)
    }

    /// A write to `_users`: the password hashed (on the authenticator's
    /// hashing queue: PBKDF2 is slow on purpose). CouchDB's rules for user
    /// documents run in the engine (`UserDocuments.validate`).
    func prepareUserDocument(_ db: DocumentDatabase, _ doc: JSONObject, _ r: CouchRequest) async throws -> JSONObject {
        let id = doc["_id"]?.stringValue ?? ""
        let user = r.user, iterations = server.authenticator.iterations
        return try await server.authenticator.hash {
            let existing = try? db.document(id: id)
            return try UserDocuments.prepare(doc, existing: existing, by: user, iterations: iterations)
        }
    }

    func localDocument(_ db: DocumentDatabase, _ r: CouchRequest, id: String) async throws -> HTTPAnswer {
        switch r.method {
        case .get, .head:
            guard let document = try await offload({ try db.localDocument(id: id) }) else { throw DocumentError.missing }
            return HTTPAnswer(status: .ok, json: .object(document))
        case .put:
            var doc = try r.object()
            doc["_id"] = .string(id)
            let final = doc
            let result = try await offload { try db.putLocal(final) }
            return HTTPAnswer(status: .created, json: .object(["ok": .bool(true), "id": .string(result.id), "rev": .string(result.rev)]))
        case .delete:
            try await offload { try db.deleteLocal(id: id) }
            return HTTPAnswer(status: .ok, json: .object(["ok": .bool(true), "id": .string(id), "rev": .string("0-0")]))
        default:
            return methodNotAllowed("DELETE,GET,HEAD,PUT")
        }
    }

    func attachmentRoute(_ db: DocumentDatabase, _ r: CouchRequest, id: String, name: String) async throws -> HTTPAnswer {
        switch r.method {
        case .get, .head:
            let rev = r.query["rev"]
            // Sent a chunk at a time, each read on its own: memory stays
            // bounded whatever the attachment's size.
            let content = try await offload { try db.attachmentContent(id: id, name: name, rev: rev) }
            var headers: HTTPFields = [:]
            headers[.eTag] = "\"\(content.digest)\""
            headers[.init("Content-MD5")!] = String(content.digest.dropFirst(4))
            headers[.contentType] = content.contentType
            headers[.contentLength] = String(content.length)
            if r.method == .head { return HTTPAnswer(status: .ok, json: nil, headers: headers, stream: ResponseBody()) }
            let body = ResponseBody { writer in
                var offset = 0
                while offset < content.length {
                    let start = offset
                    let chunk = try await offload { try content.read(at: start, count: 256 << 10) }
                    guard !chunk.isEmpty else { break }
                    try await writer.write(ByteBuffer(bytes: chunk))
                    offset += chunk.count
                }
                try await writer.finish(nil)
            }
            return HTTPAnswer(status: .ok, json: nil, headers: headers, stream: body)
        case .put:
            let rev = r.query["rev"] ?? r.headers[.ifMatch].map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
            let type = r.headers[.contentType] ?? "application/octet-stream"
            let context = userContext(r)
            let result: DocumentWriteResult
            if let file = r.bodyFile {
                result = try await offload { try db.putAttachment(id: id, name: name, rev: rev, contentType: type, contentsOf: file, userContext: context) }
            } else {
                let data = Data(r.body)
                result = try await offload { try db.putAttachment(id: id, name: name, rev: rev, contentType: type, data: data, userContext: context) }
            }
            return written(result, status: .created)
        case .delete:
            guard let rev = r.query["rev"] else { throw DocumentError.conflict }
            let context = userContext(r)
            let result = try await offload { try db.deleteAttachment(id: id, name: name, rev: rev, userContext: context) }
            return written(result, status: .ok)
        default:
            return methodNotAllowed("DELETE,GET,HEAD,PUT")
        }
    }

    /// `POST|PUT /{db}/_design/{ddoc}/_update/{func}[/{docid}]`: the
    /// function gets the document (or null) and CouchDB's request object,
    /// and answers `[doc, response]`; a returned document is saved.
    ///
    /// Calls on one document run one after the other, each on the revision
    /// the one before wrote, so concurrent calls never fail with 409 and
    /// none is lost (CouchDB would answer 409 to all but one).
    func updateHandler(_ db: DocumentDatabase, _ r: CouchRequest, ddoc: String, rest: [String]) async throws -> HTTPAnswer {
        guard r.method == .post || r.method == .put else {
            var headers: HTTPFields = [:]
            headers[.allow] = "POST,PUT"
            return HTTPAnswer(status: .methodNotAllowed, json: DocumentError(.methodNotAllowed, "Update functions do not allow \(r.method.rawValue)").json, headers: headers)
        }
        guard let function = rest.first else { throw DocumentError(.notFound, "missing json key: ") }
        let design = DocumentDatabase.designName(ddoc)
        let docID = rest.count > 1 ? rest[1...].joined(separator: "/") : nil
        if let docID, docID.hasPrefix(DocumentDatabase.designPrefix) { try checkDatabaseAdmin(r) }
        let request = try await updateRequest(db, r, docID: docID)
        // The engine runs calls on one document in batches (one transaction
        // and one commit, each call answered with its own revision), chooses
        // the function (Swift or the stored JavaScript), validates what it
        // answers and refuses a design document from a non-admin.
        let outcome = try await db.runUpdate(design: design, function: function, id: docID, request: request, userContext: userContext(r))
        return try httpAnswer(UpdateHandlerAnswer(rendering: outcome.response, written: outcome.written))
    }

    /// CouchDB's request object for design-document functions, made by
    /// the engine from the request as received.
    func updateRequest(_ db: DocumentDatabase, _ r: CouchRequest, docID: String?) async throws -> JSON {
        let name = r.segments.first ?? ""
        var headers: [String: String] = [:]
        for field in r.headers { headers[field.name.rawName] = field.value }
        var request = UpdateRequest(method: r.method.rawValue, body: Data(r.body), contentType: r.headers[.contentType] ?? "",
                                    query: r.query, headers: headers)
        request.peer = r.peer
        request.path = r.segments
        request.rawPath = r.rawPath + (r.rawQuery.isEmpty ? "" : "?" + r.rawQuery)
        let info = try await info(name, db).objectValue
        return try await db.requestObject(request, database: name, design: "", function: "", id: docID, info: info, userContext: r.user.json)
    }

    /// A design function's answer, rendered by the engine
    /// (`UpdateHandlerAnswer(rendering:written:)`), as HTTP. Everything the
    /// function answers is untrusted: a header HTTP cannot carry is the
    /// function's error, never the server's trap.
    func httpAnswer(_ answer: UpdateHandlerAnswer) throws -> HTTPAnswer {
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
        return HTTPAnswer(status: .init(code: answer.status), json: nil, headers: headers, raw: (answer.contentType, answer.body))
    }

    // MARK: bulk and listing

    func allDocs(_ db: DocumentDatabase, _ r: CouchRequest) async throws -> HTTPAnswer {
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
        return HTTPAnswer(status: .ok, json: .object(o))
    }

    func bulkDocs(_ db: DocumentDatabase, _ r: CouchRequest) async throws -> HTTPAnswer {
        guard r.method == .post else { return methodNotAllowed("POST") }
        let body = try r.object()
        guard let docs = body["docs"]?.arrayValue else { throw DocumentError(.badRequest, "POST body must include `docs` parameter.") }
        var objects = try docs.map { d -> JSONObject in
            guard let o = d.objectValue else { throw DocumentError(.badRequest, "Document must be a JSON object") }
            return o
        }
        if objects.contains(where: { $0["_id"]?.stringValue?.hasPrefix(DocumentDatabase.designPrefix) == true }) { try checkDatabaseAdmin(r) }
        if r.segments.first == DatabaseRegistry.usersDatabase {
            for i in objects.indices { objects[i] = try await prepareUserDocument(db, objects[i], r) }
        }
        let newEdits = body["new_edits"]?.boolValue ?? true
        // CouchDB 3 accepts and ignores `all_or_nothing` (pycouchdb sends it):
        // each document gets its own result; validation (in the engine)
        // refuses documents one by one and the others are written.
        let final = objects
        let context = userContext(r)
        let results = try await offload { try db.bulkPut(final, newEdits: newEdits, userContext: context) }
        var out: [JSON] = []
        for (doc, result) in zip(objects, results) {
            switch result {
            case .success(let w):
                if newEdits { out.append(.object(["ok": .bool(true), "id": .string(w.id), "rev": .string(w.rev)])) }
            case .failure(let e):
                out.append(.object(["id": doc["_id"] ?? .null, "error": .string(e.error), "reason": .string(e.reason)]))
            }
        }
        return HTTPAnswer(status: .created, json: .array(out))
    }

    func bulkGet(_ db: DocumentDatabase, _ r: CouchRequest) async throws -> HTTPAnswer {
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
                    case .missing(let missing): answers.append(.object(["error": .object(["id": .string(id), "rev": .string(missing), "error": .string("not_found"), "reason": .string("missing")])]))
                    }
                }
            case .failure(let e):
                answers.append(.object(["error": .object(["id": .string(id), "rev": .string(rev ?? "undefined"), "error": .string(e.error), "reason": .string(e.reason)])]))
            }
            results.append(.object(["id": .string(id), "docs": .array(answers)]))
        }
        return HTTPAnswer(status: .ok, json: .object(["results": .array(results)]))
    }

    func revsDiff(_ db: DocumentDatabase, _ r: CouchRequest) async throws -> HTTPAnswer {
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
        return HTTPAnswer(status: .ok, json: .object(JSONObject(out)))
    }

    // MARK: Mango

    func find(_ db: DocumentDatabase, _ r: CouchRequest, explain: Bool) async throws -> HTTPAnswer {
        guard r.method == .post else { return methodNotAllowed("POST") }
        let query = try FindQuery(json: r.json())
        let result = try await offload { explain ? try db.explain(query) : try db.find(query) }
        if explain {
            let index: JSON = result.index.map(\.json) ?? .object(["ddoc": .null, "name": .string("_all_docs"), "type": .string("special"), "def": .object(["fields": .array([.object(["_id": .string("asc")])])])])
            return HTTPAnswer(status: .ok, json: .object([
                "dbname": .string(r.segments[0]), "index": index, "selector": try MangoSelector(query.selector).normalized,
                "opts": .object(["use_index": .array([]), "bookmark": .string(query.bookmark ?? "nil"), "limit": .int(query.limit), "skip": .int(query.skip)]),
                "limit": .int(query.limit), "skip": .int(query.skip),
                "fields": query.fields.map { .array($0.map(JSON.string)) } ?? .string("all_fields"),
                "sql": .string(result.sql),
            ]))
        }
        var o: JSONObject = ["docs": .array(result.docs.map(JSON.object)), "bookmark": .string(result.bookmark)]
        if let warning = result.warning { o["warning"] = .string(warning) }
        if let stats = result.executionStats { o["execution_stats"] = stats }
        return HTTPAnswer(status: .ok, json: .object(o))
    }

    func index(_ db: DocumentDatabase, _ r: CouchRequest, _ rest: [String]) async throws -> HTTPAnswer {
        switch r.method {
        case .get:
            let indexes = try await offload { try db.indexes() }
            let special: JSON = .object(["ddoc": .null, "name": .string("_all_docs"), "type": .string("special"), "def": .object(["fields": .array([.object(["_id": .string("asc")])])])])
            return HTTPAnswer(status: .ok, json: .object(["total_rows": .int(indexes.count + 1), "indexes": .array([special] + indexes.map(\.json))]))
        case .post:
            try checkDatabaseAdmin(r)
            let body = try r.object()
            guard let index = body["index"]?.objectValue, let fieldList = index["fields"]?.arrayValue else {
                throw DocumentError(.badRequest, "Missing required key: index")
            }
            let fields = try fieldList.map { f -> String in
                if let s = f.stringValue { return s }
                if let o = f.objectValue, o.count == 1 { return o.pairs[0].key }
                throw DocumentError(.badRequest, "Invalid index field: \(f.text)")
            }
            let partial = index["partial_filter_selector"] ?? body["partial_filter_selector"]
            let ddoc = body["ddoc"]?.stringValue, name = body["name"]?.stringValue
            let created = try await offload { try db.createIndex(fields: fields, ddoc: ddoc, name: name, partialFilterSelector: partial) }
            return HTTPAnswer(status: .ok, json: .object(["result": .string(created.result), "id": .string(created.ddoc), "name": .string(created.name)]))
        case .delete:
            try checkDatabaseAdmin(r)
            guard rest.count >= 4 else { throw DocumentError(.badRequest, "DELETE /{db}/_index/{ddoc}/json/{name}") }
            let ddoc = rest[1], name = rest[3]
            try await offload { try db.deleteIndex(ddoc: ddoc, name: name) }
            return HTTPAnswer(status: .ok, json: .object(["ok": .bool(true)]))
        default:
            return methodNotAllowed("GET,POST,DELETE")
        }
    }

    // MARK: multipart

    func multipartMixed(_ results: [OpenRevision]) -> HTTPAnswer {
        let boundary = UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        var body = Data()
        for result in results {
            body.append(Data("--\(boundary)\r\nContent-Type: application/json\r\n\r\n".utf8))
            switch result {
            case .ok(let doc): body.append(Data(JSON.object(doc).text.utf8))
            case .missing(let rev): body.append(Data(JSON.object(["missing": .string(rev)]).text.utf8))
            }
            body.append(Data("\r\n".utf8))
        }
        body.append(Data("--\(boundary)--".utf8))
        return HTTPAnswer(status: .ok, json: nil, raw: ("multipart/mixed; boundary=\"\(boundary)\"", body))
    }
}
