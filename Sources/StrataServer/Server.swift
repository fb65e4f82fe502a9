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
/// let server = try CouchServer(dataDirectory: URL(fileURLWithPath: "couch"), admins: ["admin": "secret"])
/// try await server.run(host: "127.0.0.1", port: 5984) { port in print("listening on \(port)") }
/// ```
@available(macOS 14, iOS 17, tvOS 17, *)
public final class CouchServer: Sendable {
    let registry: DatabaseRegistry
    let authenticator: Authenticator
    let sessions = SessionStore()
    /// The server's uuid (`GET /`), kept in the data directory.
    public let uuid: String
    let maximumBodySize = 64 << 20
    /// The largest attachment `PUT /{db}/{doc}/{name}` takes, streamed to a
    /// file then into SQLite a chunk at a time (CouchDB's default
    /// `max_attachment_size`, 1 GiB).
    let maximumAttachmentSize = 1 << 30
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

    /// Serves the databases in `dataDirectory` (created when missing).
    ///
    /// - Parameters:
    ///   - admins: server admins' names and passwords; the passwords are
    ///     hashed with PBKDF2 at once and not kept. With no admins, nobody
    ///     can create or delete a database: there is no admin party.
    ///   - configFile: a CouchDB-style ini file whose `[admins]` section
    ///     lists more server admins. Plain-text passwords there are replaced
    ///     by their hashes (`-pbkdf2:sha256-KEY,SALT,ROUNDS`) in the file, as
    ///     CouchDB does.
    ///   - passwordIterations: PBKDF2 rounds for passwords hashed here
    ///     (admins, and `password` in `_users` documents).
    ///   - queryServer: the command that starts a JavaScript query server
    ///     (`["/path/to/strata", "query-server"]`); `strata serve` passes
    ///     its own executable. Without one, design-document functions answer
    ///     500 saying so.
    ///   - functionTimeLimit: how long one design-document function may run
    ///     before its process is killed (CouchDB's `os_process_timeout`, 5 s).
    ///   - groupCommit: on by default, commits concurrent single-document
    ///     writes to one database together; off, each gets its own
    ///     transaction (for comparing in benchmarks).
    ///   - sqliteDirectory: a folder whose SQLite files (`.sqlite`,
    ///     `.sqlite3`, `.db`) the table browser of `/_utils` shows to server
    ///     admins; nil shows none.
    ///   - sqliteWritable: lets the table browser's SQL box write; it runs
    ///     on a read-only connection otherwise.
    ///   - sqliteTimeLimit: how long a query of the table browser may run.
    /// - Throws: when the folder cannot be created, the `_users` database
    ///   cannot be opened, or the config file cannot be read or rewritten.
    public init(dataDirectory: URL, admins: [String: String], configFile: URL? = nil,
                passwordIterations: Int = CouchServer.defaultPasswordIterations,
                queryServer: [String]? = nil, functionTimeLimit: Duration = .seconds(5),
                groupCommit: Bool = true, sqliteDirectory: URL? = nil, sqliteWritable: Bool = false,
                sqliteTimeLimit: Duration = .seconds(5)) throws {
        self.groupCommit = groupCommit
        sqliteBrowser = sqliteDirectory.map { SQLiteBrowser(directory: $0, writable: sqliteWritable, timeLimit: sqliteTimeLimit) }
        queryServers = queryServer.map { QueryServers(command: $0, timeLimit: functionTimeLimit) }
        try FileManager.default.createDirectory(at: dataDirectory, withIntermediateDirectories: true)
        // Without query servers, the engine's JavaScript calls say what to
        // pass to get them.
        let registry = DatabaseRegistry(directory: dataDirectory, runner: queryServers ?? MissingQueryServer())
        self.registry = registry
        var hashed: [String: PasswordHash] = [:]
        if let configFile { hashed = try AdminConfiguration.load(configFile, iterations: passwordIterations) }
        for (name, password) in admins { hashed[name] = PasswordHash(password: password, iterations: passwordIterations) }
        if !registry.exists(DatabaseRegistry.usersDatabase) { try registry.create(DatabaseRegistry.usersDatabase) }
        // CouchDB's setup makes `_replicator` too; Strata has no setup step.
        if !registry.exists(ReplicatorDatabase.name) { try registry.create(ReplicatorDatabase.name) }
        try registry.register(database: ReplicatorDatabase.name, design: "_replicator", ReplicatorDatabase.designFunctions)
        // CouchDB's `_design/_auth` rules, run by the engine on every write
        // to `_users` (replicated ones included).
        try registry.register(database: DatabaseRegistry.usersDatabase, design: "_auth",
                              UserDocuments.designFunctions(maximumIterations: Self.maximumPasswordIterations))
        authenticator = Authenticator(admins: hashed, iterations: passwordIterations, maximumIterations: Self.maximumPasswordIterations) { name in
            try? registry.database(DatabaseRegistry.usersDatabase).document(id: "org.couchdb.user:" + name)
        }
        let uuidFile = dataDirectory.appendingPathComponent("server.uuid")
        if let existing = try? String(contentsOf: uuidFile, encoding: .utf8), existing.count == 32 {
            uuid = existing
        } else {
            let made = UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
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
        let responder = CouchResponder(server: self)
        let app = Application(
            responder: responder,
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "CouchDB/3.4.3 (Strata)"),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? port) }
        )
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

