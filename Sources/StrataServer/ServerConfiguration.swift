import Foundation
import StrataDocuments

/// Everything `strata serve` can be told: where the databases live, who
/// administers them, and the settings CouchDB keeps in its `local.ini`.
///
/// ```swift
/// var configuration = ServerConfiguration(dataDirectory: URL(fileURLWithPath: "couch"), admins: ["admin": "secret"])
/// configuration.cors = CORSConfiguration(origins: ["http://127.0.0.1:8000"], credentials: true)
/// let server = try CouchServer(configuration)
/// ```
///
/// ``read(iniFile:)`` takes the same settings from a CouchDB ini file under
/// CouchDB's names, so an operator's `local.ini` works unchanged.
public struct ServerConfiguration: Sendable {
    /// The folder holding one SQLite file per database (created when missing).
    public var dataDirectory: URL
    /// Server admins' names and passwords; the passwords are hashed with
    /// PBKDF2 at once and not kept. With no admins (here or in the ini
    /// file), nobody can create or delete a database: there is no admin
    /// party.
    public var admins: [String: String]
    /// A CouchDB ini file whose `[admins]` section lists more server admins.
    /// Plain-text passwords there are replaced by their hashes
    /// (`-pbkdf2:sha256-KEY,SALT,ROUNDS`) in the file, as CouchDB does. Set
    /// by ``read(iniFile:)``.
    public var adminFile: URL?
    /// PBKDF2 rounds for passwords hashed here (admins, and `password` in
    /// `_users` documents); CouchDB 3.4 uses 600,000.
    public var passwordIterations = CouchServer.defaultPasswordIterations
    /// The command that starts a JavaScript query server
    /// (`["/path/to/strata", "query-server"]`); `strata serve` passes its
    /// own executable. Without one, design-document functions answer 500
    /// saying so.
    public var queryServer: [String]?
    /// How long one design-document function may run before its process is
    /// killed (CouchDB's `os_process_timeout`, 5 s).
    public var functionTimeLimit: Duration = .seconds(5)
    /// On by default: commits concurrent single-document writes to one
    /// database together; off, each gets its own transaction (for
    /// comparing in benchmarks).
    public var groupCommit = true
    /// A folder whose SQLite files (`.sqlite`, `.sqlite3`, `.db`) the table
    /// browser of `/_utils` shows to server admins; nil shows none.
    public var sqliteDirectory: URL?
    /// Lets the table browser's SQL box write; it runs on a read-only
    /// connection otherwise.
    public var sqliteWritable = false
    /// How long a query of the table browser may run.
    public var sqliteTimeLimit: Duration = .seconds(5)
    /// Who may use a database created over HTTP until its admins say
    /// otherwise (`[couchdb] default_security`): server admins only, as
    /// CouchDB 3 ships.
    public var defaultSecurity = DefaultSecurity.adminOnly
    /// Which web pages of other origins may call the server from a browser
    /// (`[chttpd] enable_cors` and `[cors]`); off by default.
    public var cors = CORSConfiguration.off
    /// How long a session cookie stays valid after its last refresh
    /// (`[chttpd_auth] timeout`, 600 seconds). A request more than a tenth
    /// of the way through it gets a fresh cookie, as CouchDB's do.
    public var sessionTimeout: Duration = .seconds(600)
    /// What repeated wrong passwords lead to (`[chttpd_auth_lockout]`).
    public var lockout = LockoutConfiguration()

    /// Serves the databases in `dataDirectory` with CouchDB 3.4's defaults.
    public init(dataDirectory: URL, admins: [String: String] = [:]) {
        self.dataDirectory = dataDirectory
        self.admins = admins
    }

