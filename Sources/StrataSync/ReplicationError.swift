import Foundation
import StrataDocuments

/// Why a replication stopped.
public struct ReplicationError: Error, CustomStringConvertible, Sendable {
    /// What failed, in words.
    public var reason: String
    /// The server's refusal or the network failure underneath.
    public var underlying: RemoteError?
    public var description: String { reason }
}
