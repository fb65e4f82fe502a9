import CStrataDigest
import Foundation
import StrataDocuments

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
        self.function = function
        self.salt = Self.randomHex(16)
        self.iterations = iterations
        self.derivedKey = PasswordHash.derive(password, salt: salt, iterations: iterations, function: function, length: function == .sha1 ? 20 : 32).hexString
    }

    /// A hash of no known password, made without deriving anything: a
    /// random salt and key, with `iterations` rounds to cost whoever
    /// checks a password against it.
    init(randomKeyWithIterations iterations: Int) {
        self.function = .sha256
        self.salt = Self.randomHex(16)
        self.iterations = iterations
        self.derivedKey = Self.randomHex(32)
    }

    /// `count` random bytes as hex text.
    private static func randomHex(_ count: Int) -> String {
        (0..<count).map { _ in UInt8.random(in: 0...255) }.hexString
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
        guard iterations > 0, iterations <= Int(UInt32.max), length > 0 else { return [] }
        let password = Array(password.utf8), salt = Array(salt.utf8)
        var key = [UInt8](repeating: 0, count: length)
        let status = strata_pbkdf2(function == .sha256 ? STRATA_DIGEST_SHA256 : STRATA_DIGEST_SHA1,
                                   password, password.count, salt, salt.count, UInt32(iterations), &key, length)
        return status == 0 ? key : []
    }

    /// SHA-256 of `bytes`.
    static func sha256(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        strata_sha256(bytes, bytes.count, &digest)
        return digest
    }
}
