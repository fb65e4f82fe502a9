import Foundation
import Strata
import StrataDocuments

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
    /// What repeated failures lead to.
    let lockout: LockoutConfiguration
    /// Failed passwords per address and name: how many, and when the first
    /// was (the count is forgotten `lockout.lifetime` after it).
    private let failures = Locked<[String: (count: Int, first: ContinuousClock.Instant)]>([:])

    /// CouchDB's refusal of a locked-out name.
    static let lockedOut = DocumentError(.forbidden, "Account is temporarily locked due to multiple authentication failures")

    init(admins: [String: PasswordHash], iterations: Int, maximumIterations: Int,
         lockout: LockoutConfiguration = LockoutConfiguration(),
         userDocument: @escaping @Sendable (String) -> JSONObject?) {
        self.admins = Locked(admins)
        self.iterations = iterations
        self.maximumIterations = maximumIterations
        self.lockout = lockout
        self.userDocument = userDocument
        // Only its cost matters (a missing name takes as long as a wrong
        // password): a random key, never derived, matches no password.
        decoy = PasswordHash(randomKeyWithIterations: iterations)
    }

    /// Remembers that `password` is the admin `name`'s, as a sign-in that
    /// succeeded would: an admin given in plain text (the command line, an
    /// ini file) was just hashed from it, and its first sign-in need not
    /// derive the key again.
    func rememberAdminPassword(name: String, password: String) {
        guard let hash = admins.withLock({ $0[name] }) else { return }
        let proof = PasswordHash.sha256(Array((hash.salt + "\u{0}" + password).utf8))
        verified.withLock { $0["admin:" + name] = (hash, proof) }
    }

    var hasAdmins: Bool { admins.withLock { !$0.isEmpty } }

    /// Runs `body` (a PBKDF2 derivation) on the hashing queue.
    func hash<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            hashing.async { continuation.resume(with: Result { try body() }) }
        }
    }

    /// The user for `name` and `password` sent from `peer` (the client's
    /// address), nil when they do not match.
    ///
    /// The account is read off the cooperative pool; a password seen before
    /// is checked with one SHA-256, any other with PBKDF2 on the hashing
    /// queue (a name nobody has too).
    ///
    /// - Throws: ``lockedOut`` (403) once `name` has failed
    ///   `lockout.threshold` times from `peer` within `lockout.lifetime`,
    ///   even for the right password, as CouchDB 3.4 does.
    func authenticate(name: String, password: String, peer: String?) async throws -> UserContext? {
        if isLockedOut(name: name, peer: peer) { throw Self.lockedOut }
        let user = try await authenticate(name: name, password: password)
        if user == nil { recordFailure(name: name, peer: peer) }
        return user
    }

    private func failureKey(_ name: String, _ peer: String?) -> String? {
        guard lockout.mode != .off, let peer else { return nil }
        return peer + "\u{0}" + name
    }

    /// Whether `name` is refused from `peer` for now.
    func isLockedOut(name: String, peer: String?) -> Bool {
        guard let key = failureKey(name, peer) else { return false }
        let now = ContinuousClock.now
        let count = failures.withLock { failures -> Int in
            guard let entry = failures[key] else { return 0 }
            guard now - entry.first < lockout.lifetime else {
                failures[key] = nil
                return 0
            }
            return entry.count
        }
        guard count >= lockout.threshold else { return false }
        if lockout.mode == .warn {
            FileHandle.standardError.write(Data("strata serve: authentication failure threshold reached for \(name) from \(peer ?? "?")\n".utf8))
            return false
        }
        return true
    }

    private func recordFailure(name: String, peer: String?) {
        guard let key = failureKey(name, peer) else { return }
        let now = ContinuousClock.now
        failures.withLock { failures in
            if let entry = failures[key], now - entry.first < lockout.lifetime {
                failures[key] = (entry.count + 1, entry.first)
                return
            }
            if failures.count >= lockout.maximumTracked {
                failures = failures.filter { now - $0.value.first < lockout.lifetime }
                while failures.count >= max(lockout.maximumTracked, 1),
                      let oldest = failures.min(by: { $0.value.first < $1.value.first })?.key {
                    failures[oldest] = nil
                }
            }
            failures[key] = (1, now)
        }
    }

    /// The user for `name` and `password`, nil when they do not match; no
    /// failure is counted (``authenticate(name:password:peer:)`` counts).
    func authenticate(name: String, password: String) async throws -> UserContext? {
        let account = try await offload { [self] in self.account(name) }
        guard let (key, hash, user) = account else {
            _ = try await self.hash { [decoy] in decoy.matches(password) }
            return nil
        }
        let proof = PasswordHash.sha256(Array((hash.salt + "\u{0}" + password).utf8))
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
        (doc["roles"]?.arrayValue ?? []).compactMap(\.stringValue).filter { !$0.hasBytePrefix("_") }
    }
}
