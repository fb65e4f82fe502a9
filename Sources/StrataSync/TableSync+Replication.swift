import Foundation
import StrataDocuments

extension TableSync {
    /// Sends the tables' changes to `remote` and receives its changes, once
    /// in each direction: the changes captured since the last call become
    /// documents, then a push and a pull run together (PouchDB's `sync`).
    /// Rows arriving from `remote` are in the tables when this returns.
    ///
    /// ```swift
    /// let sync = try TableSync(pool, tables: ["notes", "folders"])
    /// let server = try CouchClient(url: URL(string: "http://127.0.0.1:5984")!,
    ///                              authentication: .basic(name: "alice", password: "…"))
    /// try await sync.sync(with: server.database("notes-alice"))
    /// ```
    @discardableResult
    public func sync(with remote: any DocumentStore, options: ReplicationOptions = ReplicationOptions()) async throws -> (push: ReplicationProgress, pull: ReplicationProgress) {
        try captureLocalChanges()
        return try await Replicator.sync(documents, remote, options: options)
    }
}