/// Opens each database's file once and keeps it open.
final class DatabaseRegistry: DatabaseResolver, Sendable {
    let directory: URL
    private struct State {
        var open: [String: DocumentDatabase] = [:]
        var securityObjects: [String: SecurityObject] = [:]
        /// Swift design functions, by database then design name, given to
        /// each database when it is opened.
        var designs: [String: [String: DesignFunctions]] = [:]
    }

    private let state = Locked(State())

    func register(database name: String, design: String, _ functions: DesignFunctions?) throws {
        let db = state.withLock { state -> DocumentDatabase? in
            state.designs[name, default: [:]][design] = functions
            return state.open[name]
        }
        try db?.register(design: design, functions)
    }

    /// An open database and its `_security` when both are in memory, so a
    /// request needs no file access to find them.
    func opened(_ name: String) -> (DocumentDatabase, SecurityObject)? {
        state.withLock { state in
            guard let db = state.open[name], let security = state.securityObjects[name] else { return nil }
            return (db, security)
        }
    }

    /// A database's `_security`, read once and kept until it is written.
    func security(_ name: String) throws -> SecurityObject {
        if let known = state.withLock({ $0.securityObjects[name] }) { return known }
        let security = SecurityObject(try database(name).metadata("_security"))
        // A write that landed meanwhile wins over what was read before it.
        return state.withLock { state in
            if let newer = state.securityObjects[name] { return newer }
            state.securityObjects[name] = security
            return security
        }
    }

    func setSecurity(_ security: JSONObject, of name: String) throws {
        try database(name).setSecurity(security)
        state.withLock { $0.securityObjects[name] = SecurityObject(.object(security)) }
    }

    /// What runs each database's design-document JavaScript (the engine
    /// asks it for `validate_doc_update`); nil without a query server.
    let runner: (any DesignFunctionRunner)?

    init(directory: URL, runner: (any DesignFunctionRunner)? = nil) {
        self.directory = directory
        self.runner = runner
    }

    /// A database as the registry keeps it: the server's functions and
    /// runner given to the engine.
    private func prepared(_ db: DocumentDatabase, _ name: String, _ designs: [String: DesignFunctions]) throws -> DocumentDatabase {
        db.setDesignFunctionRunner(runner, databaseName: name)
        for (design, functions) in designs { try db.register(design: design, functions) }
        return db
    }

    /// CouchDB's users database.
    static let usersDatabase = "_users"
    /// The system databases a client may name, though they start with `_`.
    static let systemDatabases: Set<String> = ["_users", "_replicator", "_global_changes"]

    /// The longest database name: its file is the name, `.couch.sqlite`
    /// and SQLite's `-journal`, and file systems stop at 255 bytes (CouchDB,
    /// whose files are named otherwise, stops at 238).
    static let maximumNameLength = 234

    /// Whether the name's file fits: `/` is written %2F in it.
    static func fitsInFileName(_ name: String) -> Bool {
        name.replacingOccurrences(of: "/", with: "%2F").utf8.count <= maximumNameLength
    }

