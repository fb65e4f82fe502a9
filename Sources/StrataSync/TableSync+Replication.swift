import Foundation
import Strata
import StrataDocuments

extension TableSync {
    /// Sends the tables' changes to `remote` and receives its changes, once
    /// in each direction: the changes captured since the last call become
    /// documents while a push sends them and a pull runs alongside
    /// (PouchDB's `sync`).
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
        var options = options
        options.skipsDesignDocuments = true
        var done = try await captureAndSync(with: remote, options: options)
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

    /// The rows changed since the last capture become documents, in
    /// transactions of ``captureTransactionRows``, while a push sends each
    /// transaction's documents as the next is made, and a pull runs
    /// alongside. A first sync of a large table so overlaps the two
    /// instead of adding them (100,000 rows to `strata serve` on two
    /// cores: 5.56 s before, 4.71 s after, the means of nine alternate
    /// runs).
    private func captureAndSync(with remote: any DocumentStore, options: ReplicationOptions) async throws -> (push: ReplicationProgress, pull: ReplicationProgress) {
        if options.createTarget { try await remote.createIfMissing() }
        var created = options
        created.createTarget = false
        let options = created
        let captured = CaptureProgress()
        let documents = self.documents
        return try await withThrowingTaskGroup(of: (push: ReplicationProgress?, pull: ReplicationProgress?).self) { group in
            group.addTask {
                do {
                    try await self.captureLocalChanges(inTransactionsOf: Self.captureTransactionRows) { _ in await captured.committed() }
                } catch {
                    await captured.finish()
                    throw error
                }
                await captured.finish()
                return (nil, nil)
            }
            group.addTask {
                // A round sends what is captured; another follows each
                // transaction committed since it began, until the capture
                // has ended and a round began after that.
                var pushed: ReplicationProgress?
                while true {
                    let (finished, seen) = await captured.state
                    let round = try await Replicator(source: documents, target: remote, options: options).run()
                    pushed = pushed?.adding(round) ?? round
                    if finished { return (pushed, nil) }
                    await captured.wait(after: seen)
                    try Task.checkCancellation()
                }
            }
            // The pull from the start: what the server has then is all it
            // reads, not the rows this push sends it meanwhile. A row it
            // brings that the capture has not reached is a row changed here
            // before a change arrived: a conflict, as it would be in
            // another order, or no edit when it was written back unchanged.
            group.addTask { (nil, try await Replicator(source: remote, target: documents, options: options).run()) }
            var push: ReplicationProgress?
            var pull: ReplicationProgress?
            for try await done in group {
                push = done.push ?? push
                pull = done.pull ?? pull
            }
            return (push!, pull!)
        }
    }

    /// The most changed rows a capture of ``sync(with:options:)`` writes in
    /// one transaction: a twentieth of 100,000 rows, the first sent while
    /// the second is made.
    static let captureTransactionRows = 5_000

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
        var continuous = options
        continuous.continuous = true
        continuous.skipsDesignDocuments = true
        let options = continuous
        let writer = documents.writer
        // One capture at a time, in transactions the push sends as the next
        // is made (a first capture of a large table); a request meanwhile
        // makes it go round once more.
        let gate = CaptureGate()
        let capture: @Sendable () async throws -> Void = {
            try await gate.run { try await self.captureLocalChanges(inTransactionsOf: Self.captureTransactionRows) }
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await Replicator.sync(self.documents, remote, options: options) }
            // This process's commits (and what was changed before the
            // call): the outbox is observed.
            group.addTask {
                let pending = ValueObservation { db in try self.pendingChangeCount(db) }
                for try await count in pending.values(in: writer) where count > 0 {
                    try await capture()
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
                    if pending > 0 { try await capture() }
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

/// How far a capture in several transactions has come, for the push that
/// sends each transaction's documents while the next is made.
private actor CaptureProgress {
    /// Whether the capture has ended, and the transactions committed.
    private(set) var finished = false
    private var committedCount = 0
    private var waiting: [CheckedContinuation<Void, Never>] = []

    var state: (finished: Bool, committed: Int) { (finished, committedCount) }

    func committed() {
        committedCount += 1
        wake()
    }

    func finish() {
        finished = true
        wake()
    }

    /// Returns once a transaction past the `seen`th has committed, or the
    /// capture has ended.
    func wait(after seen: Int) async {
        guard !finished, committedCount <= seen else { return }
        await withCheckedContinuation { waiting.append($0) }
    }

    private func wake() {
        for continuation in waiting { continuation.resume() }
        waiting.removeAll()
    }
}

/// Runs one capture at a time: a request while one runs makes it run once
/// more when it ends, and returns at once.
private actor CaptureGate {
    private var running = false
    private var again = false

    func run(_ capture: @Sendable () async throws -> Void) async throws {
        guard !running else {
            again = true
            return
        }
        running = true
        defer { running = false }
        repeat {
            again = false
            try await capture()
        } while again
    }
}
