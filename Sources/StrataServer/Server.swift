import Dispatch
import Foundation
import Hummingbird
import NIOCore
import ServiceLifecycle
import StrataDocuments
import StrataSync
import StrataQueryServers

/// `strata serve`: CouchDB's HTTP API over a folder of document databases,
/// one SQLite file per database.
///
/// ```swift
/// let server = try CouchServer(ServerConfiguration(dataDirectory: URL(fileURLWithPath: "couch"), admins: ["admin": "secret"]))
/// try await server.run(host: "127.0.0.1", port: 5984) { port in print("listening on \(port)") }
/// ```
@available(macOS 14, iOS 17, tvOS 17, *)
public final class CouchServer: Sendable {
    let registry: DatabaseRegistry
    let authenticator: Authenticator
    let sessions: SessionStore
    /// What the server was started with.
    public let configuration: ServerConfiguration
    /// The server's uuid (`GET /`), kept in the data directory.
    public let uuid: String
    /// The largest request body read into memory (CouchDB's
    /// `max_http_request_size` is 4 GiB; Strata holds such bodies whole).
    static let maximumBodySize = 64 << 20
    /// The largest attachment `PUT /{db}/{doc}/{name}` takes, streamed to a
    /// file then into SQLite a chunk at a time (CouchDB's default
    /// `max_attachment_size`, 1 GiB).
    static let maximumAttachmentSize = 1 << 30
    /// The node's name, as a single CouchDB node calls itself.
    static let nodeName = "nonode@nohost"

    /// A new id, as CouchDB makes them: 32 lowercase hex digits.
    static func makeUUID() -> String {
        UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
    }
    let groupCommit: Bool
    /// The JavaScript processes for design-document functions; nil when the
    /// server was given no query-server command.
    let queryServers: QueryServers?
    /// Continuous replications started with `POST /_replicate`.
    let replications = ReplicationJobs()
    /// The folder of SQLite files `/_utils` browses (`--sqlite DIR`).
    let sqliteBrowser: SQLiteBrowser?
    /// The replications the `_replicator` database's documents ask for.
    let replicatorDatabase = ReplicatorDatabase()

    /// The rounds of PBKDF2 CouchDB 3.4 uses for new passwords.
    public static let defaultPasswordIterations = 600_000

    /// The most PBKDF2 rounds a `_users` document may ask for: more is
    /// refused when written, and a stored hash asking for more never signs
    /// in (each attempt would cost the server seconds of CPU).
    public static let maximumPasswordIterations = 2_000_000

    /// Serves the databases in the configuration's folder (created when
    /// missing).
    ///
    /// - Throws: when the folder cannot be created, the `_users` database
    ///   cannot be opened, or the admin file cannot be read or rewritten.
    public init(_ configuration: ServerConfiguration) throws {
        self.configuration = configuration
        let dataDirectory = configuration.dataDirectory
        let passwordIterations = configuration.passwordIterations
        groupCommit = configuration.groupCommit
        sqliteBrowser = configuration.sqliteDirectory.map {
            SQLiteBrowser(directory: $0, writable: configuration.sqliteWritable, timeLimit: configuration.sqliteTimeLimit)
        }
        queryServers = configuration.queryServer.map { QueryServers(command: $0, timeLimit: configuration.functionTimeLimit) }
        sessions = SessionStore(timeout: configuration.sessionTimeout)
        try FileManager.default.createDirectory(at: dataDirectory, withIntermediateDirectories: true)
        // Without query servers, the engine's JavaScript calls say what to
        // pass to get them.
        let registry = DatabaseRegistry(directory: dataDirectory, runner: queryServers ?? MissingQueryServer(),
                                        defaultSecurity: configuration.defaultSecurity.object)
        self.registry = registry
        var hashed: [String: PasswordHash] = [:]
        if let adminFile = configuration.adminFile { hashed = try AdminConfiguration.load(adminFile, iterations: passwordIterations) }
        for (name, password) in configuration.admins { hashed[name] = PasswordHash(password: password, iterations: passwordIterations) }
        // `_users` and `_replicator` keep the rules of their own that CouchDB
        // gives them, whatever new databases start with.
        if !registry.exists(DatabaseRegistry.usersDatabase) { try registry.create(DatabaseRegistry.usersDatabase, security: nil) }
        // CouchDB's setup makes `_replicator` too; Strata has no setup step.
        if !registry.exists(ReplicatorDatabase.name) { try registry.create(ReplicatorDatabase.name, security: nil) }
        try registry.register(database: ReplicatorDatabase.name, design: "_replicator", ReplicatorDatabase.designFunctions)
        // CouchDB's `_design/_auth` rules, run by the engine on every write
        // to `_users` (replicated ones included).
        try registry.register(database: DatabaseRegistry.usersDatabase, design: "_auth",
                              UserDocuments.designFunctions(maximumIterations: Self.maximumPasswordIterations))
        authenticator = Authenticator(admins: hashed, iterations: passwordIterations, maximumIterations: Self.maximumPasswordIterations,
                                      lockout: configuration.lockout) { name in
            try? registry.database(DatabaseRegistry.usersDatabase).document(id: "org.couchdb.user:" + name)
        }
        // Hashed from these passwords a moment ago: their first sign-in
        // need not derive the key again.
        for (name, password) in configuration.admins { authenticator.rememberAdminPassword(name: name, password: password) }
        let uuidFile = dataDirectory.appendingPathComponent("server.uuid")
        if let existing = try? String(contentsOf: uuidFile, encoding: .utf8), existing.count == 32 {
            uuid = existing
        } else {
            let made = Self.makeUUID()
            try made.write(to: uuidFile, atomically: true, encoding: .utf8)
            uuid = made
        }
    }

