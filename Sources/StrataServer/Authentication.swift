import Crypto
import Foundation
import StrataDocuments
import _CryptoExtras

/// Who is asking, as CouchDB's `userCtx`: a name (nil for anonymous) and roles.
struct UserContext: Sendable, Equatable {
    var name: String?
    var roles: [String]

    static let anonymous = UserContext(name: nil, roles: [])

    var isServerAdmin: Bool { roles.contains("_admin") }

    var json: JSON {
        .object(["name": name.map(JSON.string) ?? .null, "roles": .array(roles.map(JSON.string))])
    }
}

/// A password kept the way CouchDB keeps it: PBKDF2 with a random salt, never
/// the password itself.
///
/// The salt is used as its hex text, as CouchDB does, so user documents and
/// `[admins]` entries move between CouchDB and Strata unchanged.
struct PasswordHash: Sendable, Equatable {
    enum Function: String, Sendable { case sha1, sha256 }

    var function: Function
    var derivedKey: String
    var salt: String
    var iterations: Int

    /// Hashes `password` with a new random salt.
    init(password: String, iterations: Int, function: Function = .sha256) {
        let saltBytes = (0..<16).map { _ in UInt8.random(in: 0...255) }
        self.function = function
        self.salt = saltBytes.hexString
        self.iterations = iterations
        self.derivedKey = PasswordHash.derive(password, salt: salt, iterations: iterations, function: function, length: function == .sha1 ? 20 : 32).hexString
    }

    /// The hash in a `_users` document, or nil when it holds none.
    init?(userDocument doc: JSONObject) {
        guard doc["password_scheme"]?.stringValue == "pbkdf2",
              let key = doc["derived_key"]?.stringValue, let salt = doc["salt"]?.stringValue,
              let iterations = doc["iterations"]?.intValue, iterations > 0 else { return nil }
        guard let function = Function(rawValue: doc["pbkdf2_prf"]?.stringValue ?? "sha1") else { return nil }
        self.function = function
        self.derivedKey = key.lowercased()
        self.salt = salt
        self.iterations = iterations
    }

    /// An `[admins]` value as CouchDB writes it: `-pbkdf2:sha256-KEY,SALT,N`
    /// (or `-pbkdf2-KEY,SALT,N` for SHA-1); nil for anything else.
    init?(configValue: String) {
        let function: Function
        let rest: Substring
        if configValue.hasPrefix("-pbkdf2:sha256-") {
            function = .sha256
            rest = configValue.dropFirst("-pbkdf2:sha256-".count)
        } else if configValue.hasPrefix("-pbkdf2-") {
            function = .sha1
            rest = configValue.dropFirst("-pbkdf2-".count)
        } else {
            return nil
        }
        let parts = rest.split(separator: ",")
        guard parts.count == 3, let iterations = Int(parts[2]), iterations > 0 else { return nil }
        self.function = function
        self.derivedKey = parts[0].lowercased()
        self.salt = String(parts[1])
        self.iterations = iterations
    }

    var configValue: String {
        "-pbkdf2\(function == .sha256 ? ":sha256" : "")-\(derivedKey),\(salt),\(iterations)"
    }

    /// The fields a `_users` document keeps instead of `password`.
    var userDocumentFields: [(String, JSON)] {
        [("password_scheme", .string("pbkdf2")), ("pbkdf2_prf", .string(function.rawValue)),
         ("iterations", .int(iterations)), ("derived_key", .string(derivedKey)), ("salt", .string(salt))]
    }

    func matches(_ password: String) -> Bool {
        let length = derivedKey.utf8.count / 2
        guard length > 0 else { return false }
        let derived = PasswordHash.derive(password, salt: salt, iterations: iterations, function: function, length: length).hexString
        return constantTimeEqual(Array(derived.utf8), Array(derivedKey.utf8))
    }

    static func derive(_ password: String, salt: String, iterations: Int, function: Function, length: Int) -> [UInt8] {
        let key = try? KDF.Insecure.PBKDF2.deriveKey(
            from: Array(password.utf8), salt: Array(salt.utf8),
            using: function == .sha256 ? .sha256 : .insecureSHA1,
            outputByteCount: length, unsafeUncheckedRounds: iterations
        )
        return key.map { $0.withUnsafeBytes { Array($0) } } ?? []
    }
}

func constantTimeEqual(_ x: [UInt8], _ y: [UInt8]) -> Bool {
    guard x.count == y.count else { return false }
    return zip(x, y).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
}

/// Checks names and passwords against the server admins and the `_users`
/// database.
///
/// PBKDF2 is slow on purpose (CouchDB 3.4 uses 600,000 rounds), so a name
/// and password that passed once are remembered as a SHA-256 of the salt and
/// the password: the next request with the same credentials costs one hash,
/// a wrong password still costs the full derivation, and the password
/// itself is never kept.
final class Authenticator: @unchecked Sendable {
    // @unchecked: `admins` and `verified` are only touched under `lock`.
    private let lock = NSLock()
    private var admins: [String: PasswordHash]
    private var verified: [String: (hash: PasswordHash, proof: [UInt8])] = [:]
    /// Rounds for passwords hashed here (admins given in plain text, users' `password`).
    let iterations: Int
    /// Reads a user's document from `_users`, nil when there is none.
    private let userDocument: @Sendable (String) -> JSONObject?

