import Dispatch
import Foundation
import Hummingbird
import NIOCore
import StrataDocuments

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
    let admins: [String: String]
    let sessions = SessionStore()
    /// The server's uuid (`GET /`), kept in the data directory.
    public let uuid: String
    let maximumBodySize = 64 << 20
    let groupCommit: Bool

    /// Serves the databases in `dataDirectory` (created when missing);
    /// `admins` are the server admins' names and passwords. With no admins,
    /// nobody can create or delete a database: there is no admin party.
    ///
    /// `groupCommit` (on by default) commits concurrent single-document
    /// writes to one database together; off, each gets its own transaction
    /// (for comparing in benchmarks).
    public init(dataDirectory: URL, admins: [String: String], groupCommit: Bool = true) throws {
        self.groupCommit = groupCommit
        try FileManager.default.createDirectory(at: dataDirectory, withIntermediateDirectories: true)
        registry = DatabaseRegistry(directory: dataDirectory)
        self.admins = admins
        let uuidFile = dataDirectory.appendingPathComponent("server.uuid")
        if let existing = try? String(contentsOf: uuidFile, encoding: .utf8), existing.count == 32 {
            uuid = existing
        } else {
            let made = UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
            try made.write(to: uuidFile, atomically: true, encoding: .utf8)
            uuid = made
        }
    }

    /// Listens on `host:port` (0 for a free port) until the task is
    /// cancelled or the process gets SIGINT/SIGTERM; `onListening` receives
    /// the port once the server accepts connections.
    public func run(host: String = "127.0.0.1", port: Int = 5984, onListening: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        let responder = CouchResponder(server: self)
        let app = Application(
            responder: responder,
            configuration: ApplicationConfiguration(address: .hostname(host, port: port), serverName: "CouchDB/3.4.3 (Strata)"),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? port) }
        )
        try await app.runService()
    }
}

/// Opens each database's file once and keeps it open.
final class DatabaseRegistry: @unchecked Sendable {
    // @unchecked: `open` is only touched under `lock`.
    let directory: URL
    private let lock = NSLock()
    private var open: [String: DocumentDatabase] = [:]
    private var committers: [ObjectIdentifier: GroupCommitter] = [:]

    /// The group committer of an open database.
    func committer(for db: DocumentDatabase) -> GroupCommitter {
        lock.withLock {
            if let c = committers[ObjectIdentifier(db)] { return c }
            let c = GroupCommitter(database: db)
            committers[ObjectIdentifier(db)] = c
            return c
        }
    }

    init(directory: URL) { self.directory = directory }

    static func isValidName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, ("a"..."z").contains(first) else { return false }
        return name.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || "_$()+/-".unicodeScalars.contains($0) }
    }

    func url(_ name: String) -> URL {
        directory.appendingPathComponent(name.replacingOccurrences(of: "/", with: "%2F") + ".couch.sqlite")
    }

    func exists(_ name: String) -> Bool {
        lock.withLock { open[name] != nil } || FileManager.default.fileExists(atPath: url(name).path)
    }

    func database(_ name: String) throws -> DocumentDatabase {
        try lock.withLock {
            if let db = open[name] { return db }
            guard FileManager.default.fileExists(atPath: url(name).path) else {
                throw DocumentError(.notFound, "Database does not exist.")
            }
            let db = try DocumentDatabase(path: url(name).path)
            open[name] = db
            return db
        }
    }

    func create(_ name: String) throws {
        guard DatabaseRegistry.isValidName(name) else {
            throw DocumentError(.illegalDatabaseName, "Name: '\(name)'. Only lowercase characters (a-z), digits (0-9), and any of the characters _, $, (, ), +, -, and / are allowed. Must begin with a letter.")
        }
        try lock.withLock {
            if open[name] != nil || FileManager.default.fileExists(atPath: url(name).path) {
                throw DocumentError(.fileExists, "The database could not be created, the file already exists.")
            }
            open[name] = try DocumentDatabase(path: url(name).path)
        }
    }

    func delete(_ name: String) throws {
        try lock.withLock {
            let path = url(name).path
            guard open[name] != nil || FileManager.default.fileExists(atPath: path) else {
                throw DocumentError(.notFound, "Database does not exist.")
            }
            if let db = open.removeValue(forKey: name) {
                committers[ObjectIdentifier(db)] = nil
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

/// Cookie sessions (`POST /_session`): random tokens kept in memory.
final class SessionStore: @unchecked Sendable {
    // @unchecked: `tokens` is only touched under `lock`.
    private let lock = NSLock()
    private var tokens: [String: String] = [:]

    func make(for name: String) -> String {
        let token = UUID().uuidString + UUID().uuidString
        lock.withLock { tokens[token] = name }
        return token
    }

    func name(for token: String) -> String? { lock.withLock { tokens[token] } }
    func remove(_ token: String) { lock.withLock { _ = tokens.removeValue(forKey: token) } }
}

/// Runs blocking SQLite work off Swift's cooperative pool.
func offload<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        DispatchQueue.global().async {
            continuation.resume(with: Result { try body() })
        }
    }
}
