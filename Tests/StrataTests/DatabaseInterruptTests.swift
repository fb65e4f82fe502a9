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

    @Test func interruptsLandingOnAnyStatementLeaveTheQueueUsable() throws {
        // Interrupts every few microseconds, so that some land on the
        // statements a read begins and ends with (BEGIN, query_only,
        // ROLLBACK), not only on the query. (Without a pause no statement
        // could ever finish.)
        let queue = try DatabaseQueue()
        try queue.write { db in try db.execute(sql: "CREATE TABLE t(x)") }
        let finished = LockedFlag()
        let interrupter = Thread {
            while !finished.value {
                queue.interrupt()
                usleep(20)
            }
        }
        interrupter.start()
        defer { finished.set() }
        for _ in 0..<2000 {
            _ = try? queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM t") }
        }
        finished.set()
        // Whatever was interrupted, the next read and write work.
        #expect(try queue.read { db in try Int.fetchOne(db, sql: "SELECT 2") } == 2)
        try queue.write { db in try db.execute(sql: "INSERT INTO t VALUES (1)") }
        #expect(try queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM t") } == 1)
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
