import Foundation
import Strata
import StrataTestHelpers
import Testing

private struct Product: DatabaseAggregate {
    var product: Int64 = 1
    var sawRow = false
    init() {}
    mutating func step(_ arguments: [DatabaseValue]) throws {
        guard case .integer(let value) = arguments[0] else {
            throw SQLiteError(code: .mismatch, message: "product() takes integers")
        }
        product *= value
        sawRow = true
    }
    func finalize() throws -> (any DatabaseValueConvertible)? {
        sawRow ? product : nil
    }
}

private struct Failure: Error, CustomStringConvertible {
    var description: String { "custom failure" }
}

@Suite struct DatabaseFunctionTests {
    @Test(arguments: TestStorage.allCases)
    func callsAScalarFunctionWrittenInSwift(_ storage: TestStorage) throws {
        let db = try storage.makeDatabase()
        let reverse = DatabaseFunction("reverse", argumentCount: 1, isDeterministic: true) { arguments in
            guard case .text(let text) = arguments[0] else { return nil }
            return String(text.reversed())
        }
        try db.add(function: reverse)
        #expect(try String.fetchOne(db, sql: "SELECT reverse('stressed')") == "desserts")
        #expect(try String.fetchOne(db, sql: "SELECT reverse(NULL)") == nil)
        // Deterministic functions may be used in an index.
        try db.execute(sql: "CREATE TABLE words(w TEXT); CREATE INDEX words_reversed ON words(reverse(w))")
        try db.execute(sql: "INSERT INTO words VALUES ('abc'), ('xyz')")
        #expect(try String.fetchAll(db, sql: "SELECT w FROM words WHERE reverse(w) = 'zyx'") == ["xyz"])
        try db.remove(function: reverse)
        expectError(.error) { try db.execute(sql: "SELECT reverse('x')") }
    }

    @Test func nonDeterministicFunctionsAreRefusedInIndexes() throws {
        let db = try Database()
        try db.add(function: DatabaseFunction("noise", argumentCount: 1) { _ in Int.random(in: 0..<10) })
        try db.execute(sql: "CREATE TABLE t(a)")
        expectError(.error) { try db.execute(sql: "CREATE INDEX i ON t(noise(a))") }
    }

    @Test func acceptsAnyNumberOfArgumentsAndEveryType() throws {
        let db = try Database()
        try db.add(function: DatabaseFunction("describe") { arguments in
            arguments.map(\.storageClassName).joined(separator: ",")
        })
        #expect(try String.fetchOne(db, sql: "SELECT describe()") == "")
        #expect(try String.fetchOne(db, sql: "SELECT describe(NULL, 1, 1.5, 'a', x'01')") == "NULL,INTEGER,REAL,TEXT,BLOB")
        try db.add(function: DatabaseFunction("echo", argumentCount: 1) { $0[0] })
        let row = try #require(try Row.fetchOne(db, sql: "SELECT echo(NULL), echo(2), echo(2.5), echo(''), echo(x''), echo(zeroblob(0))"))
        #expect(row.databaseValues == [.null, 2, 2.5, "", .blob(Data()), .blob(Data())])
    }

    @Test func turnsSwiftErrorsIntoSQLErrors() throws {
        let db = try Database()
        try db.add(function: DatabaseFunction("fail", argumentCount: 0) { _ in throw Failure() })
        let error = try #require(throws: SQLiteError.self) { try db.execute(sql: "SELECT fail()") }
        #expect(error.message == "custom failure")
        try db.add(function: DatabaseFunction("busy", argumentCount: 0) { _ in
            throw SQLiteError(code: .constraint, message: "no way")
        })
        let coded = try #require(throws: SQLiteError.self) { try db.execute(sql: "SELECT busy()") }
        #expect(coded.code ~= .constraint)
        #expect(coded.message == "no way")
    }

