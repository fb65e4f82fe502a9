import Foundation
import Strata
import StrataTestHelpers
import Testing

/// What an app writes to follow a connection's transactions.
fileprivate final class ChangeLog: TransactionObserver {
    var outcomes: [TransactionChanges?] = []
    var countsSeenAfterCommit: [Int] = []

    func databaseDidCommit(_ db: Database, changes: TransactionChanges) {
        outcomes.append(changes)
        // Told after the commit, outside any transaction: it may read.
        countsSeenAfterCommit.append((try? Int.fetchOne(db, sql: "SELECT count(*) FROM notes")) ?? -1)
    }

    func databaseDidRollback(_ db: Database) {
        outcomes.append(nil)
    }

    var closings = 0
    func databaseWillClose(_ db: Database) {
        closings += 1
    }
}

@Suite struct TransactionObserverTests {
    func makeDatabase(_ storage: TestStorage) throws -> Database {
        let db = try storage.makeDatabase()
        try db.execute(sql: """
            CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT);
            CREATE TABLE tags(name TEXT PRIMARY KEY) WITHOUT ROWID;
            """)
        return db
    }

    @Test(arguments: TestStorage.allCases)
    func tellsCommitsWithTheirRowsAndTablesAndRollbacks(_ storage: TestStorage) throws {
        let db = try makeDatabase(storage)
        let log = ChangeLog()
        try db.add(transactionObserver: log)

        try db.execute(sql: "INSERT INTO notes(title) VALUES ('a')")            // autocommit
        try db.transaction {
            try db.execute(sql: "INSERT INTO tags VALUES ('x')")
            try db.execute(sql: "UPDATE notes SET title = 'b' WHERE id = 1")
            _ = try? db.savepoint {
                try db.execute(sql: "DELETE FROM notes")
                throw CancellationError()                                      // undone
            }
        }
        try? db.transaction {
            try db.execute(sql: "INSERT INTO notes(title) VALUES ('never')")
            throw CancellationError()
        }
        #expect(log.outcomes == [
            TransactionChanges(
                events: [DatabaseEvent(kind: .insert, databaseName: "main", tableName: "notes", rowID: 1)],
                modifiedTables: ["notes"]),
            TransactionChanges(
                events: [DatabaseEvent(kind: .update, databaseName: "main", tableName: "notes", rowID: 1)],
                modifiedTables: ["tags", "notes"]),
            nil,
        ])
        #expect(log.countsSeenAfterCommit == [1, 1])
        // A WITHOUT ROWID table written outside a transaction: no row event
        // (no rowid), but the table is listed.
        try db.execute(sql: "INSERT INTO tags VALUES ('solo')")
        #expect(log.outcomes.last == TransactionChanges(events: [], modifiedTables: ["tags"]))
        #expect(log.closings == 0)
        try db.close()
        #expect(log.closings == 1)
        try db.close()  // already closed: not told again
        #expect(log.closings == 1)
    }

    @Test func observersAreHeldWeaklyAndCanBeRemoved() throws {
        let db = try makeDatabase(.memory)
        let kept = ChangeLog()
        var released: ChangeLog? = ChangeLog()
        try db.add(transactionObserver: kept)
        try db.add(transactionObserver: released!)
        weak let weakReleased = released
        released = nil
        #expect(weakReleased == nil)
        try db.execute(sql: "INSERT INTO notes(title) VALUES ('a')")
        #expect(kept.outcomes.count == 1)
        db.remove(transactionObserver: kept)
        try db.execute(sql: "INSERT INTO notes(title) VALUES ('b')")
        #expect(kept.outcomes.count == 1)
    }

    @Test func aFailedStatementThatRollsBackIsTold() throws {
        let db = try makeDatabase(.memory)
        try db.execute(sql: "CREATE TABLE strict(n INTEGER NOT NULL)")
        let log = ChangeLog()
        try db.add(transactionObserver: log)
        try db.beginTransaction()
        try db.execute(sql: "INSERT INTO notes(title) VALUES ('a')")
        try db.rollback()
        #expect(log.outcomes == [nil])
    }
}
