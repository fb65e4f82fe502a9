import StrataDocuments

@available(macOS 14, iOS 17, tvOS 17, *)
extension CouchServer {
    /// A write to `_users`: the password hashed (on the authenticator's
    /// hashing queue: PBKDF2 is slow on purpose). CouchDB's rules for user
    /// documents run in the engine (`UserDocuments.validate`).
    func prepareUserDocument(_ db: DocumentDatabase, _ doc: JSONObject, _ r: CouchRequest) async throws -> JSONObject {
        let id = doc["_id"]?.stringValue ?? ""
        let user = r.user, iterations = authenticator.iterations
        return try await authenticator.hash {
            let existing = try? db.document(id: id)
            return try UserDocuments.prepare(doc, existing: existing, by: user, iterations: iterations)
        }
    }
}
