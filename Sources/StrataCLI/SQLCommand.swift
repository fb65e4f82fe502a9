import ArgumentParser
import Foundation
import Strata

/// `strata sql DB SQL`: runs statements and prints the rows of the last one.
struct SQLCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sql",
        abstract: "Run one or more SQL statements and print the rows of the last one.",
        discussion: "The database file is created when missing. Use :memory: for a throwaway database."
    )

    @Argument(help: "The database file, or :memory:.")
    var database: String

    @Argument(help: "The SQL to run; several statements are separated by semicolons.")
    var sql: String

    @Flag(name: .long, help: "Open the database read-only.")
    var readOnly = false

    func validate() throws {
        if sql.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            throw ValidationError("The SQL is empty.")
        }
    }

    func run() async throws {
        var configuration = Configuration()
        configuration.isReadOnly = readOnly
        let location: DatabaseLocation = database == ":memory:" ? .inMemory : .path(database)
        let queue = try DatabaseQueue(location: location, configuration: configuration)
        let sql = self.sql
        let (columns, rows) = try await queue.writeWithoutTransaction { db -> ([String], [[DatabaseValue]]) in
            var columns: [String] = []
            var rows: [[DatabaseValue]] = []
            let statements = try db.allStatements(sql: sql)
            while let statement = try statements.next() {
                rows = try Row.fetchAll(statement).map(\.databaseValues)
                columns = statement.columnNames
            }
            return (columns, rows)
        }
        if !columns.isEmpty {
            print(TextTable(columns: columns, rows: rows).rendered, terminator: "")
        }
    }
}

/// An aligned text table: a header, a rule, then one line a row.
struct TextTable {
    var columns: [String]
    var rows: [[DatabaseValue]]

    var rendered: String {
        let cells = rows.map { $0.map(Self.text) }
        var widths = columns.map(\.count)
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
        return line(columns) + line(widths.map { String(repeating: "-", count: $0) }) + cells.map(line).joined()
    }

    static func text(_ value: DatabaseValue) -> String {
        switch value {
        case .null: "NULL"
        case .integer(let integer): String(integer)
        case .real(let real): String(real)
        case .text(let text): text
        case .blob: value.description
        }
    }
}
