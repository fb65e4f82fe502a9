import Foundation
import Strata
import StrataTestHelpers
import Testing

@Suite struct RowTests {
    /// `player:points`, from either kind of row.
    static func summary(_ row: some RowProtocol) throws -> String {
        "\(try row["player"] as String):\(try row[2] as Int)"
    }

    @Test(arguments: TestStorage.allCases)
    func readsColumnsByIndexAndByName(_ storage: TestStorage) throws {
        let db = try storage.makeDatabase()
        try db.execute(sql: "CREATE TABLE movies(id INTEGER PRIMARY KEY, Title TEXT, year INT, url TEXT)")
        try db.execute(sql: "INSERT INTO movies VALUES (1, 'Heat', 1995, NULL)")
        let row = try #require(try Row.fetchOne(db, sql: "SELECT * FROM movies"))
        #expect(row.count == 4)
        #expect(row.columnNames == ["id", "Title", "year", "url"])
        #expect(try row[0] as Int64 == 1)
        #expect(try row["title"] as String == "Heat")  // case-insensitive, as SQLite
        #expect(try row["TITLE"] as String == "Heat")
        #expect(try row.decode(Int.self, forColumn: "YEAR") == 1995)
        #expect(try row["url"] as String? == nil)
        #expect(try row.databaseValue(at: 3) == .null)
        #expect(try row.databaseValue(forColumn: "year") == .integer(1995))
        #expect(row.hasColumn("Url"))
        #expect(!row.hasColumn("missing"))
        #expect(row.index(ofColumn: "YeAr") == 2)
        #expect(row.description == "[id:1 Title:'Heat' year:1995 url:NULL]")
    }

    @Test func firstColumnWinsWhenNamesRepeat() throws {
        let db = try Database()
        let row = try #require(try Row.fetchOne(db, sql: "SELECT 1 AS a, 2 AS A"))
        #expect(try row["a"] as Int == 1)
        #expect(try row["A"] as Int == 2)  // the exact match is preferred
    }