    /// Takes the settings of a CouchDB ini file: `[admins]` (kept for the
    /// server to load, see ``adminFile``), `[couchdb] default_security`,
    /// `[chttpd] enable_cors`, `[cors] origins / credentials / methods /
    /// headers / max_age`, `[chttpd_auth] timeout` and
    /// `[chttpd_auth_lockout] mode / threshold / max_lifetime`. Other
    /// sections and keys are CouchDB's own and are left alone; a value
    /// Strata cannot read is an error naming the file, section and key.
    public mutating func read(iniFile: URL) throws {
        let text: String
        do { text = try String(contentsOf: iniFile, encoding: .utf8) } catch {
            throw DocumentError(.internalError, "cannot read the config file \(iniFile.path): \(error.localizedDescription)")
        }
        adminFile = iniFile
        let settings = IniFile(text)
        func invalid(_ section: String, _ key: String, _ value: String, _ expected: String) -> DocumentError {
            DocumentError(.badRequest, "\(iniFile.path): [\(section)] \(key) = \(value): expected \(expected)")
        }
        func integer(_ section: String, _ key: String) throws -> Int? {
            guard let value = settings[section, key] else { return nil }
            guard let number = Int(value), number >= 0 else { throw invalid(section, key, value, "a whole number") }
            return number
        }
        func boolean(_ section: String, _ key: String) throws -> Bool? {
            guard let value = settings[section, key] else { return nil }
            switch value.lowercased() {
            case "true": return true
            case "false": return false
            default: throw invalid(section, key, value, "true or false")
            }
        }
        if let value = settings["couchdb", "default_security"] {
            guard let security = DefaultSecurity(rawValue: value) else { throw invalid("couchdb", "default_security", value, "admin_only or everyone") }
            defaultSecurity = security
        }
        if let enabled = try boolean("chttpd", "enable_cors") { cors.enabled = enabled }
        if let origins = settings["cors", "origins"] { cors.origins = IniFile.list(origins) }
        if let credentials = try boolean("cors", "credentials") { cors.credentials = credentials }
        if let methods = settings["cors", "methods"] { cors.methods = IniFile.list(methods) }
        if let headers = settings["cors", "headers"] { cors.headers = IniFile.list(headers).map { $0.lowercased() } }
        if let exposed = settings["cors", "exposed_headers"] { cors.exposedHeaders = IniFile.list(exposed).map { $0.lowercased() } }
        if let maxAge = try integer("cors", "max_age") { cors.maxAge = maxAge }
        if let timeout = try integer("chttpd_auth", "timeout") { sessionTimeout = .seconds(timeout) }
        if let value = settings["chttpd_auth_lockout", "mode"] {
            guard let mode = LockoutConfiguration.Mode(rawValue: value) else { throw invalid("chttpd_auth_lockout", "mode", value, "off, warn or enforce") }
            lockout.mode = mode
        }
        if let threshold = try integer("chttpd_auth_lockout", "threshold") { lockout.threshold = threshold }
        if let lifetime = try integer("chttpd_auth_lockout", "max_lifetime") { lockout.lifetime = .milliseconds(lifetime) }
    }
}

/// The `_security` a database created over HTTP starts with
/// (CouchDB's `[couchdb] default_security`).
public enum DefaultSecurity: String, Sendable {
    /// Members and admins are the `_admin` role: only server admins read or
    /// write until the database's `_security` names others (CouchDB 3's
    /// default).
    case adminOnly = "admin_only"
    /// An empty `_security`: anyone may read and write documents (CouchDB
    /// 2's behaviour). Design documents stay the database admins'.
    case everyone

    /// The `_security` object a new database gets; nil for none.
    var object: JSONObject? {
        switch self {
        case .adminOnly:
            return ["members": ["roles": ["_admin"]], "admins": ["roles": ["_admin"]]]
        case .everyone:
            return nil
        }
    }
}

/// CouchDB's `[cors]`: which origins' pages a browser lets call the server,
/// with what.
public struct CORSConfiguration: Sendable, Equatable {
    /// Whether the server answers preflights and adds `Access-Control-*`
    /// headers at all (`[chttpd] enable_cors`).
    public var enabled: Bool
    /// The origins allowed (`http://app.example:8000`), or `*` for any.
    public var origins: [String]
    /// Whether the browser may send cookies and `Authorization` with the
    /// calls (`Access-Control-Allow-Credentials`). The allowed origin is
    /// always named, never `*`.
    public var credentials: Bool
    /// The methods a preflight allows.
    public var methods: [String]
    /// The request headers a preflight allows (lowercased).
    public var headers: [String]
    /// The response headers a page may read besides the simple ones.
    public var exposedHeaders: [String]
    /// How long, in seconds, a browser may keep a preflight's answer.
    public var maxAge: Int

