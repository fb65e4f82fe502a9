import Dispatch
import Foundation
import Strata
import Hummingbird
import NIOCore
import ServiceLifecycle
import StrataDocuments
import StrataSync
import StrataQueryServers

/// Cookie sessions (`POST /_session`): random tokens kept in memory, so a
/// restart signs everyone out.
///
/// A token stands for a name and the salt of the password it signed in with,
/// not for a user context: each request reads the account again (see
/// ``Authenticator/sessionUser(name:salt:)``), so a changed password or a
/// deleted account ends the session and changed roles apply at once.
final class SessionStore: Sendable {
    private let tokens = Locked<[String: (name: String, salt: String)]>([:])

    func make(for user: UserContext) -> String {
        let token = (0..<32).map { _ in UInt8.random(in: 0...255) }.hexString
        if let name = user.name, let salt = user.salt { tokens.withLock { $0[token] = (name, salt) } }
        return token
    }

    func session(for token: String) -> (name: String, salt: String)? { tokens.withLock { $0[token] } }
    func remove(_ token: String) { tokens.withLock { _ = $0.removeValue(forKey: token) } }
}
