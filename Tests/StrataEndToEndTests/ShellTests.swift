import Foundation
import Strata
import StrataTestHelpers
import Testing

/// `strata shell` (and `strata FILE`) reading statements from a pipe, as
/// sqlite3 does. Tests/Shell/run drives it at a real terminal, in tmux.
@Suite struct ShellTests {
    func shell(_ arguments: [String], _ input: String) throws -> ProcessOutput {
        try runProduct("strata", arguments, input: input)
    }

    @Test func runsStatementsOverSeveralLinesAndPrintsEachQuery() throws {
        let path = try makeTemporaryPath()
        let output = try shell([path], """
            CREATE TABLE notes(
              id INTEGER PRIMARY KEY,
              title TEXT   -- a comment; with a semicolon
            );
            -- a line of comment alone
            INSERT INTO notes(title) VALUES ('a;b'), ('two
            lines');
            SELECT id, title FROM notes ORDER BY id; SELECT count(*) AS n FROM notes;
            SELECT 'no semicolon at the end'
            """)
        #expect(output.status == 0, "\(output.standardError)")
        #expect(output.standardError.isEmpty)
        #expect(output.standardOutput == """
            id  title
            --  ----------
            1   a;b
            2   two\\nlines
            n
            -
            2
            'no semicolon at the end'
            -------------------------
            no semicolon at the end

            """)
        // The rows are in the file.
        #expect(try Int.fetchOne(Database(path: path), sql: "SELECT count(*) FROM notes") == 2)
    }

    @Test func printsEachModeAndHeadersSetting() throws {
        let output = try shell([":memory:"], """
            CREATE TABLE t(n, name);
            INSERT INTO t VALUES (1, 'ann'), (NULL, 'a,"b"');
            .mode csv
            SELECT * FROM t;
            .headers off
            SELECT * FROM t;
            .headers on
            .mode list
            SELECT * FROM t;
            .mode line
            SELECT n, name AS longer_name FROM t;
            .mode json
            SELECT * FROM t;
            .mode ndjson
            SELECT * FROM t;
            .mode tabs
            SELECT * FROM t;
            .mode
            """)
        #expect(output.status == 0, "\(output.standardError)")
        #expect(output.standardOutput == """
            n,name
            1,ann
            ,"a,""b\"""
            1,ann
            ,"a,""b\"""
            n|name
            1|ann
            |a,"b"
                      n = 1
            longer_name = ann

                      n = 
            longer_name = a,"b"
            [
            {"n":1,"name":"ann"},
            {"n":null,"name":"a,\\"b\\""}
            ]
            {"n":1,"name":"ann"}
            {"n":null,"name":"a,\\"b\\""}
            n\tname
            1\tann
            \\N\ta,"b"
            current output mode: tsv

            """)
        // The command-line options set the same.
        let csv = try shell([":memory:", "--mode", "csv", "--no-headers"], "SELECT 1, 'x';")
        #expect(csv.standardOutput == "1,x\n")
        #expect(try shell([":memory:", "--mode", "xml"], "").status == 64)
    }

    @Test func anErrorIsOneLineAndTheScriptGoesOnWithExitCodeOne() throws {
        let path = try makeTemporaryPath()
        let output = try shell(["shell", path], """
            CREATE TABLE t(a UNIQUE);
            INSERT INTO t VALUES (1);
            INSERT INTO t VALUES (1);
            SELECT * FROM
              nowhere;
            .frobnicate
            .mode
            .headers maybe
            INSERT INTO t VALUES (2);
            SELECT count(*) FROM t;
            """)
        #expect(output.status == 1)
        #expect(output.standardError == """
            Error: near line 3: SQLite error 2067 (constraint failed): UNIQUE constraint failed: t.a - while executing: INSERT INTO t VALUES (1);
            Error: near line 4: SQLite error 1 (SQL logic error): no such table: nowhere - while executing: SELECT * FROM   nowhere;
            Error: near line 6: unknown command ".frobnicate": enter ".help" for the list
            Error: near line 8: "maybe" is not on or off

            """)
        #expect(output.standardOutput == "current output mode: table\ncount(*)\n--------\n2\n")
        // What ran before and after each error is kept.
        #expect(try Int.fetchAll(Database(path: path), sql: "SELECT a FROM t ORDER BY a") == [1, 2])
    }

    @Test func bailStopsAtTheFirstError() throws {
        let path = try makeTemporaryPath()
        let script = "CREATE TABLE t(a);\nINSERT INTO t VALUES (1);\nSELECT nope;\nINSERT INTO t VALUES (2);\n"
        let bailed = try shell([path, "--bail"], script)
        #expect(bailed.status == 1)
        #expect(bailed.standardError.hasPrefix("Error: near line 3: "))
        #expect(try Int.fetchAll(Database(path: path), sql: "SELECT a FROM t") == [1])
        let dotBail = try shell([":memory:"], ".bail on\nSELECT nope;\nSELECT 'not reached';\n")
        #expect(dotBail.status == 1)
        #expect(!dotBail.standardOutput.contains("not reached"))
    }

    @Test func listsTablesSchemaAndIndexes() throws {
        let output = try shell([":memory:"], """
            CREATE TABLE authors(id INTEGER PRIMARY KEY, name TEXT UNIQUE);
            CREATE TABLE books(id INTEGER PRIMARY KEY, title TEXT, author_id INTEGER REFERENCES authors(id));
            CREATE INDEX books_by_title ON books(title);
            CREATE VIEW titles AS SELECT title FROM books;
            .tables
            .tables b%
            .schema books
            .indexes
            .indexes books
            .tab
            """)
        #expect(output.status == 0, "\(output.standardError)")
        #expect(output.standardOutput == """
            authors  books    titles
            books
            CREATE TABLE books(id INTEGER PRIMARY KEY, title TEXT, author_id INTEGER REFERENCES authors(id));
            CREATE INDEX books_by_title ON books(title);
            books_by_title              sqlite_autoindex_authors_1
            books_by_title
            authors  books    titles

            """)
        let ambiguous = try shell([":memory:"], ".h on\n")
        #expect(ambiguous.standardError == "Error: near line 1: \".h\" could be .headers or .help\n")
    }

    @Test func importsAndExportsThroughStrataTransfer() throws {
        let path = try makeTemporaryPath()
        let csv = try makeFile("people.csv", "name,age\nann,30\nbob,41\n")
        let jsonPath = try makeTemporaryPath("older.json")
        let tsvPath = try makeTemporaryPath("all.txt")
        let output = try shell([path], """
            .import \(csv.path)
            .import \(csv.path) friends
            SELECT typeof(age), count(*) FROM people GROUP BY 1;
            .export \(jsonPath) SELECT name FROM friends WHERE age > 40
            .export --tsv \(tsvPath) people
            .import /nonexistent/file.csv
            .import \(csv.path) people extra
            .export \(jsonPath)
            """)
        #expect(output.standardOutput == """
            imported 2 rows into people
            imported 2 rows into friends
            typeof(age)  count(*)
            -----------  --------
            integer      2
            exported 1 rows to \(jsonPath)
            exported 2 rows to \(tsvPath)

            """)
        #expect(try String(contentsOfFile: jsonPath, encoding: .utf8) == "[\n{\"name\":\"bob\"}\n]\n")
        #expect(try String(contentsOfFile: tsvPath, encoding: .utf8) == "name\tage\nann\t30\nbob\t41\n")
        let errors = output.standardError.split(separator: "\n")
        #expect(errors.count == 3)
        #expect(errors[0].hasPrefix("Error: near line 6: ") && errors[0].contains("/nonexistent/file.csv"))
        #expect(errors[1] == "Error: near line 7: usage: .import [--FORMAT] [--create|--replace] [--text] [--no-header] [--skip-bad-lines] FILE [TABLE]")
        #expect(errors[2] == "Error: near line 8: usage: .export [--FORMAT] FILE TABLE|QUERY")
        // A broken line stops the import, and the table keeps what it had.
        let broken = try makeFile("people.csv", "name,age\ncid,50\n\"dan,60\n")
        let failed = try shell([path], ".import \(broken.path)\nSELECT count(*) FROM people;\n")
        #expect(failed.standardError.contains("people.csv:3:1: unterminated quoted field"))
        #expect(failed.standardOutput.hasSuffix("2\n"))
    }

    @Test func readsScriptsAndNamesTheirLines() throws {
        let folder = try makeTemporaryPath()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let inner = folder + "/inner.sql"
        try "SELECT 'inner';\r\nSELECT nope;\n".write(toFile: inner, atomically: true, encoding: .utf8)
        let outer = folder + "/outer.sql"
        try ".headers off\n.read \(inner)\nSELECT 'outer';\n".write(toFile: outer, atomically: true, encoding: .utf8)
        let loop = folder + "/loop.sql"
        try ".read \(loop)\n".write(toFile: loop, atomically: true, encoding: .utf8)
        let output = try shell([":memory:"], ".read \(outer)\n.read \(folder)/missing.sql\n.read \(loop)\nSELECT 'end';\n")
        #expect(output.standardOutput == "inner\nouter\nend\n")
        let errors = output.standardError.split(separator: "\n")
        #expect(errors.count == 3)
        #expect(errors[0] == "Error: near line 2 of \(inner): SQLite error 1 (SQL logic error): no such column: nope - while executing: SELECT nope;")
        #expect(errors[1].hasPrefix("Error: near line 2: cannot read \(folder)/missing.sql"))
        #expect(errors[2] == "Error: near line 1 of \(loop): \(loop): .read files nest more than 16 deep")
        #expect(output.status == 1)
    }

    @Test func timerQuitAndExitCodes() throws {
        let output = try shell([":memory:"], ".timer on\nSELECT 1;\n.timer off\n.exit 3\nSELECT 'not reached';\n")
        #expect(output.status == 3)
        let lines = output.standardOutput.split(separator: "\n")
        #expect(lines.count == 4)
        #expect(lines[3].wholeMatch(of: /Run Time: real \d+\.\d{3} user \d+\.\d{6} sys \d+\.\d{6}/) != nil)
        #expect(try shell([":memory:"], ".quit\nSELECT 'not reached';\n").standardOutput.isEmpty)
        #expect(try shell([":memory:"], "").status == 0)
    }

    @Test func opensTheShellByDefaultButNotOnAMistypedCommand() throws {
        let path = try makeTemporaryPath("typed.sqlite")
        // `strata FILE` is the shell; with no file, a throwaway database.
        #expect(try shell([path], "CREATE TABLE t(a);\n").status == 0)
        #expect(try shell([path], ".tables\n").standardOutput == "t\n")
        #expect(try shell([], "SELECT 6 * 7 AS answer;\n").standardOutput == "answer\n------\n42\n")
        // A word that is neither a command nor a file is not made a database.
        let folder = try makeTemporaryPath()
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let typo = try runProduct("strata", ["demoo"], in: URL(fileURLWithPath: folder))
        #expect(typo.status == 64)
        #expect(typo.standardError.contains("No command or file named demoo"))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)
        // A read-only shell refuses writes and goes on.
        let readOnly = try shell([path, "--read-only"], "INSERT INTO t VALUES (1);\nSELECT count(*) FROM t;\n")
        #expect(readOnly.standardError.contains("readonly"))
        #expect(readOnly.standardOutput.hasSuffix("0\n"))
    }

    @Test func ctrlCStopsARunningScript() throws {
        let process = Process()
        process.executableURL = try CommandLineToolTests.binaryURL()
        process.arguments = [":memory:", "--mode", "list", "--no-headers"]
        let input = Pipe()
        let output = Pipe()
        let error = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = error
        try process.run()
        // Rows without end, printed as they come; then a query never reached.
        input.fileHandleForWriting.write(Data("""
            SELECT 'started';
            WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x FROM c;
            SELECT 'not reached';

            """.utf8))
        try input.fileHandleForWriting.close()
        // Read all the output; signal once the runaway query is printing.
        let running = DispatchSemaphore(value: 0)
        let finished = DispatchSemaphore(value: 0)
        let printed = ValueLog<String>()
        DispatchQueue.global().async {
            var text = ""
            var signalled = false
            while case let chunk = output.fileHandleForReading.availableData, !chunk.isEmpty {
                if !signalled { text += String(decoding: chunk, as: UTF8.self) }
                if !signalled, text.contains("\n100000\n") {
                    signalled = true
                    running.signal()
                }
            }
            printed.append(text)
            running.signal()
            finished.signal()
        }
        #expect(running.wait(timeout: .now() + 300) == .success)
        kill(process.processIdentifier, SIGINT)
        let errorText = String(decoding: error.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(finished.wait(timeout: .now() + 300) == .success)
        #expect(process.terminationStatus == 130)
        #expect(errorText == "Error: near line 2: interrupted\n")
        #expect(printed.values.first.map { $0.hasPrefix("started\n1\n2\n") } ?? false)
        #expect(!(printed.values.first ?? "").contains("not reached"))
    }
}
