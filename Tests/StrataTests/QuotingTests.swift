import Foundation
import Strata
import StrataTestHelpers
import Testing

/// Quotes inside names and values, found by FuzzSQLText: a quote followed by
/// a combining mark is one Swift Character, so a Character-level replacement
/// left it single and the name's text ran on as SQL.
@Suite struct QuotingTests {
    @Test func aQuoteBeforeACombiningMarkIsStillDoubled() {
        #expect(quoteIdentifier("a\"\u{0483}b") == "\"a\"\"\u{0483}b\"")
        #expect(DatabaseValue.text("it'\u{0301}s").description == "'it''\u{0301}s'")
    }

    @Test func aNameCannotEndItsQuotesWithACombiningMark() throws {
        let db = try Database()
        try db.execute(sql: "CREATE TABLE victims(id); INSERT INTO victims VALUES (1)")
        // Quoted Character by Character, this name closed its quotes and
        // dropped `victims`.
        let name = "x\"\u{0301}); DROP TABLE victims; --"
        try db.execute(literal: "CREATE TABLE \(identifier: name) (\(identifier: name) TEXT)")
        try db.execute(literal: "INSERT INTO \(identifier: name) VALUES (\(name))")
        #expect(try String.fetchAll(db, literal: "SELECT \(identifier: name) FROM \(identifier: name)") == [name])
        #expect(try db.tableExists("victims"))
        #expect(try db.tableExists(name))
        // The fuzzer's own input.
        let found = "\t#\u{FFFD}count(*) FROM (SELECT \"\u{0483}Ӭ\" FROM"
        try db.execute(literal: "CREATE TABLE \(identifier: found) (\(identifier: found) TEXT)")
        try db.run(SQLTable(found).insert(Column<String>(found) <- found))
        #expect(try String.fetchAll(db, literal: "SELECT \(identifier: found) FROM \(identifier: found)") == [found])
    }

    @Test func affinityIsReadFromBytesAsSQLiteReadsIt() throws {
        let db = try Database()
        // `CHAR` then a combining mark: SQLite sees CHAR, TEXT affinity.
        try db.execute(sql: "CREATE TABLE codes(code CHAR\u{0301})")
        let file = try makeFile("codes.csv", "code\n007\n")
        try db.importFile(file)
        #expect(try String.fetchAll(db, sql: "SELECT code FROM codes") == ["007"])
        #expect(try String.fetchAll(db, sql: "SELECT typeof(code) FROM codes") == ["text"])
    }

    @Test func namesBeginningWithACombiningMarkKeepIt() throws {
        let db = try Database()
        // A parameter name: `:` then U+0301 then `x` (one Character `:́`).
        let name = "\u{0301}x"
        try db.execute(sql: "CREATE TABLE t(a)")
        try db.execute(sql: "INSERT INTO t VALUES (:\(name))", arguments: [name: 42])
        #expect(try Int.fetchOne(db, sql: "SELECT a FROM t") == 42)
        // A record type whose table is missing is told apart from other
        // errors by the table's name in SQLite's message.
        let error = try #require(throws: SQLiteError.self) { try db.execute(literal: "SELECT * FROM \(identifier: name)") }
        #expect(error.message == "no such table: \(name)")
    }
}
