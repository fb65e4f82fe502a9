import Foundation
import Hummingbird
import HTTPTypes
import NIOCore
import StrataDocuments
import StrataSync

/// The end of the middleware chain: finds the request's route in the table
/// (`Routes.swift`), reads its body as the route says, opens the database it
/// names and checks who may use it, then calls the handler and sends its
/// answer.
///
/// CouchDB's paths do not fit a path router: `%2F` inside a database name
/// is one segment, `_design/x` and `_local/x` are document ids, a `+` is a
/// space. So the path is split on its raw `/` and each segment decoded
/// before matching, in ``segments(of:)``.
@available(macOS 14, iOS 17, tvOS 17, *)
struct CouchRouter: HTTPResponder {
    typealias Context = CouchContext
    let server: CouchServer
    let routes: [Route]

    init(server: CouchServer) {
        self.server = server
        self.routes = Self.routes(Handlers(server: server))
    }

    func respond(to request: Request, context: CouchContext) async throws -> Response {
        let segments = try Self.segments(of: request.uri.path)
        let (route, parameters) = try find(request.method, segments)
        guard let route, let parameters else {
            // The path exists, with other methods.
            return HTTPAnswer.methodNotAllowed(allowedMethods(segments)).response(to: request.method)
        }
        var request = request
        var r = CouchRequest(method: request.method, segments: segments, parameters: parameters, query: Self.query(of: request.uri.query),
                             headers: request.headers, body: [], user: context.user)
        r.rawPath = request.uri.path
        r.rawQuery = request.uri.query ?? ""
        r.authority = request.head.authority
        r.peer = context.peer
        if request.method != .get, request.method != .head {
            if route.body == .streamed, request.method == .put {
                r.bodyFile = try await spool(&request)
            } else {
                do {
                    r.body = Array(try await request.collectBody(upTo: CouchServer.maximumBodySize).readableBytesView)
                } catch {
                    throw DocumentError(.tooLarge, "the request entity is too large (over \(CouchServer.maximumBodySize) bytes)")
                }
            }
        }
        defer { if let file = r.bodyFile { try? FileManager.default.removeItem(at: file) } }
        return try await answer(route, r).response(to: request.method)
    }

    /// The first route that fits the path and the method; (nil, nil) when
    /// routes fit the path with other methods only. No route at all is
    /// CouchDB's answer for an id it reserves (`/{db}/_…`), or for a name
    /// that is no database.
    func find(_ method: HTTPRequest.Method, _ segments: [String]) throws -> (Route?, [String: String]?) {
        var pathExists = false
        for route in routes {
            guard let parameters = route.match(segments) else { continue }
            if route.methods.isEmpty || route.methods.contains(method) { return (route, parameters) }
            pathExists = true
        }
        if pathExists { return (nil, nil) }
        if segments.count > 1, Route.fits(segments[0], .database) {
            throw DocumentError(.illegalDocumentID, "Only reserved document ids may start with underscore.")
        }
        guard method == .put, let first = segments.first else { throw DatabaseRegistry.missing }
        throw DocumentError(.illegalDatabaseName, DatabaseRegistry.nameRule(first))
    }

    /// The methods the routes that fit `segments` take, as `Allow` lists them.
    func allowedMethods(_ segments: [String]) -> String {
        let methods = routes.filter { $0.match(segments) != nil }.flatMap(\.methods).map(\.rawValue)
        return Set(methods).sorted().joined(separator: ",")
    }

    /// Checks who may use the route, opening its database when it has one,
    /// then calls its handler.
    func answer(_ route: Route, _ request: CouchRequest) async throws -> HTTPAnswer {
        var r = request
        switch route.access {
        case .anyone, .member, .databaseAdmin: break
        case .serverAdmin, .databaseName: try r.requireServerAdmin()
        }
        guard let handler = route.databaseHandler else {
            if route.body == .json { try r.requireJSONBody() }
            guard let handler = route.handler else { throw DocumentError(.internalError, "the route \(route.pattern) has no handler") }
            return try await handler(r)
        }
        let name = r.databaseName
        let registry = server.registry
        // Open databases and their `_security` are kept in memory: only the
        // first request to a database reads its file, off the event loop.
        let db: DocumentDatabase
        if let known = registry.opened(name) {
            (db, r.security) = known
        } else {
            (db, r.security) = try await offload { (try registry.database(name), try registry.security(name)) }
        }
        if name == DatabaseRegistry.usersDatabase {
            try r.checkUsersDatabaseAccess()
        } else if name == ReplicatorDatabase.name {
            // Replication documents hold credentials: server admins only,
            // whatever `_security` says (CouchDB 3 keeps it admin-only too).
            try r.checkAccess(allowed: r.isAdmin)
        } else {
            try r.checkAccess(allowed: r.security.isMember(r.user))
        }
        if route.access == .databaseAdmin { try r.requireDatabaseAdmin() }
        if route.body == .json { try r.requireJSONBody() }
        return try await handler(db, r)
    }

    /// A path's segments, decoded as CouchDB decodes them (`mochiweb_util:
    /// unquote`): `+` is a space, `%XX` a byte; a `%2F` stays inside its
    /// segment.
    static func segments(of path: String) throws -> [String] {
        try path.split(separator: "/", omittingEmptySubsequences: true).map { segment in
            guard let decoded = unquote(segment) else {
                throw DocumentError(.badRequest, "The path is not valid percent-encoded UTF-8")
            }
            return decoded
        }
    }

    /// A query string's parameters, decoded the same way (the last of a
    /// repeated name wins).
    static func query(of text: String?) -> [String: String] {
        var query: [String: String] = [:]
        guard let text, !text.isEmpty else { return query }
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = unquote(parts[0]) ?? String(parts[0])
            let value = parts.count > 1 ? unquote(parts[1]) ?? String(parts[1]) : ""
            query[name] = value
        }
        return query
    }

    /// `+` as a space, then percent-decoding; nil for bytes that are not UTF-8.
    static func unquote(_ text: Substring) -> String? {
        guard text.contains(where: { $0 == "+" || $0 == "%" }) else { return String(text) }
        return text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding
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
                guard size <= CouchServer.maximumAttachmentSize else {
                    throw DocumentError(.tooLarge, "the attachment is larger than \(CouchServer.maximumAttachmentSize) bytes")
                }
                try buffer.withUnsafeReadableBytes { try handle.write(contentsOf: $0) }
            }
            return file
        } catch {
            try? FileManager.default.removeItem(at: file)
            throw error
        }
    }
}