    @Test(arguments: TestStorage.allCases)
    func runsAggregatesPerGroup(_ storage: TestStorage) throws {
        let db = try storage.makeDatabase()
        try db.add(function: DatabaseFunction("product", argumentCount: 1, aggregate: Product.self))
        try db.execute(sql: """
            CREATE TABLE t(grp TEXT, n INT);
            INSERT INTO t VALUES ('a', 2), ('a', 3), ('b', 5), ('b', 7), ('b', 1);
            """)
        let rows = try Row.fetchAll(db, sql: "SELECT grp, product(n) FROM t GROUP BY grp ORDER BY grp")
        #expect(rows.map(\.databaseValues) == [["a", 6], ["b", 35]])
        // No row at all: finalize of a fresh state.
        #expect(try Int.fetchOne(db, sql: "SELECT product(n) FROM t WHERE 0") == nil)
        // An error in step is reported once the group ends.
        let error = try #require(throws: SQLiteError.self) { try db.execute(sql: "SELECT product(grp) FROM t") }
        #expect(error.message == "product() takes integers")
        // Also as a window function? Not registered as one: plain aggregate use only.
    }

    @Test func comparesWithACustomCollation() throws {
        let db = try Database()
        try db.add(collation: DatabaseCollation("length") { lhs, rhs in
            lhs.count == rhs.count ? .orderedSame : (lhs.count < rhs.count ? .orderedAscending : .orderedDescending)
        })
        try db.execute(sql: "CREATE TABLE t(word TEXT COLLATE length); INSERT INTO t VALUES ('ccc'), ('a'), ('bb'), ('')")
        #expect(try String.fetchAll(db, sql: "SELECT word FROM t ORDER BY word") == ["", "a", "bb", "ccc"])
        #expect(try String.fetchAll(db, sql: "SELECT word FROM t WHERE word = 'zz'") == ["bb"])
        #expect(try String.fetchAll(db, sql: "SELECT word FROM t ORDER BY word COLLATE BINARY DESC") == ["ccc", "bb", "a", ""])
    }

    /// A collation registered for every connection reaches one opened
    /// before it (asked for when a statement first names it) and one opened
    /// after, and an index built with it is read in its order.
    @Test func aCollationRegisteredForEveryConnectionReachesOpenConnections() throws {
        let path = try makeTemporaryPath()
        let before = try DatabaseQueue(path: path)
        let reversed = DatabaseCollation("strata_test_reversed", comparingUTF8: { a, b in
            a.elementsEqual(b) ? 0 : (b.lexicographicallyPrecedes(a) ? -1 : 1)
        })
        DatabaseCollation.registerForEveryConnection(reversed)
        try before.write { db in
            try db.execute(sql: "CREATE TABLE t(word TEXT); CREATE INDEX t_word ON t(word COLLATE strata_test_reversed)")
            try db.execute(sql: "INSERT INTO t VALUES ('b'), ('c'), ('a')")
        }
        let after = try DatabaseQueue(path: path)
        for queue in [before, after] {
            #expect(try queue.read { db in try String.fetchAll(db, sql: "SELECT word FROM t ORDER BY word COLLATE strata_test_reversed") } == ["c", "b", "a"])
            let plan = try queue.read { db in
                try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN SELECT word FROM t ORDER BY word COLLATE strata_test_reversed").map { try $0["detail"] as String }
            }
            #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "\(plan)")
        }
        // A name nobody registered is still SQLite's error.
        #expect(throws: SQLiteError.self) { try after.read { db in try String.fetchAll(db, sql: "SELECT word FROM t ORDER BY word COLLATE strata_test_unknown") } }
    }

    @Test func registersFunctionsOnEveryConnectionThroughTheConfiguration() throws {
        var configuration = Configuration()
        configuration.prepareDatabase = { db in
            try db.add(function: DatabaseFunction("double", argumentCount: 1, isDeterministic: true) { arguments in
                guard case .integer(let value) = arguments[0] else { return nil }
                return value * 2
            })
        }
        let queue = try DatabaseQueue(path: try makeTemporaryPath(), configuration: configuration)
        #expect(try queue.read { db in try Int.fetchOne(db, sql: "SELECT double(21)") } == 42)
    }
}