    static func isValidName(_ name: String) -> Bool {
        if systemDatabases.contains(name) { return true }
        guard fitsInFileName(name) else { return false }
        guard let first = name.unicodeScalars.first, ("a"..."z").contains(first) else { return false }
        return name.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || "_$()+/-".unicodeScalars.contains($0) }
    }

    func url(_ name: String) -> URL {
        directory.appendingPathComponent(name.replacingOccurrences(of: "/", with: "%2F") + ".couch.sqlite")
    }

    func exists(_ name: String) -> Bool {
        state.withLock { $0.open[name] != nil } || FileManager.default.fileExists(atPath: url(name).path)
    }

    func database(_ name: String) throws -> DocumentDatabase {
        try state.withLock { state in
            if let db = state.open[name] { return db }
            guard FileManager.default.fileExists(atPath: url(name).path) else {
                throw DocumentError(.notFound, "Database does not exist.")
            }
            let db = try prepared(DocumentDatabase(path: url(name).path), name, state.designs[name] ?? [:])
            state.open[name] = db
            return db
        }
    }

    func create(_ name: String) throws {
        if !Self.fitsInFileName(name) {
            throw DocumentError(.illegalDatabaseName, "Name: '\(name)'. A database name may have at most \(Self.maximumNameLength) characters (each / counts three).")
        }
        guard DatabaseRegistry.isValidName(name) else {
            throw DocumentError(.illegalDatabaseName, "Name: '\(name)'. Only lowercase characters (a-z), digits (0-9), and any of the characters _, $, (, ), +, -, and / are allowed. Must begin with a letter.")
        }
        try state.withLock { state in
            if state.open[name] != nil || FileManager.default.fileExists(atPath: url(name).path) {
                throw DocumentError(.fileExists, "The database could not be created, the file already exists.")
            }
            state.open[name] = try prepared(DocumentDatabase(path: url(name).path), name, state.designs[name] ?? [:])
        }
    }

    /// The name an open database is kept under.
    func name(of db: DocumentDatabase) -> String? {
        state.withLock { $0.open.first { $0.value === db }?.key }
    }

    func delete(_ name: String) throws {
        try state.withLock { state in
            let path = url(name).path
            guard state.open[name] != nil || FileManager.default.fileExists(atPath: path) else {
                throw DocumentError(.notFound, "Database does not exist.")
            }
            state.securityObjects[name] = nil
            if let db = state.open.removeValue(forKey: name) {
                try? (db.writer as? DatabasePoolClosing)?.closeAll()
            }
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
    }

    func names() -> [String] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return files.filter { $0.hasSuffix(".couch.sqlite") }
            .map { String($0.dropLast(".couch.sqlite".count)).replacingOccurrences(of: "%2F", with: "/") }
            .sorted()
    }
}

import Strata

protocol DatabasePoolClosing { func closeAll() throws }
extension DatabasePool: DatabasePoolClosing {
    func closeAll() throws { try close() }
}

/// Cookie sessions (`POST /_session`): random tokens kept in memory, so a
/// restart signs everyone out.
///
/// A token stands for a name and the salt of the password it signed in with,
/// not for a user context: each request reads the account again (see
/// ``Authenticator/sessionUser(name:salt:)``), so a changed password or a
/// deleted account ends the session and changed roles apply at once.
final class SessionStore: Sendable {
    private let tokens = Locked<[String: (name: String, salt: String)]>([:])

    func make(for user: UserContext) -> String {
        let token = (0..<32).map { _ in UInt8.random(in: 0...255) }.hexString
        if let name = user.name, let salt = user.salt { tokens.withLock { $0[token] = (name, salt) } }
        return token
    }

    func session(for token: String) -> (name: String, salt: String)? { tokens.withLock { $0[token] } }
    func remove(_ token: String) { tokens.withLock { _ = $0.removeValue(forKey: token) } }
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

/// The `[admins]` section of a CouchDB-style ini file.
enum AdminConfiguration {
    /// The admins listed in `file`; plain-text passwords are hashed and the
    /// file rewritten with the hashes, so no password stays on disk.
    static func load(_ file: URL, iterations: Int) throws -> [String: PasswordHash] {
        let text: String
        do { text = try String(contentsOf: file, encoding: .utf8) } catch {
            throw DocumentError(.internalError, "cannot read the config file \(file.path): \(error.localizedDescription)")
        }
        var admins: [String: PasswordHash] = [:]
        var section = ""
        var lines: [String] = []
        var rewritten = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if trimmed.hasPrefix("[") && trimmed.hasSuffix("]") {
                section = String(trimmed.dropFirst().dropLast()).trimmingCharacters(in: .whitespaces)
            } else if section == "admins", !trimmed.hasPrefix(";"), !trimmed.hasPrefix("#"), let equals = trimmed.firstIndex(of: "=") {
                let name = trimmed[..<equals].trimmingCharacters(in: .whitespaces)
                let value = trimmed[trimmed.index(after: equals)...].trimmingCharacters(in: .whitespaces)
                if let hash = PasswordHash(configValue: value) {
                    admins[name] = hash
                } else {
                    let hash = PasswordHash(password: value, iterations: iterations)
                    admins[name] = hash
                    lines.append("\(name) = \(hash.configValue)")
                    rewritten = true
                    continue
                }
            }
            lines.append(line)
        }
        if rewritten { try lines.joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8) }
        return admins
    }
}
