import Foundation
import Strata
import Testing

/// Runs the built `strata` binary, as a user would.
@Suite struct CommandLineToolTests {
    struct Output {
        var status: Int32
        var standardOutput: String
        var standardError: String
    }

    /// The `strata` binary next to the test bundle, built by `swift build` /
    /// `swift test` with the rest of the package.
    static func binaryURL() throws -> URL {
        let productsFolder = Bundle.module.bundleURL.deletingLastPathComponent()
        let url = productsFolder.appendingPathComponent("strata")
        guard FileManager.default.isExecutableFile(atPath: url.path) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: url.path])
        }
        return url
    }

    func run(_ arguments: [String]) throws -> Output {
        let process = Process()
        process.executableURL = try Self.binaryURL()
        process.arguments = arguments
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        let errorData = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Output(
            status: process.terminationStatus,
            standardOutput: String(decoding: outputData, as: UTF8.self),
            standardError: String(decoding: errorData, as: UTF8.self))
    }

    @Test func demoWalksThroughTheCoreOnRealData() throws {
        let output = try run(["demo"])
        #expect(output.status == 0, "\(output.standardError)")
        #expect(output.standardOutput.contains("13 books from goodbooks-10k"))
        #expect(output.standardOutput.contains("The Hunger Games (The Hunger Games, #1)  2008  4.34"))
        #expect(output.standardOutput.contains("stored \"Robert'); DROP TABLE books;--\"; books table still has 14 rows"))
        #expect(output.standardOutput.contains("rolled back; 14 rows remain"))
        #expect(output.standardOutput.contains("cannot read NULL as non-optional Int in column \"year\""))
        #expect(output.standardOutput.contains("UNIQUE constraint failed: books.id"))
        #expect(output.standardOutput.contains("F. Scott Fitzgerald  FSF"))
        #expect(output.standardOutput.hasSuffix("Done.\n"))
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
}
