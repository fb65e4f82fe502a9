import Foundation
import Strata
import StrataTestHelpers
import Testing

/// Runs SQLite's own sqllogictest files through Strata's public API.
///
/// Format: <https://www.sqlite.org/sqllogictest/doc/trunk/about.wiki>. Records
/// are separated by blank lines: `statement ok|error` followed by SQL, or
/// `query <types> nosort|rowsort|valuesort` followed by SQL, `----`, and the
/// expected values one a line or `N values hashing to <md5>`. Values are
/// formatted as SQLite's reference runner does them.
@Suite struct SQLLogicTests {
    @Test(arguments: ["select1", "select2", "select3", "select4", "select5"])
    func passesEveryRecord(_ name: String) throws {
        let url = try #require(Bundle.module.url(forResource: name, withExtension: "test", subdirectory: "Resources/sqllogictest"))
        let script = try String(contentsOf: url, encoding: .utf8)
        let db = try Database()
        var runner = SQLLogicTestRunner(db: db)
        try runner.run(script)
        #expect(runner.failures.isEmpty, "\(runner.failures.count) failures in \(name), first: \(runner.failures.prefix(3))")
        #expect(runner.queryCount > 500)
        #expect(runner.statementCount > 0)
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

    init(db: Database) {
        self.db = db
    }

    mutating func run(_ script: String) throws {
        let lines = script.split(separator: "\n", omittingEmptySubsequences: false).map {
            $0.hasSuffix("\r") ? String($0.dropLast()) : String($0)
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
            if skip { return true }
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
            if skip { return true }
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
                failures.append("line \(line): \(error)")
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

    /// Formats a value as the reference runner does: NULL as `NULL`, integers
    /// as integers, reals with three decimals, the empty string as `(empty)`,
    /// and unprintable characters in text as `@`.
    static func format(_ value: DatabaseValue, as type: Character) -> String {
        if case .null = value { return "NULL" }
        switch type {
        case "I":
            switch value {
            case .integer(let int): return String(int)
            case .real(let double): return String(Int64(double.rounded(.towardZero)))
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
            return String(format: "%.3f", double)
        default:
            let text: String
            switch value {
            case .text(let string): text = string
            case .integer(let int): text = String(int)
            case .real(let double): text = String(double)
            case .blob(let data): text = String(decoding: data, as: UTF8.self)
            case .null: text = "NULL"
            }
            if text.isEmpty { return "(empty)" }
            return String(text.unicodeScalars.map { $0.value < 32 || $0.value > 126 ? "@" : Character($0) })
        }
    }

    /// The integer at the start of `text`, as SQLite converts TEXT to INTEGER.
    private static func leadingInteger(_ text: String) -> Int64 {
        var digits = ""
        for character in text.trimmingCharacters(in: .whitespaces) {
            if character.isNumber || (digits.isEmpty && (character == "-" || character == "+")) {
                digits.append(character)
            } else {
                break
            }
        }
        return Int64(digits) ?? 0
    }
}
