import Foundation
import Strata
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import StrataDocuments

/// What a CouchDB-protocol server answered when a request failed: its HTTP
/// status (0 when no answer came: a refused connection, a timeout,
/// `network_error`), CouchDB's `error` name (kept as the server gave it) and
/// `reason`. The same type as the local engine's errors, so code handles a
/// failure the same way whichever side it came from.
///
/// ```swift
/// do { _ = try await votes.document(id: "q9") }
/// catch let error as RemoteError where error.status == 404 { print(error.reason) }
/// ```
public typealias RemoteError = DocumentError

/// A CouchDB-protocol server: `strata serve`, Apache CouchDB 3 (a single
/// node or a cluster) or a Cloudant-style service.
///
/// ```swift
/// let server = try CouchClient(url: URL(string: "http://127.0.0.1:5984")!,
///                              authentication: .basic(name: "admin", password: "secret"))
/// let votes = server.database("voting")
/// let question = try await votes.document(id: "q1")
/// ```
///
/// HTTP goes through Foundation's `URLSession`, except on Linux for a plain
/// `http://` server that no proxy in the environment (`http_proxy`,
/// `ALL_PROXY`, minus `NO_PROXY`) stands in front of: those requests go
/// over kept-alive sockets of the client's own: FoundationNetworking's
/// `URLSession` took about half of a replicating client's CPU time. Every
/// method is `async` and safe to call from any task.
public final class CouchClient: Sendable {
    /// The server's root, without credentials.
    public let url: URL
    /// The credentials sent.
    public let authentication: RemoteAuthentication
    let session: URLSession
    #if os(Linux)
    /// Plain `http://` without a proxy: HTTP/1.1 on sockets of its own
    /// (`PlainHTTPTransport` says why); nil for the rest, which `session`
    /// sends.
    let plain: PlainHTTPTransport?
    #endif
    /// The time an answer may take, unless a request says otherwise.
    let timeout: TimeInterval
    /// The `AuthSession` cookie.
    private let cookieJar = Locked<String?>(nil)
    private let requestObserver = Locked<(@Sendable (String) -> Void)?>(nil)

    /// A client for the server at `url`. Credentials in the URL
    /// (`http://admin:secret@host:5984`) become Basic authentication unless
    /// `authentication` says otherwise.
    public init(url: URL, authentication: RemoteAuthentication = .none, timeout: TimeInterval = 120) throws {
        guard var parts = URLComponents(url: url, resolvingAgainstBaseURL: false),
              let scheme = parts.scheme?.lowercased(), scheme == "http" || scheme == "https", parts.host != nil else {
            throw RemoteError(status: 0, error: "bad_url", reason: "not an http or https URL: \(url.absoluteString)")
        }
        var auth = authentication
        if auth == .none, let user = parts.user {
            auth = .basic(name: user.removingPercentEncoding ?? user, password: (parts.password ?? "").removingPercentEncoding ?? "")
        }
        parts.user = nil
        parts.password = nil
        parts.query = nil
        var path = parts.path
        while path.hasSuffix("/") { path.removeLast() }
        parts.path = path
        guard let root = parts.url else {
            throw RemoteError(status: 0, error: "bad_url", reason: "not a URL: \(url.absoluteString)")
        }
        self.url = root
        self.authentication = auth
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpShouldSetCookies = false
        configuration.httpCookieAcceptPolicy = .never
        configuration.timeoutIntervalForRequest = timeout
        configuration.httpMaximumConnectionsPerHost = 8
        configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
        session = URLSession(configuration: configuration)
        self.timeout = timeout
        #if os(Linux)
        plain = PlainHTTPTransport.serves(root) ? PlainHTTPTransport(host: root.host ?? "localhost", port: root.port) : nil
        #endif
    }

    /// A database on this server (nothing is sent until it is used).
    public func database(_ name: String) -> RemoteDatabase {
        RemoteDatabase(client: self, name: name)
    }

    /// `GET /`: the welcome object (`couchdb`, `version`, `uuid`, `vendor`…).
    public func serverInfo() async throws -> JSONObject {
        try await json("GET", [])
    }

    /// `GET /_all_dbs`: the database names (server admins only on CouchDB 3).
    public func allDatabases() async throws -> [String] {
        let answer = try await send("GET", ["_all_dbs"])
        return try JSON(parsing: answer.body).arrayValue?.compactMap(\.stringValue) ?? []
    }

