import Foundation
import Strata
import StrataTestHelpers
import Testing

@Suite struct StatementArgumentsTests {
    @Test(arguments: TestStorage.allCases)
    func bindsPositionalArgumentsFromAnArrayLiteral(_ storage: TestStorage) throws {
        let db = try storage.makeDatabase()
        try db.execute(sql: "CREATE TABLE t(a, b, c)")
        try db.execute(sql: "INSERT INTO t VALUES (?, ?, ?)", arguments: [1, "two", nil])
        let row = try #require(try Row.fetchOne(db, sql: "SELECT a, b, c FROM t"))
        #expect(row.databaseValues == [1, "two", .null])
    }

    @Test func bindsNumberedParameters() throws {
        let db = try Database()
        #expect(try Row.fetchOne(db, sql: "SELECT ?2, ?1, ?2", arguments: ["a", "b"])?.databaseValues == ["b", "a", "b"])
    }

    @Test(arguments: [":", "@", "$"])
    func bindsNamedArgumentsWithEachPrefix(_ prefix: String) throws {
        let db = try Database()
        let sql = "SELECT \(prefix)title || ' (' || \(prefix)year || ')', \(prefix)year"
        let row = try #require(try Row.fetchOne(db, sql: sql, arguments: ["title": "Heat", "year": 1995]))
        #expect(try row[0] as String == "Heat (1995)")
        #expect(try row[1] as Int == 1995)
        // A key may carry its prefix too.
        #expect(try Int.fetchOne(db, sql: "SELECT \(prefix)year", arguments: ["\(prefix)year": 7]) == 7)
    }

    @Test func bindsAnOptionalValue() throws {
        let db = try Database()
        let missing: Int? = nil
        let present: Int? = 3
        #expect(try Row.fetchOne(db, sql: "SELECT ?, ?", arguments: [missing, present])?.databaseValues == [.null, 3])
    }

