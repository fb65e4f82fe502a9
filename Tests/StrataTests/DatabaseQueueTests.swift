import Foundation
import Strata
import StrataTestHelpers
import Testing

private struct Abort: Error {}

@Suite struct DatabaseQueueTests {
    func makeQueue(_ storage: TestStorage) throws -> DatabaseQueue {
        let queue = try storage.makeQueue()
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT NOT NULL)")
        }
        return queue
    }

    @Test(arguments: TestStorage.allCases)
    func writesInATransactionAndReads(_ storage: TestStorage) throws {
        let queue = try makeQueue(storage)
        let id = try queue.write { db in
            try db.execute(sql: "INSERT INTO notes(title) VALUES (?)", arguments: ["Groceries"])
            #expect(db.isInsideTransaction)
            return db.lastInsertedRowID
        }
        #expect(id == 1)
        #expect(try queue.read { db in try String.fetchAll(db, sql: "SELECT title FROM notes") } == ["Groceries"])
    }

    @Test(arguments: TestStorage.allCases)
    func rollsBackAWriteThatThrows(_ storage: TestStorage) throws {
        let queue = try makeQueue(storage)
        #expect(throws: Abort.self) {
            try queue.write { db in
                try db.execute(sql: "INSERT INTO notes(title) VALUES ('lost')")
                throw Abort()
            }
        }
        #expect(try queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM notes") } == 0)
    }

    @Test func readRefusesToWrite() throws {
        let queue = try makeQueue(.memory)
        expectError(.readOnly) {
            try queue.read { db in try db.execute(sql: "INSERT INTO notes(title) VALUES ('sneaky')") }
        }
        // The connection is writable again afterwards.
        try queue.write { db in try db.execute(sql: "INSERT INTO notes(title) VALUES ('fine')") }
        #expect(try queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM notes") } == 1)
    }

    @Test func writesWithoutATransaction() throws {
        let queue = try makeQueue(.temporaryFile)
        try queue.writeWithoutTransaction { db in
            #expect(!db.isInsideTransaction)
            try db.execute(sql: "INSERT INTO notes(title) VALUES ('one')")
            try? db.transaction {
                try db.execute(sql: "INSERT INTO notes(title) VALUES ('two')")
                throw Abort()
            }
        }
        #expect(try queue.read { db in try String.fetchAll(db, sql: "SELECT title FROM notes") } == ["one"])
    }

    @Test func reentrantAccessIsAClearErrorNotADeadlock() throws {
        let queue = try makeQueue(.memory)
        let error = try queue.write { _ in
            try #require(throws: SQLiteError.self) {
                try queue.write { db in try db.execute(sql: "INSERT INTO notes(title) VALUES ('inner')") }
            }
        }
        #expect(error.code == .misuse)
        #expect(error.message?.contains("DatabaseQueue.write was called from inside another access") == true)
        try queue.read { _ in
            _ = expectError(.misuse) { try queue.read { _ in 1 } }
        }
    }

    @Test(arguments: TestStorage.allCases)
    func offersTheSameMethodsAsync(_ storage: TestStorage) async throws {
        let queue = try makeQueue(storage)
        try await queue.write { db in
            try db.execute(sql: "INSERT INTO notes(title) VALUES ('async')")
        }
        await #expect(throws: Abort.self) {
            try await queue.write { db in
                try db.execute(sql: "INSERT INTO notes(title) VALUES ('rolled back')")
                throw Abort()
            }
        }
        try await queue.writeWithoutTransaction { db in
            try db.execute(sql: "INSERT INTO notes(title) VALUES ('no transaction')")
        }
        let titles = try await queue.read { db in try String.fetchAll(db, sql: "SELECT title FROM notes ORDER BY id") }
        #expect(titles == ["async", "no transaction"])
    }

    @Test func serializesManyConcurrentTasks() async throws {
        let queue = try makeQueue(.temporaryFile)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<50 {
                group.addTask {
                    try await queue.write { db in
                        let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM notes") ?? 0
                        try db.execute(sql: "INSERT INTO notes(id, title) VALUES (?, ?)", arguments: [count + 1, "task \(index)"])
                    }
                }
                group.addTask {
                    _ = try await queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM notes") }
                }
            }
            try await group.waitForAll()
        }
        // Each read-modify-write saw the previous one: ids 1...50 with no conflict.
        let ids = try await queue.read { db in try Int.fetchAll(db, sql: "SELECT id FROM notes ORDER BY id") }
        #expect(ids == Array(1...50))
    }

    @Test func closesAndThenRefusesWork() throws {
        let queue = try makeQueue(.memory)
        try queue.close()
        expectError(.misuse) { try queue.read { db in try Int.fetchOne(db, sql: "SELECT 1") } }
        expectError(.misuse) { try queue.write { db in try db.execute(sql: "SELECT 1") } }
    }

    @Test func aCancelledTaskDoesNotStartItsWork() async throws {
        let queue = try makeQueue(.memory)
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await queue.write { db in try db.execute(sql: "INSERT INTO notes(title) VALUES ('late')") }
        }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(try await queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM notes") } == 0)
    }

    @Test func runsAsyncWorkOnItsOwnSerialQueueNotTheCooperativePool() async throws {
        let queue = try DatabaseQueue()
        // Inside the closure, a synchronous access reports reentrancy: the
        // closure runs on the queue's own dispatch queue, not on the
        // cooperative thread pool where the calling task lives.
        let nested = try await queue.read { _ in
            Result { try queue.read { _ in 1 } }
        }
        let error = try #require(throws: SQLiteError.self) { try nested.get() }
        #expect(error.code == .misuse)
        // Outside any closure the same call is fine.
        #expect(try await queue.read { _ in 1 } == 1)
    }

    @Test func sharesAFileWithAnotherQueue() throws {
        let path = try makeTemporaryPath()
        let first = try DatabaseQueue(path: path)
        let second = try DatabaseQueue(path: path)
        try first.write { db in try db.execute(sql: "CREATE TABLE t(a); INSERT INTO t VALUES (1)") }
        #expect(try second.read { db in try Int.fetchOne(db, sql: "SELECT a FROM t") } == 1)
        #expect(first.location == .path(path))
    }
}
