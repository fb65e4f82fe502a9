import Foundation
import Strata
import StrataTestHelpers
import Testing

/// Tests that run a second process against the same database file.
@Suite struct ProcessTests {
    @Test func twoProcessesWritingTheSameFileNeverSeeDatabaseIsLocked() throws {
        let path = try makeTemporaryPath()
        let pool = try DatabasePool(path: path)
        try pool.write { db in try db.execute(sql: "CREATE TABLE writes(tag TEXT, number INT)") }
        let processes = try ["a", "b"].map { tag -> Process in
            let process = Process()
            process.executableURL = try CommandLineToolTests.binaryURL("PoolWriter")
            process.arguments = [path, tag, "300"]
            let errors = Pipe()
            process.standardError = errors
            try process.run()
            return process
        }
        // Meanwhile this process reads and writes too.
        for index in 0..<100 {
            try pool.write { db in try db.execute(sql: "INSERT INTO writes VALUES ('main', ?)", arguments: [index]) }
            _ = try pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM writes") }
        }
        for process in processes {
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
        }
        #expect(try pool.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM writes") } == 700)
    }
}
