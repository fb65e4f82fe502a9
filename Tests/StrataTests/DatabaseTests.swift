import Foundation
import Strata
import StrataTestHelpers
// The raw C API, imported as a user who needs it would.
#if canImport(SQLite3)
import SQLite3
#else
import CSQLite
#endif
import Testing

@Suite struct DatabaseTests {
    @Test(arguments: TestStorage.allCases)
    func executesAScriptOfSeveralStatements(_ storage: TestStorage) throws {
        let db = try storage.makeDatabase()
        try db.execute(sql: """
            CREATE TABLE movies(id INTEGER PRIMARY KEY, title TEXT NOT NULL, year INT);
            INSERT INTO movies(title, year) VALUES ('Heat', 1995);
            -- a comment between statements
            INSERT INTO movies(title, year) VALUES ('Alien', 1979);
            """)
        #expect(try String.fetchAll(db, sql: "SELECT title FROM movies ORDER BY year") == ["Alien", "Heat"])
    }

    @Test func namesTheFailingStatementOfAScript() throws {
        let db = try Database()
        let error = try #require(throws: SQLiteError.self) {
            try db.execute(sql: """
                CREATE TABLE t(id INTEGER PRIMARY KEY);
                INSERT INTO t VALUES (1);
                INSERT INTO t VALUES (1);
                INSERT INTO t VALUES (2);
                """)
        }
        #expect(error.code == .constraintPrimaryKey)
        #expect(error.sql == "INSERT INTO t VALUES (1);", "\(String(describing: error.sql))")
        // Statements before the failing one ran; the ones after did not.
        #expect(try Int.fetchAll(db, sql: "SELECT id FROM t") == [1])
    }

    @Test func namesTheStatementThatDoesNotCompile() throws {
        let db = try Database()
        let error = try #require(throws: SQLiteError.self) {
            try db.execute(sql: "CREATE TABLE t(a); SELEC * FROM t; SELECT 1")
        }
        #expect(error.code == .error)
        #expect(error.sql?.hasPrefix("SELEC * FROM t") == true)
        #expect(error.message?.contains("syntax error") == true)
        #expect(try db.tableExists("t"))
    }

    @Test func consumesPositionalArgumentsAcrossAScript() throws {
        let db = try Database()
        try db.execute(sql: "CREATE TABLE t(a, b)")
        try db.execute(sql: "INSERT INTO t VALUES (?, ?); INSERT INTO t VALUES (?, 'x')", arguments: [1, 2, 3])
        #expect(try Row.fetchAll(db, sql: "SELECT a, b FROM t ORDER BY a").map(\.databaseValues) == [
            [1, 2], [3, "x"],
        ])
        #expect(throws: SQLiteError.self) {
            try db.execute(sql: "INSERT INTO t VALUES (?, ?); INSERT INTO t VALUES (?, 'x')", arguments: [1, 2, 3, 4])
        }
    }

    @Test func opensAFileAndReopensIt() throws {
        let path = try makeTemporaryPath()
        do {
            let db = try Database(path: path)
            try db.execute(sql: "CREATE TABLE t(a); INSERT INTO t VALUES (42)")
            #expect(db.path == path)
            try db.close()
        }
        let db = try Database(path: path)
        #expect(try Int.fetchOne(db, sql: "SELECT a FROM t") == 42)
    }

    @Test func refusesToCreateAMissingFileWhenAskedNotTo() throws {
        var configuration = Configuration()
        configuration.createsMissingFile = false
        let path = try makeTemporaryPath()
        let error = try #require(throws: SQLiteError.self) {
            try Database(path: path, configuration: configuration)
        }
        #expect(error.code == .cantOpen)
        #expect(error.message?.contains(path) == true)
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func opensReadOnly() throws {
        let path = try makeTemporaryPath()
        try Database(path: path).execute(sql: "CREATE TABLE t(a); INSERT INTO t VALUES (1)")
        var configuration = Configuration()
        configuration.isReadOnly = true
        let db = try Database(path: path, configuration: configuration)
        #expect(try Int.fetchOne(db, sql: "SELECT a FROM t") == 1)
        expectError(.readOnly) {
            try db.execute(sql: "INSERT INTO t VALUES (2)")
        }
    }

    @Test func rejectsAFileThatIsNotADatabase() throws {
        let path = try makeTemporaryPath()
        try Data("this is not a database, just some text that is long enough to be a header".utf8)
            .write(to: URL(fileURLWithPath: path))
        let error = try #require(throws: SQLiteError.self) { try Database(path: path) }
        #expect(error.code == .notADatabase)
        #expect(error.message?.contains(path) == true)
        // The file is left as it was.
        #expect(try String(contentsOfFile: path, encoding: .utf8).hasPrefix("this is not a database"))
    }

    @Test func opensATemporaryDatabase() throws {
        let db = try Database(location: .temporary)
        try db.execute(sql: "CREATE TABLE t(a); INSERT INTO t VALUES (zeroblob(100000))")
        #expect(try Int.fetchOne(db, sql: "SELECT length(a) FROM t") == 100_000)
        #expect(db.path == "")
    }

    @Test func enforcesForeignKeysByDefault() throws {
        let db = try Database()
        try db.execute(sql: """
            CREATE TABLE authors(id INTEGER PRIMARY KEY);
            CREATE TABLE books(id INTEGER PRIMARY KEY, authorID INTEGER REFERENCES authors(id));
            """)
        expectError(.constraintForeignKey) {
            try db.execute(sql: "INSERT INTO books(authorID) VALUES (99)")
        }
        var configuration = Configuration()
        configuration.foreignKeysEnabled = false
        let lax = try Database(configuration: configuration)
        #expect(try Bool.fetchOne(lax, sql: "PRAGMA foreign_keys") == false)
    }

    @Test func setsBusyTimeoutJournalModeAndRunsThePrepareHook() throws {
        var configuration = Configuration()
        configuration.busyTimeout = .milliseconds(1500)
        configuration.journalMode = .wal
        configuration.prepareDatabase = { db in
            try db.execute(sql: "CREATE TEMP TABLE prepared(a)")
        }
        let db = try Database(path: try makeTemporaryPath(), configuration: configuration)
        #expect(try String.fetchOne(db, sql: "PRAGMA journal_mode") == "wal")
        #expect(try Int.fetchOne(db, sql: "PRAGMA busy_timeout") == 1500)
        #expect(try db.tableNames().isEmpty)
        #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM temp.prepared") == 0)
    }

    @Test func defaultBusyTimeoutIsAFewSeconds() throws {
        let db = try Database()
        #expect(try Int.fetchOne(db, sql: "PRAGMA busy_timeout") == 5000)
    }

    @Test func reportsAFailingPrepareHook() throws {
        var configuration = Configuration()
        configuration.prepareDatabase = { db in try db.execute(sql: "NOT SQL") }
        expectError(.error) { try Database(configuration: configuration) }
    }

    @Test func waitsForALockThenReportsBusy() throws {
        let path = try makeTemporaryPath()
        let holder = try Database(path: path)
        try holder.execute(sql: "CREATE TABLE t(a)")
        try holder.beginTransaction(.exclusive)
        var configuration = Configuration()
        configuration.busyTimeout = .milliseconds(100)
        let other = try Database(path: path, configuration: configuration)
        let start = Date()
        expectError(.busy) {
            try other.execute(sql: "INSERT INTO t VALUES (1)")
        }
        #expect(Date().timeIntervalSince(start) >= 0.09)
        try holder.rollback()
        try other.execute(sql: "INSERT INTO t VALUES (1)")
    }

    @Test func exposesTheSQLiteVersion() {
        #expect(Database.sqliteVersion.hasPrefix("3."))
        #expect(Database.sqliteVersionNumber >= 3_035_000)
        #expect(Database.sqliteVersion == String(cString: sqlite3_libversion()))
    }

    /// SQLite counts no memory in a process where Strata opened it first
    /// (every connection in this test process is Strata's): the count would
    /// take a mutex on every allocation. With counting on, a connection
    /// holding a megabyte of page cache reads as far more than zero.
    @Test func sqliteCountsNoMemoryWhenStrataOpenedItFirst() throws {
        let db = try Database()
        try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, data BLOB)")
        try db.transaction {
            let insert = try db.makeStatement(sql: "INSERT INTO t(data) VALUES (zeroblob(4000))")
            for _ in 0..<250 { try insert.execute() }
        }
        #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM t") == 250)
        #expect(sqlite3_memory_used() == 0)
        #expect(sqlite3_memory_highwater(0) == 0)
    }

    @Test(arguments: TestStorage.allCases)
    func reportsInsertedRowIDsAndChanges(_ storage: TestStorage) throws {
        let db = try storage.makeDatabase()
        try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, a)")
        try db.execute(sql: "INSERT INTO t(id, a) VALUES (41, 'x')")
        try db.execute(sql: "INSERT INTO t(a) VALUES ('y')")
        #expect(db.lastInsertedRowID == 42)
        try db.execute(sql: "UPDATE t SET a = 'z'")
        #expect(db.changesCount == 2)
        #expect(db.totalChangesCount == 4)
    }

    @Test func closesExplicitlyAndThenRefusesWork() throws {
        let db = try Database()
        try db.execute(sql: "CREATE TABLE t(a)")
        let statement = try db.makeStatement(sql: "INSERT INTO t VALUES (?)")
        let cursor = try Row.fetchCursor(db, sql: "SELECT 1 UNION ALL SELECT 2")
        _ = try cursor.next()
        try db.close()
        #expect(db.isClosed)
        try db.close()  // twice is fine
        let error = try #require(throws: SQLiteError.self) { try db.execute(sql: "SELECT 1") }
        #expect(error.code == .misuse)
        #expect(error.message?.contains("closed") == true)
        expectError(.misuse) { try statement.execute(arguments: [1]) }
        expectError(.misuse) { try Int.fetchAll(db, sql: "SELECT 1") }
        #expect(db.lastInsertedRowID == 0)
    }

    @Test func closingRollsBackAnOpenTransactionAndKeepsCommittedData() throws {
        let path = try makeTemporaryPath()
        let db = try Database(path: path)
        try db.execute(sql: "CREATE TABLE t(a); INSERT INTO t VALUES ('committed')")
        try db.beginTransaction()
        try db.execute(sql: "INSERT INTO t VALUES ('pending')")
        try db.close()
        #expect(try String.fetchAll(Database(path: path), sql: "SELECT a FROM t") == ["committed"])
    }

    @Test func makesReusableStatements() throws {
        let db = try Database()
        try db.execute(sql: "CREATE TABLE t(a)")
        let insert = try db.makeStatement(sql: "INSERT INTO t VALUES (?)")
        for value in 1...5 {
            try insert.execute(arguments: [value])
        }
        let select = try db.makeStatement(sql: "SELECT a FROM t WHERE a > ? ORDER BY a")
        #expect(try Int.fetchAll(select, arguments: [3]) == [4, 5])
        #expect(try Int.fetchAll(select, arguments: [1]) == [2, 3, 4, 5])
        #expect(select.columnNames == ["a"])
        #expect(select.isReadOnly)
        #expect(!insert.isReadOnly)
    }

    @Test func makeStatementRefusesScriptsAndEmptySQL() throws {
        let db = try Database()
        expectError(.misuse) { try db.makeStatement(sql: "SELECT 1; SELECT 2") }
        expectError(.misuse) { try db.makeStatement(sql: "  -- nothing") }
        expectError(.error) { try db.makeStatement(sql: "SELECT FROM WHERE") }
        _ = try db.makeStatement(sql: "SELECT 1; -- trailing comment\n")
    }

    @Test func cachedStatementsStayCorrectWhileACursorIsOpen() throws {
        let db = try Database()
        try db.execute(sql: "CREATE TABLE t(a); INSERT INTO t VALUES (1), (2), (3)")
        let sql = "SELECT a FROM t ORDER BY a"
        let outer = try Int.fetchCursor(db, sql: sql)
        var pairs: [[Int]] = []
        while let a = try outer.next() {
            // The same SQL while the outer cursor is live gets its own statement.
            pairs.append([a] + (try Int.fetchAll(db, sql: sql)))
        }
        #expect(pairs == [[1, 1, 2, 3], [2, 1, 2, 3], [3, 1, 2, 3]])
    }

    @Test func statementCacheCanBeDisabledOrSmall() throws {
        for capacity in [0, 2] {
            var configuration = Configuration()
            configuration.statementCacheCapacity = capacity
            let db = try Database(configuration: configuration)
            for value in 0..<10 {
                #expect(try Int.fetchOne(db, sql: "SELECT \(value)") == value)
                #expect(try Int.fetchOne(db, sql: "SELECT ? + \(value)", arguments: [1]) == value + 1)
            }
        }
    }

    /// Two spellings of `café`, a precomposed `é` and `e` with a combining
    /// accent, are equal to Swift's `==` and different to SQLite: the SQL of
    /// one does not run the cached statement of the other.
    @Test func statementsAreCachedByTheBytesOfTheirSQL() throws {
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        #expect(composed == decomposed)
        let db = try Database()
        try db.execute(sql: "CREATE TABLE t(name TEXT)")
        try db.execute(sql: "INSERT INTO t VALUES ('\(composed)')")
        try db.execute(sql: "INSERT INTO t VALUES ('\(decomposed)')")
        #expect(try String.fetchAll(db, sql: "SELECT hex(name) FROM t ORDER BY rowid") == ["636166C3A9", "63616665CC81"])
        #expect(try Int.fetchOne(db, sql: "SELECT rowid FROM t WHERE name = '\(composed)'") == 1)
        #expect(try Int.fetchOne(db, sql: "SELECT rowid FROM t WHERE name = '\(decomposed)'") == 2)
        try db.execute(sql: "CREATE TABLE \"\(composed)\"(v); CREATE TABLE \"\(decomposed)\"(v)")
        try db.execute(sql: "INSERT INTO \"\(composed)\" VALUES (1)")
        try db.execute(sql: "INSERT INTO \"\(decomposed)\" VALUES (2)")
        #expect(try Int.fetchAll(db, sql: "SELECT v FROM \"\(composed)\"") == [1])
        #expect(try Int.fetchAll(db, sql: "SELECT v FROM \"\(decomposed)\"") == [2])
    }
}
