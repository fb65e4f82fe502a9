import Foundation
import Strata
import StrataTestHelpers
import Testing

/// Signals between threads in a test.
final class Gate: @unchecked Sendable {
    // @unchecked: DispatchSemaphore is thread-safe.
    private let semaphore = DispatchSemaphore(value: 0)
    func open() { semaphore.signal() }
    func wait() { semaphore.wait() }
}

/// The largest number of closures seen running at once.
final class ConcurrencyMeter: @unchecked Sendable {
    // @unchecked: the counters are only touched under `lock`.
    private let lock = NSLock()
    private var running = 0
    private(set) var maximum = 0
    func enter() { lock.withLock { running += 1; maximum = max(maximum, running) } }
    func leave() { lock.withLock { running -= 1 } }
    var peak: Int { lock.withLock { maximum } }
    var current: Int { lock.withLock { running } }
}

@Suite struct DatabasePoolTests {
    func makePool(readers: Int = 5) throws -> DatabasePool {
        let pool = try DatabasePool(path: try makeTemporaryPath(), maximumReaderCount: readers)
        try pool.write { db in
            try db.execute(sql: "CREATE TABLE items(id INTEGER PRIMARY KEY, value INT)")
            try db.execute(sql: "INSERT INTO items(value) VALUES (1), (2), (3)")
        }
        return pool
    }

    @Test func readsAndWritesInWALMode() throws {
        let pool = try makePool()
        #expect(try pool.read { db in try String.fetchOne(db, sql: "PRAGMA journal_mode") } == "wal")
        expectError(.readOnly) { try pool.read { db in try db.execute(sql: "DELETE FROM items") } }
        try pool.writeWithoutTransaction { db in
            #expect(!db.isInsideTransaction)
            try db.execute(sql: "DELETE FROM items WHERE value = 3")
        }
        #expect(try pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM items") } == 2)
    }

    @Test func offersTheSameMethodsAsync() async throws {
        let pool = try makePool()
        try await pool.write { db in try db.execute(sql: "INSERT INTO items(value) VALUES (4)") }
        #expect(try await pool.read { db in try Int.fetchOne(db, sql: "SELECT sum(value) FROM items") } == 10)
        try await pool.writeWithoutTransaction { db in try db.execute(sql: "DELETE FROM items WHERE value = 4") }
        try await pool.barrierWriteWithoutTransaction { db in try db.execute(sql: "DELETE FROM items WHERE value = 3") }
        #expect(try await pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM items") } == 2)
    }

