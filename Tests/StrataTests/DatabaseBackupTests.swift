import Foundation
import Strata
import StrataTestHelpers
import Testing

private struct StopBackup: Error {}

@Suite struct DatabaseBackupTests {
    func makeSource(_ storage: TestStorage) throws -> Database {
        let db = try storage.makeDatabase()
        try db.execute(sql: """
            CREATE TABLE t(id INTEGER PRIMARY KEY, payload BLOB);
            WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 200)
            INSERT INTO t SELECT x, randomblob(2000) FROM n;
            """)
        return db
    }

    @Test(arguments: TestStorage.allCases)
    func copiesADatabaseWithProgress(_ storage: TestStorage) throws {
        let source = try makeSource(storage)
        let path = try makeTemporaryPath()
        var reports: [BackupProgress] = []
        try source.backup(toPath: path, pagesPerStep: 10) { reports.append($0) }
        #expect(reports.count > 5)
        #expect(reports.last?.isCompleted == true)
        #expect(reports.map(\.completedPageCount) == reports.map(\.completedPageCount).sorted())
        let copy = try Database(path: path)
        #expect(try Int.fetchOne(copy, sql: "SELECT count(*) FROM t") == 200)
        #expect(try Data.fetchOne(copy, sql: "SELECT payload FROM t WHERE id = 7")
            == Data.fetchOne(source, sql: "SELECT payload FROM t WHERE id = 7"))
    }

    @Test func copiesIntoAnOpenDatabase() throws {
        let source = try makeSource(.memory)
        let destination = try Database()
        try destination.execute(sql: "CREATE TABLE old(a)")
        try source.backup(to: destination)
        #expect(try destination.tableNames() == ["t"])
    }

    @Test func stopsWhenProgressThrowsAndLeavesTheDestinationAsItWas() throws {
        let source = try makeSource(.memory)
        let path = try makeTemporaryPath()
        try Database(path: path).execute(sql: "CREATE TABLE previous(a); INSERT INTO previous VALUES (1)")
        #expect(throws: StopBackup.self) {
            try source.backup(toPath: path, pagesPerStep: 5) { progress in
                if progress.completedPageCount > 10 { throw StopBackup() }
            }
        }
        #expect(try Database(path: path).tableNames() == ["previous"])
    }
}