    @Test func rejectsTooFewOrTooManyPositionalArguments() throws {
        let db = try Database()
        try db.execute(sql: "CREATE TABLE t(a, b)")
        let tooFew = try #require(throws: SQLiteError.self) {
            try db.execute(sql: "INSERT INTO t VALUES (?, ?)", arguments: [1])
        }
        #expect(tooFew.code == .misuse)
        #expect(tooFew.message == "wrong number of arguments: the statement expects 2, got 1")
        #expect(tooFew.sql == "INSERT INTO t VALUES (?, ?)")
        let tooMany = try #require(throws: SQLiteError.self) {
            try db.execute(sql: "INSERT INTO t VALUES (?, ?)", arguments: [1, 2, 3])
        }
        #expect(tooMany.code == .misuse)
        // Nothing was inserted by either call.
        #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM t") == 0)
        // The cached statement still works afterwards.
        try db.execute(sql: "INSERT INTO t VALUES (?, ?)", arguments: [1, 2])
        expectError(.misuse) { try db.execute(sql: "INSERT INTO t VALUES (?, ?)", arguments: [1]) }
        #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM t") == 1)
    }

    @Test func rejectsMissingAndUnknownNames() throws {
        let db = try Database()
        let missing = try #require(throws: SQLiteError.self) {
            try Row.fetchOne(db, sql: "SELECT :a, :b", arguments: ["a": 1])
        }
        #expect(missing.message == "missing argument for parameter :b")
        let unknown = try #require(throws: SQLiteError.self) {
            try Row.fetchOne(db, sql: "SELECT :a", arguments: ["a": 1, "typo": 2])
        }
        #expect(unknown.message == "unknown argument name: typo")
        let unnamed = try #require(throws: SQLiteError.self) {
            try Row.fetchOne(db, sql: "SELECT ?", arguments: ["a": 1])
        }
        #expect(unnamed.code == .misuse)
    }

    @Test func bindsNamesInAnyOrder() throws {
        let db = try Database()
        // In the statement's order, in another order, a name used twice in
        // the SQL, prefixed keys, and a later duplicate key winning.
        #expect(try Row.fetchOne(db, sql: "SELECT :a, :b", arguments: ["a": 1, "b": 2]) == Row(columnNames: [":a", ":b"], values: [1, 2]))
        #expect(try Row.fetchOne(db, sql: "SELECT :a, :b", arguments: ["b": 2, "a": 1]) == Row(columnNames: [":a", ":b"], values: [1, 2]))
        #expect(try Int.fetchOne(db, sql: "SELECT :a + :a * 10", arguments: ["a": 3]) == 33)
        #expect(try Int.fetchOne(db, sql: "SELECT @a - $b", arguments: ["$b": 1, "@a": 5]) == 4)
        #expect(try Int.fetchOne(db, sql: "SELECT :a", arguments: [":a": 1, "a": 2]) == 2)
        // A statement reused with names in changing orders.
        try db.execute(sql: "CREATE TABLE t(a, b)")
        let insert = try db.makeStatement(sql: "INSERT INTO t VALUES (:a, :b)")
        try insert.execute(arguments: ["a": 1, "b": 2])
        try insert.execute(arguments: ["b": 4, "a": 3])
        expectError(.misuse) { try insert.execute(arguments: ["a": 5, "c": 6]) }
        expectError(.misuse) { try insert.execute(arguments: ["a": 5, "b": 6, "c": 7]) }
        #expect(try Int.fetchAll(db, sql: "SELECT a * 10 + b FROM t ORDER BY a") == [12, 34])
        // A script's statements share the names.
        try db.execute(sql: "INSERT INTO t VALUES (:b, :a); INSERT INTO t VALUES (:a, 0)", arguments: ["a": 7, "b": 8])
        #expect(try Int.fetchAll(db, sql: "SELECT a * 10 + b FROM t ORDER BY a") == [12, 34, 70, 87])
        expectError(.misuse) { try db.execute(sql: "SELECT :a; SELECT :b", arguments: ["a": 1, "b": 2, "c": 3]) }
    }

    @Test func bindsAParameterPack() throws {
        let db = try Database()
        try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT UNIQUE, score REAL, data BLOB, big INTEGER)")
        let insert = try db.makeStatement(sql: "INSERT INTO t(name, score, data, big) VALUES (?, ?, ?, ?)")
        try insert.execute(binding: "a", 1.5, Data([1, 2]), UInt64(7))
        try insert.execute(binding: "b", nil as Double?, Data(), 8)
        let rows = try Row.fetchAll(db, sql: "SELECT name, score, data, big FROM t ORDER BY id")
        #expect(rows == [
            Row(columnNames: ["name", "score", "data", "big"], values: ["a", 1.5, .blob(Data([1, 2])), 7]),
            Row(columnNames: ["name", "score", "data", "big"], values: ["b", .null, .blob(Data()), 8]),
        ])
        // A wrong number of values runs nothing.
        let tooFew = try #require(throws: SQLiteError.self) { try insert.execute(binding: "c", 1.0) }
        #expect(tooFew.code == .misuse)
        #expect(tooFew.message == "wrong number of arguments: the statement expects 4, got 2")
        expectError(.misuse) { try insert.execute(binding: "c", 1.0, Data(), 1, 2) }
        // A value SQLite cannot hold, and a constraint error naming the values.
        expectError(.mismatch) { try insert.execute(binding: "c", 1.0, Data(), UInt64.max) }
        let duplicate = try #require(throws: SQLiteError.self) { try insert.execute(binding: "a", 2.0, Data(), 9) }
        #expect(duplicate.code == .constraintUnique)
        #expect(duplicate.arguments?.description == "['a', 2.0, X'', 9]")
        #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM t") == 2)
        // The statement still works with either way of binding.
        try insert.execute(binding: "c", 3.0, Data([3]), 10)
        try insert.execute(arguments: ["d", 4.0, Data([4]), 11])
        #expect(try String.fetchAll(db, sql: "SELECT name FROM t ORDER BY id") == ["a", "b", "c", "d"])
    }

    /// From one to twelve values, `execute(binding:)` has an overload per
    /// count; thirteen go through the parameter pack. Each binds every value
    /// at its own position and refuses a wrong count before running.
    @Test func bindsEveryNumberOfValues() throws {
        let db = try Database()
        try db.execute(sql: "CREATE TABLE t(n, a, b, c, d, e, f, g, h, i, j, k, l, m)")
        func insert(_ count: Int) throws -> Statement {
            let columns = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m"].prefix(count)
            return try db.makeStatement(sql: "INSERT INTO t(n, \(columns.joined(separator: ", "))) VALUES (\(count), \(Array(repeating: "?", count: count).joined(separator: ", ")))")
        }
        try insert(1).execute(binding: "a")
        try insert(2).execute(binding: "a", 2)
        try insert(3).execute(binding: "a", 2, 3.5)
        try insert(4).execute(binding: "a", 2, 3.5, Data([4]))
        try insert(5).execute(binding: "a", 2, 3.5, Data([4]), nil as Int?)
        try insert(6).execute(binding: "a", 2, 3.5, Data([4]), nil as Int?, true)
        try insert(7).execute(binding: "a", 2, 3.5, Data([4]), nil as Int?, true, Int8(7))
        try insert(8).execute(binding: "a", 2, 3.5, Data([4]), nil as Int?, true, Int8(7), "h")
        try insert(9).execute(binding: "a", 2, 3.5, Data([4]), nil as Int?, true, Int8(7), "h", 9)
        try insert(10).execute(binding: "a", 2, 3.5, Data([4]), nil as Int?, true, Int8(7), "h", 9, 10)
        try insert(11).execute(binding: "a", 2, 3.5, Data([4]), nil as Int?, true, Int8(7), "h", 9, 10, 11)
        try insert(12).execute(binding: "a", 2, 3.5, Data([4]), nil as Int?, true, Int8(7), "h", 9, 10, 11, 12)
        try insert(13).execute(binding: "a", 2, 3.5, Data([4]), nil as Int?, true, Int8(7), "h", 9, 10, 11, 12, 13)
        let expected: [DatabaseValue] = ["a", 2, 3.5, .blob(Data([4])), .null, 1, 7, "h", 9, 10, 11, 12, 13]
        for row in try Row.fetchAll(db, sql: "SELECT * FROM t ORDER BY n") {
            let count: Int = try row["n"]
            #expect(Array(row.databaseValues.dropFirst().prefix(count)) == Array(expected.prefix(count)), "\(count) values")
            #expect(row.databaseValues.dropFirst(count + 1).allSatisfy { $0 == .null }, "\(count) values")
        }
        #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM t") == 13)

        // A wrong count, for an overload and for the pack, runs nothing.
        let three = try insert(3)
        let tooFew = try #require(throws: SQLiteError.self) { try three.execute(binding: "x", 1) }
        #expect(tooFew.code == .misuse)
        #expect(tooFew.message == "wrong number of arguments: the statement expects 3, got 2")
        let tooMany = try #require(throws: SQLiteError.self) {
            try three.execute(binding: 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13)
        }
        #expect(tooMany.message == "wrong number of arguments: the statement expects 3, got 13")
        #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM t") == 13)
        // A failed run names the values.
        try db.execute(sql: "CREATE UNIQUE INDEX t_na ON t(n, a)")
        let duplicate = try #require(throws: SQLiteError.self) { try three.execute(binding: "a", 2, 3.5) }
        #expect(duplicate.code == .constraintUnique)
        #expect(duplicate.arguments?.description == "['a', 2, 3.5]")
    }

    @Test func bindsNamedValuesWithTheirTypes() throws {
        let db = try Database()
        try db.execute(sql: "CREATE TABLE movies(id INTEGER PRIMARY KEY, title TEXT UNIQUE, year INTEGER, likes INTEGER)")
        let insert = try db.makeStatement(sql: "INSERT INTO movies(title, year, likes) VALUES (:title, @year, $likes)")
        // In the statement's order, out of it, and with prefixes.
        try insert.execute(named: ("title", "Heat"), ("year", 1995), ("likes", nil as Int?))
        try insert.execute(named: ("likes", 2), ("title", "Ronin"), ("year", 1998))
        try insert.execute(named: (":title", "Alien"), ("@year", 1979), ("likes", 5))
        #expect(try Row.fetchAll(db, sql: "SELECT title, year, likes FROM movies ORDER BY id").map(\.databaseValues) == [
            ["Heat", 1995, .null], ["Ronin", 1998, 2], ["Alien", 1979, 5],
        ])

        // Wrong names run nothing, and say which.
        func refused(_ run: () throws -> Void) throws -> String {
            let error = try #require(throws: SQLiteError.self) { try run() }
            #expect(error.code == .misuse)
            return error.message ?? ""
        }
        #expect(try refused { try insert.execute(named: ("title", "X"), ("year", 1)) }
            == "missing argument for parameter $likes")
        #expect(try refused { try insert.execute(named: ("likes", 1)) }
            == "missing arguments for parameters :title, @year")
        #expect(try refused { try insert.execute(named: ("title", "X"), ("year", 1), ("likes", 1), ("stars", 4)) }
            == "unknown argument name: stars")
        #expect(try refused { try insert.execute(named: ("title", "X"), ("year", 1), ("title", "Y")) }
            == "argument title given twice")
        #expect(try refused { try insert.execute(named: ("year", 1), ("year", 2), ("likes", 3)) }
            == "argument year given twice")
        #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM movies") == 3)

        // A failed run names the values; the statement still works after.
        let duplicate = try #require(throws: SQLiteError.self) {
            try insert.execute(named: ("title", "Heat"), ("year", 2000), ("likes", 0))
        }
        #expect(duplicate.code == .constraintUnique)
        #expect(duplicate.arguments?.description == "[likes: 0, title: 'Heat', year: 2000]")
        try insert.execute(named: ("title", "Up"), ("year", 2009), ("likes", 9))
        let update = try db.makeStatement(sql: "UPDATE movies SET likes = :likes WHERE id = :id")
        try update.execute(named: ("likes", 3), ("id", 1))
        #expect(try Int.fetchOne(db, sql: "SELECT likes FROM movies WHERE id = 1") == 3)
        // Thirteen pairs go through the parameter pack, in any order.
        try db.execute(sql: "CREATE TABLE wide(s)")
        let wide = try db.makeStatement(sql: "INSERT INTO wide VALUES (:a || :b || :c || :d || :e || :f || :g || :h || :i || :j || :k || :l || :m)")
        try wide.execute(named: ("m", "m"), ("a", "a"), ("b", "b"), ("c", "c"), ("d", "d"), ("e", "e"), ("f", "f"),
                         ("g", "g"), ("h", "h"), ("i", "i"), ("j", "j"), ("k", "k"), ("l", 1))
        #expect(try String.fetchOne(db, sql: "SELECT s FROM wide") == "abcdefghijk1m")
        #expect(try refused { try wide.execute(named: ("a", 1), ("b", 2), ("c", 3), ("d", 4), ("e", 5), ("f", 6),
                                                ("g", 7), ("h", 8), ("i", 9), ("j", 10), ("k", 11), ("l", 12), ("z", 0)) }
            == "unknown argument name: z")
        // Positional parameters have no name to bind.
        let positional = try db.makeStatement(sql: "SELECT ?")
        #expect(try refused { try positional.execute(named: ("a", 1)) } == "unknown argument name: a")
    }

    /// `execute(arguments:)` binds the caller's array in place and keeps
    /// nothing: an error still names the values of its own run.
    @Test func positionalArgumentsAreNamedByTheirOwnRun() throws {
        let db = try Database()
        try db.execute(sql: "CREATE TABLE t(a UNIQUE)")
        let insert = try db.makeStatement(sql: "INSERT INTO t VALUES (?)")
        try insert.execute(arguments: [1])
        try insert.execute(arguments: [2])
        let duplicate = try #require(throws: SQLiteError.self) { try insert.execute(arguments: [1]) }
        #expect(duplicate.code == .constraintUnique)
        #expect(duplicate.arguments?.description == "[1]")
        let other = try #require(throws: SQLiteError.self) { try insert.execute(binding: 2) }
        #expect(other.arguments?.description == "[2]")
        let tooMany = try #require(throws: SQLiteError.self) { try insert.execute(arguments: [1, "a text too long to sit in its existential"]) }
        #expect(tooMany.code == .misuse)
        #expect(tooMany.arguments?.description == "[1, 'a text too long to sit in its existential']")
        expectError(.misuse) { try insert.execute(arguments: []) }
        // Named arguments take the general path, and are named too.
        let named = try db.makeStatement(sql: "INSERT INTO t VALUES (:a)")
        let namedDuplicate = try #require(throws: SQLiteError.self) { try named.execute(arguments: ["a": 2]) }
        #expect(namedDuplicate.code == .constraintUnique)
        #expect(namedDuplicate.arguments?.description == "[a: 2]")
        #expect(try Int.fetchAll(db, sql: "SELECT a FROM t ORDER BY a") == [1, 2])
        // A statement without parameters fails without arguments to name.
        try db.execute(sql: "CREATE TABLE u(a CHECK (a > 0))")
        let bad = try db.makeStatement(sql: "INSERT INTO u VALUES (0)")
        let check = try #require(throws: SQLiteError.self) { try bad.execute() }
        #expect(check.arguments == nil)
    }

    /// Values are bound where the arguments array holds them: small and
    /// large values (a large one lives in a box outside the existential),
    /// classes, and NULLs between them, by position and by name.
    @Test func bindsEveryKindOfValueInPlace() throws {
        let db = try Database()
        let big = Quadruple(a: 1, b: 2, c: 3, d: 4)
        let reference = Label(text: "ref")
        let values: StatementArguments = [nil, 1, "two", nil, 3.5, Data([4]), big, reference, nil, UUID(uuidString: "00000000-0000-0000-0000-000000000009")!]
        let row = try #require(try Row.fetchOne(db, sql: "SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?", arguments: values))
        #expect(row.databaseValues == [.null, 1, "two", .null, 3.5, .blob(Data([4])), "1,2,3,4", "ref", .null, "00000000-0000-0000-0000-000000000009"])
        let named: StatementArguments = ["a": nil, "b": big, "c": reference, "d": 7, "e": nil]
        let namedRow = try #require(try Row.fetchOne(db, sql: "SELECT :a, :b, :c, :d, :e", arguments: named))
        #expect(namedRow.databaseValues == [.null, "1,2,3,4", "ref", 7, .null])
    }

    /// Integers, 64-bit integers, reals and texts are read from the
    /// existential where it holds them (no witness call): their extremes, a
    /// text kept inline and one on the heap, and a type that is none of
    /// them but wraps one (bound by its own `bind`) arrive exactly.
    @Test func bindsTheCommonTypesReadInPlaceExactly() throws {
        let db = try Database()
        let long = "a text longer than fifteen bytes, with é and \u{1F600}"
        let values: StatementArguments = [Int.min, Int.max, Int64.min, Int64.max, -0.0, Double.greatestFiniteMagnitude, "", "short", long, Int32(-7), UInt8(200), Float(1.5)]
        let row = try #require(try Row.fetchOne(db, sql: "SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?", arguments: values))
        #expect(row.databaseValues == [.integer(.min), .integer(.max), .integer(.min), .integer(.max), .real(-0.0), .real(.greatestFiniteMagnitude),
                                       "", "short", .text(long), -7, 200, 1.5])
        let error = try #require(throws: SQLiteError.self) { try Row.fetchOne(db, sql: "SELECT ?", arguments: [UInt64.max]) }
        #expect(error.code == .mismatch)
    }

    @Test func rejectsArgumentsForAStatementWithoutParameters() throws {
        let db = try Database()
        expectError(.misuse) { try Int.fetchOne(db, sql: "SELECT 1", arguments: [1]) }
    }

    @Test func keepsArgumentsOutOfTheErrorDescription() throws {
        let db = try Database()
        try db.execute(sql: "CREATE TABLE users(email TEXT UNIQUE)")
        try db.execute(sql: "INSERT INTO users VALUES (?)", arguments: ["secret@example.com"])
        let error = try #require(throws: SQLiteError.self) {
            try db.execute(sql: "INSERT INTO users VALUES (?)", arguments: ["secret@example.com"])
        }
        #expect(!error.description.contains("secret"))
        #expect(error.description.contains("INSERT INTO users VALUES (?)"))
        #expect(error.arguments?.description == "['secret@example.com']")
        #expect(error.debugDescription.contains("secret@example.com"))
    }

    @Test func combinesAndDescribesArguments() {
        let positional: StatementArguments = [1, "it's", nil]
        #expect(positional.description == "[1, 'it''s', NULL]")
        #expect((positional + [2]).values.count == 4)
        let named: StatementArguments = ["b": 2, ":a": 1]
        #expect(named.description == "[a: 1, b: 2]")
        #expect(named.isNamed)
        #expect(StatementArguments([1, 2, 3]).values.count == 3)
        #expect(([] as StatementArguments).isEmpty)
    }
}

/// A value too large for an existential's inline buffer.
private struct Quadruple: DatabaseValueConvertible {
    var a, b, c, d: Int
    var databaseValue: DatabaseValue { .text("\(a),\(b),\(c),\(d)") }
    static func fromDatabaseValue(_ value: DatabaseValue) -> Quadruple? { nil }
}

/// A class value.
private final class Label: DatabaseValueConvertible, Sendable {
    let text: String
    init(text: String) { self.text = text }
    var databaseValue: DatabaseValue { .text(text) }
    static func fromDatabaseValue(_ value: DatabaseValue) -> Label? { nil }
}
