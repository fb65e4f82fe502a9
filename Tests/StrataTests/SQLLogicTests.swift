import Foundation
import Strata
import StrataTestHelpers
// SQLite's printf, which the reference runner formats REAL values with.
#if canImport(SQLite3)
import SQLite3
#else
import CSQLite
#endif
import Testing

/// Runs SQLite's own sqllogictest files through Strata's public API, every
/// record of each.
///
/// Format: <https://www.sqlite.org/sqllogictest/doc/trunk/about.wiki>. Records
/// are separated by blank lines: `statement ok|error` followed by SQL, or
/// `query <types> nosort|rowsort|valuesort` followed by SQL, `----`, and the
/// expected values one a line or `N values hashing to <md5>`. Values are
/// formatted as SQLite's reference runner does them. Files may have LF or
/// CRLF line endings.
///
/// Runner conventions: a query that raises an error where the file expects
/// rows is a failure, reported with SQLite's error (the reference runner
/// does the same); `skipif sqlite` and `onlyif <other engine>` records are
/// counted as skipped, not run; `hash-threshold` is read and ignored (every
/// result is compared in full or by the hash the file gives).
@Suite struct SQLLogicTests {
    /// Each file with the number of `statement` and `query` records it holds
    /// (counted with `grep -c '^statement '` and `grep -c '^query '`), which
    /// the runner must account for: run or skipped, none lost to a parsing
    /// slip.
    static let files: [(name: String, statements: Int, queries: Int)] = [
        ("select1", 31, 1000), ("select2", 31, 1000), ("select3", 31, 3320), ("select4", 1025, 2832),
        ("select5", 704, 732),
        ("random_aggregates_slt_good_0", 12, 13910), ("random_expr_slt_good_0", 12, 15414),
        ("random_groupby_slt_good_0", 12, 10547), ("random_select_slt_good_0", 12, 11072),
        ("index_between_10_slt_good_1", 29, 10000), ("index_orderby_10_slt_good_0", 33, 10020),
        ("index_random_10_slt_good_0", 32, 12140), ("index_view_10_slt_good_1", 4293, 3907),
    ]

    @Test(arguments: files.map(\.name))
    func passesEveryRecord(_ name: String) throws {
        let url = try #require(Bundle.module.url(forResource: name, withExtension: "test", subdirectory: "Resources/sqllogictest"))
        let db = try Database()
        var runner = SQLLogicTestRunner(db: db)
        try runner.run(Data(contentsOf: url))
        let expected = try #require(Self.files.first { $0.name == name })
        print("sqllogictest \(name): \(runner.summary)")
        #expect(runner.failures.isEmpty, "\(runner.failures.count) failures in \(name), first: \(runner.failures.prefix(3))")
        #expect(runner.statementCount + runner.skippedStatementCount == expected.statements)
        #expect(runner.queryCount + runner.skippedQueryCount == expected.queries)
        #expect(runner.queryCount > 0 && runner.statementCount > 0, "\(name) ran no record")
    }

    @Test func crlfAndLFFilesRunTheSameRecords() throws {
        let script = "hash-threshold 8\n\nstatement ok\nCREATE TABLE t(a)\n\nquery I nosort\nSELECT 1\n----\n1\n"
        for text in [script, script.replacingOccurrences(of: "\n", with: "\r\n")] {
            var runner = SQLLogicTestRunner(db: try Database())
            try runner.run(Data(text.utf8))
            #expect(runner.statementCount == 1 && runner.queryCount == 1 && runner.failures.isEmpty, "\(runner.summary)")
        }
    }

    @Test func aScriptThatRunsNoRecordIsReported() throws {
        var runner = SQLLogicTestRunner(db: try Database())
        try runner.run(Data("hash-threshold 8\r\n".utf8))
        #expect(runner.queryCount == 0 && runner.statementCount == 0)
        #expect(runner.summary.hasPrefix("0 statements, 0 queries"))
    }

    @Test func formatsValuesAsTheReferenceRunner() throws {
        // SQLite's printf keeps 16 significant digits, then zeros (rounded
        // since SQLite 3.43, truncated before), where Foundation would print
        // every digit; the runner uses the linked SQLite's, as the reference
        // runner does.
        let minimum = SQLLogicTestRunner.format(.integer(Int64.min), as: "R")
        #expect(["-9223372036854776000.000", "-9223372036854775000.000"].contains(minimum))
        #expect(try minimum == String.fetchOne(Database(), sql: "SELECT printf('%.3f', ?)", arguments: [Double(Int64.min)]))
        #expect(SQLLogicTestRunner.format(.real(2.0 / 3.0), as: "R") == "0.667")
        #expect(SQLLogicTestRunner.format(.real(1e30), as: "I") == "9223372036854775807")
        #expect(SQLLogicTestRunner.format(.real(-1e30), as: "I") == "-9223372036854775808")
        #expect(SQLLogicTestRunner.format(.real(-7.9), as: "I") == "-7")
        #expect(SQLLogicTestRunner.format(.text(" 12abc"), as: "I") == "12")
        #expect(SQLLogicTestRunner.format(.text("99999999999999999999"), as: "I") == "9223372036854775807")
        #expect(SQLLogicTestRunner.format(.real(1.0 / 3.0), as: "T") == "0.333333333333333")
        #expect(SQLLogicTestRunner.format(.text(""), as: "T") == "(empty)")
        #expect(SQLLogicTestRunner.format(.text("a\tb"), as: "T") == "a@b")
        #expect(SQLLogicTestRunner.format(.null, as: "I") == "NULL")
    }

