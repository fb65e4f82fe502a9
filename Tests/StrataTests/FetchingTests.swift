import Foundation
import Strata
import StrataTestHelpers
import Testing

@Suite struct FetchingTests {
    func makeMovies(_ storage: TestStorage) throws -> Database {
        let db = try storage.makeDatabase()
        try db.execute(sql: """
            CREATE TABLE movies(id INTEGER PRIMARY KEY, title TEXT NOT NULL, year INT, url TEXT);
            INSERT INTO movies(title, year, url) VALUES ('Heat', 1995, 'https://example.com/heat');
            INSERT INTO movies(title, year, url) VALUES ('Alien', 1979, NULL);
            INSERT INTO movies(title, year, url) VALUES ('Ran', 1985, NULL);
            """)
        return db
    }

    @Test(arguments: TestStorage.allCases)
    func fetchesRowsAllOneAndByCursor(_ storage: TestStorage) throws {
        let db = try makeMovies(storage)
        let rows = try Row.fetchAll(db, sql: "SELECT title, year FROM movies WHERE year > ? ORDER BY year", arguments: [1980])
        #expect(try rows.map { try $0["title"] as String } == ["Ran", "Heat"])
        #expect(try Row.fetchOne(db, sql: "SELECT title FROM movies WHERE year = ?", arguments: [1979])?["title"] as String? == "Alien")
        #expect(try Row.fetchOne(db, sql: "SELECT title FROM movies WHERE year = ?", arguments: [1900]) == nil)
        let cursor = try Row.fetchCursor(db, sql: "SELECT year FROM movies ORDER BY year")
        var years: [Int] = []
        while let row = try cursor.next() {
            years.append(try row[0])
        }
        #expect(years == [1979, 1985, 1995])
        #expect(try cursor.next() == nil)  // stays at the end
    }

    @Test(arguments: TestStorage.allCases)
    func fetchesPlainValues(_ storage: TestStorage) throws {
        let db = try makeMovies(storage)
        #expect(try String.fetchAll(db, sql: "SELECT title FROM movies ORDER BY title") == ["Alien", "Heat", "Ran"])
        #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM movies") == 3)
        #expect(try Int.fetchOne(db, sql: "SELECT max(year) FROM movies WHERE year < 0") == nil)  // NULL → nil
        #expect(try Int.fetchOne(db, sql: "SELECT year FROM movies WHERE 0") == nil)  // no row → nil
        #expect(try String?.fetchAll(db, sql: "SELECT url FROM movies ORDER BY id") == ["https://example.com/heat", nil, nil])
        #expect(try URL.fetchAll(db, sql: "SELECT url FROM movies WHERE url IS NOT NULL") == [URL(string: "https://example.com/heat")!])
        #expect(try Int.fetchSet(db, sql: "SELECT year / 100 FROM movies") == [19])
        #expect(try Array(Int.fetchCursor(db, sql: "SELECT year FROM movies ORDER BY year")) == [1979, 1985, 1995])
        var total = 0
        try Int.fetchCursor(db, sql: "SELECT year FROM movies").forEach { total += $0 }
        #expect(total == 1979 + 1985 + 1995)
    }

    @Test func nullInFetchAllOfANonOptionalThrows() throws {
        let db = try makeMovies(.memory)
        let error = try #require(throws: DatabaseDecodingError.self) {
            try String.fetchAll(db, sql: "SELECT url FROM movies ORDER BY id")
        }
        #expect(error.column == "url")
        #expect(error.sql == "SELECT url FROM movies ORDER BY id")
        // The statement was reset: the database is usable and unlocked.
        try db.execute(sql: "DELETE FROM movies")
    }

    @Test func valueFetchNeedsAColumn() throws {
        let db = try makeMovies(.memory)
        expectError(.misuse) { try Int.fetchAll(db, sql: "UPDATE movies SET year = year") }
        expectError(.misuse) { try Int.fetchOne(db, sql: "DELETE FROM movies WHERE 0") }
    }

    @Test func cursorStepsTheLiveStatement() throws {
        let db = try Database()
        // A cursor over a huge virtual sequence: only the rows read are produced.
        let cursor = try Int.fetchCursor(db, sql: """
            WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT x FROM n
            """)
        var sum = 0
        for _ in 0..<1000 { sum += try cursor.next()! }
        #expect(sum == 500_500)
    }

    @Test func cursorErrorsAreThrownFromNext() throws {
        let db = try Database()
        try db.add(function: DatabaseFunction("fail", argumentCount: 1) { arguments in
            if arguments[0] == 3 { throw SQLiteError(code: .error, message: "three is not allowed") }
            return arguments[0]
        })
        let cursor = try Int.fetchCursor(db, sql: "SELECT fail(value) FROM json_each('[1,2,3,4]')")
        #expect(try cursor.next() == 1)
        #expect(try cursor.next() == 2)
        let error = try #require(throws: SQLiteError.self) { try cursor.next() }
        #expect(error.message == "three is not allowed")
        #expect(try cursor.next() == nil)
    }

    @Test func fetchesFromPreparedStatements() throws {
        let db = try makeMovies(.memory)
        let statement = try db.makeStatement(sql: "SELECT title FROM movies WHERE year >= :year ORDER BY year")
        #expect(try String.fetchAll(statement, arguments: ["year": 1985]) == ["Ran", "Heat"])
        #expect(try String.fetchOne(statement, arguments: ["year": 1990]) == "Heat")
        #expect(try String.fetchSet(statement, arguments: ["year": 0]) == ["Alien", "Ran", "Heat"])
        #expect(try Row.fetchAll(statement, arguments: ["year": 1995]).count == 1)
        #expect(try Row.fetchOne(statement, arguments: ["year": 2000]) == nil)
        let cursor = try Row.fetchCursor(statement, arguments: ["year": 1979])
        #expect(try cursor.next()?["title"] as String? == "Alien")
    }
}
