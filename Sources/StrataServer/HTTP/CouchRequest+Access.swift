import HTTPTypes
import StrataDocuments

/// CouchDB's checks of who may do what, asked by the router for each route
/// (``Route/Access``) and by handlers for what depends on the request.
extension CouchRequest {
    static let notServerAdmin = DocumentError(.unauthorized, "You are not a server admin.")

    func requireServerAdmin() throws {
        guard isAdmin else { throw Self.notServerAdmin }
    }

    /// CouchDB's refusal of a database: 401 for anonymous (sign in), 403
    /// for a signed-in user who lacks the right.
    func checkAccess(allowed: Bool) throws {
        if allowed { return }
        if user.name == nil { throw DocumentError(.unauthorized, "You are not authorized to access this db.") }
        throw DocumentError(.forbidden, "You are not allowed to access this db.")
    }

    /// Design documents, `_security`, indexes and compaction need a database
    /// admin (named in `_security`) or a server admin.
    func requireDatabaseAdmin() throws {
        guard security.isAdmin(user) else {
            throw DocumentError(user.name == nil ? .unauthorized : .forbidden, "You are not a db or server admin.")
        }
    }

    /// `_users` for someone who is not a server admin: their own user
    /// document, and signing up (a new user document, no `_rev`); nothing else.
    func checkUsersDatabaseAccess() throws {
        if isAdmin { return }
        let rest = segments.dropFirst()
        if rest.count == 1, let id = rest.first, id.hasPrefix(UserDocuments.prefix), [.get, .head, .put, .delete].contains(method) {
            if let name = user.name, id == UserDocuments.prefix + name { return }
            let givesRev = query["rev"] != nil || headers[.ifMatch] != nil || (try? object())?["_rev"] != nil
            if method == .put, !givesRev { return }
        }
        if user.name == nil { throw Self.notServerAdmin }
        throw DocumentError(.forbidden, "Only admins can access other users' documents and the listings of system databases.")
    }

    /// CouchDB answers 415 `bad_content_type` when a JSON endpoint gets a
    /// POST body of another type (`chttpd:validate_ctype`): so does Strata,
    /// which also keeps a page of another site from posting a form
    /// (`text/plain`, `application/x-www-form-urlencoded`,
    /// `multipart/form-data`) there. A request without a body and without
    /// a type is let through.
    func requireJSONBody() throws {
        guard method == .post else { return }
        guard let type = headers[.contentType] else {
            if body.isEmpty { return }
            throw DocumentError(.unsupportedMediaType, "Content-Type must be application/json")
        }
        let essence = type.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        guard essence.trimmingCharacters(in: .whitespaces).lowercased() == "application/json" else {
            throw DocumentError(.unsupportedMediaType, "Content-Type must be application/json")
        }
    }

    /// The user context a design-document function sees for this request.
    var userContext: JSON {
        var context = user.json.objectValue ?? JSONObject()
        context["db"] = .string(segments.first ?? "")
        return .object(context)
    }
}
