import Foundation
import Strata
import StrataDocuments

extension TableSync {
    /// Sends the tables' changes to `remote` and receives its changes, once
    /// in each direction: the changes captured since the last call become
    /// documents, then a push and a pull run together (PouchDB's `sync`).
    /// Rows arriving from `remote` are in the tables when this returns, and
    /// rows that arriving changes changed in turn (an `ON DELETE CASCADE`
    /// run by a deleted parent, an app's own trigger) are sent in a second
    /// round before it returns; the counts returned are both rounds'.
    /// Design documents stay where they are (the server's functions, which
    /// the tables do not use); the server's validation still applies to
    /// what is sent, and a refusal is counted in the push's
    /// `documentWriteFailures`.
    ///
    /// ```swift
    /// let sync = try TableSync(pool, tables: ["notes", "folders"])
    /// let server = try CouchClient(url: URL(string: "http://127.0.0.1:5984")!,
    ///                              authentication: .basic(name: "alice", password: "…"))
    /// try await sync.sync(with: server.database("notes-alice"))
    /// ```
    @discardableResult
    public func sync(with remote: any DocumentStore, options: ReplicationOptions = TableSync.defaultReplicationOptions) async throws -> (push: ReplicationProgress, pull: ReplicationProgress) {
        try await captureLocalChanges()
        var options = options
        options.skipsDesignDocuments = true
        var done = try await Replicator.sync(documents, remote, options: options)
        try await applyWaitingRows()
        // One more round at most: an app trigger that changes a row on
        // every change it sees must not keep this going.
        if try await captureLocalChanges() > 0 {
            let again = try await Replicator.sync(documents, remote, options: options)
            try await applyWaitingRows()
            done = (done.push.adding(again.push), done.pull.adding(again.pull))
        }
        return done
    }

    /// The options ``sync(with:options:)`` and ``run(with:options:)`` use
    /// unless given others: batches of 2,000 documents. CouchDB's replicator
    /// keeps four batches of 500 in flight and Strata's one at a time, so
    /// this carries as much per round trip; a first sync of 100,000 rows
    /// measured about 15% faster end to end than with batches of 500, the
    /// pull 20%. A batch is held in memory whole, BLOB columns' attachments
    /// included: for rows with large BLOBs, pass a smaller `batchSize`.
    public static let defaultReplicationOptions = ReplicationOptions(batchSize: 2_000)

    /// How often ``run(with:options:)`` looks for commits by other
    /// processes.
    static let lookInterval = Duration.milliseconds(50)

    /// Syncs with `remote` until cancelled: every local commit that changes
    /// a synced table becomes documents and is sent, and every remote change
    /// is received and applied, as it happens. Writes by another process on
    /// the file are picked up within a twentieth of a second. Throws
    /// `CancellationError` when its task is cancelled, or the first
    /// replication error.
    ///
    /// ```swift
    /// let syncing = Task { try await sync.run(with: server.database("notes-alice")) }
    /// // … the app reads and writes its tables …
    /// syncing.cancel()
    /// ```
    public func run(with remote: any DocumentStore, options: ReplicationOptions = TableSync.defaultReplicationOptions) async throws {
        try await captureLocalChanges()
        var continuous = options
        continuous.continuous = true
        continuous.skipsDesignDocuments = true
        let options = continuous
        let writer = documents.writer
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await Replicator.sync(self.documents, remote, options: options) }
            // This process's commits: the outbox is observed.
            group.addTask {
                let pending = ValueObservation { db in try self.pendingChangeCount(db) }
                for try await count in pending.values(in: writer) where count > 0 {
                    try await self.captureLocalChanges()
                }
            }
            // Other processes' commits, which no observation of this one
            // sees: the outbox and the waiting rows are looked at twenty
            // times a second (two counts of tables that are all but empty,
            // on a reader: the writer is not held).
            group.addTask {
                while true {
                    try await Task.sleep(for: Self.lookInterval)
                    let (pending, waiting) = try await writer.read { db in
                        (try self.pendingChangeCount(db), try self.waitingRowCount(db))
                    }
                    if pending > 0 { try await self.captureLocalChanges() }
                    if waiting > 0 { try await self.applyWaitingRows() }
                }
            }
            // The first to end (by an error, or cancelled) ends them all.
            try await group.next()
            group.cancelAll()
        }
        try Task.checkCancellation()
    }
}
