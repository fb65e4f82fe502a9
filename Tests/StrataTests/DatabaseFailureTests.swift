import Foundation
import Strata
import StrataTestHelpers
import Testing

/// Bad input and broken files: each gives a clear, specific error.
@Suite struct DatabaseFailureTests {
    @Test func sqlHoldingANULCharacterIsRefusedNotRunTruncated() throws {
        let db = try Database()
        try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY); INSERT INTO t VALUES (1), (2)")
        // SQLite reads SQL text up to its first NUL: run as is, this would be
        // `DELETE FROM t`, every row gone.
        let sql = "DELETE FROM t\0 WHERE id = 1"
        let attempts: [(String, () throws -> Void)] = [
            ("execute", { try db.execute(sql: sql) }),
            ("makeStatement", { _ = try db.makeStatement(sql: sql) }),
            ("allStatements", { _ = try db.allStatements(sql: sql).next() }),
            ("fetchAll", { _ = try Row.fetchAll(db, sql: "SELECT 1\0; DELETE FROM t") }),
        ]
        for (entryPoint, attempt) in attempts {
            let error = try #require(throws: SQLiteError.self, "\(entryPoint)") { try attempt() }
            #expect(error.code == .misuse)
            #expect(error.message?.contains("NUL character at byte 13") == true || entryPoint == "fetchAll")
            #expect(!error.description.unicodeScalars.contains { $0.value == 0 }, "\(entryPoint): \(error)")
        }
        #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM t") == 2)
    }

    @Test func reportsACorruptDatabaseFile() throws {
        let path = try makeTemporaryPath()
        do {
            let db = try Database(path: path)
            try db.execute(sql: """
                CREATE TABLE t(id INTEGER PRIMARY KEY, payload TEXT);
                WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 500)
                INSERT INTO t SELECT x, printf('%0100d', x) FROM n;
                """)
            try db.close()
        }
        // Overwrite the table's pages, past the header and the schema page.
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seek(toOffset: 8192)
        try handle.write(contentsOf: Data(repeating: 0xA5, count: 16384))
        try handle.close()

        let db = try Database(path: path)
        let error = try #require(throws: SQLiteError.self) {
            try Int.fetchAll(db, sql: "SELECT length(payload) FROM t")
        }
        #expect(error.code ~= .corrupt || error.code ~= .notADatabase, "\(error)")
        #expect(error.sql == "SELECT length(payload) FROM t")
    }

    @Test func refusesAJournalModeItCannotSet() throws {
        let path = try makeTemporaryPath()
        try Database(path: path).execute(sql: "CREATE TABLE t(a)")
        var configuration = Configuration()
        configuration.isReadOnly = true
        configuration.journalMode = .wal
        let error = try #require(throws: SQLiteError.self) { try Database(path: path, configuration: configuration) }
        #expect(error.sql == "PRAGMA journal_mode = wal")
    }

    @Test func reportsAFunctionSQLiteRefuses() throws {
        let db = try Database()
        let tooLong = DatabaseFunction(String(repeating: "f", count: 300), argumentCount: 0) { _ in 1 }
        #expect(throws: SQLiteError.self) { try db.add(function: tooLong) }
        let tooManyArguments = DatabaseFunction("f", argumentCount: 1000) { _ in 1 }
        #expect(throws: SQLiteError.self) { try db.add(function: tooManyArguments) }
    }

    @Test func everyEntryPointRefusesAClosedDatabase() throws {
        let db = try Database()
        try db.execute(sql: "CREATE TABLE t(a)")
        try db.close()
        expectError(.misuse) { try db.makeStatement(sql: "SELECT 1") }
        expectError(.misuse) { try db.allStatements(sql: "SELECT 1") }
        expectError(.misuse) { try db.transaction { } }
        expectError(.misuse) { try db.setUpdateHook { _ in } }
        expectError(.misuse) { try db.setCommitHook { true } }
        expectError(.misuse) { try db.setRollbackHook { } }
        expectError(.misuse) { try db.add(function: DatabaseFunction("f") { _ in nil }) }
        expectError(.misuse) { try db.add(collation: DatabaseCollation("c") { _, _ in .orderedSame }) }
        expectError(.misuse) { try db.tableNames() }
        expectError(.misuse) { try db.columns(in: "t") }
        expectError(.misuse) { try db.backup(to: Database()) }
        expectError(.misuse) { try Row.fetchOne(db, sql: "SELECT 1") }
        #expect(!db.isInsideTransaction)
        #expect(db.sqliteConnection == nil)
    }

    @Test func aStatementOutlivingItsDatabaseFailsCleanly() throws {
        var statement: Statement?
        do {
            let db = try Database()
            try db.execute(sql: "CREATE TABLE t(a)")
            statement = try db.makeStatement(sql: "INSERT INTO t VALUES (?)")
        }
        // The Database value is gone; the statement still exists.
        let error = try #require(throws: SQLiteError.self) { try statement?.execute(arguments: [1]) }
        #expect(error.message == "the database connection is closed")
        statement = nil  // finalizing after the close is safe
    }
}
