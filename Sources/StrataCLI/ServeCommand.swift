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
            databases. New databases are for server admins only until their _security \
            names members (CouchDB 3's default; --default-security everyone opens \
            them). Passwords are kept hashed with PBKDF2; users sign up in the \
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

    @Option(name: .long, help: ArgumentHelp("A CouchDB ini file (local.ini): [admins], [couchdb] default_security, [chttpd] enable_cors, [cors], [chttpd_auth] timeout, [chttpd_auth_lockout].", discussion: "Plain-text admin passwords there are replaced by their PBKDF2 hashes in the file, as CouchDB does. Command-line options win over the file."))
    var config: String?

    @Option(name: .long, help: ArgumentHelp("Who may use a database created over HTTP until its _security says otherwise: admin_only (CouchDB 3's default) or everyone.", valueName: "admin_only|everyone"))
    var defaultSecurity: String?

    @Option(name: .long, help: ArgumentHelp("Let web pages of ORIGIN (http://host:port, or *) call the server from a browser (CORS); repeatable.", valueName: "ORIGIN"))
    var corsOrigin: [String] = []

    @Flag(name: .long, help: "Let those pages send cookies and Authorization (CORS credentials).")
    var corsCredentials = false

    @Option(name: .long, help: "How many seconds a session cookie stays valid unless used (CouchDB's [chttpd_auth] timeout, 600).")
    var sessionTimeout: Int?

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
        if let defaultSecurity, DefaultSecurity(rawValue: defaultSecurity) == nil {
            throw ValidationError("--default-security takes admin_only or everyone, got '\(defaultSecurity)'")
        }
        if let sessionTimeout, sessionTimeout <= 0 { throw ValidationError("--session-timeout must be positive") }
        for origin in corsOrigin where origin != "*" {
            guard let url = URL(string: origin), let scheme = url.scheme, ["http", "https"].contains(scheme), url.host != nil,
                  url.path.isEmpty, !origin.hasSuffix("/") else {
                throw ValidationError("--cors-origin takes an origin such as http://127.0.0.1:8000 (scheme, host and port, no path), got '\(origin)'")
            }
        }
        if corsCredentials, corsOrigin.isEmpty { throw ValidationError("--cors-credentials needs --cors-origin ORIGIN") }
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
            var configuration = ServerConfiguration(dataDirectory: URL(fileURLWithPath: data), admins: admins)
            if let config { try configuration.read(iniFile: URL(fileURLWithPath: config)) }
            configuration.passwordIterations = passwordIterations
            configuration.queryServer = Bundle.main.executablePath.map { [$0, "query-server"] }
            configuration.functionTimeLimit = .milliseconds(functionTimeLimit)
            configuration.groupCommit = groupCommit
            configuration.sqliteDirectory = sqlite.map { URL(fileURLWithPath: $0) }
            configuration.sqliteWritable = sqliteWritable
            configuration.sqliteTimeLimit = .milliseconds(sqliteTimeLimit)
            if let defaultSecurity { configuration.defaultSecurity = DefaultSecurity(rawValue: defaultSecurity) ?? .adminOnly }
            if !corsOrigin.isEmpty {
                configuration.cors.enabled = true
                configuration.cors.origins = corsOrigin
            }
            if corsCredentials { configuration.cors.credentials = true }
            if let sessionTimeout { configuration.sessionTimeout = .seconds(sessionTimeout) }
            let server = try CouchServer(configuration)
            let bind = self.bind
            try await server.run(host: bind, port: port) { port in
                FileHandle.standardOutput.write(Data("strata serve: CouchDB API on http://\(bind):\(port)/ (data in \(data)); the page: http://\(bind):\(port)/_utils/\n".utf8))
            }
        }
    }
}
