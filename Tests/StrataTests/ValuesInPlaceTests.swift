import Foundation
#if canImport(SQLite3)
import SQLite3
#else
import CSQLite
#endif
@testable import Strata
import StrataTestHelpers
import Testing

/// Integers and reals read in place (``SQLiteValueLayout``) answer exactly
/// what the C API answers, type checks included, on every path a fetch
/// takes: by index, by name, a statement's own read, a generated record.
@Suite struct ValuesInPlaceTests {
    /// One stored value of each kind, and what each numeric type reads
    /// from it (nil: the read throws).
    static let cases: [(sql: String, int: Int?, double: Double?, isNull: Bool)] = [
        ("0", 0, 0, false),
        ("1", 1, 1, false),
        ("-1", -1, -1, false),
        ("9223372036854775807", Int.max, 9223372036854775807.0, false),
        ("-9223372036854775808", Int.min, -9223372036854775808.0, false),
        ("1234567890123", 1_234_567_890_123, 1_234_567_890_123, false),
        ("2.5", nil, 2.5, false),
        ("3.0", 3, 3, false),
        ("-0.0", 0, -0.0, false),
        ("1e308", nil, 1e308, false),
        ("'12'", nil, nil, false),
        ("'text'", nil, nil, false),
        ("x'0102'", nil, nil, false),
        ("x''", nil, nil, false),
        ("NULL", nil, nil, true),
    ]

    /// The in-place reads are on where Strata runs (64-bit), so the tests
    /// below exercise them; a SQLite whose layout differs turns them off
    /// and fails this test, not a read.
    @Test func theLayoutIsVerifiedOnThisPlatform() {
        #if arch(x86_64) || arch(arm64)
        #expect(SQLiteValueLayout.isVerified)
        #endif
    }

    /// The in-place read and the C API's, side by side on each value, for
    /// the types read in place and one that is not.
    @Test func inPlaceReadsAnswerAsTheCAPIDoes() throws {
        let db = try Database()
        let sql = "SELECT " + Self.cases.map(\.sql).joined(separator: ", ")
        let statement = try db.makeStatement(sql: sql)
        let cursor = try Row.fetchCursor(statement)
        _ = try #require(try cursor.next())
        for (index, value) in Self.cases.enumerated() {
            let column = Int32(index)
            for inPlace in [true, false] {
                let context = Comment(rawValue: "\(value.sql), in place: \(inPlace)")
                #expect(readColumn(Int.self, from: statement.sqliteStatement, at: column, inPlace: inPlace) == value.int, context)
                #expect(readColumn(Int64.self, from: statement.sqliteStatement, at: column, inPlace: inPlace) == value.int.map(Int64.init), context)
                #expect(readColumn(Int32.self, from: statement.sqliteStatement, at: column, inPlace: inPlace)
                            == value.int.flatMap(Int32.init(exactly:)), context)
                let double = readColumn(Double.self, from: statement.sqliteStatement, at: column, inPlace: inPlace)
                #expect(double?.bitPattern == value.double?.bitPattern, context)
                let optionalInt = readColumn(Int?.self, from: statement.sqliteStatement, at: column, inPlace: inPlace)
                #expect(optionalInt == (value.isNull ? .some(nil) : value.int.map { .some($0) }), context)
                let optionalDouble = readColumn(Double?.self, from: statement.sqliteStatement, at: column, inPlace: inPlace)
                #expect(optionalDouble == (value.isNull ? .some(nil) : value.double.map { .some($0) }), context)
            }
        }
    }

    /// The same values stored in a table and fetched through the public
    /// paths: each read either gives the value or throws, as a copied row
    /// (read through `DatabaseValue`, never in place) does.
    @Test(arguments: TestStorage.allCases)
    func fetchesReadNumbersInPlaceWithTheirChecks(_ storage: TestStorage) throws {
        let db = try storage.makeDatabase()
        try db.execute(sql: "CREATE TABLE t(k INTEGER PRIMARY KEY, v)")
        for (index, value) in Self.cases.enumerated() {
            try db.execute(sql: "INSERT INTO t VALUES (?, \(value.sql))", arguments: [index])
        }
        let cursor = try Row.fetchCursor(db, sql: "SELECT v FROM t ORDER BY k")
        var index = 0
        while let row = try cursor.next() {
            let value = Self.cases[index]
            let copy = row.copy()
            let context = Comment(rawValue: value.sql)
            #expect((try? row[0] as Int) == value.int, context)
            #expect((try? row["v"] as Int) == value.int, context)
            #expect((try? copy[0] as Int) == value.int, context)
            #expect((try? row[0] as Int64) == value.int.map(Int64.init), context)
            #expect((try? row["v"] as Double)?.bitPattern == value.double?.bitPattern, context)
            #expect((try? copy["v"] as Double)?.bitPattern == value.double?.bitPattern, context)
            // nil: the read threw; .some(nil): it read NULL.
            let optional: Int?? = { do { return .some(try row[0] as Int?) } catch { return nil } }()
            #expect(optional == (value.isNull ? .some(nil) : value.int.map { .some($0) }), context)
            index += 1
        }
        #expect(index == Self.cases.count)
        // A statement's own read (a fetch of one type) and its error.
        #expect(try Int.fetchAll(db, sql: "SELECT v FROM t WHERE k IN (0, 3, 7) ORDER BY k") == [0, Int.max, 3])
        #expect(throws: DatabaseDecodingError.self) { try Int.fetchAll(db, sql: "SELECT v FROM t WHERE k = 6") }
        #expect(throws: DatabaseDecodingError.self) { try Int.fetchAll(db, sql: "SELECT v FROM t WHERE k = 10") }
        #expect(try Double.fetchAll(db, sql: "SELECT v FROM t WHERE k IN (1, 6) ORDER BY k") == [1, 2.5])
    }

    /// A value SQLite also holds as text (once `sqlite3_column_text` asked
    /// for it) is read through the C API, and still reads as its number.
    @Test func aValueAlsoHeldAsTextReadsAsItsNumber() throws {
        let db = try Database()
        let statement = try db.makeStatement(sql: "SELECT 12, 2.5")
        let cursor = try Row.fetchCursor(statement)
        let row = try #require(try cursor.next())
        for column: Int32 in [0, 1] { _ = sqlite3_column_text(statement.sqliteStatement, column) }
        #expect(try row[0] as Int == 12)
        #expect(try row[1] as Double == 2.5)
        #expect(throws: DatabaseDecodingError.self) { try row[1] as Int }
        #expect(readColumn(Int.self, from: statement.sqliteStatement, at: 0, inPlace: true) == 12)
    }

    /// A whole REAL in a REAL column, which SQLite stores as an integer
    /// and turns back into a real when read, reads as a real for `Double`
    /// and `DatabaseValue`, and as an integer for `Int` since it is whole.
    @Test func aWholeRealStoredAsAnIntegerReadsAsAReal() throws {
        let db = try Database()
        try db.execute(sql: "CREATE TABLE t(x REAL); INSERT INTO t VALUES (3.0), (-2.0)")
        #expect(try Double.fetchAll(db, sql: "SELECT x FROM t") == [3, -2])
        #expect(try Int.fetchAll(db, sql: "SELECT x FROM t") == [3, -2])
        #expect(try Row.fetchAll(db, sql: "SELECT x, typeof(x) FROM t").map { try $0[1] as String } == ["real", "real"])
        let cursor = try Row.fetchCursor(db, sql: "SELECT x FROM t")
        while let row = try cursor.next() {
            #expect(try row[0] as DatabaseValue == .real(try row[0] as Double))
        }
    }
}