    init(admins: [String: PasswordHash], iterations: Int, userDocument: @escaping @Sendable (String) -> JSONObject?) {
        self.admins = admins
        self.iterations = iterations
        self.userDocument = userDocument
    }

    var hasAdmins: Bool { lock.withLock { !admins.isEmpty } }

    /// The user for `name` and `password`, nil when they do not match.
    func authenticate(name: String, password: String) -> UserContext? {
        if let admin = lock.withLock({ admins[name] }) {
            return check(key: "admin:" + name, hash: admin, password: password) ? UserContext(name: name, roles: ["_admin"]) : nil
        }
        guard let doc = userDocument(name), doc["_deleted"]?.boolValue != true,
              let hash = PasswordHash(userDocument: doc),
              check(key: "user:" + name, hash: hash, password: password) else { return nil }
        let roles = (doc["roles"]?.arrayValue ?? []).compactMap(\.stringValue).filter { $0 != "_admin" }
        return UserContext(name: name, roles: roles)
    }

    private func check(key: String, hash: PasswordHash, password: String) -> Bool {
        let proof = Array(SHA256.hash(data: Array((hash.salt + "\u{0}" + password).utf8)))
        if let known = lock.withLock({ verified[key] }), known.hash == hash {
            return constantTimeEqual(known.proof, proof)
        }
        guard hash.matches(password) else { return false }
        lock.withLock { verified[key] = (hash, proof) }
        return true
    }
}

/// A database's `_security` object: who administers it and who may read it.
struct SecurityObject {
    var adminNames: Set<String> = []
    var adminRoles: Set<String> = []
    var memberNames: Set<String> = []
    var memberRoles: Set<String> = []

    init(_ json: JSON?) {
        func strings(_ group: String, _ kind: String) -> Set<String> {
            Set((json?[group]?[kind]?.arrayValue ?? []).compactMap(\.stringValue))
        }
        adminNames = strings("admins", "names")
        adminRoles = strings("admins", "roles")
        memberNames = strings("members", "names")
        memberRoles = strings("members", "roles")
    }

    /// CouchDB's rule: server admins, then the names and roles listed.
    func isAdmin(_ user: UserContext) -> Bool {
        if user.isServerAdmin { return true }
        if let name = user.name, adminNames.contains(name) { return true }
        return user.roles.contains(where: adminRoles.contains)
    }

    /// A database with no members is public; otherwise members and admins read it.
    func isMember(_ user: UserContext) -> Bool {
        if memberNames.isEmpty && memberRoles.isEmpty { return true }
        if isAdmin(user) { return true }
        if let name = user.name, memberNames.contains(name) { return true }
        return user.roles.contains(where: memberRoles.contains)
    }
}

/// The rules CouchDB's `_users` database applies to user documents
/// (`org.couchdb.user:NAME`), and the hashing of their `password`.
enum UserDocuments {
    static let prefix = "org.couchdb.user:"

    /// Checks a user document written by `user` over `existing` (nil when
    /// new), and replaces a `password` by its PBKDF2 hash.
    static func prepare(_ doc: JSONObject, existing: JSONObject?, by user: UserContext, iterations: Int) throws -> JSONObject {
        guard let id = doc["_id"]?.stringValue, id.hasPrefix(prefix) else {
            if user.isServerAdmin { return doc }
            throw DocumentError(.forbidden, "Doc ID must be of the form org.couchdb.user:name")
        }
        if doc["_deleted"]?.boolValue == true { return doc }
        guard doc["type"]?.stringValue == "user" else { throw DocumentError(.forbidden, "doc.type must be user") }
        guard let name = doc["name"]?.stringValue, !name.isEmpty else { throw DocumentError(.forbidden, "doc.name is required") }
        guard id == prefix + name else { throw DocumentError(.forbidden, "Doc ID must be of the form org.couchdb.user:name") }
        guard let roles = doc["roles"]?.arrayValue, roles.allSatisfy({ $0.stringValue != nil }) else {
            throw DocumentError(.forbidden, "doc.roles must be an array of strings")
        }
        if !user.isServerAdmin {
            let before = existing?["roles"]?.arrayValue ?? []
            if roles != before { throw DocumentError(.forbidden, "Only _admin may set roles") }
        }
        var out = doc
        if let password = doc["password"] {
            guard let text = password.stringValue else { throw DocumentError(.forbidden, "doc.password must be a string") }
            out["password"] = nil
            for (key, value) in PasswordHash(password: text, iterations: iterations).userDocumentFields { out[key] = value }
        } else if let existing, out["derived_key"] == nil {
            // An update without a new password keeps the old hash.
            for key in ["password_scheme", "pbkdf2_prf", "iterations", "derived_key", "salt"] { out[key] = existing[key] }
        }
        return out
    }
}
