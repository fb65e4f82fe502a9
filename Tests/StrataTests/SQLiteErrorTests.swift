import Foundation
import Strata
import StrataTestHelpers
import Testing

@Suite struct SQLiteErrorTests {
    func makeNotes() throws -> Database {
        let db = try Database()
        try db.execute(sql: "CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT NOT NULL UNIQUE CHECK (title <> ''))")
        try db.execute(sql: "INSERT INTO notes(id, title) VALUES (1, 'first')")
        return db
    }

    @Test func carriesTheExtendedCodeMessageAndSQL() throws {
        let db = try makeNotes()
        let error = try #require(throws: SQLiteError.self) {
            try db.execute(sql: "INSERT INTO notes(id, title) VALUES (?, ?)", arguments: [2, "first"])
        }
        #expect(error.code == .constraintUnique)
        #expect(error.primaryResultCode == .constraint)
        #expect(error.message == "UNIQUE constraint failed: notes.title")
        #expect(error.sql == "INSERT INTO notes(id, title) VALUES (?, ?)")
        #expect(error.description == """
            SQLite error 2067 (constraint failed): UNIQUE constraint failed: notes.title - while executing: INSERT INTO notes(id, title) VALUES (?, ?)
            """)
    }

    @Test func catchMatchesTheWholeFamilyOfAPrimaryCode() throws {
        let db = try makeNotes()
        let attempts: [(String, ResultCode)] = [
            ("INSERT INTO notes(id, title) VALUES (1, 'other')", .constraintPrimaryKey),
            ("INSERT INTO notes(id, title) VALUES (3, NULL)", .constraintNotNull),
            ("INSERT INTO notes(id, title) VALUES (4, '')", .constraintCheck),
        ]
        for (sql, expected) in attempts {
            var caughtByFamily = false
            do {
                try db.execute(sql: sql)
            } catch SQLiteError.constraint {
                caughtByFamily = true
            }
            #expect(caughtByFamily)
            do {
                try db.execute(sql: sql)
            } catch let error as SQLiteError where error.code == expected {
                // the exact extended code
            }
        }
        // An extended pattern matches only itself.
        #expect(!(ResultCode.constraintUnique ~= ResultCode.constraintNotNull))
        #expect(ResultCode.constraint ~= ResultCode.constraintNotNull)
        #expect(!(ResultCode.busy ~= ResultCode.constraintNotNull))
        switch ResultCode.constraintForeignKey {
        case .busy: Issue.record("wrong family")
        case .constraint: break
        default: Issue.record("no match")
        }
    }

    @Test func aCatchForAnotherFamilyDoesNotMatch() throws {
        let db = try makeNotes()
        var reachedGenericCatch = false
        do {
            try db.execute(sql: "INSERT INTO notes(id, title) VALUES (1, 'dup')")
        } catch SQLiteError.busy {
            Issue.record("a constraint error matched busy")
        } catch {
            reachedGenericCatch = true
        }
        #expect(reachedGenericCatch)
        #expect(!(ResultCode.constraint ~= (CancellationError() as any Error)))
    }

    @Test func failedStatementsLoseNoCommittedData() throws {
        let path = try makeTemporaryPath()
        let db = try Database(path: path)
        try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1), (2)")
        expectError(.constraint) { try db.execute(sql: "INSERT INTO t VALUES (3), (1)") }
        expectError(.error) { try db.execute(sql: "INSERT INTO nowhere VALUES (1)") }
        #expect(try Int.fetchAll(Database(path: path), sql: "SELECT id FROM t ORDER BY id") == [1, 2])
    }

    @Test func describesCodes() {
        #expect(ResultCode.busy.description == "5 (database is locked)")
        #expect(ResultCode.constraintUnique.rawValue == 2067)
        #expect(ResultCode.constraintForeignKey.rawValue == 787)
        #expect(ResultCode.ioErrorRead.rawValue == 266)
        #expect(ResultCode.readOnlyDatabaseMoved.rawValue == 1032)
        #expect(ResultCode.busyTimeout.primaryResultCode == .busy)
        #expect(ResultCode.misuse.isPrimary)
    }

    /// The text shown in SQLiteError.description's documentation.
    @Test func descriptionReadsAsDocumented() throws {
        let db = try Database()
        try db.execute(sql: "CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT); INSERT INTO notes VALUES (1, 'a')")
        let error = try #require(throws: SQLiteError.self) { try db.execute(sql: "INSERT INTO notes VALUES (1, 'b')") }
        #expect(error.code == .constraintPrimaryKey)
        #expect(error.description == "SQLite error 1555 (constraint failed): UNIQUE constraint failed: notes.id - while executing: INSERT INTO notes VALUES (1, 'b')")
    }

    /// ColumnInfo.declaredType as documented: known names upper-cased.
    @Test func declaredTypesReadAsDocumented() throws {
        let db = try Database()
        try db.execute(sql: "CREATE TABLE t(a text, b VarChar(10), c int, d)")
        #expect(try db.columns(in: "t").map(\.declaredType) == ["TEXT", "VarChar(10)", "INT", ""])
    }
}

