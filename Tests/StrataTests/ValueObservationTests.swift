import Foundation
import Strata
import StrataTestHelpers
import Testing

@Suite struct ValueObservationTests {
    static let titles = ValueObservation { db in
        try String.fetchAll(db, sql: "SELECT title FROM notes ORDER BY title")
    }

    func makeQueue(at path: String? = nil) throws -> DatabaseQueue {
        let queue = try DatabaseQueue(path: try path ?? makeTemporaryPath())
        try queue.write { db in
            try db.execute(sql: """
                CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT);
                CREATE TABLE other(id INTEGER PRIMARY KEY, x INT);
                INSERT INTO notes(title) VALUES ('b');
                """)
        }
        return queue
    }

    @Test func deliversAtOnceThenAfterEachRelevantCommit() async throws {
        let queue = try makeQueue()
        let values = Self.titles.values(in: queue)
        var iterator = values.makeAsyncIterator()
        #expect(try await iterator.next() == ["b"])
        try await queue.write { db in try db.execute(sql: "INSERT INTO notes(title) VALUES ('a')") }
        #expect(try await iterator.next() == ["a", "b"])
        try await queue.write { db in
            try db.execute(sql: "INSERT INTO notes(title) VALUES ('c')")
            try db.execute(sql: "UPDATE notes SET title = 'd' WHERE title = 'c'")
        }
        #expect(try await iterator.next() == ["a", "b", "d"])  // one value for one transaction
    }

    /// `INSERT … RETURNING` read for its one row (``Row/fetchOne(_:sql:arguments:)``)
    /// makes its changes on that first step: observers hear of them when
    /// the statement is reset, without a step to its end. A WITHOUT ROWID
    /// table has no row events, so only the statement can tell.
    @Test func seesAWriteReadThroughReturning() async throws {
        let queue = try DatabaseQueue(path: try makeTemporaryPath())
        try await queue.write { db in
            try db.execute(sql: "CREATE TABLE counters(name TEXT PRIMARY KEY, n INTEGER NOT NULL) WITHOUT ROWID")
        }
        let counter = ValueObservation { db in try Int.fetchOne(db, sql: "SELECT n FROM counters WHERE name = 'a'") }
        var iterator = counter.values(in: queue).makeAsyncIterator()
        #expect(try await iterator.next() == .some(nil))
        let bump = "INSERT INTO counters VALUES ('a', 1) ON CONFLICT(name) DO UPDATE SET n = n + 1 RETURNING n"
        // In a transaction, and outside one (the statement commits as it is reset).
        #expect(try await queue.write { db in try Int.fetchOne(db, sql: bump) } == 1)
        #expect(try await iterator.next() == 1)
        #expect(try await queue.writeWithoutTransaction { db in try Int.fetchOne(db, sql: bump) } == 2)
        #expect(try await iterator.next() == 2)
    }

