import Foundation
import Strata
import StrataTestHelpers
import Testing

/// Runs the built `strata` binary, as a user would.
@Suite struct CommandLineToolTests {
    /// The `strata` binary next to the test bundle, built by `swift build` /
    /// `swift test` with the rest of the package.
    static func binaryURL(_ name: String = "strata") throws -> URL {
        let productsFolder = Bundle.module.bundleURL.deletingLastPathComponent()
        let url = productsFolder.appendingPathComponent(name)
        guard FileManager.default.isExecutableFile(atPath: url.path) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: url.path])
        }
        return url
    }

    func run(_ arguments: [String]) throws -> ProcessOutput {
        try runProduct("strata", arguments)
    }

    @Test func demoWalksThroughTheLayersOnRealData() throws {
        let output = try run(["demo"])
        #expect(output.status == 0, "\(output.standardError)")
        let text = output.standardOutput
        #expect(text.contains("10000 rows in"))
        #expect(text.contains("book_id INTEGER, goodreads_book_id INTEGER"))
        #expect(text.contains("The Divan                                         1380.0  4.63"))
        #expect(text.contains("Stephen King  60"))
        #expect(text.contains("#1: book 1 for ann — reread every summer"))
        #expect(text.contains("stored \"Robert'); DROP TABLE books;--\"; the books table still has 10001 rows"))
        #expect(text.contains("rolled back; 10001 rows remain"))
        #expect(text.contains("cannot read NULL as non-optional Int in column \"original_publication_year\""))
        #expect(text.contains("UNIQUE constraint failed: books.book_id"))
        #expect(text.contains("F. Scott Fitzgerald  FSF"))
        #expect(text.hasSuffix("Done.\n"))
        // A missing data file is a clear error.
        let missing = try run(["demo", "--data", "/nonexistent/books.csv"])
        #expect(missing.status == 1)
        #expect(missing.standardError.contains("cannot find /nonexistent/books.csv"))
    }

    @Test func sqlRunsStatementsAndPrintsTheLastQuery() throws {
        let path = try makeTemporaryPath()
        let output = try run(["sql", path, """
            CREATE TABLE movies(id INTEGER PRIMARY KEY, title TEXT, year INT);
            INSERT INTO movies(title, year) VALUES ('Heat', 1995), ('Alien', 1979), (NULL, NULL);
            SELECT id, title, year FROM movies ORDER BY id
            """])
        #expect(output.status == 0, "\(output.standardError)")
        #expect(output.standardOutput == """
            id  title  year
            --  -----  ----
            1   Heat   1995
            2   Alien  1979
            3   NULL   NULL

            """)
        // The file keeps the data.
        #expect(try Int.fetchOne(Database(path: path), sql: "SELECT count(*) FROM movies") == 3)
    }

    @Test func sqlReportsErrorsWithExitCodeOne() throws {
        let output = try run(["sql", ":memory:", "SELECT * FROM nowhere"])
        #expect(output.status == 1)
        #expect(output.standardError.contains("no such table: nowhere"))
        #expect(output.standardOutput.isEmpty)
    }

    @Test func sqlStopsAQueryPastItsTimeLimit() throws {
        let runaway = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"
        let output = try run(["sql", ":memory:", runaway, "--time-limit", "0.2"])
        #expect(output.status == 1)
        #expect(output.standardError.contains("ran past its time limit of 0.2 seconds"))
        #expect(try run(["sql", ":memory:", "SELECT 6 * 7 AS answer", "--time-limit", "600"]).standardOutput.contains("42"))
        #expect(try run(["sql", ":memory:", "SELECT 1", "--time-limit", "0"]).status == 64)
    }

    @Test func badUsageExitsWith64() throws {
        #expect(try run(["sql"]).status == 64)
        #expect(try run(["sql", ":memory:", "  "]).status == 64)
        #expect(try run(["no-such-command"]).status == 64)
    }

    @Test func readOnlyRefusesWrites() throws {
        let path = try makeTemporaryPath()
        try Database(path: path).execute(sql: "CREATE TABLE t(a)")
        let output = try run(["sql", "--read-only", path, "INSERT INTO t VALUES (1)"])
        #expect(output.status == 1)
        #expect(output.standardError.contains("readonly"))
    }

    // MARK: - Formats, import, export, schema

    @Test func sqlPrintsEveryFormat() throws {
        let sql = "SELECT 1 AS n, 2.5 AS r, 'a,\"b\"' AS t, NULL AS z, x'00ff' AS b"
        let json = try run(["sql", ":memory:", sql, "--format", "json"])
        #expect(json.status == 0, "\(json.standardError)")
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [[String: Any]])
        #expect((parsed[0]["n"] as? NSNumber)?.intValue == 1)
        #expect((parsed[0]["r"] as? NSNumber)?.doubleValue == 2.5)
        #expect(parsed[0]["t"] as? String == "a,\"b\"")
        #expect(parsed[0]["z"] is NSNull)
        #expect(parsed[0]["b"] as? String == "AP8=")  // base64
        #expect(try run(["sql", ":memory:", sql, "--format", "csv"]).standardOutput == "n,r,t,z,b\n1,2.5,\"a,\"\"b\"\"\",,AP8=\n")
        #expect(try run(["sql", ":memory:", sql, "--format", "tsv"]).standardOutput == "n\tr\tt\tz\tb\n1\t2.5\ta,\"b\"\t\\N\tAP8=\n")
        #expect(try run(["sql", ":memory:", sql, "--format", "ndjson"]).standardOutput == #"{"n":1,"r":2.5,"t":"a,\"b\"","z":null,"b":"AP8="}"# + "\n")
        #expect(try run(["sql", ":memory:", "CREATE TABLE t(a); SELECT 1", "--format", "bogus"]).status == 64)
    }

    /// The csv-spectrum cases (shipped in the test resources, see their
    /// NOTICE.md), imported with --text and read back as JSON, equal the
    /// expected JSON.
    @Test func importsEveryCSVSpectrumCase() throws {
        let folder = try #require(Bundle.module.url(forResource: "csv-spectrum", withExtension: nil, subdirectory: "Resources"))
        let csvs = try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("csvs").path)
            .filter { $0.hasSuffix(".csv") }.sorted()
        #expect(csvs.count >= 11)
        for name in csvs {
            let base = String(name.dropLast(4))
            let database = try makeTemporaryPath()
            let imported = try run(["import", database, folder.appendingPathComponent("csvs/\(name)").path, "--text", "--table", "t"])
            #expect(imported.status == 0, "\(name): \(imported.standardError)")
            let output = try run(["sql", database, "SELECT * FROM t ORDER BY rowid", "--format", "json"])
            #expect(output.status == 0, "\(name): \(output.standardError)")
            let actual = try JSONSerialization.jsonObject(with: Data(output.standardOutput.utf8)) as? [[String: String]]
            let expected = try JSONSerialization.jsonObject(with: Data(contentsOf: folder.appendingPathComponent("json/\(base).json"))) as? [[String: String]]
            #expect(actual != nil && actual == expected, "\(name)")
        }
    }

    @Test func importReportsABadRecordAndLeavesTheDatabaseUnchanged() throws {
        let database = try makeTemporaryPath()
        try Database(path: database).execute(sql: "CREATE TABLE people(name TEXT NOT NULL, age INT); INSERT INTO people VALUES ('existing', 1)")
        let file = try makeFile("people.csv", "name,age\nann,30\n\"bob,40\n")
        let output = try run(["import", database, file.path])
        #expect(output.status == 1)
        #expect(output.standardError == "strata: \(file.path):3:1: unterminated quoted field\n")
        #expect(try String.fetchAll(Database(path: database), sql: "SELECT name FROM people") == ["existing"])

        let rejected = try makeFile("people2.csv", "name,age\nann,30\n,40\ncid,50\n")
        let skipped = try run(["import", database, rejected.path, "--table", "people", "--skip-bad-lines"])
        #expect(skipped.status == 0, "\(skipped.standardError)")
        #expect(skipped.standardOutput == "imported 2 rows into people, skipped 1\n")
        #expect(skipped.standardError.contains("people2.csv:3:1: the table rejected the record: NOT NULL constraint failed: people.name"))
        #expect(try String.fetchAll(Database(path: database), sql: "SELECT name FROM people") == ["existing", "ann", "cid"])
    }

    @Test func importsJSONAndExportsItBack() throws {
        let database = try makeTemporaryPath()
        let file = try makeFile("books.json", #"[{"id": 1, "title": "Emma", "rating": 4.5}, {"id": 2, "title": "Ran", "rating": null}]"#)
        let imported = try run(["import", database, file.path, "--mode", "create"])
        #expect(imported.standardOutput == "imported 2 rows into books\n")
        let exported = try run(["export", database, "--table", "books", "--format", "ndjson"])
        #expect(exported.standardOutput == #"{"id":1,"title":"Emma","rating":4.5}"# + "\n" + #"{"id":2,"title":"Ran","rating":null}"# + "\n")
        let outputPath = try makeTemporaryPath("books.csv")
        let toFile = try run(["export", database, "--sql", "SELECT title FROM books ORDER BY id", "--output", outputPath])
        #expect(toFile.standardOutput == "exported 2 rows to \(outputPath)\n")
        #expect(try String(contentsOfFile: outputPath, encoding: .utf8) == "title\nEmma\nRan\n")
        #expect(try run(["export", database]).status == 64)
        #expect(try run(["export", database, "--table", "nowhere"]).status == 1)
        #expect(try run(["export", try makeTemporaryPath(), "--table", "t"]).status == 1)  // a missing database is not created
    }

    @Test func schemaListsTablesColumnsIndexesAndForeignKeys() throws {
        let database = try makeTemporaryPath()
        try Database(path: database).execute(sql: """
            CREATE TABLE authors(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
            CREATE TABLE books(id INTEGER PRIMARY KEY, title TEXT NOT NULL DEFAULT 'untitled', authorID INTEGER REFERENCES authors(id) ON DELETE CASCADE);
            CREATE INDEX books_by_title ON books(title);
            """)
        let output = try run(["schema", database])
        #expect(output.status == 0)
        #expect(output.standardOutput == """
            TABLE authors
              id INTEGER PRIMARY KEY
              name TEXT NOT NULL
              UNIQUE INDEX sqlite_autoindex_authors_1 (name)
            TABLE books
              id INTEGER PRIMARY KEY
              title TEXT NOT NULL DEFAULT 'untitled'
              authorID INTEGER
              INDEX books_by_title (title)
              FOREIGN KEY (authorID) REFERENCES authors (id) ON DELETE CASCADE

            """)
        #expect(try run(["schema", database, "books"]).standardOutput.hasPrefix("TABLE books\n"))
        #expect(try run(["schema", database, "nowhere"]).status == 1)
    }
}

/// Runs a built executable of the package with arguments and, optionally,
/// standard input and a working directory.
func runProduct(_ name: String, _ arguments: [String], input: String? = nil, in folder: URL? = nil) throws -> ProcessOutput {
    try runExecutable(try CommandLineToolTests.binaryURL(name), arguments, input: input, in: folder)
}
