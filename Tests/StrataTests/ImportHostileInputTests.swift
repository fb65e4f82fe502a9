import Foundation
import Strata
import StrataTestHelpers
import Testing

/// Files a user did not mean to hand over: wider than SQLite allows,
/// empty, with names SQLite cannot hold. Each gets a clear error at a real
/// position, and the database stays as it was.
@Suite struct ImportHostileInputTests {
    /// A header or first line of `count` fields named `name`, then one
    /// record of numbers.
    func wideFile(_ fileName: String, fields count: Int, name: (Int) -> String = { "c\($0)" }, separator: String = ",") throws -> URL {
        let header = (0..<count).map(name).joined(separator: separator)
        let values = (0..<count).map(String.init).joined(separator: separator)
        return try makeFile(fileName, header + "\n" + values + "\n")
    }

    @Test(arguments: ["csv", "tsv"])
    func aHeaderWiderThanSQLiteAllowsIsRefusedNamingTheLimit(_ format: String) throws {
        let db = try Database()
        let separator = format == "csv" ? "," : "\t"
        // SQLite's default limit: 2,000 columns fit, 2,001 do not.
        let fits = try wideFile("fits.\(format)", fields: 2000, separator: separator)
        #expect(try db.importFile(fits).rowCount == 1)
        #expect(try db.columns(in: "fits").count == 2000)

        let wide = try wideFile("wide.\(format)", fields: 100_000, separator: separator)
        let error = try #require(throws: ImportError.self) { try db.importFile(wide) }
        #expect(error.line == 1)
        #expect(error.column == 2001)
        #expect(error.message.contains("100000 fields, more than the 2000 columns SQLite allows"))
        #expect(!(try db.tableExists("wide")))
    }

    @Test func aJSONFileWithMoreKeysThanSQLiteAllowsIsRefusedAtTheKey() throws {
        let db = try Database()
        let keys = (0..<5000).map { "\"k\($0)\": \($0)" }.joined(separator: ", ")
        let file = try makeFile("wide.ndjson", "{\"a\": 1}\n{" + keys + "}\n")
        let error = try #require(throws: ImportError.self) { try db.importFile(file) }
        #expect(error.line == 2)
        #expect(error.column == nil)  // a key has no fixed position in its line
        #expect(error.columnName == "k1999")  // the 2,001st distinct key
        #expect(error.message.contains("more than 2000 distinct keys"))
        #expect(!(try db.tableExists("wide")))
    }

    @Test func namesThatDifferOnlyInCaseOrRepeatAreMadeUnique() throws {
        let db = try Database()
        let file = try makeFile("names.csv", "a,A,a_2,a,b\n1,2,3,4,5\n")
        try db.importFile(file)
        #expect(try db.columns(in: "names").map(\.name) == ["a", "A_2", "a_2_2", "a_3", "b"])
        #expect(try Row.fetchOne(db, sql: "SELECT * FROM names")?.databaseValues == [1, 2, 3, 4, 5])
        // As many identical names as SQLite allows: each gets the next free
        // suffix (a linear walk, not a search from 2 for each).
        let same = try wideFile("same.csv", fields: 2000, name: { _ in "x" })
        try db.importFile(same)
        let names = try db.columns(in: "same").map(\.name)
        #expect(names.first == "x" && names[1] == "x_2" && names.last == "x_2000")
        #expect(Set(names.map { $0.lowercased() }).count == 2000)
    }

    @Test func aFileOfBlankLinesHasNoColumns() throws {
        let db = try Database()
        try db.execute(sql: "CREATE TABLE target(a, b); INSERT INTO target VALUES (1, 2)")
        let blank = try makeFile("blank.csv", "\n\n\r\n\n")
        for mode in [ImportMode.append, .create] {
            var options = ImportOptions()
            options.mode = mode
            let error = try #require(throws: ImportError.self) {
                try db.importFile(blank, into: mode == .append ? "target" : "fresh", options: options)
            }
            #expect(error.message == "the file has no columns")
            #expect(error.description == "\(blank.path): the file has no columns")
        }
        #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM target") == 1)
        #expect(!(try db.tableExists("fresh")))
    }

    @Test func aJSONRecordMissingANotNullColumnIsReportedAtItsLine() throws {
        let db = try Database()
        try db.execute(sql: "CREATE TABLE notes(title TEXT, body TEXT NOT NULL)")
        let file = try makeFile("notes.json", "[\n{\"title\": \"a\", \"body\": \"x\"},\n{\"title\": \"b\"}\n]\n")
        let error = try #require(throws: ImportError.self) { try db.importFile(file) }
        #expect(error.line == 3)
        #expect(error.column == nil)
        #expect(error.columnName == "body")
        #expect(error.description.hasSuffix("notes.json:3: the table rejected the record: NOT NULL constraint failed: notes.body (column \"body\")"))
        #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM notes") == 0)
    }

    @Test func controlCharactersInNamesAreShownEscapedAndNULIsRefused() throws {
        let db = try Database()
        let nul = try makeFile("nul.csv", Data("x,y\0z,w\n1,2,3\n".utf8))
        let error = try #require(throws: ImportError.self) { try db.importFile(nul) }
        #expect(error.line == 1 && error.column == 2)
        #expect(error.message.contains("NUL character"))
        #expect(!(try db.tableExists("nul")))

        let jsonNul = try makeFile("nul.json", #"[{"a\u0000b": 1}]"#)
        let jsonError = try #require(throws: ImportError.self) { try db.importFile(jsonNul) }
        #expect(jsonError.message.contains("NUL character"))
        #expect(jsonError.description.contains(#"(column "a\u{0}b")"#))

        try db.execute(sql: "CREATE TABLE target(a)")
        let escape = try makeFile("escape.csv", "a,b\u{1B}[31mred\tc\n1,2\n")
        let unknown = try #require(throws: ImportError.self) { try db.importFile(escape, into: "target") }
        #expect(unknown.description.contains(#"b\u{1B}[31mred\u{9}c"#))
        #expect(!unknown.description.unicodeScalars.contains { $0.value < 0x20 })
    }
}
