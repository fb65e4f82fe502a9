import Foundation
import StrataDocuments

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
