import Crypto
import Foundation
import Strata
import StrataDocuments
import _CryptoExtras

/// Who is asking, as CouchDB's `userCtx`: a name (nil for anonymous) and roles.
struct UserContext: Sendable, Equatable {
    var name: String?
    var roles: [String]
    /// The salt of the password the user signed in with: a session stays
    /// valid while the account keeps it (CouchDB signs its cookies with it).
    var salt: String? = nil

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
///
/// A name nobody has costs the same derivation as a wrong password, so the
/// time of a refusal does not tell whether the account exists. Derivations
/// run one at a time on a queue of their own (``hash(_:)``), so a flood of
/// wrong passwords waits there instead of taking the threads every other
/// request needs; a stored hash asking for more than
/// ``CouchServer/maximumPasswordIterations`` rounds is refused unhashed.
final class Authenticator: Sendable {
    private let admins: Locked<[String: PasswordHash]>
    private let verified = Locked<[String: (hash: PasswordHash, proof: [UInt8])]>([:])
    /// Rounds for passwords hashed here (admins given in plain text, users' `password`).
    let iterations: Int
    /// The most rounds a stored hash may ask for.
    let maximumIterations: Int
    /// Reads a user's document from `_users`, nil when there is none.
    private let userDocument: @Sendable (String) -> JSONObject?
    /// Where PBKDF2 runs: one derivation at a time, on threads that are not
    /// the ones requests share.
    private let hashing = DispatchQueue(label: "strata.passwords", qos: .utility)
    /// The hash a name nobody has is checked against (never matches).
    private let decoy: PasswordHash

    init(admins: [String: PasswordHash], iterations: Int, maximumIterations: Int,
         userDocument: @escaping @Sendable (String) -> JSONObject?) {
        self.admins = Locked(admins)
        self.iterations = iterations
        self.maximumIterations = maximumIterations
        self.userDocument = userDocument
        decoy = PasswordHash(password: UUID().uuidString, iterations: iterations)
    }

    var hasAdmins: Bool { admins.withLock { !$0.isEmpty } }

