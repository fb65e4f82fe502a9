import Foundation
import Strata
import StrataTestHelpers
import Testing

private enum Mood: String, DatabaseValueConvertible {
    case happy, grumpy
}

private enum Priority: Int, DatabaseValueConvertible {
    case low = 1, high = 2
}

private struct Temperature: DatabaseValueConvertible, Equatable {
    var celsius: Double
    var databaseValue: DatabaseValue { .real(celsius) }
    static func fromDatabaseValue(_ value: DatabaseValue) -> Temperature? {
        guard case .real(let celsius) = value else { return nil }
        return Temperature(celsius: celsius)
    }
}

@Suite struct DatabaseValueConvertibleTests {
    /// Stores `value` in an untyped column, reads it back through the fast
    /// path (cursor) and through `DatabaseValue` (copied row), and returns the
    /// stored value.
    @discardableResult
    func roundTrip<T: DatabaseValueConvertible & Equatable>(
        _ value: T, in db: Database, sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> DatabaseValue {
        try db.execute(sql: "DELETE FROM t")
        try db.execute(sql: "INSERT INTO t(v) VALUES (?)", arguments: [value])
        let live = try T.fetchCursor(db, sql: "SELECT v FROM t").next()
        #expect(live == value, sourceLocation: sourceLocation)
        let copied = try #require(try Row.fetchOne(db, sql: "SELECT v FROM t"), sourceLocation: sourceLocation)
        #expect(try copied["v"] as T == value, sourceLocation: sourceLocation)
        #expect(T.fromDatabaseValue(value.databaseValue) == value, sourceLocation: sourceLocation)
        return try copied.databaseValue(at: 0)
    }

    func makeDatabase(_ storage: TestStorage) throws -> Database {
        let db = try storage.makeDatabase()
        try db.execute(sql: "CREATE TABLE t(v)")  // no affinity: values stay as bound
        return db
    }

    @Test(arguments: TestStorage.allCases)
    func roundTripsEveryIntegerType(_ storage: TestStorage) throws {
        let db = try makeDatabase(storage)
        #expect(try roundTrip(Int.min, in: db) == .integer(Int64.min))
        try roundTrip(Int.max, in: db)
        try roundTrip(Int8.min, in: db)
        try roundTrip(Int16.max, in: db)
        try roundTrip(Int32.min, in: db)
        try roundTrip(Int64.max, in: db)
        try roundTrip(UInt.min, in: db)
        try roundTrip(UInt8.max, in: db)
        try roundTrip(UInt16.max, in: db)
        try roundTrip(UInt32.max, in: db)
        #expect(try roundTrip(UInt64(Int64.max), in: db) == .integer(Int64.max))
    }

    @Test func refusesToBindAnUnsignedValueBeyondInt64() throws {
        let db = try makeDatabase(.memory)
        let error = try #require(throws: SQLiteError.self) {
            try db.execute(sql: "INSERT INTO t(v) VALUES (?)", arguments: [UInt64.max])
        }
        #expect(error.code == .mismatch)
        #expect(error.message?.contains("UInt64") == true)
        #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM t") == 0)
    }

    @Test func readsWholeRealsAsIntegersButNotFractions() throws {
        let db = try Database()
        #expect(try Int.fetchOne(db, sql: "SELECT 3.0") == 3)
        #expect(throws: DatabaseDecodingError.self) { try Int.fetchOne(db, sql: "SELECT 3.5") }
        #expect(throws: DatabaseDecodingError.self) { try Int8.fetchOne(db, sql: "SELECT 1e10") }
        #expect(throws: DatabaseDecodingError.self) { try Int.fetchOne(db, sql: "SELECT '12'") }
        #expect(throws: DatabaseDecodingError.self) { try String.fetchOne(db, sql: "SELECT 12") }
    }

    @Test(arguments: TestStorage.allCases)
    func roundTripsBoolAndFloatingPoint(_ storage: TestStorage) throws {
        let db = try makeDatabase(storage)
        #expect(try roundTrip(true, in: db) == 1)
        #expect(try roundTrip(false, in: db) == 0)
        #expect(try Bool.fetchOne(db, sql: "SELECT 42") == true)
        #expect(try roundTrip(3.25, in: db) == .real(3.25))
        try roundTrip(Double.greatestFiniteMagnitude, in: db)
        try roundTrip(-0.1 as Double, in: db)
        try roundTrip(Float(1.5), in: db)
        #expect(try Double.fetchOne(db, sql: "SELECT 7") == 7.0)
    }

    @Test(arguments: TestStorage.allCases)
    func roundTripsTextAndBytes(_ storage: TestStorage) throws {
        let db = try makeDatabase(storage)
        #expect(try roundTrip("Robert'); DROP TABLE t;--", in: db) == "Robert'); DROP TABLE t;--")
        try roundTrip("héllo 🌍 \u{0}inside", in: db)
        #expect(try roundTrip("", in: db) == "")  // empty text, not NULL
        #expect(try roundTrip(Data([0, 1, 2, 255]), in: db) == .blob(Data([0, 1, 2, 255])))
        #expect(try roundTrip(Data(), in: db) == .blob(Data()))  // empty blob, not NULL
        try roundTrip([UInt8]([9, 8, 7]), in: db)
        try roundTrip([UInt8](), in: db)
        #expect(try Data.fetchOne(db, sql: "SELECT 'abc'") == Data("abc".utf8))
        #expect(try Bool.fetchOne(db, sql: "SELECT count(*) FROM t WHERE v IS NULL") == false)
    }

