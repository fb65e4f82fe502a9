import ArgumentParser
import Foundation
import Strata

/// `strata schema DB [TABLE]`: tables, columns, indexes and foreign keys.
struct SchemaCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "schema",
        abstract: "Show the tables of a database, or one table, with columns, indexes and foreign keys."
    )

    @OptionGroup var database: DatabaseArgument

    @Argument(help: "A table to show; all tables by default.")
    var table: String?

    func run() async throws {
        try await reportingErrors {
            let queue = try database.openQueue(readOnly: true, mustExist: true)
            let table = self.table
            let text = try await queue.read { db -> String in
                let tables = try table.map { [$0] } ?? db.tableNames()
                var text = ""
                for name in tables {
                    text += "TABLE \(name)\n"
                    for column in try db.columns(in: name) {
                        var line = "  \(column.name)"
                        if !column.declaredType.isEmpty { line += " \(column.declaredType)" }
                        if column.primaryKeyIndex > 0 { line += " PRIMARY KEY" }
                        if column.isNotNull { line += " NOT NULL" }
                        if let defaultValue = column.defaultValueSQL { line += " DEFAULT \(defaultValue)" }
                        text += line + "\n"
                    }
                    for index in try db.indexes(on: name) {
                        let columns = index.columns.map { $0 ?? "<expression>" }.joined(separator: ", ")
                        text += "  \(index.isUnique ? "UNIQUE INDEX" : "INDEX") \(index.name) (\(columns))\(index.isPartial ? " WHERE …" : "")\n"
                    }
                    for key in try db.foreignKeys(on: name) {
                        let origins = key.mappings.map(\.origin).joined(separator: ", ")
                        let destinations = key.mappings.map { $0.destination ?? "<primary key>" }.joined(separator: ", ")
                        text += "  FOREIGN KEY (\(origins)) REFERENCES \(key.destinationTable) (\(destinations)) ON DELETE \(key.onDelete)\n"
                    }
                }
                return text
            }
            print(text, terminator: "")
        }
    }
}