    @Test func ignoresOtherTablesEqualValuesAndRollbacks() async throws {
        let queue = try makeQueue()
        let log = ValueLog<[String]>()
        let task = Task {
            for try await titles in Self.titles.values(in: queue) { log.append(titles) }
        }
        defer { task.cancel() }
        try await log.wait(for: 1)
        // Another table, an update that leaves the result equal, a rollback.
        try await queue.write { db in try db.execute(sql: "INSERT INTO other(x) VALUES (1)") }
        try await queue.write { db in try db.execute(sql: "UPDATE notes SET title = 'b'") }
        await #expect(throws: CancellationError.self) {
            try await queue.write { db in
                try db.execute(sql: "INSERT INTO notes(title) VALUES ('never')")
                throw CancellationError()
            }
        }
        try await Task.sleep(for: .milliseconds(300))
        #expect(log.values == [["b"]])
        // The next relevant commit still comes through.
        try await queue.write { db in try db.execute(sql: "INSERT INTO notes(title) VALUES ('e')") }
        try await log.wait(for: 2)
        #expect(log.values == [["b"], ["b", "e"]])
    }

    @Test func seesATableEmptiedByDeleteWithoutWhere() async throws {
        let queue = try makeQueue()
        let log = ValueLog<[String]>()
        let task = Task {
            for try await titles in Self.titles.values(in: queue) { log.append(titles) }
        }
        defer { task.cancel() }
        try await log.wait(for: 1)
        try await queue.write { db in _ = try Note.deleteAll(db) }  // DELETE FROM notes
        try await log.wait(for: 2)
        #expect(log.values == [["b"], []])
    }

    @Test func worksWithAPoolAndWithTypedQueriesAndRecords() async throws {
        let pool = try DatabasePool(path: try makeTemporaryPath())
        try await pool.write { db in try db.create(table: Note.self) }
        let recent = ValueObservation { db in
            try Note.fetchAll(db, Note.table.order(Note.title)).map(\.title)
        }
        var iterator = recent.values(in: pool).makeAsyncIterator()
        #expect(try await iterator.next() == [])
        let note = Note(id: nil, title: "Groceries", text: "", fontName: "", fontSize: 12,
                        creationDate: Date(), modificationDate: Date())
        try await pool.write { db in _ = try note.inserted(db) }
        #expect(try await iterator.next() == ["Groceries"])
        let count = ValueObservation { db in try SQLTable("notes").fetchCount(db) }
        var counts = count.values(in: pool).makeAsyncIterator()
        #expect(try await counts.next() == 1)
    }

    @Test func cancellingTheTaskStopsTheTracking() async throws {
        let queue = try makeQueue()
        let received = ValueLog<Int>()
        let task = Task {
            for try await titles in Self.titles.values(in: queue) {
                received.append(titles.count)
            }
        }
        try await received.wait(for: 1)
        task.cancel()
        _ = await task.result  // the loop ends
        let before = received.values
        try await queue.write { db in try db.execute(sql: "INSERT INTO notes(title) VALUES ('late')") }
        try await Task.sleep(for: .milliseconds(100))
        #expect(received.values == before)
        #expect(before == [1])
    }

    @Test(arguments: [false, true])
    func closingTheWriterEndsItsObservations(usesPool: Bool) async throws {
        let path = try makeTemporaryPath()
        try makeQueue(at: path).close()
        let writer: any DatabaseWriter = usesPool ? try DatabasePool(path: path) : try DatabaseQueue(path: path)
        var values = Self.titles.values(in: writer).makeAsyncIterator()
        var changes = writer.observeChanges().makeAsyncIterator()
        #expect(try await values.next() == ["b"])
        if let pool = writer as? DatabasePool { try pool.close() } else { try (writer as! DatabaseQueue).close() }
        // Both streams end instead of waiting forever for a commit.
        #expect(try await values.next() == nil)
        #expect(await changes.next() == nil)
        var late = writer.observeChanges().makeAsyncIterator()
        #expect(await late.next() == nil)
        var lateValues = Self.titles.values(in: writer).makeAsyncIterator()
        await #expect(throws: SQLiteError.self) { try await lateValues.next() }
    }

    @Test func reportsCommittedRowChangesOfChosenTables() async throws {
        let queue = try makeQueue()
        var changes = queue.observeChanges(in: ["notes"]).makeAsyncIterator()
        // Let the recorder start before writing.
        try await queue.read { _ in () }
        try await queue.write { db in
            try db.execute(sql: "INSERT INTO other(x) VALUES (1)")
            try db.execute(sql: "INSERT INTO notes(id, title) VALUES (10, 'x')")
            try db.execute(sql: "UPDATE notes SET title = 'y' WHERE id = 10")
        }
        try? await queue.write { db in
            try db.execute(sql: "DELETE FROM notes WHERE id = 10")
            throw CancellationError()  // rolled back: not reported
        }
        try await queue.write { db in try db.execute(sql: "DELETE FROM notes WHERE id = 1") }
        #expect(await changes.next() == [
            DatabaseEvent(kind: .insert, databaseName: "main", tableName: "notes", rowID: 10),
            DatabaseEvent(kind: .update, databaseName: "main", tableName: "notes", rowID: 10),
        ])
        #expect(await changes.next() == [DatabaseEvent(kind: .delete, databaseName: "main", tableName: "notes", rowID: 1)])
    }

    @Test func leavesOutChangesUndoneByASavepointRollback() async throws {
        let queue = try makeQueue()
        var changes = queue.observeChanges(in: ["notes"]).makeAsyncIterator()
        try await queue.read { _ in () }
        try await queue.write { db in
            try db.execute(sql: "INSERT INTO notes(id, title) VALUES (20, 'kept')")
            // Strata's savepoint, rolled back by an error.
            _ = try? db.savepoint {
                try db.execute(sql: "INSERT INTO notes(id, title) VALUES (21, 'undone')")
                throw CancellationError()
            }
            // Raw SQL, a quoted name, a comment, nested savepoints.
            try db.execute(sql: """
                SAVEPOINT "Outer Point";
                INSERT INTO notes(id, title) VALUES (22, 'undone');
                savepoint inner; UPDATE notes SET title = 'undone' WHERE id = 20; release inner;
                /* undo both */ ROLLBACK TRANSACTION TO SAVEPOINT "outer point";
                INSERT INTO notes(id, title) VALUES (23, 'kept');
                RELEASE "Outer Point";
                SAVEPOINT s; DELETE FROM notes WHERE id = 23; RELEASE s;
                """)
        }
        #expect(await changes.next() == [
            DatabaseEvent(kind: .insert, databaseName: "main", tableName: "notes", rowID: 20),
            DatabaseEvent(kind: .insert, databaseName: "main", tableName: "notes", rowID: 23),
            DatabaseEvent(kind: .delete, databaseName: "main", tableName: "notes", rowID: 23),
        ])
        // The rows agree with what was reported.
        #expect(try await queue.read { db in try Int64.fetchAll(db, sql: "SELECT id FROM notes WHERE id >= 20") } == [20])
    }
}