    @Test func runsReadsConcurrently() async throws {
        let pool = try makePool(readers: 3)
        let meter = ConcurrencyMeter()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<6 {
                group.addTask {
                    try await pool.read { db in
                        meter.enter()
                        defer { meter.leave() }
                        Thread.sleep(forTimeInterval: 0.1)
                        _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM items")
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(meter.peak >= 2)
        #expect(meter.peak <= 3)
    }

    @Test func aReadDuringAWriteSeesTheLastCommittedState() throws {
        let pool = try makePool()
        let inserted = Gate(), readDone = Gate()
        let writer = Thread {
            try? pool.write { db in
                try db.execute(sql: "INSERT INTO items(value) VALUES (100)")
                inserted.open()
                readDone.wait()  // the transaction stays open while the read runs
            }
        }
        writer.start()
        inserted.wait()
        let countDuringWrite = try pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM items") }
        readDone.open()
        #expect(countDuringWrite == 3)
        // Once committed, the write is visible.
        var countAfter = 0
        for _ in 0..<100 {
            countAfter = try pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM items") ?? 0 }
            if countAfter == 4 { break }
            Thread.sleep(forTimeInterval: 0.01)
        }
        #expect(countAfter == 4)
    }

    @Test func aReadKeepsItsSnapshotWhileWritesCommit() throws {
        let pool = try makePool()
        let (first, second) = try pool.read { db -> (Int, Int) in
            let first = try Int.fetchOne(db, sql: "SELECT sum(value) FROM items") ?? 0
            try pool.write { db in try db.execute(sql: "UPDATE items SET value = value * 10") }  // commits meanwhile
            let second = try Int.fetchOne(db, sql: "SELECT sum(value) FROM items") ?? 0
            return (first, second)
        }
        #expect(first == 6 && second == 6)  // no torn read
        #expect(try pool.read { db in try Int.fetchOne(db, sql: "SELECT sum(value) FROM items") } == 60)
    }

    @Test func manyReadersDuringWritesNeverSeeAHalfDoneTransaction() async throws {
        let pool = try makePool()
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for round in 0..<50 {
                    try await pool.write { db in
                        // Move value between rows: the sum stays 6.
                        try db.execute(sql: "UPDATE items SET value = value - 1 WHERE id = ?", arguments: [round % 3 + 1])
                        try db.execute(sql: "UPDATE items SET value = value + 1 WHERE id = ?", arguments: [(round + 1) % 3 + 1])
                    }
                }
            }
            for _ in 0..<4 {
                group.addTask {
                    for _ in 0..<50 {
                        let sum = try await pool.read { db in try Int.fetchOne(db, sql: "SELECT sum(value) FROM items") }
                        #expect(sum == 6)
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    @Test func aBarrierWriteWaitsForReadsAndHoldsNewOnes() throws {
        let pool = try makePool()
        let reading = Gate(), finishRead = Gate()
        let meter = ConcurrencyMeter()
        let reader = Thread {
            _ = try? pool.read { db in
                meter.enter()
                reading.open()
                finishRead.wait()
                meter.leave()
                return try Int.fetchOne(db, sql: "SELECT 1")
            }
        }
        reader.start()
        reading.wait()
        DispatchQueue.global().asyncAfter(deadline: .now() + 0.2) { finishRead.open() }
        // The read is still running for 0.2 s: the barrier waits for it.
        let readersDuringBarrier = try pool.barrierWriteWithoutTransaction { db -> Int in
            try db.execute(sql: "INSERT INTO items(value) VALUES (0)")
            return meter.current
        }
        #expect(meter.peak == 1)
        #expect(readersDuringBarrier == 0)
    }

    @Test func checkpointsAndCloses() throws {
        let path = try makeTemporaryPath()
        let pool = try DatabasePool(path: path)
        try pool.write { db in try db.execute(sql: "CREATE TABLE t(a); INSERT INTO t VALUES (1)") }
        try pool.checkpoint(.truncate)
        let walSize = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int) ?? 0
        #expect(walSize == 0)
        try pool.close()
        expectError(.misuse) { try pool.read { db in try Int.fetchOne(db, sql: "SELECT 1") } }
        expectError(.misuse) { try pool.write { db in try db.execute(sql: "SELECT 1") } }
        #expect(try Int.fetchOne(Database(path: path), sql: "SELECT a FROM t") == 1)
    }
}

@Suite struct DatabaseWriterTests {
    /// Code written once for any writer.
    func addScore(_ points: Int, to writer: some DatabaseWriter) throws -> Int {
        try writer.write { db in
            try db.execute(sql: "INSERT INTO scores(points) VALUES (?)", arguments: [points])
        }
        return try writer.read { db in try Int.fetchOne(db, sql: "SELECT sum(points) FROM scores") ?? 0 }
    }

    func makeMigrator() -> Migrator {
        var migrator = Migrator()
        migrator.register("v1") { db in try db.execute(sql: "CREATE TABLE scores(id INTEGER PRIMARY KEY, points INT)") }
        migrator.register("v2") { db in try db.execute(sql: "ALTER TABLE scores ADD COLUMN player TEXT") }
        return migrator
    }

    @Test func aPoolAndAQueueAreMigratedAndUsedThroughOneAPI() throws {
        let pool = try DatabasePool(path: try makeTemporaryPath())
        let queue = try DatabaseQueue(path: try makeTemporaryPath())
        let migrator = makeMigrator()
        try migrator.migrate(pool)
        try migrator.migrate(queue)
        try migrator.migrate(pool)  // once only
        #expect(try pool.read { try migrator.appliedIdentifiers($0) } == ["v1", "v2"])
        #expect(try queue.read { try migrator.appliedIdentifiers($0) } == ["v1", "v2"])
        #expect(try addScore(3, to: pool) == 3)
        #expect(try addScore(4, to: queue) == 4)
    }

    @Test func aReadInsideAReadOfAOneReaderPoolFailsInsteadOfWaitingForever() throws {
        let pool = try DatabasePool(path: try makeTemporaryPath(), maximumReaderCount: 1)
        let error = try #require(throws: SQLiteError.self) {
            try pool.read { _ in try pool.read { _ in 1 } }
        }
        #expect(error.code == .misuse)
        #expect(error.message?.contains("inside a read of the same pool") == true)
        #expect(throws: SQLiteError.self) {
            try pool.read { _ in try pool.barrierWriteWithoutTransaction { _ in () } }
        }
        // A read inside a write is fine: readers are other connections.
        #expect(try pool.write { _ in try pool.read { _ in 7 } } == 7)
    }

    @Test(arguments: ["queue", "pool"])
    func observationSeesWithoutRowIDTablesAndDroppedTables(_ kind: String) async throws {
        let path = try makeTemporaryPath()
        let writer: any DatabaseWriter = kind == "pool" ? try DatabasePool(path: path) : try DatabaseQueue(path: path)
        try await writer.write { db in
            try db.execute(sql: "CREATE TABLE tags(name TEXT PRIMARY KEY, uses INT) WITHOUT ROWID; INSERT INTO tags VALUES ('a', 1)")
        }
        let observation = ValueObservation { db in try Int.fetchOne(db, sql: "SELECT sum(uses) FROM tags") ?? 0 }
        let log = ValueLog<Int>()
        let failures = ValueLog<String>()
        let task = Task {
            do {
                for try await total in observation.values(in: writer) { log.append(total) }
            } catch {
                failures.append("\(error)")
            }
        }
        defer { task.cancel() }
        try await log.wait(for: 1)
        try await writer.write { db in try db.execute(sql: "INSERT INTO tags VALUES ('b', 5)") }
        try await log.wait(for: 2)
        try await writer.write { db in try db.execute(sql: "UPDATE tags SET uses = 10 WHERE name = 'a'") }
        try await log.wait(for: 3)
        #expect(log.values == [1, 6, 15])
        // Dropping the table is a change too: the refetch fails, and says so.
        try await writer.write { db in try db.execute(sql: "DROP TABLE tags") }
        #expect(try await writer.read { db in try db.tableExists("tags") } == false)
        try await failures.wait(for: 1)
        #expect(failures.values.first?.contains("no such table: tags") == true)
    }

    @Test func aPoolIsMigratedFromAsyncCode() async throws {
        let pool = try DatabasePool(path: try makeTemporaryPath())
        try await makeMigrator().migrate(pool)
        #expect(try await pool.read { db in try db.tableExists("scores") })
    }

    /// The recorder is in place when observeChanges returns, even when it is
    /// called inside an access to the writer: the commit that follows in the
    /// same access is reported (an asynchronous start ran after it).
    @Test func observeChangesMissesNoCommitAfterItReturns() async throws {
        let queue = try DatabaseQueue(path: try makeTemporaryPath())
        try await queue.write { db in try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY)") }
        let changes = try await queue.writeWithoutTransaction { db in
            let changes = queue.observeChanges(in: ["t"])
            try db.execute(sql: "INSERT INTO t VALUES (1)")
            return changes
        }
        try await queue.write { db in try db.execute(sql: "INSERT INTO t VALUES (2)") }
        var iterator = changes.makeAsyncIterator()
        #expect(await iterator.next()?.map(\.rowID) == [1])
        #expect(await iterator.next()?.map(\.rowID) == [2])
    }
}
