import Foundation
import Strata
import StrataTestHelpers
import Testing

/// No value is changed by an import: it is stored exactly, or the import
/// fails naming the place, the value and the way out.
@Suite struct ImportExactnessTests {
    /// IP2Location-style IPv6 ranges: decimal numbers beyond 64 bits.
    static let ipv6 = """
        start,end,country
        42540766411282592856903984951653826560,42540766411282592875350729025363378175,US
        42540766411282592875350729025363378176,42540766411282592893797473099072929791,FR

        """

    @Test func aColumnOfIntegersBeyond64BitsIsTextAndKeepsEveryDigit() throws {
        let db = try Database()
        try db.importFile(try makeFile("ranges.csv", Self.ipv6))
        #expect(try db.columns(in: "ranges").map(\.declaredType) == ["TEXT", "TEXT", "TEXT"])
        #expect(try String.fetchAll(db, sql: "SELECT start FROM ranges") == [
            "42540766411282592856903984951653826560", "42540766411282592875350729025363378176",
        ])
        // Neighbouring ranges stay apart: a lookup matches one.
        #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM ranges WHERE start = ?", arguments: ["42540766411282592875350729025363378176"]) == 1)
    }

    @Test func aValueAfterTheSampleThatANumberColumnWouldChangeFailsTheImport() throws {
        let db = try Database()
        let file = try makeFile("late.csv", "id,amount\n1,10\n2,20\n3,12345678901234567890123\n")
        var options = ImportOptions()
        options.sampleSize = 2
        let error = try #require(throws: ImportError.self) { try db.importFile(file, options: options) }
        #expect(error.line == 4 && error.column == 2 && error.columnName == "amount")
        #expect(error.message.contains("12345678901234567890123"))
        #expect(error.message.contains("--text"))
        #expect(try !db.tableExists("late"))  // the import left nothing behind
        // The way out the message gives works.
        options.isAllText = true
        try db.importFile(file, options: options)
        #expect(try String.fetchOne(db, sql: "SELECT amount FROM late WHERE id = '3'") == "12345678901234567890123")
    }

    @Test func anExistingNumberColumnRefusesTextItWouldRoundAndKeepsWhatItStoresExactly() throws {
        let db = try Database()
        try db.execute(sql: "CREATE TABLE m(a INTEGER, r REAL, n NUMERIC, flag BOOLEAN, t TEXT); INSERT INTO m VALUES (0, 0, 0, 0, 'existing')")
        // What SQLite's affinity keeps exactly goes in as numbers.
        try db.importFile(try makeFile("m.csv", "a,r,n,flag,t\n007,1.50,+12,1,0001\n 8 ,2e3,0.1,0,12345678901234567890123\n"))
        #expect(try Row.fetchAll(db, sql: "SELECT a, r, n, flag, t FROM m WHERE t != 'existing'").map(\.databaseValues) == [
            [7, 1.5, 12, 1, "0001"], [8, 2000.0, 0.1, 0, "12345678901234567890123"],
        ])
        // What it would round fails, naming the place; nothing of the file is kept.
        for (line, expectedColumn) in [("99999999999999999999,1,1,1,x", 1), ("1,9007199254740993,1,1,x", 2), ("1,1,3.14159265358979323846,1,x", 3), ("1,1,1,1e999,x", 4)] {
            let file = try makeFile("m.csv", "a,r,n,flag,t\n1,1,1,1,ok\n" + line + "\n")
            let error = try #require(throws: ImportError.self) { try db.importFile(file) }
            #expect(error.line == 3 && error.column == expectedColumn, "\(line): \(error)")
        }
        #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM m") == 3)
    }

    @Test func jsonNumbersKeepEveryDigit() throws {
        let db = try Database()
        let file = try makeFile("j.json", #"[{"id":1,"big":42540766411282592856903984951653826560,"ratio":0.1,"precise":3.14159265358979323846}]"#)
        try db.importFile(file)
        #expect(try db.columns(in: "j").map(\.declaredType) == ["INTEGER", "TEXT", "REAL", "TEXT"])
        #expect(try Row.fetchAll(db, sql: "SELECT big, ratio, precise FROM j").map(\.databaseValues) == [
            ["42540766411282592856903984951653826560", 0.1, "3.14159265358979323846"],
        ])
    }

    @Test func jsonKeysThatDifferOnlyInCaseKeepBothValues() throws {
        let db = try Database()
        try db.importFile(try makeFile("keys.json", #"[{"a":1,"A":2},{"A":4,"a":3}]"#))
        #expect(try db.columns(in: "keys").map(\.name) == ["a", "A_2"])
        #expect(try Row.fetchAll(db, sql: "SELECT a, A_2 FROM keys").map(\.databaseValues) == [[1, 2], [3, 4]])
        // Into a table with one column for both, the import fails instead.
        try db.execute(sql: "CREATE TABLE one(a INTEGER)")
        let error = try #require(throws: ImportError.self) {
            try db.importFile(try makeFile("one.json", #"[{"a":1,"A":2}]"#), into: "one")
        }
        #expect(error.message.contains("both name the column"))
        #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM one") == 0)
        // A key twice in one object would lose a value too.
        let twice = try #require(throws: ImportError.self) {
            try db.importFile(try makeFile("twice.json", #"[{"a":1,"a":2}]"#), into: "one")
        }
        #expect(twice.message.contains("appears twice"))
    }

    /// SQLite's refusal reaches the caller with the statement that failed.
    @Test func aRejectedRecordsErrorCarriesTheSQL() throws {
        let db = try Database()
        try db.execute(sql: "CREATE TABLE people(name TEXT NOT NULL, age INT)")
        let error = try #require(throws: ImportError.self) {
            try db.importFile(try makeFile("people.csv", "name,age\nann,30\n,40\n"), into: "people")
        }
        #expect(error.line == 3 && error.columnName == "name")
        #expect(error.underlyingError?.code == .constraintNotNull)
        #expect(error.underlyingError?.sql == #"INSERT INTO "people" ("name", "age") VALUES (?, ?)"#)
        #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM people") == 0)
    }
}
