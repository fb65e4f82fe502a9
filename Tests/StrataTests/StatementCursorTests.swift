import Foundation
import Strata
import StrataTestHelpers
import Testing

@Suite struct StatementCursorTests {
    @Test(arguments: TestStorage.allCases)
    func preparesEachStatementWhenReached(_ storage: TestStorage) throws {
        let db = try storage.makeDatabase()
        // The INSERT cannot compile before the CREATE has run.
        let statements = try db.allStatements(sql: """
            CREATE TABLE t(a);
            INSERT INTO t VALUES (1), (2);
            SELECT a FROM t ORDER BY a DESC; -- the last query
            """)
        var lastRows: [Row] = []
        var sqls: [String] = []
        while let statement = try statements.next() {
            sqls.append(statement.sql)
            lastRows = try Row.fetchAll(statement)
        }
        #expect(sqls == ["CREATE TABLE t(a);", "INSERT INTO t VALUES (1), (2);", "SELECT a FROM t ORDER BY a DESC;"])
        #expect(try lastRows.map { try $0[0] as Int } == [2, 1])
        #expect(try statements.next() == nil)
    }

    @Test func reportsTheStatementThatDoesNotCompile() throws {
        let db = try Database()
        let statements = try db.allStatements(sql: "SELECT 1; SELECT * FROM missing; SELECT 3")
        _ = try statements.next()
        let error = try #require(throws: SQLiteError.self) { try statements.next() }
        #expect(error.message == "no such table: missing")
        #expect(error.sql == "SELECT * FROM missing; SELECT 3")
        #expect(try statements.next() == nil)
    }

    @Test func tellsWhenTheLastStatementIsComplete() {
        #expect(Database.isComplete(sql: "SELECT 1;"))
        #expect(Database.isComplete(sql: "SELECT 1;\n  -- a comment after\n"))
        #expect(Database.isComplete(sql: "SELEC garbage;"))
        #expect(!Database.isComplete(sql: "SELECT 1"))
        #expect(!Database.isComplete(sql: "SELECT 'a;"))
        #expect(!Database.isComplete(sql: "SELECT \"a;\" FROM t"))
        #expect(!Database.isComplete(sql: "SELECT 1 /* ; */"))
        #expect(!Database.isComplete(sql: "SELECT 1; SELECT 2"))
        #expect(!Database.isComplete(sql: "CREATE TRIGGER t AFTER INSERT ON a BEGIN DELETE FROM b;"))
        #expect(Database.isComplete(sql: "CREATE TRIGGER t AFTER INSERT ON a BEGIN DELETE FROM b; END;"))
        #expect(!Database.isComplete(sql: "  -- only a comment\n"))
    }

    @Test func anEmptyScriptHasNoStatement() throws {
        let db = try Database()
        #expect(try db.allStatements(sql: "").next() == nil)
        #expect(try db.allStatements(sql: " ; -- nothing\n/* at all */").next() == nil)
        try db.execute(sql: "  ;  ")
    }
}
