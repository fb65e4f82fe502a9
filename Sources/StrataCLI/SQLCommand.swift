import ArgumentParser
import Foundation
import Strata

/// The output formats of `strata sql` and `strata export`.
enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case table, csv, tsv, json, ndjson

    var dataFormat: DataFormat? { DataFormat(rawValue: rawValue) }
}

/// `strata sql DB SQL`: runs statements and prints the rows of the last one.
struct SQLCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sql",
        abstract: "Run one or more SQL statements and print the rows of the last one.",
        discussion: "The database file is created when missing. Use :memory: for a throwaway database."
    )

    @OptionGroup var database: DatabaseArgument

    @Argument(help: "The SQL to run; several statements are separated by semicolons.")
    var sql: String

    @Option(name: .long, help: "The output format: table, csv, tsv, json or ndjson.")
    var format: OutputFormat = .table

    @Flag(name: .long, help: "Open the database read-only.")
    var readOnly = false

    @Option(name: .long, help: ArgumentHelp(
        "Stop the SQL when it has run this many seconds (decimals allowed).", valueName: "seconds"))
    var timeLimit: Double?

    func validate() throws {
        if sql.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            throw ValidationError("The SQL is empty.")
        }
        if let timeLimit, !(timeLimit > 0 && timeLimit.isFinite) {
            throw ValidationError("The time limit must be a positive number of seconds.")
        }
    }

    func run() async throws {
        try await reportingErrors {
            let queue = try database.openQueue(readOnly: readOnly)
            let sql = self.sql
            let format = self.format
            let limit = timeLimit.map { Duration.milliseconds(Int64(($0 * 1000).rounded(.up))) }
            try await queue.writeWithoutTransaction { db in
                guard let limit else { return try Self.run(sql, format: format, in: db) }
                try db.withTimeLimit(limit) { try Self.run(sql, format: format, in: db) }
            }
        }
    }

    /// Runs the statements and prints the rows of the last one.
    private static func run(_ sql: String, format: OutputFormat, in db: Database) throws {
        let statements = try db.allStatements(sql: sql)
        while let statement = try statements.next() {
            guard try statements.isAtEnd else {
                try statement.execute()
                continue
            }
            // The last statement: print its rows.
            if let dataFormat = format.dataFormat {
                if statement.columnCount > 0 {
                    try db.export(statement, to: FileHandle.standardOutput, options: ExportOptions(format: dataFormat))
                } else {
                    try statement.execute()
                }
            } else {
                let rows = try Row.fetchAll(statement).map(\.databaseValues)
                if statement.columnCount > 0 {
                    FileHandle.standardOutput.write(Data(TextTable(columns: statement.columnNames, rows: rows).rendered.utf8))
                }
            }
        }
    }
}

/// An aligned text table: a header, a rule, then one line a row.
struct TextTable {
    var columns: [String]
    var rows: [[DatabaseValue]]
    /// Whether the header and its rule come first.
    var showsHeader = true

    var rendered: String {
        let cells = rows.map { $0.map(Self.text) }
        var widths = showsHeader ? columns.map(\.count) : columns.map { _ in 0 }
        for row in cells {
            for (index, cell) in row.enumerated() {
                widths[index] = max(widths[index], cell.count)
            }
        }
        func line(_ values: [String]) -> String {
            zip(values, widths).map { value, width in
                value + String(repeating: " ", count: width - value.count)
            }.joined(separator: "  ").replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression) + "\n"
        }
        let header = showsHeader ? line(columns) + line(widths.map { String(repeating: "-", count: $0) }) : ""
        return header + cells.map(line).joined()
    }

    static func text(_ value: DatabaseValue) -> String {
        switch value {
        case .null: "NULL"
        case .integer(let integer): String(integer)
        case .real(let real): String(real)
        case .text(let text): text.replacingOccurrences(of: "\n", with: "\\n")
        case .blob: value.description
        }
    }
}