    /// Registers Swift design functions (update handlers, validation,
    /// filters, views) for the design `design` of the database `database`:
    /// they answer `_design/{design}/…` and are used instead of the
    /// JavaScript of a design document with that name.
    public func register(database: String, design: String, _ functions: DesignFunctions?) throws {
        try registry.register(database: database, design: design, functions)
    }

    /// Listens on `host:port` (0 for a free port) until the task is
    /// cancelled or the process gets SIGINT/SIGTERM; `onListening` receives
    /// the port once the server accepts connections.
    ///
    /// Either way the server stops gracefully: it stops accepting, lets the
    /// requests under way finish, then returns. Requests that do not end by
    /// themselves (continuous feeds) are cancelled after
    /// `shutdownGracePeriod`.
    public func run(
        host: String = "127.0.0.1", port: Int = 5984, shutdownGracePeriod: Duration = .seconds(5),
        onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) async throws {
        let app = makeApplication(host: host, port: port, onListening: onListening)
        replicatorDatabase.start(registry)
        defer {
            replicatorDatabase.stop()
            replications.cancelAll()
            queryServers?.stopAll()
        }
        let group = ServiceGroup(
            configuration: .init(services: [app], gracefulShutdownSignals: [.sigterm, .sigint], logger: app.logger))
        // The group runs in a task of its own, so cancelling this one does
        // not cancel the accept loop: a connection accepted at that moment
        // would be dropped unfinished, which SwiftNIO traps on. Cancelling
        // shuts down gracefully instead, which first closes the listener.
        let running = Task { try await group.run() }
        try await withTaskCancellationHandler {
            try await running.value
        } onCancel: {
            Task {
                await group.triggerGracefulShutdown()
                try? await Task.sleep(for: shutdownGracePeriod)
                running.cancel()
            }
        }
    }
}

@available(macOS 14, iOS 17, tvOS 17, *)
extension CouchServer {
    /// The server as a Hummingbird application, not yet running: ``run``
    /// runs it on a socket.
    package func makeApplication(
        host: String = "127.0.0.1", port: Int = 5984, onListening: @escaping @Sendable (Int) async -> Void = { _ in }
    ) -> some ApplicationProtocol {
        Application(
            responder: makeResponder(),
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: CouchHeadersMiddleware.serverName),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? port) }
        )
    }
}

/// Runs blocking SQLite work off Swift's cooperative pool.
func offload<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await DocumentDatabase.blocking(on: .global(), body)
}

/// Runs work that waits on a design function's JavaScript on the query
/// servers' queue (``QueryServers/functionQueue``), so a function that runs
/// until its time limit never holds a thread other requests need.
func offloadFunction<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await DocumentDatabase.blocking(on: QueryServers.functionQueue, body)
}