    @Test(arguments: TestStorage.allCases)
    func nullIntoANonOptionalThrowsNamingColumnTypeAndSQL(_ storage: TestStorage) throws {
        let db = try storage.makeDatabase()
        let sql = "SELECT NULL AS score"
        let cursor = try Row.fetchCursor(db, sql: sql)
        let rows: [any RowProtocol] = [try #require(try Row.fetchOne(db, sql: sql)), try #require(try cursor.next())]
        for row in rows {
            let error = try #require(throws: DatabaseDecodingError.self) { try row["score"] as Int }
            #expect(error.reason == .unexpectedNull)
            #expect(error.column == "score")
            #expect(error.typeName == "Int")
            #expect(error.sql == sql)
            #expect(error.description == "cannot read NULL as non-optional Int in column \"score\" (index 0) of: SELECT NULL AS score")
        }
    }

    @Test func textIntoAnIntThrows() throws {
        let db = try Database()
        try db.execute(sql: "CREATE TABLE people(age); INSERT INTO people VALUES ('private-value')")
        let row = try #require(try Row.fetchOne(db, sql: "SELECT age FROM people"))
        let error = try #require(throws: DatabaseDecodingError.self) { try row[0] as Int }
        #expect(error.reason == .valueMismatch)
        #expect(error.value == "private-value")
        #expect(error.description == "cannot read TEXT as Int in column \"age\" (index 0) of: SELECT age FROM people")
        // The value may be private: it stays out of the description.
        #expect(!error.description.contains("private-value"))
    }

    @Test func integerOverflowThrowsInsteadOfWrapping() throws {
        let db = try Database()
        let row = try #require(try Row.fetchOne(db, sql: "SELECT 300 AS level, -1 AS count, 9223372036854775807 AS big"))
        let error = try #require(throws: DatabaseDecodingError.self) { try row["level"] as UInt8 }
        #expect(error.description.contains("out of range"))
        #expect(error.typeName == "UInt8")
        #expect(throws: DatabaseDecodingError.self) { try row["count"] as UInt }
        #expect(throws: DatabaseDecodingError.self) { try row["big"] as Int32 }
        #expect(try row["big"] as Int64 == .max)
        #expect(try row["level"] as Int16 == 300)
    }

    @Test func missingColumnAndBadIndexThrow() throws {
        let db = try Database()
        let row = try #require(try Row.fetchOne(db, sql: "SELECT 1 AS a"))
        let missing = try #require(throws: DatabaseDecodingError.self) { try row["b"] as Int }
        #expect(missing.reason == .columnNotFound)
        #expect(missing.description.contains("no column named \"b\""))
        let outOfRange = try #require(throws: DatabaseDecodingError.self) { try row[5] as Int }
        #expect(outOfRange.reason == .indexOutOfRange)
        #expect(throws: DatabaseDecodingError.self) { try row.databaseValue(at: -1) }
        let live = try #require(try Row.fetchCursor(db, sql: "SELECT 1 AS a").next())
        #expect(throws: DatabaseDecodingError.self) { try live[1] as Int }
        #expect(throws: DatabaseDecodingError.self) { try live["b"] as Int }
    }

    @Test func cursorRowsAreLiveAndCopiesAreNot() throws {
        let db = try Database()
        let cursor = try Row.fetchCursor(db, sql: "SELECT 1 AS n UNION ALL SELECT 2")
        let first = try #require(try cursor.next())
        let kept = first.copy()
        let second = try #require(try cursor.next())
        #expect(try kept["n"] as Int == 1)
        #expect(try second["n"] as Int == 2)
        // The first row is no longer current: reading it is an error, not the
        // second row's data.
        let error = try #require(throws: SQLiteError.self) { try first["n"] as Int }
        #expect(error.code == .misuse)
        #expect(error.message?.contains("call copy()") == true)
        #expect(throws: SQLiteError.self) { try first.databaseValue(at: 0) }
        #expect(first.databaseValues.isEmpty)
        #expect(throws: SQLiteError.self) { try first.copy()["n"] as Int }
        // Once the cursor is finished, its last row is stale too.
        #expect(try cursor.next() == nil)
        #expect(throws: SQLiteError.self) { try second[0] as Int }
        #expect(second.columnNames == ["n"])
    }

    @Test func copiesCrossTasksAndLiveRowsWrapCopiesForTheSameCode() async throws {
        let queue = try DatabaseQueue()
        try await queue.write { db in
            try db.execute(sql: "CREATE TABLE scores(id INTEGER PRIMARY KEY, player TEXT, points INT)")
            try db.execute(sql: "INSERT INTO scores(player, points) VALUES ('ann', 3), ('bob', 5)")
        }
        // fetchAll's rows and a cursor row's copy come out of the queue's
        // executor and are read here, on another task.
        let rows = try await queue.read { db in try Row.fetchAll(db, sql: "SELECT * FROM scores ORDER BY id") }
        let best = try await queue.read { db in
            try Row.fetchCursor(db, sql: "SELECT * FROM scores ORDER BY points DESC").next()?.copy()
        }
        #expect(try rows.map { try $0["player"] as String } == ["ann", "bob"])
        #expect(try best?["player"] as String? == "bob")
        #expect(best == rows[1])

        // One function reads either kind of row (`summary`).
        let live = try await queue.read { db in
            var summaries: [String] = []
            try Row.fetchCursor(db, sql: "SELECT * FROM scores ORDER BY id").forEach { summaries.append(try Self.summary($0)) }
            return summaries
        }
        #expect(live == ["ann:3", "bob:5"])
        #expect(try rows.map { try Self.summary($0) } == live)

        // Code written for live rows (RowDecodable) takes a copy wrapped.
        let wrapped = LiveRow(rows[0])
        #expect(try wrapped["points"] as Int == 3)
        #expect(wrapped.copy() == rows[0])
        #expect(try Score(row: wrapped).player == "ann")
        #expect(try Score.decode(from: rows[1]).points == 5)
        let error = try #require(throws: DatabaseDecodingError.self) { try wrapped["missing"] as Int }
        #expect(error.reason == .columnNotFound)
        #expect(error.sql == "SELECT * FROM scores ORDER BY id")
    }

    @Test func aLiveRowKeepsItsStatementAlive() throws {
        var configuration = Configuration()
        configuration.statementCacheCapacity = 0
        let db = try Database(configuration: configuration)
        // The row is the only owner of its cursor and statement: reading it
        // must not touch a finalized statement.
        let row = try #require(try Row.fetchCursor(db, sql: "SELECT 41 + 1 AS n, 'x' AS s").next())
        for _ in 0..<3 {
            _ = try Row.fetchAll(db, sql: "SELECT 1, 2, 3")
        }
        #expect(try row["n"] as Int == 42)
        #expect(try row[1] as String == "x")
        #expect(throws: DatabaseDecodingError.self) { try row[1] as Int }
    }

    @Test func rowsCompareByNamesAndValues() throws {
        let db = try Database()
        let rows = try Row.fetchAll(db, sql: "SELECT 1 AS a, 'x' AS b UNION ALL SELECT 1, 'x' UNION ALL SELECT 2, 'y'")
        #expect(rows[0] == rows[1])
        #expect(rows[0] != rows[2])
        #expect(Set(rows).count == 2)
        #expect(try Row.fetchSet(db, sql: "SELECT 1 AS a UNION ALL SELECT 1").count == 1)
        #expect(Row(columnNames: ["a", "b"], values: [1, "x"]) == rows[0])
    }

    @Test func readsEveryStorageClassUntyped() throws {
        let db = try Database()
        let row = try #require(try Row.fetchOne(db, sql: "SELECT NULL, 1, 2.5, 'text', x'00ff'"))
        #expect(row.databaseValues == [.null, .integer(1), .real(2.5), .text("text"), .blob(Data([0, 255]))])
        #expect(row.databaseValues.map(\.storageClassName) == ["NULL", "INTEGER", "REAL", "TEXT", "BLOB"])
        #expect(row.databaseValues.map(\.description) == ["NULL", "1", "2.5", "'text'", "X'00FF'"])
    }
}
