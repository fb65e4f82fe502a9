import Foundation
import StrataDocuments

/// Copies every document revision one database has and another lacks,
/// as CouchDB's and PouchDB's replicators do: the source's changes, then
/// `_revs_diff` on the target, then the missing revisions with their
/// history (`_bulk_get`, or `open_revs` where the source has no
/// `_bulk_get`), written with `new_edits=false` so that both sides end
/// with the same revision trees: the same winner, conflicts kept,
/// deletions carried. A checkpoint in a `_local` document on both sides
/// lets the next run resume where this one stopped.
///
/// ```swift
/// let device = try DocumentDatabase(path: "votes.sqlite")
/// let server = try CouchClient(url: URL(string: "http://127.0.0.1:5984")!,
///                              authentication: .basic(name: "admin", password: "secret"))
/// let push = Replicator(source: device, target: server.database("voting"))
/// let progress = try await push.run()
/// print(progress.documentsWritten)
/// ```
///
/// Runs on the task that calls ``run(progress:)``: cancel the task to stop
/// it (a continuous replication runs until then). Local SQLite work runs
/// on its own threads, and the local store is a WAL pool, so its readers
/// never wait for a replication.
public struct Replicator: Sendable {
    /// Where the revisions come from: a `DocumentDatabase` in this
    /// process, a `RemoteDatabase` on a server, any `DocumentStore`.
    public let source: any DocumentStore
    /// Where they go.
    public let target: any DocumentStore
    /// How the replication runs: once or continuously, batches, filter.
    public let options: ReplicationOptions

    /// The two sides as the replication talks to them: the stores, or
    /// stand-ins a test puts in their place.
    let sourcePeer: any ReplicationPeer
    let targetPeer: any ReplicationPeer

    /// A replication from `source` to `target`; ``run(progress:)`` runs it.
    public init(source: any DocumentStore, target: any DocumentStore, options: ReplicationOptions = ReplicationOptions()) {
        self.init(source: source, target: target, options: options, sourcePeer: StorePeer(store: source), targetPeer: StorePeer(store: target))
    }

    init(source: any DocumentStore, target: any DocumentStore, options: ReplicationOptions,
         sourcePeer: any ReplicationPeer, targetPeer: any ReplicationPeer) {
        self.source = source
        self.target = target
        self.options = options
        self.sourcePeer = sourcePeer
        self.targetPeer = targetPeer
    }