    /// CouchDB's defaults, for `origins`.
    public init(origins: [String], credentials: Bool = false) {
        enabled = !origins.isEmpty
        self.origins = origins
        self.credentials = credentials
        methods = ["CONNECT", "COPY", "DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT", "TRACE"]
        headers = ["accept", "accept-language", "authorization", "content-length", "content-range", "content-type",
                   "destination", "expires", "if-match", "last-modified", "origin", "pragma", "x-couch-full-commit",
                   "x-couch-id", "x-couch-persist", "x-couchdb-www-authenticate", "x-http-method-override",
                   "x-requested-with", "x-couchdb-vhost-path"]
        exposedHeaders = ["accept-ranges", "etag", "server", "x-couch-request-id", "x-couch-update-newrev", "x-couchdb-body-time"]
        maxAge = 600
    }

    /// No CORS: browsers keep other origins' pages out.
    public static let off = CORSConfiguration(origins: [])

    /// Whether a page of `origin` may call the server.
    func allows(_ origin: String) -> Bool {
        enabled && (origins.contains("*") || origins.contains(origin))
    }
}

/// CouchDB's `[chttpd_auth_lockout]`: after `threshold` wrong passwords for
/// one name from one address, that name is refused from that address
/// (403, even with the right password) until `lifetime` has passed since
/// the first failure.
public struct LockoutConfiguration: Sendable, Equatable {
    /// What a reached threshold does.
    public enum Mode: String, Sendable {
        /// Failures are not counted.
        case off
        /// The threshold is logged, and nobody is refused.
        case warn
        /// The name is refused from that address (CouchDB's default).
        case enforce
    }

    /// `enforce` by default.
    public var mode: Mode
    /// Failures allowed before the lockout (5).
    public var threshold: Int
    /// How long failures are remembered from the first one (5 minutes).
    public var lifetime: Duration
    /// How many name-and-address pairs are tracked at most (10,000); the
    /// oldest are forgotten first.
    public var maximumTracked: Int

    /// CouchDB 3.4's defaults, or the given ones.
    public init(mode: Mode = .enforce, threshold: Int = 5, lifetime: Duration = .seconds(300), maximumTracked: Int = 10_000) {
        self.mode = mode
        self.threshold = threshold
        self.lifetime = lifetime
        self.maximumTracked = maximumTracked
    }
}

/// The sections and keys of a CouchDB ini file (`;` comments, last value
/// wins).
struct IniFile {
    /// What one line of an ini file is.
    enum Line {
        /// `[name]`.
        case section(String)
        /// `key = value`, both trimmed (the value as written, comments and all).
        case entry(key: String, value: String)
        /// Blank, a comment, or nothing an ini file means.
        case other
    }

    /// Reads one line: `;` and `#` start a comment line.
    static func line(_ line: Substring) -> Line {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        if trimmed.hasPrefix(";") || trimmed.hasPrefix("#") || trimmed.isEmpty { return .other }
        if trimmed.hasPrefix("[") && trimmed.hasSuffix("]") {
            return .section(String(trimmed.dropFirst().dropLast()).trimmingCharacters(in: .whitespaces))
        }
        guard let equals = trimmed.firstIndex(of: "=") else { return .other }
        return .entry(key: trimmed[..<equals].trimmingCharacters(in: .whitespaces),
                      value: trimmed[trimmed.index(after: equals)...].trimmingCharacters(in: .whitespaces))
    }

    private var values: [String: String] = [:]

    init(_ text: String) {
        var section = ""
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            switch Self.line(line) {
            case .section(let name):
                section = name
            case .entry(let key, var value):
                // CouchDB ends a value at " ;" (an inline comment).
                if let comment = value.range(of: " ;") { value = value[..<comment.lowerBound].trimmingCharacters(in: .whitespaces) }
                values[section + "\u{0}" + key] = value
            case .other:
                break
            }
        }
    }

    subscript(section: String, key: String) -> String? { values[section + "\u{0}" + key] }

    /// A comma-separated value's items.
    static func list(_ value: String) -> [String] {
        value.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}
