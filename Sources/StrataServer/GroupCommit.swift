import Dispatch
import Foundation
import StrataDocuments

/// Group commit for one database: single-document writes that arrive while
/// a transaction is being committed wait and are committed together in the
/// next one, so concurrent clients share each sync to disk while every
/// answer still means the write is on disk.
final class GroupCommitter: @unchecked Sendable {
    // @unchecked: `pending` and `draining` are only touched under `lock`.
    private typealias Waiter = (document: JSONObject, newEdits: Bool, userContext: JSON?, checked: CheckedDocument?, continuation: CheckedContinuation<DocumentWriteResult, any Error>)
    private let lock = NSLock()
    private var pending: [Waiter] = []
    private var draining = false
    let database: DocumentDatabase
    /// The most writes one transaction takes.
    let batchLimit = 1000

    init(database: DocumentDatabase) { self.database = database }

    /// Writes `document` in the next group. Its JavaScript validation runs
    /// first, here, concurrently with other writers' (the group's
    /// transaction only checks that the design documents did not change
    /// meanwhile).
    func put(_ document: JSONObject, newEdits: Bool, userContext: JSON?) async throws -> DocumentWriteResult {
        let database = self.database
        let checked = database.mayNeedCheckInAdvance
            ? try await offload { try database.checkInAdvance(document, userContext: userContext) } : nil
        return try await withCheckedThrowingContinuation { continuation in
            let start = lock.withLock { () -> Bool in
                pending.append((document, newEdits, userContext, checked, continuation))
                if draining { return false }
                draining = true
                return true
            }
            if start { DispatchQueue.global().async { self.drain() } }
        }
    }

    private func drain() {
        while true {
            let batch = lock.withLock { () -> [Waiter] in
                let batch = Array(pending.prefix(batchLimit))
                pending.removeFirst(batch.count)
                if batch.isEmpty { draining = false }
                return batch
            }
            if batch.isEmpty { return }
            do {
                let results = try database.putEach(batch.map { ($0.document, $0.newEdits, $0.userContext) }, checked: batch.compactMap(\.checked))
                for (waiter, result) in zip(batch, results) {
                    waiter.continuation.resume(with: result.mapError { $0 as any Error })
                }
            } catch {
                for waiter in batch { waiter.continuation.resume(throwing: error) }
            }
        }
    }
}