    /// Replicates; `progress` is called after each batch. A one-shot
    /// replication returns when the target has everything the source had
    /// when it started; a continuous one throws `CancellationError` when
    /// its task is cancelled.
    @discardableResult
    public func run(progress report: (@Sendable (ReplicationProgress) -> Void)? = nil) async throws -> ReplicationProgress {
        let source = sourcePeer
        let target = targetPeer
        // The source first, as CouchDB opens it: a source that cannot be
        // reached leaves no new, empty target behind.
        guard try await attempt("open the source", { try await source.exists() }) else {
            throw ReplicationError.missingSource(self.source.location)
        }
        if try await !attempt("open the target", { try await target.exists() }) {
            guard options.createTarget else {
                throw ReplicationError(reason: "the target \(self.target.location) does not exist (create it, or ask for it to be created: createTarget, --create-target)",
                                       underlying: RemoteError(status: 404, error: "db_not_found", reason: "could not open \(self.target.location)"))
            }
            try await attempt("create the target") { try await target.create() }
        }
        let replicationID = try await self.replicationID(source, target)
        let checkpoints = try await attempt("read the checkpoints") {
            (try await source.checkpoint(replicationID), try await target.checkpoint(replicationID))
        }
        var progress = ReplicationProgress()
        progress.lastSequence = Self.startSequence(source: checkpoints.0, target: checkpoints.1)
        let session = UUID().uuidString.lowercased()
        let started = Date()
        let startSequence = progress.lastSequence
        var history = checkpoints.0?["history"]?.arrayValue ?? []

        let clock = ContinuousClock()
        var lastCheckpoint = clock.now
        // Progress written but not yet checkpointed.
        var unsaved = false

        func saveCheckpoints() async throws {
            try await attempt("commit the target") { try await target.ensureFullCommit() }
            var entry: JSONObject = [
                "session_id": .string(session),
                "start_time": .string(Self.httpDate(started)),
                "end_time": .string(Self.httpDate(Date())),
                "start_last_seq": startSequence.json,
                "end_last_seq": progress.lastSequence.json,
                "recorded_seq": progress.lastSequence.json,
                "missing_checked": .int(progress.revisionsChecked),
                "missing_found": .int(progress.revisionsMissing),
                "docs_read": .int(progress.documentsRead),
                "docs_written": .int(progress.documentsWritten),
                "doc_write_failures": .int(progress.documentWriteFailures),
            ]
            entry["session_id"] = .string(session)
            if history.first?["session_id"]?.stringValue == session { history.removeFirst() }
            history.insert(.object(entry), at: 0)
            if history.count > 50 { history.removeLast(history.count - 50) }
            let checkpoint: JSONObject = [
                "session_id": .string(session),
                "source_last_seq": progress.lastSequence.json,
                "replication_id_version": .int(1),
                "replicator": .string("strata"),
                "history": .array(history),
            ]
            // The target first: a checkpoint the source holds and the target
            // lacks only makes the next run start over, never skip.
            try await attempt("save the target's checkpoint") { try await target.saveCheckpoint(replicationID, checkpoint) }
            do {
                try await attempt("save the source's checkpoint") { try await source.saveCheckpoint(replicationID, checkpoint) }
            } catch let error as ReplicationError where [401, 403].contains(error.underlying?.status ?? 0) {
                // A source we may only read (PouchDB goes on the same way):
                // the next run starts from the target's checkpoint alone.
            }
            unsaved = false
            lastCheckpoint = clock.now
        }

        // Each batch is fetched (changes, `_revs_diff`, the missing
        // revisions) while the one before it is written and checkpointed.
        // So the next batch may hold a revision the one before wrote: asked
        // for before that write landed, or brought by the read of the latest
        // leaf when the source changed between `_revs_diff` and that read.
        // Those are dropped, not written and counted twice.
        var batch = try await fetch(since: progress.lastSequence, wait: nil, from: source, to: target)
        var justWritten: Set<RevisionKey> = []
        while true {
            if !justWritten.isEmpty {
                batch.documents.removeAll { justWritten.contains(RevisionKey($0)) }
            }
            try Task.checkCancellation()
            if batch.page.results.isEmpty {
                progress.pending = 0
                progress.caughtUp = true
                let moved = progress.lastSequence != batch.page.lastSeq
                progress.lastSequence = batch.page.lastSeq
                if !options.continuous {
                    if moved || unsaved { try await saveCheckpoints() }
                    report?(progress)
                    return progress
                }
                if unsaved { try await saveCheckpoints() }
                report?(progress)
                // Nothing is being written while this one is fetched.
                justWritten = []
                batch = try await fetch(since: progress.lastSequence, wait: options.heartbeat, from: source, to: target)
                continue
            }
            let nextSince = batch.page.lastSeq
            async let next = fetch(since: nextSince, wait: nil, from: source, to: target)
            progress.revisionsChecked += batch.checked
            progress.revisionsMissing += batch.documents.count
            progress.documentsRead += batch.documents.count
            let documents = batch.documents
            let failures = documents.isEmpty ? [] : try await attempt("write to the target") { try await target.write(documents) }
            progress.documentWriteFailures += failures.count
            progress.documentsWritten += documents.count - failures.count
            justWritten = Set(documents.map(RevisionKey.init))
            progress.lastSequence = batch.page.lastSeq
            progress.pending = batch.page.pending
            progress.caughtUp = batch.page.pending == 0
            if progress.caughtUp || clock.now - lastCheckpoint >= options.checkpointInterval {
                try await saveCheckpoints()
            } else {
                unsaved = true
            }
            report?(progress)
            batch = try await next
        }
    }

    /// A document's id and revision, as a replicated document carries them.
    private struct RevisionKey: Hashable {
        let id: String?
        let rev: String?
        init(_ document: JSONObject) {
            id = document["_id"]?.stringValue
            rev = document["_rev"]?.stringValue
        }
    }

    /// A page of the source's changes with the revisions the target lacks.
    private struct Batch: Sendable {
        var page: ChangesResult
        /// Revisions asked about.
        var checked: Int
        /// The missing revisions, read from the source.
        var documents: [JSONObject]
    }

