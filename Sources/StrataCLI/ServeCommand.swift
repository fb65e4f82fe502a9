import ArgumentParser
import Foundation
import StrataServer

/// `strata serve`: CouchDB's HTTP API over a folder of databases.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve a folder of document databases over CouchDB's HTTP API.",
        discussion: """
            Each database is one SQLite file in the data folder. Clients that speak \
            CouchDB (curl, PouchDB, Python's couchdb packages, CouchDB's replicator) \
            work unchanged. Without --admin or --config nobody can create or delete \
            databases. Passwords are kept hashed with PBKDF2; users sign up in the \
            _users database as in CouchDB.
            """
    )

    @Option(name: .long, help: "The folder holding the databases (created when missing).")
    var data: String

    @Option(name: .long, help: "The port to listen on (0 picks a free one and prints it).")
    var port: Int = 5984

    @Option(name: .long, help: "The address to listen on.")
    var bind: String = "127.0.0.1"

    @Option(name: .long, help: "A server admin, NAME:PASSWORD (repeatable); also read from STRATA_ADMIN.")
    var admin: [String] = []

    @Option(name: .long, help: ArgumentHelp("A CouchDB-style ini file whose [admins] section lists server admins.", discussion: "Plain-text passwords there are replaced by their PBKDF2 hashes in the file, as CouchDB does."))
    var config: String?

    @Option(name: .long, help: "PBKDF2 rounds for passwords hashed by the server (CouchDB 3.4 uses 600000).")
    var passwordIterations: Int = 600_000

    @Option(name: .long, help: "How long, in milliseconds, a design-document function may run before it is stopped.")
    var functionTimeLimit: Int = 5000

    @Option(name: .long, help: ArgumentHelp("A folder of SQLite files (.sqlite, .sqlite3, .db) to show in the table browser at /_utils.", valueName: "DIR"))
    var sqlite: String?

    @Flag(name: .long, help: "Let the table browser's SQL box write to those files (read-only otherwise).")
    var sqliteWritable = false

    @Option(name: .long, help: "How long, in milliseconds, a table-browser query may run before it is stopped.")
    var sqliteTimeLimit: Int = 5000

    func validate() throws {
        guard functionTimeLimit > 0 else { throw ValidationError("--function-time-limit must be positive") }
        guard passwordIterations > 0 else { throw ValidationError("--password-iterations must be positive") }
        guard sqliteTimeLimit > 0 else { throw ValidationError("--sqlite-time-limit must be positive") }
        var isFolder: ObjCBool = false
        if let sqlite, !FileManager.default.fileExists(atPath: sqlite, isDirectory: &isFolder) || !isFolder.boolValue {
            throw ValidationError("--sqlite: no folder at \(sqlite)")
        }
        if sqliteWritable, sqlite == nil { throw ValidationError("--sqlite-writable needs --sqlite DIR") }
        if let config, !FileManager.default.fileExists(atPath: config) {
            throw ValidationError("--config: no file at \(config)")
        }
    }

    func run() async throws {
        try await reportingErrors {
            var admins: [String: String] = [:]
            for spec in admin + (ProcessInfo.processInfo.environment["STRATA_ADMIN"].map { [$0] } ?? []) {
                guard let colon = spec.firstIndex(of: ":"), colon != spec.startIndex else {
                    throw ValidationError("--admin takes NAME:PASSWORD, got '\(spec)'")
                }
                admins[String(spec[..<colon])] = String(spec[spec.index(after: colon)...])
            }
            // STRATA_GROUP_COMMIT=0 turns group commit off (for benchmarks).
            let groupCommit = ProcessInfo.processInfo.environment["STRATA_GROUP_COMMIT"] != "0"
            let server = try CouchServer(
                dataDirectory: URL(fileURLWithPath: data), admins: admins,
                configFile: config.map { URL(fileURLWithPath: $0) },
                passwordIterations: passwordIterations,
                queryServer: Bundle.main.executablePath.map { [$0, "query-server"] },
                functionTimeLimit: .milliseconds(functionTimeLimit),
                groupCommit: groupCommit,
                sqliteDirectory: sqlite.map { URL(fileURLWithPath: $0) },
                sqliteWritable: sqliteWritable,
                sqliteTimeLimit: .milliseconds(sqliteTimeLimit)
            )
            let bind = self.bind
            try await server.run(host: bind, port: port) { port in
                FileHandle.standardOutput.write(Data("strata serve: CouchDB API on http://\(bind):\(port)/ (data in \(data)); the page: http://\(bind):\(port)/_utils/\n".utf8))
            }
        }
    }
}
