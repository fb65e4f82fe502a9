import Foundation
import Strata
import StrataDocuments
import StrataSync

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

    /// The `_security` a database created here starts with
    /// (``ServerConfiguration/defaultSecurity``); nil for none.
    let defaultSecurity: JSONObject?

    init(directory: URL, runner: (any DesignFunctionRunner)? = nil, defaultSecurity: JSONObject? = nil) {
        self.directory = directory
        self.runner = runner
        self.defaultSecurity = defaultSecurity
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

    /// CouchDB's reason for refusing `name`.
    static func nameRule(_ name: String) -> String {
        "Name: '\(name)'. Only lowercase characters (a-z), digits (0-9), and any of the characters _, $, (, ), +, -, and / are allowed. Must begin with a letter."
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
                throw Self.missing
            }
            let db = try prepared(DocumentDatabase(path: url(name).path), name, state.designs[name] ?? [:])
            state.open[name] = db
            return db
        }
    }

    /// Creates a database with the server's default `_security` (`PUT /db`,
    /// a replication's `create_target`).
    func create(_ name: String) throws {
        try create(name, security: defaultSecurity)
    }

    /// Creates a database that starts with `security` (nil for none), set
    /// before any request can reach it.
    func create(_ name: String, security: JSONObject?) throws {
        if !Self.fitsInFileName(name) {
            throw DocumentError(.illegalDatabaseName, "Name: '\(name)'. A database name may have at most \(Self.maximumNameLength) characters (each / counts three).")
        }
        guard DatabaseRegistry.isValidName(name) else {
            throw DocumentError(.illegalDatabaseName, Self.nameRule(name))
        }
        try state.withLock { state in
            if state.open[name] != nil || FileManager.default.fileExists(atPath: url(name).path) {
                throw DocumentError(.fileExists, "The database could not be created, the file already exists.")
            }
            let db = try prepared(DocumentDatabase(path: url(name).path), name, state.designs[name] ?? [:])
            if let security {
                // A database that could not be closed to everyone is not
                // left behind open to everyone.
                do { try db.setSecurity(security) } catch {
                    closeAndRemove(db, name)
                    throw error
                }
            }
            state.open[name] = db
            state.securityObjects[name] = SecurityObject(security.map(JSON.object))
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
                throw Self.missing
            }
            state.securityObjects[name] = nil
            closeAndRemove(state.open.removeValue(forKey: name), name)
        }
    }

    /// Closes `db` (when open) and removes the database's files.
    private func closeAndRemove(_ db: DocumentDatabase?, _ name: String) {
        try? (db?.writer as? DatabasePoolClosing)?.closeAll()
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url(name).path + suffix) }
    }

    /// CouchDB's answer for a database that is not there.
    static let missing = DocumentError(.notFound, "Database does not exist.")

    func names() -> [String] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return files.filter { $0.hasSuffix(".couch.sqlite") }
            .map { String($0.dropLast(".couch.sqlite".count)).replacingOccurrences(of: "%2F", with: "/") }
            .sorted()
    }
}

protocol DatabasePoolClosing { func closeAll() throws }

extension DatabasePool: DatabasePoolClosing {
    func closeAll() throws { try close() }
}
