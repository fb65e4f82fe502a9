import Foundation
import Hummingbird
import HTTPTypes
import StrataDocuments

/// Who is asking: the user of the request's Basic credentials or session
/// cookie, in the context for the handlers. Credentials that do not match
/// are refused (401) rather than taken for anonymous, as CouchDB does; a
/// name locked out from the client's address after repeated failures is
/// refused with 403. Credentials are checked before the body is read: a
/// wrong password uploads nothing.
///
/// A session cookie more than a tenth of the way to its expiry is replaced
/// on the answer, unless the answer sets one itself (signing in or out).
struct AuthenticationMiddleware: RouterMiddleware {
    typealias Context = CouchContext
    let authenticator: Authenticator
    let sessions: SessionStore
    let cors: CORSConfiguration

    func handle(_ request: Request, context: CouchContext, next: (Request, CouchContext) async throws -> Response) async throws -> Response {
        var context = context
        // Neither a session cookie nor Basic credentials a browser cached
        // vouch for a request another site's page made (a form posted to
        // this server): such a request is anonymous, whatever it carries.
        // Clients that are not browsers send no Origin, and the origins CORS
        // lets in are trusted by the server's configuration.
        let origin = request.headers[.origin]
        let isCrossSiteWrite = request.method != .get && request.method != .head && request.method != .options
            && Self.isCrossSite(origin: origin, host: request.head.authority)
            && !(origin.map(cors.allows) ?? false)
        if !isCrossSiteWrite {
            (context.user, context.renewsSession) = try await authenticate(request.headers, peer: context.peer)
        }
        var response = try await next(request, context)
        if context.renewsSession, response.headers[.setCookie] == nil {
            response.headers[.setCookie] = sessions.cookie(sessions.make(for: context.user))
        }
        return response
    }

    /// Whether `Origin` names another site than the `Host` the request came to.
    static func isCrossSite(origin: String?, host: String?) -> Bool {
        guard let origin else { return false }
        guard let parts = URLComponents(string: origin), let originHost = parts.host else { return true }
        let originAuthority = originHost + (parts.port.map { ":\($0)" } ?? "")
        return originAuthority.lowercased() != (host ?? "").lowercased()
    }

    /// The user a request's Basic credentials or session cookie name, and
    /// whether the cookie is due for a refresh.
    func authenticate(_ headers: HTTPFields, peer: String?) async throws -> (UserContext, renewsSession: Bool) {
        if let auth = headers[.authorization], auth.hasPrefix("Basic ") {
            guard let decoded = Data(base64Encoded: String(auth.dropFirst(6))).flatMap({ String(data: $0, encoding: .utf8) }),
                  let colon = decoded.firstIndex(of: ":") else {
                throw DocumentError(.badRequest, "Authorization header has invalid base64 value")
            }
            let name = String(decoded[..<colon]), password = String(decoded[decoded.index(after: colon)...])
            guard let user = try await authenticator.authenticate(name: name, password: password, peer: peer) else {
                throw DocumentError(.unauthorized, "Name or password is incorrect.")
            }
            return (user, false)
        }
        if let cookie = headers[.cookie] {
            for part in cookie.split(separator: ";") {
                let kv = part.trimmingCharacters(in: .whitespaces)
                guard kv.hasPrefix("AuthSession=") else { continue }
                let token = String(kv.dropFirst(12))
                guard let session = sessions.session(for: token) else { continue }
                let authenticator = authenticator
                if let user = try await offload({ authenticator.sessionUser(name: session.name, salt: session.salt) }) {
                    return (user, session.refresh)
                }
                sessions.remove(token)
            }
        }
        return (.anonymous, false)
    }
}