    @Test func runnerDetectsAWrongResult() throws {
        var runner = SQLLogicTestRunner(db: try Database())
        try runner.run("""
            statement ok
            CREATE TABLE t(a INTEGER, b TEXT)

            statement ok
            INSERT INTO t VALUES (1, ''), (2, NULL)

            query IT rowsort
            SELECT a, b FROM t
            ----
            1
            (empty)
            2
            NULL

            query I nosort
            SELECT a FROM t ORDER BY a
            ----
            2
            1

            statement error
            INSERT INTO missing VALUES (1)

            statement ok
            INSERT INTO missing VALUES (1)

            query I nosort
            SELECT a FROM t ORDER BY a
            ----
            2 values hashing to 0123456789abcdef0123456789abcdef

            skipif sqlite
            query I nosort
            SELECT 1
            ----
            2
            """)
        #expect(runner.queryCount == 3)
        #expect(runner.failures.count == 3)
    }

    @Test func md5MatchesKnownDigests() {
        #expect(MD5.hexDigest([]) == "d41d8cd98f00b204e9800998ecf8427e")
        #expect(MD5.hexDigest(Array("The quick brown fox jumps over the lazy dog".utf8)) == "9e107d9d372bb6826bd81d3542a419d6")
    }
}

struct SQLLogicTestRunner {
    let db: Database
    private(set) var failures: [String] = []
    private(set) var queryCount = 0
    private(set) var statementCount = 0
    private(set) var skippedQueryCount = 0
    private(set) var skippedStatementCount = 0

    init(db: Database) {
        self.db = db
    }

    /// What ran: `N statements, N queries run; N skipped; N failures`.
    var summary: String {
        "\(statementCount) statements, \(queryCount) queries run; "
            + "\(skippedStatementCount + skippedQueryCount) records skipped; \(failures.count) failures"
    }

