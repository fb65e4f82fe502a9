import Foundation
import Strata
import StrataTestHelpers
import Testing

/// Collects what hooks report.
private final class Recorder {
    var events: [DatabaseEvent] = []
    var commits = 0
    var rollbacks = 0
}

@Suite struct DatabaseHooksTests {
    @Test(arguments: TestStorage.allCases)
    func reportsEachChangedRow(_ storage: TestStorage) throws {
        let db = try storage.makeDatabase()
        let recorder = Recorder()
        try db.execute(sql: "CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT)")
        try db.setUpdateHook { recorder.events.append($0) }
        try db.execute(sql: "INSERT INTO notes(id, title) VALUES (1, 'a'), (2, 'b')")
        try db.execute(sql: "UPDATE notes SET title = 'c' WHERE id = 2")
        try db.execute(sql: "DELETE FROM notes WHERE id = 1")
        #expect(recorder.events == [
            DatabaseEvent(kind: .insert, databaseName: "main", tableName: "notes", rowID: 1),
            DatabaseEvent(kind: .insert, databaseName: "main", tableName: "notes", rowID: 2),
            DatabaseEvent(kind: .update, databaseName: "main", tableName: "notes", rowID: 2),
            DatabaseEvent(kind: .delete, databaseName: "main", tableName: "notes", rowID: 1),
        ])
        try db.setUpdateHook(nil)
        try db.execute(sql: "DELETE FROM notes")
        #expect(recorder.events.count == 4)
    }

    @Test func reportsCommitsAndRollbacks() throws {
        let db = try Database()
        let recorder = Recorder()
        try db.execute(sql: "CREATE TABLE t(a)")
        try db.setCommitHook {
            recorder.commits += 1
            return true
        }
        try db.setRollbackHook { recorder.rollbacks += 1 }
        try db.execute(sql: "INSERT INTO t VALUES (1)")  // autocommit counts as a commit
        try db.transaction { try db.execute(sql: "INSERT INTO t VALUES (2)") }
        try? db.transaction {
            try db.execute(sql: "INSERT INTO t VALUES (3)")
            throw CancellationError()
        }
        #expect(recorder.commits == 2)
        #expect(recorder.rollbacks == 1)
    }

    @Test func aCommitHookCanVetoTheCommit() throws {
        let db = try Database()
        try db.execute(sql: "CREATE TABLE t(a)")
        try db.setCommitHook { false }
        expectError(.constraintCommitHook) {
            try db.transaction { try db.execute(sql: "INSERT INTO t VALUES (1)") }
        }
        #expect(!db.isInsideTransaction)
        try db.setCommitHook(nil)
        #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM t") == 0)
    }
}
