import HTTPTypes
import StrataDocuments

/// One door of the server: a path pattern, the methods it answers, who may
/// knock, and the handler behind it. `Routes.swift` lists them all.
///
/// A pattern's segments are literals (`_all_docs`), or parameters in
/// braces, decoded from the path:
/// - `{db}`: a database name (not starting with `_`, but for the system
///   databases `_users`, `_replicator` and `_global_changes`);
/// - `{doc}`, `{attachment…}`: a name that does not start with `_` (CouchDB
///   reserves those for its own paths); `{reserved…}` one that does;
/// - any other name: any one segment;
/// - a trailing `…`: the rest of the path, one segment or more, joined
///   with `/` (`_local/a/b`, an attachment named `img/a.png`).
struct Route: Sendable {
    enum Segment: Sendable, Equatable {
        case literal(String)
        case parameter(String, Kind)
        case rest(String, Kind)
    }

    /// What a parameter matches.
    enum Kind: Sendable, Equatable {
        case database
        case name
        case reserved
        case any
    }

    /// Who may use a route. Database routes open the database first (404
    /// when it is missing) and check its `_security`.
    enum Access: Sendable {
        /// Anyone, signed in or not (the handler may check more).
        case anyone
        /// Server admins (a database route opens its database for them).
        case serverAdmin
        /// A database's members (its readers and writers).
        case member
        /// A database's admins (design documents, `_security`, indexes).
        case databaseAdmin
        /// A database's name, not its content: it is not opened
        /// (`PUT /{db}`, `DELETE /{db}`, which need a server admin).
        case databaseName
    }

    /// What a route does with the request's body.
    enum Body: Sendable {
        /// Read into memory (up to the server's limit).
        case buffered
        /// Read into memory; a POST's must be JSON (`chttpd:validate_ctype`:
        /// another type is CouchDB's 415 `bad_content_type`).
        case json
        /// Written to a temporary file as it arrives (an attachment of any
        /// size costs no more memory than a small one).
        case streamed
    }

    typealias Handler = @Sendable (CouchRequest) async throws -> HTTPAnswer
    typealias DatabaseHandler = @Sendable (DocumentDatabase, CouchRequest) async throws -> HTTPAnswer

    let pattern: String
    let segments: [Segment]
    let methods: [HTTPRequest.Method]
    let access: Access
    let body: Body
    let handler: Handler?
    let databaseHandler: DatabaseHandler?

    /// A route whose handler needs no database (the server's own paths, or
    /// a database's name).
    init(_ pattern: String, _ methods: [HTTPRequest.Method], _ access: Access = .anyone, body: Body = .buffered, _ handler: @escaping Handler) {
        self.init(pattern, methods, access, body, handler, nil)
    }

    /// A route into an open database, whose handler gets it.
    init(_ pattern: String, _ methods: [HTTPRequest.Method], _ access: Access = .member, body: Body = .buffered, _ handler: @escaping DatabaseHandler) {
        self.init(pattern, methods, access, body, nil, handler)
    }

    private init(_ pattern: String, _ methods: [HTTPRequest.Method], _ access: Access, _ body: Body, _ handler: Handler?, _ databaseHandler: DatabaseHandler?) {
        self.pattern = pattern
        self.segments = Self.parse(pattern)
        self.methods = methods
        self.access = access
        self.body = body
        self.handler = handler
        self.databaseHandler = databaseHandler
    }

    static func parse(_ pattern: String) -> [Segment] {
        pattern.split(separator: "/").map { part in
            guard part.hasPrefix("{"), part.hasSuffix("}") else { return .literal(String(part)) }
            var name = String(part.dropFirst().dropLast())
            let isRest = name.hasSuffix("…")
            if isRest { name.removeLast() }
            let kind: Kind = switch name {
            case "db": .database
            case "doc", "attachment": .name
            case "reserved": .reserved
            default: .any
            }
            return isRest ? .rest(name, kind) : .parameter(name, kind)
        }
    }

    /// The parameters of `path` (decoded segments) when it fits the
    /// pattern, nil otherwise.
    func match(_ path: [String]) -> [String: String]? {
        var parameters: [String: String] = [:]
        var index = 0
        for segment in segments {
            switch segment {
            case .literal(let literal):
                guard index < path.count, path[index] == literal else { return nil }
                index += 1
            case .parameter(let name, let kind):
                guard index < path.count, Self.fits(path[index], kind) else { return nil }
                parameters[name] = path[index]
                index += 1
            case .rest(let name, let kind):
                guard index < path.count, Self.fits(path[index], kind) else { return nil }
                parameters[name] = path[index...].joined(separator: "/")
                index = path.count
            }
        }
        return index == path.count ? parameters : nil
    }

    static func fits(_ segment: String, _ kind: Kind) -> Bool {
        switch kind {
        case .any: return true
        case .name: return !segment.hasBytePrefix("_")
        case .reserved: return segment.hasBytePrefix("_")
        case .database: return !segment.hasBytePrefix("_") || DatabaseRegistry.systemDatabases.contains(segment)
        }
    }
}

extension HTTPRequest.Method {
    /// WebDAV's `COPY`, which CouchDB answers on documents.
    static let copy = HTTPRequest.Method("COPY")!
}

/// The route table as ``CouchRouter/routes(_:)`` writes it, a route a line
/// (a statement each: one array literal of sixty overloaded calls is more
/// than the type checker takes).
struct RouteTable {
    private(set) var routes: [Route] = []

    mutating func add(_ pattern: String, _ methods: [HTTPRequest.Method], _ access: Route.Access = .anyone, body: Route.Body = .buffered,
                      use handler: @escaping Route.Handler) {
        routes.append(Route(pattern, methods, access, body: body, handler))
    }

    mutating func add(_ pattern: String, _ methods: [HTTPRequest.Method], _ access: Route.Access = .member, body: Route.Body = .buffered,
                      use handler: @escaping Route.DatabaseHandler) {
        routes.append(Route(pattern, methods, access, body: body, handler))
    }
}