    /// Runs a script given as bytes: lines end with LF or CRLF.
    mutating func run(_ script: Data) throws {
        // Split the bytes, not a String: in a String "\r\n" is a single
        // Character, which a split on "\n" never finds.
        let lines = script.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false).map { line in
            String(decoding: line.last == UInt8(ascii: "\r") ? line.dropLast() : line[...], as: UTF8.self)
        }
        var index = 0
        while index < lines.count {
            // Gather one record: the lines up to the next blank line.
            while index < lines.count && lines[index].trimmingCharacters(in: .whitespaces).isEmpty { index += 1 }
            let start = index
            var record: [String] = []
            while index < lines.count && !lines[index].trimmingCharacters(in: .whitespaces).isEmpty {
                if !lines[index].hasPrefix("#") { record.append(lines[index]) }
                index += 1
            }
            if try !runRecord(record, line: start + 1) { return }
        }
    }

    /// Runs a script given as text.
    mutating func run(_ script: String) throws {
        try run(Data(script.utf8))
    }

    /// Runs one record; false on `halt`.
    private mutating func runRecord(_ record: [String], line: Int) throws -> Bool {
        var record = record[...]
        var skip = false
        while let first = record.first, first.hasPrefix("skipif ") || first.hasPrefix("onlyif ") {
            let engine = first.split(separator: " ")[1]
            if first.hasPrefix("skipif ") && engine == "sqlite" { skip = true }
            if first.hasPrefix("onlyif ") && engine != "sqlite" { skip = true }
            record = record.dropFirst()
        }
        guard let header = record.first else { return true }
        let words = header.split(separator: " ").map(String.init)
        switch words.first {
        case "halt":
            return skip
        case "hash-threshold":
            return true
        case "statement":
            if skip {
                skippedStatementCount += 1
                return true
            }
            statementCount += 1
            let sql = record.dropFirst().joined(separator: "\n")
            var succeeded = true
            do {
                try db.execute(sql: sql)
            } catch {
                succeeded = false
                if words[1] == "ok" { failures.append("line \(line): \(error)") }
            }
            if succeeded && words[1] == "error" {
                failures.append("line \(line): statement should have failed: \(sql)")
            }
        case "query":
            if skip {
                skippedQueryCount += 1
                return true
            }
            queryCount += 1
            let types = Array(words[1])
            let sortMode = words.count > 2 ? words[2] : "nosort"
            let body = record.dropFirst()
            let separator = body.firstIndex(of: "----") ?? body.endIndex
            let sql = body[..<separator].joined(separator: "\n")
            let expected = separator < body.endIndex ? Array(body[(separator + 1)...]) : []
            do {
                let actual = try queryValues(sql, types: types, sortMode: sortMode)
                check(actual, against: expected, line: line)
            } catch {
                failures.append("line \(line): the query failed where rows were expected: \(error)")
            }
        default:
            failures.append("line \(line): unknown record \(header)")
        }
        return true
    }

    private func queryValues(_ sql: String, types: [Character], sortMode: String) throws -> [String] {
        var rows: [[String]] = []
        for row in try Row.fetchAll(db, sql: sql) {
            guard row.count == types.count else {
                throw SQLiteError(code: .error, message: "expected \(types.count) columns, got \(row.count)", sql: sql)
            }
            rows.append(try (0..<row.count).map { try Self.format(row.databaseValue(at: $0), as: types[$0]) })
        }
        switch sortMode {
        case "rowsort":
            rows.sort { $0.lexicographicallyPrecedes($1) }
            return rows.flatMap { $0 }
        case "valuesort":
            return rows.flatMap { $0 }.sorted()
        default:
            return rows.flatMap { $0 }
        }
    }

    private mutating func check(_ actual: [String], against expected: [String], line: Int) {
        if expected.count == 1, let match = expected[0].wholeMatch(of: /(\d+) values hashing to ([0-9a-f]{32})/) {
            let count = Int(match.1)!
            let hash = MD5.hexDigest(Array(actual.map { $0 + "\n" }.joined().utf8))
            if count != actual.count || hash != match.2 {
                failures.append("line \(line): got \(actual.count) values hashing to \(hash), expected \(expected[0])")
            }
        } else if actual != expected {
            failures.append("line \(line): got \(actual.prefix(10)), expected \(expected.prefix(10))")
        }
    }

    /// Formats a value as the reference runner does (`sqlite3_column_int64`,
    /// `_double` or `_text` by the declared type, printed with SQLite's
    /// printf): NULL as `NULL`, integers as integers, reals with `%.3f`
    /// (SQLite keeps 16 significant digits, then zeros), the empty string as
    /// `(empty)`, and characters outside printable ASCII in text as `@`.
    static func format(_ value: DatabaseValue, as type: Character) -> String {
        if case .null = value { return "NULL" }
        switch type {
        case "I":
            switch value {
            case .integer(let int): return String(int)
            case .real(let double): return String(saturatingInteger(double))
            case .text(let text): return String(leadingInteger(text))
            default: return "0"
            }
        case "R":
            let double: Double
            switch value {
            case .integer(let int): double = Double(int)
            case .real(let real): double = real
            case .text(let text): double = Double(text.trimmingCharacters(in: .whitespaces)) ?? 0
            default: double = 0
            }
            return sqlitePrintf("%.3f", double)
        default:
            let text = value.text ?? "NULL"  // SQLite's own conversion to TEXT
            if text.isEmpty { return "(empty)" }
            return String(text.unicodeScalars.map { $0.value < 32 || $0.value > 126 ? "@" : Character($0) })
        }
    }

    /// A REAL as `sqlite3_column_int64` gives it: truncated toward zero,
    /// saturated at the bounds of Int64.
    private static func saturatingInteger(_ double: Double) -> Int64 {
        if double.isNaN { return 0 }
        if double <= -9.223372036854775808e18 { return .min }
        if double >= 9.223372036854775808e18 { return .max }
        return Int64(double.rounded(.towardZero))
    }

    /// The integer at the start of `text`, as `sqlite3_column_int64` reads
    /// TEXT: leading spaces skipped, digits until the first other character,
    /// saturated at the bounds of Int64.
    private static func leadingInteger(_ text: String) -> Int64 {
        var utf8 = Substring(text.trimmingCharacters(in: .whitespaces)).utf8[...]
        var negative = false
        if let sign = utf8.first, sign == UInt8(ascii: "-") || sign == UInt8(ascii: "+") {
            negative = sign == UInt8(ascii: "-")
            utf8 = utf8.dropFirst()
        }
        var magnitude: UInt64 = 0
        var overflow = false
        for byte in utf8 {
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { break }
            let (times, o1) = magnitude.multipliedReportingOverflow(by: 10)
            let (plus, o2) = times.addingReportingOverflow(UInt64(byte - UInt8(ascii: "0")))
            if o1 || o2 { overflow = true; break }
            magnitude = plus
        }
        if negative {
            return overflow || magnitude > UInt64(Int64.max) + 1 ? .min : Int64(truncatingIfNeeded: 0 &- magnitude)
        }
        return overflow || magnitude > UInt64(Int64.max) ? .max : Int64(magnitude)
    }

    /// `value` printed by SQLite's printf with `format`.
    private static func sqlitePrintf(_ format: String, _ value: Double) -> String {
        var buffer = [CChar](repeating: 0, count: 400)
        let count = Int32(buffer.count)
        _ = buffer.withUnsafeMutableBufferPointer { pointer in
            withVaList([value]) { arguments in sqlite3_vsnprintf(count, pointer.baseAddress, format, arguments) }
        }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