    /// Runs `body` (a PBKDF2 derivation) on the hashing queue.
    func hash<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            hashing.async { continuation.resume(with: Result { try body() }) }
        }
    }

    /// The user for `name` and `password`, nil when they do not match.
    ///
    /// The account is read off the cooperative pool; a password seen before
    /// is checked with one SHA-256, any other with PBKDF2 on the hashing
    /// queue (a name nobody has too).
    func authenticate(name: String, password: String) async throws -> UserContext? {
        let account = try await offload { [self] in self.account(name) }
        guard let (key, hash, user) = account else {
            _ = try await self.hash { [decoy] in decoy.matches(password) }
            return nil
        }
        let proof = Array(SHA256.hash(data: Array((hash.salt + "\u{0}" + password).utf8)))
        if let known = verified.withLock({ $0[key] }), known.hash == hash {
            return constantTimeEqual(known.proof, proof) ? user : nil
        }
        // A hash that asks for more rounds than allowed is not computed:
        // the document was written to make sign-ins cost the server.
        let allowed = hash.iterations <= maximumIterations
        let matches = try await self.hash { [decoy] () -> Bool in
            guard allowed else {
                _ = decoy.matches(password)
                return false
            }
            return hash.matches(password)
        }
        guard matches else { return nil }
        verified.withLock { $0[key] = (hash, proof) }
        return user
    }

    /// The stored hash of `name` and who it signs in as.
    private func account(_ name: String) -> (key: String, hash: PasswordHash, user: UserContext)? {
        if let admin = admins.withLock({ $0[name] }) {
            return ("admin:" + name, admin, UserContext(name: name, roles: ["_admin"], salt: admin.salt))
        }
        guard let doc = userDocument(name), doc["_deleted"]?.boolValue != true,
              let hash = PasswordHash(userDocument: doc) else { return nil }
        return ("user:" + name, hash, UserContext(name: name, roles: Self.roles(doc), salt: hash.salt))
    }

    /// The user a session made for `name` with `salt` stands for now: nil
    /// when the account is gone or its password changed (a new salt), with
    /// the roles its document has today.
    func sessionUser(name: String, salt: String) -> UserContext? {
        guard let account = account(name), account.hash.salt == salt else { return nil }
        return account.user
    }

    private static func roles(_ doc: JSONObject) -> [String] {
        (doc["roles"]?.arrayValue ?? []).compactMap(\.stringValue).filter { !$0.hasPrefix("_") }
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

extension UserDocuments {
    /// CouchDB's `_design/_auth` rules for `_users`, as a Swift validation
    /// function the engine runs on every write to the database: HTTP,
    /// `_bulk_docs`, replication and the embedded API alike. The reasons are
    /// CouchDB's.
    static func designFunctions(maximumIterations: Int) -> DesignFunctions {
        var functions = DesignFunctions(version: "auth-1")
        functions.validate = { new, old, user, security in
            try validate(new, old, user: user, security: security, maximumIterations: maximumIterations)
        }
        return functions
    }

    static func validate(_ new: JSONObject, _ old: JSONObject?, user: JSON, security: JSON, maximumIterations: Int) throws {
        guard let id = new["_id"]?.stringValue, !id.hasPrefix(DocumentDatabase.designPrefix) else { return }
        func refuse(_ reason: String) -> DocumentError { DocumentError(.forbidden, reason) }
        let userName = user["name"]?.stringValue
        let userRoles = (user["roles"]?.arrayValue ?? []).compactMap(\.stringValue)
        let isAdmin = SecurityObject(security).isAdmin(UserContext(name: userName, roles: userRoles))
        if new["_deleted"]?.boolValue == true {
            if isAdmin || (userName != nil && userName == old?["name"]?.stringValue) { return }
            throw refuse("You may only delete your own user document.")
        }
        if let old, old["type"]?.stringValue != "user" { throw refuse("doc.type must be user") }
        guard new["type"]?.stringValue == "user" else { throw refuse("doc.type must be user") }
        guard let name = new["name"]?.stringValue, !name.isEmpty else { throw refuse("doc.name is required") }
        guard let roleValues = new["roles"] else { throw refuse("doc.roles must exist") }
        guard let roleList = roleValues.arrayValue else { throw refuse("doc.roles must be an array") }
        let roles = roleList.compactMap(\.stringValue)
        guard roles.count == roleList.count else { throw refuse("doc.roles can only contain strings") }
        guard id == prefix + name else { throw refuse("Doc ID must be of the form org.couchdb.user:name") }
        if let old, old["name"]?.stringValue != name { throw refuse("Usernames can not be changed.") }
        if new["password_sha"] != nil, new["salt"] == nil {
            throw refuse("Users with password_sha must have a salt. See /_utils/script/couch.js for example code.")
        }
        if new["password_scheme"]?.stringValue == "pbkdf2" {
            guard case .number = new["iterations"] ?? .null else { throw refuse("iterations must be a number.") }
            guard new["derived_key"]?.stringValue != nil else { throw refuse("derived_key must be a string.") }
            guard let iterations = new["iterations"]?.intValue, iterations >= 1, iterations <= maximumIterations else {
                throw refuse("iterations must be a whole number from 1 to \(maximumIterations).")
            }
        }
        if !isAdmin {
            if let old {
                guard userName == name else { throw refuse("You may only update your own user document.") }
                let before = (old["roles"]?.arrayValue ?? []).compactMap(\.stringValue).sorted()
                guard before == roles.sorted() else { throw refuse("Only _admin may edit roles") }
            } else if !roles.isEmpty {
                throw refuse("Only _admin may set roles")
            }
        }
        if roles.contains(where: { $0.hasPrefix("_") }) { throw refuse("No system roles (starting with underscore) in users db.") }
        if name.hasPrefix("_") { throw refuse("Username may not start with underscore.") }
        if name.contains(":") { throw refuse("Character `:` is not allowed in usernames.") }
    }
}
