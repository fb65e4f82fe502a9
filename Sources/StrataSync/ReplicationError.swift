import Foundation
import StrataDocuments

/// Why a replication stopped.
public struct ReplicationError: Error, CustomStringConvertible, Sendable {
    /// What failed, in words.
    public var reason: String
    /// The server's refusal or the network failure underneath.
    public var underlying: RemoteError?
    public var description: String { reason }

    /// The source does not exist: CouchDB's 404 `db_not_found`.
    static func missingSource(_ location: String) -> ReplicationError {
        ReplicationError(reason: "the source \(location) does not exist",
                         underlying: RemoteError(status: 404, error: "db_not_found", reason: "could not open \(location)"))
    }
}
