import Foundation
import HTTPTypes
import StrataDocuments

/// `/_session`: who is signed in, signing in (a cookie) and out.
@available(macOS 14, iOS 17, tvOS 17, *)
struct SessionHandlers: Sendable {
    let server: CouchServer

    func read(_ r: CouchRequest) async throws -> HTTPAnswer {
        var info: JSONObject = ["authentication_handlers": ["cookie", "default"]]
        if r.user.name != nil {
            info["authenticated"] = .string(r.headers[.authorization] != nil ? "default" : "cookie")
        }
        return .json(["ok": true, "userCtx": r.user.json, "info": .object(info)])
    }

    /// `POST /_session` with a name and password, as JSON or a form. A
    /// failed sign-in also clears the browser's session, as CouchDB's does.
    func signIn(_ r: CouchRequest) async throws -> HTTPAnswer {
        var name: String?, password: String?
        if let o = try? JSON(parsing: r.body).objectValue {
            name = o["name"]?.stringValue ?? o["username"]?.stringValue
            password = o["password"]?.stringValue
        } else if let form = String(bytes: r.body, encoding: .utf8) {
            let fields = CouchRouter.query(of: form)
            name = fields["name"] ?? fields["username"]
            password = fields["password"]
        }
        var refused = HTTPAnswer.json(DocumentError(.unauthorized, "Name or password is incorrect.").json, status: .unauthorized)
        refused.headers[.setCookie] = SessionStore.clearingCookie
        guard let name, let password else { return refused }
        guard let user = try await server.authenticator.authenticate(name: name, password: password, peer: r.peer) else {
            return refused
        }
        var headers: HTTPFields = [:]
        headers[.setCookie] = server.sessions.cookie(server.sessions.make(for: user))
        return .json(["ok": true, "name": .string(name), "roles": .array(user.roles.map(JSON.string))], headers: headers)
    }

    func signOut(_ r: CouchRequest) async throws -> HTTPAnswer {
        if let cookie = r.headers[.cookie], let range = cookie.range(of: "AuthSession=") {
            server.sessions.remove(String(cookie[range.upperBound...].prefix { $0 != ";" }))
        }
        var answer = HTTPAnswer.ok
        answer.headers[.setCookie] = SessionStore.clearingCookie
        return answer
    }
}
