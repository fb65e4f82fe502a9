import StrataDocuments

/// The databases of a server by name, as its replication scheduler
/// reaches them: a side of a replication named without a URL is one of
/// these.
package protocol DatabaseResolver: AnyObject, Sendable {
    func exists(_ name: String) -> Bool
    func database(_ name: String) throws -> DocumentDatabase
    func create(_ name: String) throws
    /// The name `db` is known by, nil when it is not one of these.
    func name(of db: DocumentDatabase) -> String?
}
