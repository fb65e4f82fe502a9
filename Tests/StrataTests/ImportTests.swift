import Foundation
import Strata
import StrataTestHelpers
import Testing

@Suite struct ImportTests {
    @Test(arguments: TestStorage.allCases)
    func importsACSVFileCreatingATypedTable(_ storage: TestStorage) throws {
        let db = try storage.makeDatabase()
        let file = try makeFile("ips.csv", """
            start,end,country,score,code
            1.0.0.0,1.0.0.255,AU,1.5,007
            1.0.1.0,1.0.3.255,CN,2,010
            16777216,16777471,"AU, Oceania",-3.25e2,42

            """)
        let result = try db.importFile(file)
        #expect(result.tableName == "ips")
        #expect(result.rowCount == 3)
        #expect(result.createdTable)
        #expect(try db.columns(in: "ips").map(\.declaredType) == ["TEXT", "TEXT", "TEXT", "REAL", "TEXT"])
        #expect(try String.fetchAll(db, sql: "SELECT code FROM ips") == ["007", "010", "42"])  // leading zeros kept
        #expect(try Row.fetchAll(db, sql: "SELECT country, score FROM ips").map(\.databaseValues) == [
            ["AU", 1.5], ["CN", 2.0], ["AU, Oceania", -325.0],
        ])
        let numbers = try makeFile("numbers.csv", "a,b\n1,2\n-3,4\n")
        try db.importFile(numbers)
        #expect(try db.columns(in: "numbers").map(\.declaredType) == ["INTEGER", "INTEGER"])
        #expect(try Int.fetchAll(db, sql: "SELECT a + b FROM numbers") == [3, 1])
    }

    @Test func readsRFC4180Quoting() throws {
        let db = try Database()
        var data = Data([0xEF, 0xBB, 0xBF])  // a byte order mark
        data.append(Data("name,note\r\n\"Smith, John\",\"He said \"\"hi\"\"\"\r\n\"multi\nline\",\"\"\r\nplain,\r\nlast,\"no newline at the end\"".utf8))
        let file = try makeFile("people.csv", data)
        #expect(try db.importFile(file, options: textOptions()).rowCount == 4)
        let rows = try Row.fetchAll(db, sql: "SELECT name, note FROM people")
        #expect(rows.map(\.databaseValues) == [
            ["Smith, John", "He said \"hi\""],
            ["multi\nline", ""],       // "" is the empty string
            ["plain", .null],          // an empty unquoted field is NULL
            ["last", "no newline at the end"],
        ])
        #expect(try db.columns(in: "people").map(\.name) == ["name", "note"])  // the BOM is not in the name
    }

    func textOptions() -> ImportOptions {
        var options = ImportOptions()
        options.isAllText = true
        return options
    }

    @Test func readsRecordsAcrossChunkBoundaries() throws {
        // Several megabytes, with quoted multi-line fields everywhere, so that
        // records straddle the 1 MB chunks.
        var text = "id,body\n"
        for id in 0..<20_000 {
            text += "\(id),\"line one \(id)\nline \"\"two\"\", with comma\nthree\(String(repeating: "x", count: id % 200))\"\n"
        }
        let file = try makeFile("big.csv", text)
        let db = try Database()
        let log = ProgressLog()
        var options = ImportOptions()
        options.progressInterval = 5000
        options.progress = { report in log.append(report) }
        let result = try db.importFile(file, options: options)
        #expect(result.rowCount == 20_000)
        #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM big WHERE body LIKE 'line one %' || char(10) || 'line \"two\", with comma' || char(10) || 'three%'") == 20_000)
        let expectedLength = (0..<20_000).map { "line one \($0)\nline \"two\", with comma\nthree".count + $0 % 200 }.reduce(0, +)
        #expect(try Int.fetchOne(db, sql: "SELECT sum(length(body)) FROM big") == expectedLength)
        let progress = log.reports
        #expect(progress.map(\.rowCount) == [5000, 10_000, 15_000, 20_000, 20_000])
        #expect(progress.last?.byteCount == text.utf8.count)
        #expect(progress.last?.totalByteCount == text.utf8.count)
    }

    @Test func reportsMalformedRecordsWithFileLineAndColumn() throws {
        let cases: [(String, String, Int, Int?)] = [
            ("a,b\n1,2\n3,\"unterminated\n4,5\n", "unterminated quoted field", 3, 2),
            ("a,b\n1,2\n3,4,5\n", "expected 2 fields, found 3", 3, 3),
            ("a,b\n1,2\n3\n", "expected 2 fields, found 1", 3, 2),
            ("a,b\n1,\"x\"y\n", "unexpected character after a closing quote", 2, 2),
        ]
        for (text, message, line, column) in cases {
            let db = try Database()
            let file = try makeFile("bad.csv", text)
            let error = try #require(throws: ImportError.self) { try db.importFile(file) }
            #expect(error.message == message)
            #expect(error.line == line)
            #expect(error.column == column)
            #expect(error.file == file.path)
            #expect(error.description.hasPrefix("\(file.path):\(line)"))
            // Nothing was imported: not even the table.
            #expect(try !db.tableExists("bad"))
        }
        let db = try Database()
        let invalid = try makeFile("latin1.csv", Data("a,b\nok,fine\ncaf".utf8) + Data([0xE9]) + Data(",x\n".utf8))
        let error = try #require(throws: ImportError.self) { try db.importFile(invalid) }
        #expect(error.message.hasPrefix("invalid UTF-8"))
        #expect(error.line == 3 && error.column == 1)
    }

    @Test func aRejectedValueStopsTheImportAndLeavesTheTableAsItWas() throws {
        let db = try Database()
        try db.execute(sql: "CREATE TABLE products(name TEXT NOT NULL, price REAL NOT NULL, units INT) STRICT")
        try db.execute(sql: "INSERT INTO products VALUES ('existing', 1.0, 1)")
        let file = try makeFile("products.csv", "Name,Price,Units\nlamp,12.5,3\nchair,,2\ntable,100,1\n")
        let error = try #require(throws: ImportError.self) { try db.importFile(file) }
        #expect(error.line == 3)
        #expect(error.columnName == "price")
        #expect(error.column == 2)
        #expect(error.underlyingError?.code == .constraintNotNull)
        #expect(try String.fetchAll(db, sql: "SELECT name FROM products") == ["existing"])

        // Skipping bad records imports the rest and reports each one.
        var options = ImportOptions()
        options.skipsBadRecords = true
        let wrongType = try makeFile("products2.csv", "name,price,units\nsofa,abc,1\nbed,300,1\nshelf,9\n")
        let result = try db.importFile(wrongType, into: "products", options: options)
        #expect(result.rowCount == 1)
        #expect(result.skippedRecords.map(\.line) == [2, 4])
        #expect(result.skippedRecords[0].underlyingError?.code == .constraintDataType)
        #expect(try String.fetchAll(db, sql: "SELECT name FROM products ORDER BY rowid") == ["existing", "bed"])
    }

    @Test func appendsCreatesOrReplacesByMode() throws {
        let db = try Database()
        let file = try makeFile("movies.csv", "TITLE,Year\nHeat,1995\n")
        try db.execute(sql: "CREATE TABLE movies(id INTEGER PRIMARY KEY, title TEXT, year INT, likes INT DEFAULT 0)")
        // Append maps header names onto the table's columns, ignoring case.
        try db.importFile(file)
        try db.importFile(file)
        #expect(try Row.fetchAll(db, sql: "SELECT id, title, year, likes FROM movies").map(\.databaseValues) == [
            [1, "Heat", 1995, 0], [2, "Heat", 1995, 0],
        ])
        var create = ImportOptions()
        create.mode = .create
        let exists = try #require(throws: ImportError.self) { try db.importFile(file, options: create) }
        #expect(exists.message.contains("exists"))
        var replace = ImportOptions()
        replace.mode = .replace
        try db.importFile(file, options: replace)
        #expect(try db.columns(in: "movies").map(\.name) == ["TITLE", "Year"])
        #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM movies") == 1)
        // A header column the table lacks is an error.
        let extra = try makeFile("extra.csv", "title,rating\nHeat,8\n")
        let error = try #require(throws: ImportError.self) { try db.importFile(extra, into: "movies") }
        #expect(error.columnName == "rating")
        #expect(error.column == 2)
    }

    @Test func importsWithoutAHeaderOrWithAnotherDelimiter() throws {
        let db = try Database()
        var options = ImportOptions()
        options.hasHeader = false
        options.delimiter = ";"
        let file = try makeFile("values.csv", "1;a\n2;b\n")
        #expect(try db.importFile(file, options: options).rowCount == 2)
        #expect(try db.columns(in: "values").map(\.name) == ["column1", "column2"])
        #expect(try String.fetchAll(db, sql: "SELECT column2 FROM \"values\"") == ["a", "b"])
    }

    @Test func importsTSVWithEscapes() throws {
        let db = try Database()
        let file = try makeFile("notes.tsv", "title\tbody\nA\tline\\none\\ttab\nB\t\\N\nC\t\nD\tback\\\\slash\n")
        try db.importFile(file)
        #expect(try Row.fetchAll(db, sql: "SELECT title, body FROM notes").map(\.databaseValues) == [
            ["A", "line\none\ttab"], ["B", .null], ["C", ""], ["D", "back\\slash"],
        ])
    }

    @Test func importsJSONArraysAndNDJSON() throws {
        let db = try Database()
        let json = try makeFile("books.json", """
            [
              {"id": 1, "title": "Emma", "rating": 4.0, "tags": ["classic"], "read": true},
              {"id": 2, "title": "Persuasion \\u00e9\\ud83d\\ude00", "rating": 4.1, "author": {"name": "Austen"}},
              {"id": 3, "title": null, "rating": 3, "read": false}
            ]
            """)
        #expect(try db.importFile(json).rowCount == 3)
        #expect(try db.columns(in: "books").map { "\($0.name) \($0.declaredType)" } == [
            "id INTEGER", "title TEXT", "rating REAL", "tags TEXT", "read INTEGER", "author TEXT",
        ])
        #expect(try Row.fetchAll(db, sql: "SELECT * FROM books ORDER BY id").map(\.databaseValues) == [
            [1, "Emma", 4.0, "[\"classic\"]", 1, .null],
            [2, "Persuasion é😀", 4.1, .null, .null, "{\"name\": \"Austen\"}"],
            [3, .null, 3.0, .null, 0, .null],
        ])
        let ndjson = try makeFile("events.ndjson", "{\"kind\":\"open\",\"at\":1}\n\n{\"kind\":\"close\",\"at\":2}\n")
        #expect(try db.importFile(ndjson).rowCount == 2)
        #expect(try String.fetchAll(db, sql: "SELECT kind FROM events ORDER BY at") == ["open", "close"])

        let broken = try makeFile("broken.ndjson", "{\"a\":1}\n{\"a\":2,}\n")
        let error = try #require(throws: ImportError.self) { try db.importFile(broken) }
        #expect(error.line == 2)
        #expect(error.message.hasPrefix("invalid JSON"))
        #expect(try !db.tableExists("broken"))
        let unclosed = try makeFile("unclosed.json", "[{\"a\":1},\n{\"a\":2}")
        #expect(throws: ImportError.self) { try db.importFile(unclosed) }
        #expect(try !db.tableExists("unclosed"))
    }

    @Test func reportsAMissingFileOrUnknownFormat() throws {
        let db = try Database()
        let missing = URL(fileURLWithPath: try makeTemporaryPath("missing.csv"))
        let error = try #require(throws: ImportError.self) { try db.importFile(missing) }
        #expect(error.message.hasPrefix("cannot open the file"))
        let unknown = try makeFile("data.xyz", "a\n1\n")
        #expect(throws: ImportError.self) { try db.importFile(unknown) }
        var options = ImportOptions()
        options.format = .csv
        #expect(try db.importFile(unknown, options: options).rowCount == 1)
    }

    @Test func importsInsideAnOpenTransactionAsASavepoint() throws {
        let db = try Database()
        try db.transaction {
            try db.execute(sql: "CREATE TABLE kept(a)")
            let bad = try makeFile("t.csv", "a\n1\n\"2\n")
            #expect(throws: ImportError.self) { try db.importFile(bad) }
            #expect(try db.tableExists("kept"))
            #expect(try !db.tableExists("t"))
        }
    }
}

/// Progress reports collected from an import.
final class ProgressLog: @unchecked Sendable {
    // @unchecked: `items` is only touched under `lock`.
    private let lock = NSLock()
    private var items: [ImportProgress] = []
    var reports: [ImportProgress] { lock.withLock { items } }
    func append(_ report: ImportProgress) { lock.withLock { items.append(report) } }
}
