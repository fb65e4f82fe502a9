import Dispatch
import Foundation
import Strata

/// Runs work submitted under a key in batches: items that arrive while a
/// batch of their key runs wait, then run together in the next batch (one
/// transaction, one commit), in the order they came; keys run apart. What
/// group commit and update-function batching share.
final class KeyedBatcher<Item: Sendable, Outcome: Sendable>: Sendable {
    /// Runs one batch: an outcome per item, in order. A thrown error fails
    /// the whole batch.
    typealias Run = @Sendable ([Item]) throws -> [Result<Outcome, any Error>]
    private typealias Waiter = (item: Item, run: Run, continuation: CheckedContinuation<Outcome, any Error>)
    /// By key, compared in bytes (two document ids Swift's `==` takes for
    /// one are two keys).
    private let queues = Locked<[ExactString: [Waiter]]>([:])
    /// The most items one batch takes.
    let limit: Int
    /// Where batches run (never Swift's cooperative pool: they block).
    let queue: DispatchQueue

    init(limit: Int, queue: DispatchQueue) {
        self.limit = limit
        self.queue = queue
    }

    /// Runs `item` in the next batch of `key`; the first item's `run` runs
    /// the batch (items of one key must be runnable together).
    func submit(_ key: String, _ item: Item, run: @escaping Run) async throws -> Outcome {
        let key = ExactString(key)
        return try await withCheckedThrowingContinuation { continuation in
            let start = queues.withLock { queues -> Bool in
                if queues[key] != nil {
                    queues[key]!.append((item, run, continuation))
                    return false
                }
                queues[key] = [(item, run, continuation)]
                return true
            }
            if start { queue.async { self.drain(key) } }
        }
    }

    private func drain(_ key: ExactString) {
        while true {
            let batch = queues.withLock { queues -> [Waiter] in
                let waiting = queues[key] ?? []
                if waiting.isEmpty {
                    queues[key] = nil
                    return []
                }
                let batch = Array(waiting.prefix(limit))
                queues[key] = Array(waiting.dropFirst(batch.count))
                return batch
            }
            if batch.isEmpty { return }
            do {
                let results = try batch[0].run(batch.map(\.item))
                for (waiter, result) in zip(batch, results) { waiter.continuation.resume(with: result) }
                // A run answering fewer outcomes than items fails the rest.
                for waiter in batch.dropFirst(results.count) {
                    waiter.continuation.resume(throwing: DocumentError(.internalError, "the batch gave no outcome for this item"))
                }
            } catch {
                for waiter in batch { waiter.continuation.resume(throwing: error) }
            }
        }
    }
}

/// A write waiting for its group (see ``DocumentDatabase/commit(_:newEdits:userContext:)``).
struct PendingWrite: Sendable {
    var document: JSONObject
    var newEdits: Bool
    var userContext: JSON?
    var checked: CheckedDocument?
}

extension DocumentDatabase {
    /// Saves a document as the synchronous `put(_:newEdits:userContext:)` does, from
    /// async code, with group commit: writes that arrive while a
    /// transaction commits wait and are committed together in the next one,
    /// so concurrent writers share each sync to disk, and each answer still
    /// means its write is committed. A stored JavaScript validation runs
    /// first, outside the transaction and concurrently with other writers'.
    /// No thread of Swift's cooperative pool waits on SQLite.
    public func commit(_ document: JSONObject, newEdits: Bool = true, userContext: JSON? = nil) async throws -> DocumentWriteResult {
        let checked = mayNeedCheckInAdvance
            ? try await Self.blocking(on: .global()) { try self.checkInAdvance(document, userContext: userContext) } : nil
        return try await commits.submit("", PendingWrite(document: document, newEdits: newEdits, userContext: userContext, checked: checked)) { [self] batch in
            try putEach(batch.map { ($0.document, $0.newEdits, $0.userContext) }, checked: batch.compactMap(\.checked))
                .map { $0.mapError { $0 as any Error } }
        }
    }

    /// Runs the update function `function` of a design (Swift, or the
    /// stored JavaScript) on the document `id` (nil: none) as
    /// the synchronous `update(design:function:id:request:userContext:)` does, from async
    /// code: calls on one document by one user with one function that
    /// arrive together run in one transaction, each on the document the
    /// call before left, so none conflicts and all share one commit.
    public func runUpdate(design: String, function: String, id: String?, request: JSON = .object([:]),
                          userContext: JSON? = nil) async throws -> (written: DocumentWriteResult?, response: JSON) {
        // One batch: one design, function, document and user (a call
        // without a document is alone).
        let key = [Self.designName(design), function, id ?? UUID().uuidString, (userContext ?? .null).text].joined(separator: "\u{0}")
        return try await updates.submit(key, request) { [self] requests in
            try update(design: design, function: function, id: id, requests: requests, userContext: userContext)
        }
    }

    /// Runs blocking work on `queue` and waits for it without holding a
    /// thread of Swift's cooperative pool: the one way the engine, the
    /// server and the replicator wait on SQLite or JavaScript.
    package static func blocking<T: Sendable>(on queue: DispatchQueue, _ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try work() }) }
        }
    }

    /// Where update batches run: they may wait on JavaScript until its time
    /// limit, so not on the queue plain writes use.
    static let functionQueue = DispatchQueue(label: "strata.documents.functions", attributes: .concurrent)
}