    @Test(arguments: TestStorage.allCases)
    func storesDatesAsUTCTextThatSQLiteDateFunctionsRead(_ storage: TestStorage) throws {
        let db = try makeDatabase(storage)
        let date = Date(timeIntervalSince1970: 1_700_000_000.123)  // 2023-11-14 22:13:20.123 UTC
        #expect(try roundTrip(date, in: db) == "2023-11-14 22:13:20.123")
        #expect(try String.fetchOne(db, sql: "SELECT datetime(v, '+1 day') FROM t") == "2023-11-15 22:13:20")
        #expect(try String.fetchOne(db, sql: "SELECT strftime('%Y-%m-%d %H:%M:%f', v) FROM t") == "2023-11-14 22:13:20.123")
        #expect(try Int.fetchOne(db, sql: "SELECT unixepoch(v) FROM t") == 1_700_000_000)
        // Dates written by SQLite read back as dates.
        #expect(try Date.fetchOne(db, sql: "SELECT datetime(?, '+1 hour')", arguments: [date])
            == Date(timeIntervalSince1970: 1_700_003_600))
        #expect(try Date.fetchOne(db, sql: "SELECT date(?)", arguments: [date]) == Date(timeIntervalSince1970: 1_699_920_000))
        #expect(try Date.fetchOne(db, sql: "SELECT unixepoch(?)", arguments: [date]) == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(try Date.fetchOne(db, sql: "SELECT '2023-11-14T22:13:20Z'") == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(try Date.fetchOne(db, sql: "SELECT '2023-11-15 00:13:20+02:00'") == Date(timeIntervalSince1970: 1_700_000_000))
        #expect(try Date.fetchOne(db, sql: "SELECT '2023-11-14 22:13'") == Date(timeIntervalSince1970: 1_699_999_980))
        // Dates before 1970 and far ahead.
        try roundTrip(Date(timeIntervalSince1970: -2_000_000_000.5), in: db)
        try roundTrip(Date(timeIntervalSince1970: 32_503_680_000), in: db)  // year 3000
        // Text that is not a date is an error, not a silent distant past.
        #expect(throws: DatabaseDecodingError.self) { try Date.fetchOne(db, sql: "SELECT 'yesterday'") }
        #expect(throws: DatabaseDecodingError.self) { try Date.fetchOne(db, sql: "SELECT '2023-02-30'") }
        #expect(throws: DatabaseDecodingError.self) { try Date.fetchOne(db, sql: "SELECT '2023-11-14 25:00'") }
    }

    @Test func datesOrderChronologicallyAsText() throws {
        let db = try makeDatabase(.memory)
        let dates = [1_000_000_000.0, 1.5, 1_700_000_000, 999_999_999.999].map(Date.init(timeIntervalSince1970:))
        for date in dates {
            try db.execute(sql: "INSERT INTO t(v) VALUES (?)", arguments: [date])
        }
        #expect(try Date.fetchAll(db, sql: "SELECT v FROM t ORDER BY v") == dates.sorted())
    }

    @Test(arguments: TestStorage.allCases)
    func roundTripsUUIDURLAndDecimal(_ storage: TestStorage) throws {
        let db = try makeDatabase(storage)
        let uuid = UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!
        #expect(try roundTrip(uuid, in: db) == "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")
        #expect(try UUID.fetchOne(db, sql: "SELECT lower(?)", arguments: [uuid]) == uuid)
        #expect(try UUID.fetchOne(db, sql: "SELECT x'E621E1F8C36C495A93FC0C247A3E6E5F'") == uuid)
        #expect(throws: DatabaseDecodingError.self) { try UUID.fetchOne(db, sql: "SELECT 'not-a-uuid'") }
        #expect(try roundTrip(URL(string: "https://www.imdb.com/title/tt0113277/")!, in: db) == "https://www.imdb.com/title/tt0113277/")
        #expect(try roundTrip(Decimal(string: "12.50")!, in: db) == "12.5")
        try roundTrip(Decimal(string: "0.1")! + Decimal(string: "0.2")!, in: db)
        #expect(try Decimal.fetchOne(db, sql: "SELECT 7") == 7)
        #expect(throws: DatabaseDecodingError.self) { try Decimal.fetchOne(db, sql: "SELECT '12abc'") }
    }

    @Test(arguments: TestStorage.allCases)
    func roundTripsOptionalsEnumsAndCustomTypes(_ storage: TestStorage) throws {
        let db = try makeDatabase(storage)
        #expect(try roundTrip(Int?.none, in: db) == .null)
        #expect(try roundTrip(Int?.some(5), in: db) == 5)
        #expect(try roundTrip(String?.some(""), in: db) == "")
        #expect(try roundTrip(Mood.grumpy, in: db) == "grumpy")
        #expect(try roundTrip(Priority.high, in: db) == 2)
        #expect(try roundTrip(Temperature(celsius: 21.5), in: db) == .real(21.5))
        #expect(try roundTrip(DatabaseValue.blob(Data([1])), in: db) == .blob(Data([1])))
        let unknown = try #require(throws: DatabaseDecodingError.self) { try Mood.fetchOne(db, sql: "SELECT 'sleepy'") }
        #expect(unknown.typeName == "Mood")
        #expect(throws: DatabaseDecodingError.self) { try Temperature.fetchOne(db, sql: "SELECT 'hot'") }
    }
}
