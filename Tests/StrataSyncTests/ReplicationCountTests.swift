import Foundation
import StrataDocuments
@testable import StrataSync
import StrataTestHelpers
import Testing

/// The replicator's counts are exact when its steps interleave: the next
/// batch is fetched (changes, `_revs_diff`, the revisions) while the one
/// before it is written, and a revision that write brings must not be
/// written and counted again.
@Suite struct ReplicationCountTests {
    /// The order a two-way sync once produced, held in place: the source's
    /// document changes between `_revs_diff` and the read of the revisions
    /// (the read asks for the latest leaf, so it brings the new revision),
    /// and the next batch, which lists that new revision, asks the target
    /// before the first write has landed. One revision is written: the
    /// count says 1, not 2.
    @Test func aRevisionFetchedTwiceIsWrittenAndCountedOnce() async throws {
        let source = try DocumentDatabase(path: makeTemporaryPath("source.sqlite"))
        let target = try DocumentDatabase(path: makeTemporaryPath("target.sqlite"))
        let first = try await source.put(["_id": "x", "n": 1])
        let secondAsked = Gate()
        let sourcePeer = HeldPeer(StorePeer(store: source), beforeRevisions: { call in
            // Between the first _revs_diff and the first read of revisions.
            if call == 1 { _ = try source.put(["_id": "x", "_rev": .string(first.rev), "n": 2]) }
        })
        let targetPeer = HeldPeer(StorePeer(store: target), afterMissing: { call in
            if call == 2 { await secondAsked.open() }
        }, beforeWrite: { call in
            // The first write waits until the next batch has asked the
            // target (at most 20 s, should the replicator stop fetching
            // ahead).
            if call == 1 { await secondAsked.wait(atMost: .seconds(20)) }
        })
        let replicator = Replicator(source: source, target: target, options: ReplicationOptions(batchSize: 1),
                                    sourcePeer: sourcePeer, targetPeer: targetPeer)
        let progress = try await replicator.run()
        #expect(await secondAsked.isOpen, "the next batch did not ask the target while the first was written")
        #expect(progress.documentsWritten == 1)
        #expect(progress.documentWriteFailures == 0)
        #expect(progress.revisionsMissing == 1)
        #expect(try await target.document(id: "x")["n"] == 2)
    }
}

/// Checkpoints while batches flow come at `checkpointInterval`, and always
/// when the replication catches up: a long interval saves one at the end,
/// zero saves one a batch, and a run after either starts where it ended.
@Suite struct CheckpointIntervalTests {
    @Test func checkpointsAtTheIntervalAndWhenCaughtUp() async throws {
        let source = try DocumentDatabase(path: makeTemporaryPath("source.sqlite"))
        for result in try await source.bulkPut((0..<50).map { ["_id": .string("d\($0)"), "n": .int($0)] }) { _ = try result.get() }
        for (interval, saves) in [(Duration.seconds(3600), 1), (.zero, 10)] {
            let target = try DocumentDatabase(path: makeTemporaryPath("target.sqlite"))
            var options = ReplicationOptions(batchSize: 5)
            options.checkpointInterval = interval
            let targetPeer = HeldPeer(StorePeer(store: target))
            let first = try await Replicator(source: source, target: target, options: options,
                                             sourcePeer: StorePeer(store: source), targetPeer: targetPeer).run()
            #expect(first.documentsWritten == 50)
            #expect(await targetPeer.count("write") == 10)
            #expect(await targetPeer.count("saveCheckpoint") == saves, "checkpoint interval \(interval)")
            let again = try await Replicator(source: source, target: target, options: options).run()
            #expect(again.revisionsChecked == 0)
            #expect(try await target.info().documentCount == 50)
        }
    }

    /// `POST /_replicate` takes CouchDB's names for both, and refuses what
    /// is not a count.
    @Test func aReplicationRequestTakesCouchDBsOptions() throws {
        let request = try ReplicationRequest(["source": "a", "target": "b", "checkpoint_interval": 250, "worker_batch_size": 2000])
        #expect(request.options.checkpointInterval == .milliseconds(250))
        #expect(request.options.batchSize == 2000)
        let plain = try ReplicationRequest(["source": "a", "target": "b"])
        #expect(plain.options.checkpointInterval == .seconds(5))
        #expect(plain.options.batchSize == 500)
        #expect(throws: DocumentError.self) { try ReplicationRequest(["source": "a", "target": "b", "checkpoint_interval": "soon"]) }
        #expect(throws: DocumentError.self) { try ReplicationRequest(["source": "a", "target": "b", "worker_batch_size": 0]) }
    }
}

/// A peer whose steps a test can hold or act in, numbered from 1.
struct HeldPeer: ReplicationPeer {
    let inner: any ReplicationPeer
    var beforeRevisions: @Sendable (Int) async throws -> Void = { _ in }
    var afterMissing: @Sendable (Int) async throws -> Void = { _ in }
    var beforeWrite: @Sendable (Int) async throws -> Void = { _ in }
    private let calls = Calls()

    init(_ inner: any ReplicationPeer, beforeRevisions: @escaping @Sendable (Int) async throws -> Void = { _ in },
         afterMissing: @escaping @Sendable (Int) async throws -> Void = { _ in },
         beforeWrite: @escaping @Sendable (Int) async throws -> Void = { _ in }) {
        self.inner = inner
        self.beforeRevisions = beforeRevisions
        self.afterMissing = afterMissing
        self.beforeWrite = beforeWrite
    }

    func identity() async throws -> String { try await inner.identity() }
    func exists() async throws -> Bool { try await inner.exists() }
    func create() async throws { try await inner.create() }
    func changes(since: ChangeSequence, limit: Int, filter: ReplicationFilter?, wait: Duration?) async throws -> ChangesResult {
        try await inner.changes(since: since, limit: limit, filter: filter, wait: wait)
    }
    func missingRevisions(_ revisions: [(id: String, revisions: [String])]) async throws -> [(id: String, revisions: [String])] {
        let missing = try await inner.missingRevisions(revisions)
        try await afterMissing(await calls.next("missing"))
        return missing
    }
    func revisions(_ wanted: [(id: String, revisions: [String])]) async throws -> [JSONObject] {
        try await beforeRevisions(await calls.next("revisions"))
        return try await inner.revisions(wanted)
    }
    func write(_ documents: [JSONObject]) async throws -> [DocumentError] {
        try await beforeWrite(await calls.next("write"))
        return try await inner.write(documents)
    }
    func checkpoint(_ id: String) async throws -> JSONObject? { try await inner.checkpoint(id) }
    func saveCheckpoint(_ id: String, _ document: JSONObject) async throws {
        _ = await calls.next("saveCheckpoint")
        try await inner.saveCheckpoint(id, document)
    }
    /// How many times `step` ran.
    func count(_ step: String) async -> Int { await calls.count(step) }
    func ensureFullCommit() async throws { try await inner.ensureFullCommit() }
}

actor Calls {
    private var counts: [String: Int] = [:]
    func next(_ step: String) -> Int {
        counts[step, default: 0] += 1
        return counts[step]!
    }
    func count(_ step: String) -> Int { counts[step, default: 0] }
}

/// Opened once; waiters resume then, or when their limit passes.
actor Gate {
    private(set) var isOpen = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func open() {
        isOpen = true
        release()
    }

    private func release() {
        waiters.forEach { $0.resume() }
        waiters = []
    }

    func wait(atMost limit: Duration) async {
        let timeout = Task { try await Task.sleep(for: limit); self.release() }
        defer { timeout.cancel() }
        if isOpen { return }
        await withCheckedContinuation { waiters.append($0) }
    }
}
