import Foundation
import Strata
import StrataTestHelpers
import Testing

/// ``Database/restricting(to:_:)``: SQLite's authorizer, not the SQL text.
@Suite struct StatementRestrictionTests {
    @Test func readsOnlyRefusesEveryWriteAndEveryOtherFile() throws {
        let folder = try makeTemporaryPath("restrict")
        let queue = try DatabaseQueue(path: folder)
        try queue.write { db in try db.execute(sql: "CREATE TABLE t(x); INSERT INTO t VALUES (1)") }
        let target = try makeTemporaryPath("copy")
        try queue.writeWithoutTransaction { db in
            // Prepared before: not reused inside.
            _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM t")
            try db.restricting(to: .reads) { () throws -> Void in
                let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM t")
                #expect(count == 1)
                // Pragma functions that report read the schema: allowed.
                let columns = try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info(?)", arguments: ["t"])
                #expect(columns == ["x"])
                for sql in ["INSERT INTO t VALUES (2)", "VACUUM INTO '\(target)'", "ATTACH '\(target)' AS x", "DROP TABLE t", "PRAGMA user_version = 3"] {
                    #expect(throws: SQLiteError.self, "\(sql)") { try db.execute(sql: sql) }
                }
            }
            // Outside again, writes run.
            try db.execute(sql: "INSERT INTO t VALUES (2)")
        }
        #expect(!FileManager.default.fileExists(atPath: target))
        #expect(try queue.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM t") } == 2)
    }

    @Test func thisFileAllowsWritesButNoOtherFileNorTheSchemaTable() throws {
        let queue = try DatabaseQueue(path: try makeTemporaryPath("restrict"))
        let target = try makeTemporaryPath("copy")
        try queue.writeWithoutTransaction { db in
            try db.restricting(to: .thisFile) { () throws -> Void in
                try db.execute(sql: "CREATE TABLE t(x); INSERT INTO t VALUES (1); PRAGMA user_version = 2")
                for sql in ["VACUUM INTO '\(target)'", "VACUUM", "ATTACH '\(target)' AS x", "PRAGMA writable_schema = ON"] {
                    #expect(throws: SQLiteError.self, "\(sql)") { try db.execute(sql: sql) }
                }
                // Nested, the stricter restriction applies.
                try db.restricting(to: .reads) { () throws -> Void in
                    #expect(throws: SQLiteError.self) { try db.execute(sql: "INSERT INTO t VALUES (2)") }
                }
                try db.execute(sql: "INSERT INTO t VALUES (3)")
            }
        }
        #expect(!FileManager.default.fileExists(atPath: target))
        #expect(try queue.read { try Int.fetchAll($0, sql: "SELECT x FROM t ORDER BY x") } == [1, 3])
        #expect(try queue.read { try Int.fetchOne($0, sql: "PRAGMA user_version") } == 2)
    }
}