    /// `GET /_uuids`: fresh ids from the server.
    public func uuids(count: Int = 1) async throws -> [String] {
        let object = try await json("GET", ["_uuids"], query: [("count", String(count))])
        return object["uuids"]?.arrayValue?.compactMap(\.stringValue) ?? []
    }

    /// `GET /_session`: who the server takes this client for
    /// (`userCtx` with `name` and `roles`).
    public func session() async throws -> JSONObject {
        try await json("GET", ["_session"])
    }

    // MARK: - Requests

    /// One HTTP answer.
    struct Answer {
        var status: Int
        var body: Data
        var headers: [String: String]
    }

    /// The URL of a path under the server, each segment escaped.
    func url(_ segments: [String], query: [(String, String)] = []) -> URL {
        var text = url.absoluteString
        for segment in segments { text += "/" + Self.escape(segment) }
        if segments.isEmpty { text += "/" }
        if !query.isEmpty {
            text += "?" + query.map { Self.escape($0.0) + "=" + Self.escape($0.1) }.joined(separator: "&")
        }
        return URL(string: text)!
    }

    static let unreserved: CharacterSet = {
        var set = CharacterSet()
        set.insert(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~")
        return set
    }()

    static func escape(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }

    /// Sends a request and answers whatever status came back; throws only
    /// when no answer came.
    func sendRaw(_ method: String, _ segments: [String], query: [(String, String)] = [], body: Data? = nil,
                 contentType: String = "application/json", accept: String = "application/json",
                 timeout: TimeInterval? = nil, headers: [String: String] = [:]) async throws -> Answer {
        var request = URLRequest(url: url(segments, query: query))
        request.httpMethod = method
        if let timeout { request.timeoutInterval = timeout }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        request.setValue(accept, forHTTPHeaderField: "Accept")
        if let body {
            request.httpBody = body
            request.setValue(contentType, forHTTPHeaderField: "Content-Type")
        }
        switch authentication {
        case .none: break
        case .basic(let name, let password):
            request.setValue("Basic " + Data("\(name):\(password)".utf8).base64EncodedString(), forHTTPHeaderField: "Authorization")
        case .cookie:
            if let cookie = try await sessionCookie(renew: false) { request.setValue(cookie, forHTTPHeaderField: "Cookie") }
        }
        var answer = try await perform(request, timeout: timeout)
        if answer.status == 401, case .cookie = authentication, segments != ["_session"] {
            // The server forgot the session (a restart, an expiry): sign in again once.
            if let cookie = try await sessionCookie(renew: true) {
                request.setValue(cookie, forHTTPHeaderField: "Cookie")
                answer = try await perform(request, timeout: timeout)
            }
        }
        return answer
    }

    /// Calls `observer` with `"METHOD /path?query"` for every request this
    /// client sends (the tests compare a replication's requests with the
    /// protocol's).
    package func observeRequests(_ observer: @escaping @Sendable (String) -> Void) {
        requestObserver.value = observer
    }

    private func perform(_ request: URLRequest, timeout: TimeInterval? = nil) async throws -> Answer {
        if let observe = requestObserver.value, let url = request.url {
            let query = url.query.map { "?" + $0 } ?? ""
            observe("\(request.httpMethod ?? "GET") \(url.path)\(query)")
        }
        #if os(Linux)
        if let plain, let url = request.url, let parts = URLComponents(url: url, resolvingAgainstBaseURL: false) {
            let path = parts.percentEncodedPath.isEmpty ? "/" : parts.percentEncodedPath
            let target = parts.percentEncodedQuery.map { path + "?" + $0 } ?? path
            var headers: [(String, String)] = [("User-Agent", "Strata")]
            for (name, value) in request.allHTTPHeaderFields ?? [:] { headers.append((name, value)) }
            do {
                return try await plain.request(method: request.httpMethod ?? "GET", target: target, headers: headers,
                                               body: request.httpBody, timeout: timeout ?? self.timeout)
            } catch let error as RemoteError {
                throw RemoteError(status: 0, error: "network_error", reason: "\(request.httpMethod ?? "GET") \(url.absoluteString): \(error.reason)")
            }
        }
        #endif
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await load(request)
        } catch is CancellationError {
            throw CancellationError()
        } catch let error as URLError where error.code == .cancelled {
            try Task.checkCancellation()
            throw RemoteError(status: 0, error: "network_error", reason: "\(request.httpMethod ?? "GET") \(request.url?.absoluteString ?? ""): cancelled")
        } catch {
            throw RemoteError(status: 0, error: "network_error",
                              reason: "\(request.httpMethod ?? "GET") \(request.url?.absoluteString ?? ""): \(error.localizedDescription)")
        }
        guard let http = response as? HTTPURLResponse else {
            throw RemoteError(status: 0, error: "network_error", reason: "not an HTTP answer")
        }
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
        }
        return Answer(status: http.statusCode, body: data, headers: headers)
    }

    /// `URLSession`'s completion-handler API under Swift cancellation. The
    /// async `data(for:)` of FoundationNetworking can deadlock when its task
    /// is cancelled (it cancels the request while holding the task's status
    /// lock and waits for the session's queue, which waits for that lock):
    /// here the request is cancelled from another queue.
    private func load(_ request: URLRequest) async throws -> (Data, URLResponse) {
        let pending = PendingRequest()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<(Data, URLResponse), any Error>) in
                let task = session.dataTask(with: request) { data, response, error in
                    if let error {
                        continuation.resume(throwing: error)
                    } else if let response {
                        continuation.resume(returning: (data ?? Data(), response))
                    } else {
                        continuation.resume(throwing: URLError(.badServerResponse))
                    }
                }
                pending.start(task)
            }
        } onCancel: {
            pending.cancel()
        }
    }

    /// Sends a request; a 4xx or 5xx is thrown as a `RemoteError` carrying
    /// CouchDB's `error` and `reason`.
    func send(_ method: String, _ segments: [String], query: [(String, String)] = [], body: Data? = nil,
              contentType: String = "application/json", accept: String = "application/json",
              timeout: TimeInterval? = nil, headers: [String: String] = [:]) async throws -> Answer {
        let answer = try await sendRaw(method, segments, query: query, body: body, contentType: contentType, accept: accept,
                                       timeout: timeout, headers: headers)
        guard answer.status < 400 else { throw Self.error(answer) }
        return answer
    }

    /// Sends a request whose answer is a JSON object.
    func json(_ method: String, _ segments: [String], query: [(String, String)] = [], body: JSON? = nil,
              timeout: TimeInterval? = nil) async throws -> JSONObject {
        let answer = try await send(method, segments, query: query, body: body.map { Data($0.text.utf8) }, timeout: timeout)
        return try Self.object(answer.body)
    }

    static func object(_ data: Data) throws -> JSONObject {
        guard let object = (try? JSON(parsing: data))?.objectValue else {
            throw RemoteError(status: 0, error: "bad_response", reason: "the server's answer is not a JSON object: \(String(decoding: data.prefix(200), as: UTF8.self))")
        }
        return object
    }

    static func error(_ answer: Answer) -> RemoteError {
        let object = (try? JSON(parsing: answer.body))?.objectValue
        let error = object?["error"]?.stringValue ?? HTTPURLResponse.localizedString(forStatusCode: answer.status)
        let reason = object?["reason"]?.stringValue ?? String(decoding: answer.body.prefix(500), as: UTF8.self)
        return RemoteError(status: answer.status, error: error, reason: reason)
    }

    /// The `AuthSession` cookie, signing in when there is none or `renew`.
    private func sessionCookie(renew: Bool) async throws -> String? {
        guard case .cookie(let name, let password) = authentication else { return nil }
        if !renew, let known = cookieJar.value { return known }
        var request = URLRequest(url: url(["_session"]))
        request.httpMethod = "POST"
        request.httpBody = Data(JSON.object(["name": .string(name), "password": .string(password)]).text.utf8)
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        let answer = try await perform(request)
        guard answer.status < 400 else { throw Self.error(answer) }
        guard let header = answer.headers["set-cookie"],
              let cookie = header.split(separator: ";").first.map(String.init), cookie.hasPrefix("AuthSession=") else {
            throw RemoteError(status: answer.status, error: "unauthorized", reason: "the server set no AuthSession cookie")
        }
        cookieJar.value = cookie
        return cookie
    }
}

/// A request's `URLSessionDataTask`, cancelled from a queue of its own
/// (never inside Swift's cancellation handler, see `load`), even when the
/// cancellation comes before the request starts.
private final class PendingRequest: Sendable {
    private struct State {
        var task: URLSessionDataTask?
        var cancelled = false
    }

    private let state = Locked(State())

    func start(_ task: URLSessionDataTask) {
        let cancelNow = state.withLock {
            $0.task = task
            return $0.cancelled
        }
        task.resume()
        if cancelNow { DispatchQueue.global().async { task.cancel() } }
    }

    func cancel() {
        let task = state.withLock {
            $0.cancelled = true
            return $0.task
        }
        if let task { DispatchQueue.global().async { task.cancel() } }
    }
}
