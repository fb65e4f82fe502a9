import Dispatch
import Foundation
import StrataDocuments
import StrataQueryServers

/// One update-handler call waiting its turn: CouchDB's request object.
struct UpdateCall: Sendable {
    var request: JSON
}

/// Runs update-handler calls on one document in batches: calls that arrive
/// while a batch runs wait, then run together in the next one (one
/// transaction, one commit), in the order they came.
final class UpdateBatcher: @unchecked Sendable {
    // @unchecked: `queues` is only touched under `lock`.
    typealias Outcome = (written: DocumentWriteResult?, result: JSON)
    typealias Run = @Sendable ([UpdateCall]) throws -> [Result<Outcome, any Error>]
    private typealias Waiter = (call: UpdateCall, run: Run, continuation: CheckedContinuation<Outcome, any Error>)
    private let lock = NSLock()
    private var queues: [String: [Waiter]] = [:]
    /// The most calls one batch takes.
    let batchLimit = 256

    func submit(_ key: String, _ call: UpdateCall, run: @escaping Run) async throws -> Outcome {
        try await withCheckedThrowingContinuation { continuation in
            let start = lock.withLock { () -> Bool in
                if queues[key] != nil {
                    queues[key]!.append((call, run, continuation))
                    return false
                }
                queues[key] = [(call, run, continuation)]
                return true
            }
            // Batches call JavaScript: they wait on the query servers' queue.
            if start { QueryServers.functionQueue.async { self.drain(key) } }
        }
    }

    private func drain(_ key: String) {
        while true {
            let batch = lock.withLock { () -> [Waiter] in
                let waiting = queues[key] ?? []
                if waiting.isEmpty {
                    queues[key] = nil
                    return []
                }
                let batch = Array(waiting.prefix(batchLimit))
                queues[key] = Array(waiting.dropFirst(batch.count))
                return batch
            }
            if batch.isEmpty { return }
            // The first call's closure runs the batch (same database,
            // function and document for all).
            do {
                let results = try batch[0].run(batch.map(\.call))
                for (waiter, result) in zip(batch, results) { waiter.continuation.resume(with: result) }
            } catch {
                for waiter in batch { waiter.continuation.resume(throwing: error) }
            }
        }
    }
}
