import Foundation
import Strata
import StrataTestHelpers
import Testing

@Suite struct ExportTests {
    func makeSample() throws -> Database {
        let db = try Database()
        try db.execute(sql: """
            CREATE TABLE sample(id INTEGER PRIMARY KEY, name TEXT, score REAL, note TEXT, code TEXT);
            INSERT INTO sample VALUES (1, 'plain', 1.5, NULL, '007');
            INSERT INTO sample VALUES (2, 'comma, "quote"', -0.25, '', '123');
            INSERT INTO sample VALUES (3, 'line' || char(10) || 'break' || char(9) || 'tab \\ back', 1e300, 'héllo 😀', NULL);
            """)
        return db
    }

    func exported(_ db: Database, _ format: DataFormat) throws -> String {
        let url = URL(fileURLWithPath: try makeTemporaryPath("out.\(format.rawValue)"))
        #expect(try db.export(table: "sample", to: url, options: ExportOptions(format: format)) == 3)
        return try String(contentsOf: url, encoding: .utf8)
    }

    @Test func writesCSVWithCorrectQuoting() throws {
        #expect(try exported(makeSample(), .csv) == #"""
            id,name,score,note,code
            1,plain,1.5,,007
            2,"comma, ""quote""",-0.25,"",123
            3,"line
            break\#ttab \ back",1e+300,héllo 😀,

            """#)
    }

    /// Found by FuzzCSV: a first column named with a leading U+FEFF lost it
    /// on the way back, taken for a byte order mark.
    @Test(arguments: [DataFormat.csv, .tsv])
    func textStartingWithUFEFFSurvivesAnExportAndAnImport(_ format: DataFormat) throws {
        let db = try Database()
        try db.execute(literal: "CREATE TABLE sample(\(identifier: "\u{FEFF}name") TEXT)")
        try db.execute(sql: "INSERT INTO sample VALUES ('\u{FEFF}value')")
        let url = URL(fileURLWithPath: try makeTemporaryPath("bom.\(format.rawValue)"))
        try db.export(table: "sample", to: url, options: ExportOptions(format: format))
        #expect(try Data(contentsOf: url).prefix(6) == Data([0xEF, 0xBB, 0xBF, 0xEF, 0xBB, 0xBF]))
        var options = ImportOptions()
        options.isAllText = true
        try db.importFile(url, into: "again", options: options)
        #expect(try db.columns(in: "again").map(\.name) == ["\u{FEFF}name"])
        #expect(try String.fetchAll(db, sql: "SELECT * FROM again") == ["\u{FEFF}value"])
        // Without the header, the value leads the file.
        var bare = ExportOptions(format: format)
        bare.includesHeader = false
        try db.export(table: "sample", to: url, options: bare)
        options.hasHeader = false
        try db.importFile(url, into: "bare", options: options)
        #expect(try String.fetchAll(db, sql: "SELECT * FROM bare") == ["\u{FEFF}value"])
    }

    @Test func writesTSVWithEscapes() throws {
        #expect(try exported(makeSample(), .tsv) == #"""
            id\#tname\#tscore\#tnote\#tcode
            1\#tplain\#t1.5\#t\N\#t007
            2\#tcomma, "quote"\#t-0.25\#t\#t123
            3\#tline\nbreak\ttab \\ back\#t1e+300\#théllo 😀\#t\N

            """#)
    }

    @Test func writesJSONAndNDJSON() throws {
        let db = try makeSample()
        let json = try exported(db, .json)
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]])
        #expect(parsed.count == 3)
        #expect(parsed[0]["note"] is NSNull)
        #expect(parsed[1]["name"] as? String == "comma, \"quote\"")
        #expect(parsed[2]["name"] as? String == "line\nbreak\ttab \\ back")
        #expect((parsed[0]["score"] as? NSNumber)?.doubleValue == 1.5)
        #expect(parsed[1]["code"] as? String == "123")
        let ndjson = try exported(db, .ndjson)
        #expect(ndjson.split(separator: "\n").count == 3)
        #expect(ndjson.hasPrefix(#"{"id":1,"name":"plain","score":1.5,"note":null,"code":"007"}"#))
        // An empty result is an empty array.
        let empty = URL(fileURLWithPath: try makeTemporaryPath("empty.json"))
        try db.export(sql: "SELECT * FROM sample WHERE 0", to: empty, options: ExportOptions(format: .json))
        #expect(try String(contentsOf: empty, encoding: .utf8) == "[]\n")
    }

    @Test(arguments: DataFormat.allCases)
    func exportThenImportIsLossless(_ format: DataFormat) throws {
        let db = try makeSample()
        let url = URL(fileURLWithPath: try makeTemporaryPath("roundtrip.\(format.rawValue)"))
        try db.export(table: "sample", to: url, options: ExportOptions(format: format))
        try db.execute(sql: "CREATE TABLE copy(id INTEGER PRIMARY KEY, name TEXT, score REAL, note TEXT, code TEXT)")
        try db.importFile(url, into: "copy")
        let original = try Row.fetchAll(db, sql: "SELECT * FROM sample ORDER BY id").map(\.databaseValues)
        let copy = try Row.fetchAll(db, sql: "SELECT * FROM copy ORDER BY id").map(\.databaseValues)
        #expect(copy == original)
        // Storage classes too: '007' and '123' stay TEXT, '' stays '' and NULL stays NULL.
        #expect(try String.fetchAll(db, sql: "SELECT typeof(code) || typeof(note) FROM copy ORDER BY id") == ["textnull", "texttext", "nulltext"])
    }

    @Test func reportsProgress() throws {
        let db = try Database()
        try db.execute(sql: "CREATE TABLE n(x); WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 25) INSERT INTO n SELECT x FROM c")
        let counts = CountLog()
        var options = ExportOptions(format: .ndjson)
        options.progressInterval = 10
        options.progress = { counts.append($0) }
        try db.export(table: "n", to: URL(fileURLWithPath: try makeTemporaryPath("n.ndjson")), options: options)
        #expect(counts.values == [10, 20, 25])
    }

    @Test func aFailedExportLeavesTheFileAsItWas() throws {
        let db = try makeSample()
        let url = URL(fileURLWithPath: try makeTemporaryPath("keep.csv"))
        try Data("precious".utf8).write(to: url)
        #expect(throws: SQLiteError.self) {
            try db.export(sql: "SELECT * FROM nowhere", to: url, options: ExportOptions(format: .csv))
        }
        try db.add(function: DatabaseFunction("explode", argumentCount: 1) { arguments in
            if arguments[0] == 3 { throw SQLiteError(code: .error, message: "boom") }
            return arguments[0]
        })
        #expect(throws: SQLiteError.self) {
            try db.export(sql: "SELECT explode(id) FROM sample", to: url, options: ExportOptions(format: .csv))
        }
        #expect(try String(contentsOf: url, encoding: .utf8) == "precious")
        let folder = url.deletingLastPathComponent().path
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["keep.csv"])  // no leftover temporary file
    }
}

/// Numbers collected from a progress callback.
final class CountLog: @unchecked Sendable {
    // @unchecked: `items` is only touched under `lock`.
    private let lock = NSLock()
    private var items: [Int] = []
    var values: [Int] { lock.withLock { items } }
    func append(_ value: Int) { lock.withLock { items.append(value) } }
}
