import Foundation
import Strata

/// Cookie sessions (`POST /_session`): random tokens kept in memory, so a
/// restart signs everyone out.
///
/// A token stands for a name and the salt of the password it signed in with,
/// not for a user context: each request reads the account again (see
/// ``Authenticator/sessionUser(name:salt:)``), so a changed password or a
/// deleted account ends the session and changed roles apply at once.
///
/// A token is valid for ``timeout`` after it was made (CouchDB's
/// `[chttpd_auth] timeout`); a request that uses one more than a tenth of
/// the way through gets a fresh one, as CouchDB refreshes its cookies, so a
/// session in use does not end.
final class SessionStore: Sendable {
    struct Session {
        var name: String
        var salt: String
        var expires: ContinuousClock.Instant
    }

    /// How long a token is valid.
    let timeout: Duration
    private let tokens = Locked<[String: Session]>([:])

    init(timeout: Duration) {
        self.timeout = timeout
    }

    func make(for user: UserContext) -> String {
        let token = (0..<32).map { _ in UInt8.random(in: 0...255) }.hexString
        let now = ContinuousClock.now
        if let name = user.name, let salt = user.salt {
            tokens.withLock { tokens in
                // Expired tokens go as new ones come: the store holds the
                // sessions of one timeout at most.
                tokens = tokens.filter { $0.value.expires > now }
                tokens[token] = Session(name: name, salt: salt, expires: now + timeout)
            }
        }
        return token
    }

    /// The session `token` stands for, and whether its cookie is due for a
    /// refresh; nil when there is none or it expired.
    func session(for token: String) -> (name: String, salt: String, refresh: Bool)? {
        let now = ContinuousClock.now
        return tokens.withLock { tokens in
            guard let session = tokens[token] else { return nil }
            guard session.expires > now else {
                tokens[token] = nil
                return nil
            }
            return (session.name, session.salt, session.expires - now < timeout * 0.9)
        }
    }

    func remove(_ token: String) { tokens.withLock { _ = $0.removeValue(forKey: token) } }

    /// The `Set-Cookie` value that hands `token` to the browser: CouchDB's
    /// attributes (`Expires` and `Max-Age` from the timeout), and
    /// `SameSite=Strict`, so a browser sends it with this site's own
    /// requests only.
    func cookie(_ token: String) -> String {
        let seconds = Int(timeout.components.seconds)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let expires = formatter.string(from: Date().addingTimeInterval(TimeInterval(seconds)))
        return "AuthSession=\(token); Version=1; Expires=\(expires); Max-Age=\(seconds); Path=/; HttpOnly; SameSite=Strict"
    }

    /// The `Set-Cookie` value that makes a browser forget its session.
    static let clearingCookie = "AuthSession=; Version=1; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"
}
