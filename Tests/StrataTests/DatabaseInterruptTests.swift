import Foundation
import Strata
import StrataTestHelpers
import Testing

@Suite struct DatabaseInterruptTests {
    static let endlessQuery = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT count(*) FROM n"

    @Test func interruptsALongQueryFromAnotherThread() async throws {
        let db = try Database()
        let handle = db.interruptHandle
        let finished = LockedFlag()
        let interrupter = Thread {
            // Keep interrupting until the query gave up: the first interrupt
            // may come before the query starts.
            while !finished.value {
                handle.interrupt()
                Thread.sleep(forTimeInterval: 0.01)
            }
        }
        interrupter.start()
        defer { finished.set() }
        let error = try #require(throws: SQLiteError.self) { try db.execute(sql: Self.endlessQuery) }
        #expect(error.code == .interrupt)
        finished.set()
        // The connection is still usable.
        #expect(try Int.fetchOne(db, sql: "SELECT 1") == 1)
    }

    @Test func interruptsAStatementRunningOnAQueue() async throws {
        let queue = try DatabaseQueue()
        let query = Task {
            try await queue.read { db in try Int.fetchOne(db, sql: Self.endlessQuery) }
        }
        let interrupter = Task {
            while !Task.isCancelled {
                queue.interrupt()
                try? await Task.sleep(for: .milliseconds(10))
            }
        }
        let result = await query.result
        interrupter.cancel()
        #expect(throws: SQLiteError.self) { try result.get() }
        #expect(try await queue.read { db in try Int.fetchOne(db, sql: "SELECT 2") } == 2)
    }

    @Test func interruptingAClosedConnectionDoesNothing() throws {
        let db = try Database()
        let handle = db.interruptHandle
        try db.close()
        handle.interrupt()
    }
}

/// A flag shared between threads.
final class LockedFlag: @unchecked Sendable {
    // @unchecked: `flag` is only touched under `lock`.
    private let lock = NSLock()
    private var flag = false
    var value: Bool { lock.withLock { flag } }
    func set() { lock.withLock { flag = true } }
}