    /// Reads a page of changes, asks the target what it lacks and reads that
    /// from the source.
    private func fetch(since: ChangeSequence, wait: Duration?, from source: any ReplicationPeer, to target: any ReplicationPeer) async throws -> Batch {
        let page = try await attempt(wait == nil ? "read the source's changes" : "wait for the source's changes") {
            try await source.changes(since: since, limit: options.batchSize, filter: options.filter, wait: wait)
        }
        // By id, kept apart by their bytes as CouchDB keeps them (a
        // dictionary of Swift strings would take a precomposed `é` and `e`
        // with a combining accent for one id, and one document would not
        // be replicated).
        let asked = DocumentDatabase.mergingRevisionsByID(page.results.compactMap { change in
            options.skipsDesignDocuments && change.id.hasBytePrefix("_design/") ? nil : (id: change.id, revisions: change.changes)
        })
        let checked = asked.reduce(0) { $0 + $1.revisions.count }
        guard !asked.isEmpty else { return Batch(page: page, checked: 0, documents: []) }
        let missing = try await attempt("ask the target which revisions it lacks (_revs_diff)") { try await target.missingRevisions(asked) }
        guard !missing.isEmpty else { return Batch(page: page, checked: checked, documents: []) }
        let documents = try await attempt("read the missing revisions from the source") { try await source.revisions(missing) }
        return Batch(page: page, checked: checked, documents: documents)
    }

    /// Runs a step, retrying transient failures with backoff (a remote
    /// server's or a local store's: one error type); a refusal (401, 403,
    /// other 4xx) ends the replication at once.
    private func attempt<T>(_ step: String, _ work: () async throws -> T) async throws -> T {
        var wait = options.initialBackoff
        var failures = 0
        while true {
            do {
                return try await work()
            } catch let error as RemoteError {
                failures += 1
                guard error.isTransient, failures <= options.retries else {
                    let advice = error.status == 401 ? " (check the user and password)" : error.status == 403 ? " (the user lacks the rights)" : ""
                    throw ReplicationError(reason: "could not \(step): \(error)\(advice)", underlying: error)
                }
                try await Task.sleep(for: wait)
                wait = min(wait * 2, options.maximumBackoff)
            }
        }
    }

    /// The same two databases with the same filter always get the same id,
    /// so a later run finds the checkpoints.
    private func replicationID(_ source: any ReplicationPeer, _ target: any ReplicationPeer) async throws -> String {
        let sourceName = try await attempt("read the source's identity") { try await source.identity() }
        let targetName = try await attempt("read the target's identity") { try await target.identity() }
        let key = ["strata-replication-1", sourceName, targetName, options.filter?.label ?? ""].joined(separator: "\n")
            + (options.skipsDesignDocuments ? "\nno design documents" : "")
        return MD5.hex(Array(key.utf8))
    }

    /// Where to start, from the two checkpoints: the last sequence both
    /// recorded in the same session, as CouchDB compares histories.
    static func startSequence(source: JSONObject?, target: JSONObject?) -> ChangeSequence {
        guard let source, let target else { return .start }
        if let session = source["session_id"], session == target["session_id"], let seq = source["source_last_seq"] {
            return ChangeSequence(seq)
        }
        let targetSessions = Set((target["history"]?.arrayValue ?? []).compactMap { $0["session_id"]?.stringValue })
        for entry in source["history"]?.arrayValue ?? [] {
            if let session = entry["session_id"]?.stringValue, targetSessions.contains(session), let seq = entry["recorded_seq"] {
                return ChangeSequence(seq)
            }
        }
        return .start
    }

    static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }
}

extension Replicator {
    /// Both directions at once, as PouchDB's `sync`: `a` to `b` and `b` to
    /// `a`, each with its own checkpoints. Returns the two progresses
    /// (push, pull) when both end; the first failure cancels the other.
    @discardableResult
    public static func sync(_ a: any DocumentStore, _ b: any DocumentStore, options: ReplicationOptions = ReplicationOptions(),
                            progress: (@Sendable (_ push: Bool, ReplicationProgress) -> Void)? = nil) async throws -> (push: ReplicationProgress, pull: ReplicationProgress) {
        var pullOptions = options
        pullOptions.createTarget = false
        let push = Replicator(source: a, target: b, options: options)
        let pull = Replicator(source: b, target: a, options: pullOptions)
        // The push first creates the target when asked; then both run together.
        if options.createTarget {
            try await b.createIfMissing()
        }
        return try await withThrowingTaskGroup(of: (Bool, ReplicationProgress).self) { group in
            group.addTask { (true, try await push.run { progress?(true, $0) }) }
            group.addTask { (false, try await pull.run { progress?(false, $0) }) }
            var results: [Bool: ReplicationProgress] = [:]
            for try await (isPush, done) in group { results[isPush] = done }
            return (results[true]!, results[false]!)
        }
    }
}
