import Foundation
import Strata

/// How the shell prints rows (`.mode`, `.headers`).
struct ShellOutput {
    enum Mode: String, CaseIterable {
        /// Aligned columns under a header and a rule, as `strata sql`.
        case table
        /// CSV, TSV, a JSON array of objects, or one JSON object a line:
        /// the text Strata's export writes.
        case csv, tsv, json, ndjson
        /// One `column = value` line per column, a blank line between rows.
        case line
        /// Values separated by `|`, a row a line: sqlite3's default.
        case list

        /// The names `.mode` takes, sqlite3's among them.
        init?(name: String) {
            switch name.lowercased() {
            case "column", "box": self = .table
            case "tabs": self = .tsv
            default: self.init(rawValue: name.lowercased())
            }
        }
    }

    var mode = Mode.table
    /// Whether a header names the columns (table, csv, tsv, list).
    var showsHeaders = true

    /// Runs `statement` and prints its rows.
    func write(_ statement: Statement, in db: Database) throws {
        switch mode {
        case .csv, .tsv, .json, .ndjson:
            var options = ExportOptions(format: DataFormat(rawValue: mode.rawValue)!)
            options.includesHeader = showsHeaders
            _ = try db.export(statement, to: FileHandle.standardOutput, options: options)
        case .table:
            let rows = try Row.fetchAll(statement).map(\.databaseValues)
            var table = TextTable(columns: statement.columnNames, rows: rows)
            table.showsHeader = showsHeaders
            Terminal.write(table.rendered)
        case .line, .list:
            let names = statement.columnNames
            var buffer = OutputBuffer()
            if mode == .list, showsHeaders { buffer.append(names.joined(separator: "|") + "\n") }
            let width = names.map(\.count).max() ?? 0
            let rows = try Row.fetchCursor(statement)
            var isFirst = true
            while let row = try rows.next() {
                let values = row.databaseValues.map(Self.plainText)
                if mode == .list {
                    buffer.append(values.joined(separator: "|") + "\n")
                } else {
                    if !isFirst { buffer.append("\n") }
                    for (name, value) in zip(names, values) {
                        buffer.append(String(repeating: " ", count: width - name.count) + name + " = " + value + "\n")
                    }
                }
                isFirst = false
            }
            buffer.flush()
        }
    }

    /// A value as sqlite3's list and line modes print it: NULL as nothing,
    /// text as it is, a BLOB as its SQL literal.
    static func plainText(_ value: DatabaseValue) -> String {
        switch value {
        case .null: ""
        case .integer(let integer): String(integer)
        case .real(let real): String(real)
        case .text(let text): text
        case .blob: value.description
        }
    }
}

/// Text gathered and written to standard output in pieces of 64 KB: one
/// write a row would be slow, one write a result would hold it all.
private struct OutputBuffer {
    private var text = ""

    mutating func append(_ piece: String) {
        text += piece
        if text.utf8.count >= 64 * 1024 { flush() }
    }

    mutating func flush() {
        guard !text.isEmpty else { return }
        Terminal.write(text)
        text = ""
    }
}
