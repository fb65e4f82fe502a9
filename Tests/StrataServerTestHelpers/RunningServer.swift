import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import StrataDocuments
import StrataServer
import StrataSync
import StrataTestHelpers

/// A `CouchServer` on a free loopback port for the length of a test.
public struct RunningServer: Sendable {
    /// The server's address, `http://127.0.0.1:<port>`.
    public let base: URL
    let task: Task<Void, any Error>

    /// Starts a server on a fresh folder with one admin (`admin:secret`),
    /// the `strata` binary beside the tests as its query server, new
    /// databases open to everyone, and what the test
    /// changes in `configure` (before the server is made) and `prepare`
    /// (after).
    public static func start(admins: [String: String] = ["admin": "secret"], configFile: URL? = nil,
                             functionTimeLimit: Duration = .seconds(30), directory: URL? = nil,
                             sqlite: URL? = nil, sqliteWritable: Bool = false, sqliteTimeLimit: Duration = .seconds(5),
                             prepare: (CouchServer) throws -> Void = { _ in },
                             configure: (inout ServerConfiguration) -> Void = { _ in }) async throws -> RunningServer {
        let directory = try directory ?? URL(fileURLWithPath: try makeTemporaryPath("couch"))
        var configuration = ServerConfiguration(dataDirectory: directory, admins: admins)
        if let configFile { try configuration.read(iniFile: configFile) }
        // Few PBKDF2 rounds: the tests sign in often; the rounds are not what they check.
        configuration.passwordIterations = 1000
        configuration.queryServer = [try strataBinary().path, "query-server"]
        configuration.functionTimeLimit = functionTimeLimit
        configuration.sqliteDirectory = sqlite
        configuration.sqliteWritable = sqliteWritable
        configuration.sqliteTimeLimit = sqliteTimeLimit
        // New databases open to everyone (CouchDB 2's default): the suites
        // of views, filters, functions and replication write into them
        // without signing in, as the seed's devices do. The admin-only
        // default `strata serve` ships has its own tests
        // (CouchDBDefaultsTests), and the end-to-end tests run it as shipped.
        configuration.defaultSecurity = .everyone
        configure(&configuration)
        let server = try CouchServer(configuration)
        try prepare(server)
        return try await start(server)
    }

    /// Runs a server made by the test.
    public static func start(_ server: CouchServer) async throws -> RunningServer {
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let task = Task { try await server.run(host: "127.0.0.1", port: 0) { continuation.yield($0) } }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw DocumentError(.internalError, "the server did not start") }
        return RunningServer(base: URL(string: "http://127.0.0.1:\(port)")!, task: task)
    }

    /// Stops the server.
    public func stop() { task.cancel() }

    /// Stops the server and waits until it has closed its port.
    public func stopped() async {
        task.cancel()
        _ = await task.result
    }

    /// The `strata` binary built beside the tests, which serves
    /// `strata query-server`.
    public static func strataBinary() throws -> URL {
        let url = Bundle.module.bundleURL.deletingLastPathComponent().appendingPathComponent("strata")
        guard FileManager.default.isExecutableFile(atPath: url.path) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: url.path])
        }
        return url
    }

    /// Sends a request; answers the status and the JSON body.
    public func send(_ method: String, _ path: String, json: String? = nil, user: String? = nil, headers: [String: String] = [:], body: Data? = nil) async throws -> (Int, JSON?) {
        let (status, answer, _) = try await sendWithHeaders(method, path, json: json, user: user, headers: headers, body: body)
        return (status, answer)
    }

    /// Sends a request; answers the status, the JSON body and the response headers.
    public func sendWithHeaders(_ method: String, _ path: String, json: String? = nil, user: String? = nil, headers: [String: String] = [:], body: Data? = nil) async throws -> (Int, JSON?, [String: String]) {
        let (status, data, fields) = try await sendRaw(method, path, json: json, user: user, headers: headers, body: body)
        return (status, data.isEmpty ? nil : try? JSON(parsing: data), fields)
    }

    /// Sends a request; answers the status, the body's bytes and the response
    /// headers (names lowercased).
    public func sendRaw(_ method: String, _ path: String, json: String? = nil, user: String? = nil, headers: [String: String] = [:], body: Data? = nil) async throws -> (Int, Data, [String: String]) {
        var request = URLRequest(url: URL(string: base.absoluteString + path)!)
        request.httpMethod = method
        request.timeoutInterval = 120
        if let json {
            request.httpBody = Data(json.utf8)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        if let body { request.httpBody = body }
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if let user {
            request.setValue("Basic " + Data(user.utf8).base64EncodedString(), forHTTPHeaderField: "Authorization")
        }
        let session = URLSession(configuration: .ephemeral)
        let (data, response) = try await session.data(for: request)
        let http = response as? HTTPURLResponse
        var fields: [String: String] = [:]
        for (name, value) in http?.allHeaderFields ?? [:] { fields[String(describing: name).lowercased()] = String(describing: value) }
        return (http?.statusCode ?? 0, data, fields)
    }
}

extension RunningServer {
    /// A Swift client for this server.
    public func client(_ authentication: RemoteAuthentication = .basic(name: "admin", password: "secret")) throws -> CouchClient {
        try CouchClient(url: base, authentication: authentication)
    }
}
