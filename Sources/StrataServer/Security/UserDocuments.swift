import Foundation
import StrataDocuments

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
        guard let id = new["_id"]?.stringValue, !id.hasBytePrefix(DocumentDatabase.designPrefix) else { return }
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
        if roles.contains(where: { $0.hasBytePrefix("_") }) { throw refuse("No system roles (starting with underscore) in users db.") }
        if name.hasBytePrefix("_") { throw refuse("Username may not start with underscore.") }
        if name.contains(":") { throw refuse("Character `:` is not allowed in usernames.") }
    }
}
