import Foundation
import Strata
import StrataTestHelpers
import Testing

/// Bounding SQL a user typed: a time limit, a progress handler, and
/// `interrupt()` reaching every connection of a pool. The runaway queries
/// never end by themselves, so each test's outcome is the same on a busy
/// machine, only later.
@Suite struct TimeLimitTests {
    /// A query that counts forever.
    static let runaway = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"

    @Test func aStatementPastItsTimeLimitIsStoppedNamingTheLimit() throws {
        let db = try Database()
        let error = try #require(throws: SQLiteError.self) {
            try db.withTimeLimit(.milliseconds(100)) { try Int.fetchOne(db, sql: Self.runaway) }
        }
        #expect(error.code == .interrupt)
        #expect(error.message == "the statement ran past its time limit of 0.1 seconds and was stopped")
        #expect(error.sql == Self.runaway)
        // The limit ends with the call: the connection works on, unbounded.
        #expect(try db.withTimeLimit(.seconds(600)) { try Int.fetchOne(db, sql: "SELECT 42") } == 42)
        #expect(try Int.fetchOne(db, sql: "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 100000) SELECT count(*) FROM c") == 100_000)
    }

    @Test func limitsNestAndTheEarliestDeadlineApplies() throws {
        let db = try Database()
        let error = try #require(throws: SQLiteError.self) {
            try db.withTimeLimit(.milliseconds(50)) {
                try db.withTimeLimit(.seconds(600)) { try Int.fetchOne(db, sql: Self.runaway) }
            }
        }
        #expect(error.message == "the statement ran past its time limit of 0.05 seconds and was stopped")
    }

    @Test func aWriteStoppedByItsLimitRollsBackAndKeepsWhatWasCommitted() throws {
        let queue = try DatabaseQueue()
        try queue.write { db in try db.execute(sql: "CREATE TABLE t(x); INSERT INTO t VALUES (1)") }
        let error = try #require(throws: SQLiteError.self) {
            try queue.write(timeLimit: .milliseconds(100)) { db in
                try db.execute(sql: "INSERT INTO t VALUES (2)")
                try db.execute(sql: "INSERT INTO t " + Self.runaway)
            }
        }
        #expect(error.code == .interrupt)
        #expect(try queue.read { db in try Int.fetchAll(db, sql: "SELECT x FROM t") } == [1])
    }

    @Test func asyncReadsTakeALimitToo() async throws {
        let pool = try DatabasePool(path: try makeTemporaryPath())
        await #expect(throws: SQLiteError.self) {
            try await pool.read(timeLimit: .milliseconds(100)) { db in try Int.fetchOne(db, sql: Self.runaway) }
        }
        #expect(try await pool.read(timeLimit: .seconds(600)) { db in try Int.fetchOne(db, sql: "SELECT 7") } == 7)
    }

    @Test func aProgressHandlerCanStopAStatementAndBeRemoved() throws {
        let db = try Database()
        var calls = 0
        try db.setProgressHandler(every: 100) {
            calls += 1
            return calls >= 50  // a Cancel button pressed after a while
        }
        let error = try #require(throws: SQLiteError.self) { try Int.fetchOne(db, sql: Self.runaway) }
        #expect(error.code == .interrupt)
        #expect(calls == 50)
        try db.setProgressHandler(nil)
        #expect(try Int.fetchOne(db, sql: "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10000) SELECT count(*) FROM c") == 10_000)
        #expect(calls == 50)
    }

    @Test func interruptingAPoolStopsItsReadersToo() async throws {
        let started = ValueLog<Int>()
        var configuration = Configuration()
        configuration.prepareDatabase = { db in
            // Called once when the runaway query starts producing rows.
            try db.add(function: DatabaseFunction("started", argumentCount: 0) { _ in
                started.append(1)
                return 1
            })
        }
        let pool = try DatabasePool(path: try makeTemporaryPath(), configuration: configuration)
        let read = Task {
            // The limit only keeps a broken interrupt() from hanging the suite.
            try await pool.read(timeLimit: .seconds(300)) { db in
                try Int.fetchOne(db, sql: "WITH RECURSIVE c(x) AS (SELECT started() UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c")
            }
        }
        try await started.wait(for: 1)
        pool.interrupt()
        let result = await read.result
        #expect(throws: SQLiteError.self) { try result.get() }
        if case .failure(let error as SQLiteError) = result {
            #expect(error.code == .interrupt)
            #expect(error.message?.contains("time limit") == false)
        }
    }
}
