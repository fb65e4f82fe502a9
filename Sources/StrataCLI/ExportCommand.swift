import ArgumentParser
import Foundation
import Strata

/// `strata export DB (--table NAME | --sql SQL)`: writes rows as CSV, TSV,
/// JSON or NDJSON.
struct ExportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export a table or a query as CSV, TSV, JSON or NDJSON."
    )

    @OptionGroup var database: DatabaseArgument

    @Option(name: .long, help: "The table to export.")
    var table: String?

    @Option(name: .long, help: "The query to export.")
    var sql: String?

    @Option(name: .long, help: "csv, tsv, json or ndjson; by default from --output's extension, else csv.")
    var format: DataFormat?

    @Option(name: .long, help: "The file to write; standard output by default.")
    var output: String?

    func validate() throws {
        if (table == nil) == (sql == nil) {
            throw ValidationError("Give exactly one of --table and --sql.")
        }
    }

    func run() async throws {
        try await reportingErrors {
            let queue = try database.openQueue(readOnly: true, mustExist: true)
            let outputURL = output.map { URL(fileURLWithPath: $0) }
            let format = self.format ?? outputURL.flatMap { DataFormat(fileExtension: $0.pathExtension) } ?? .csv
            let sql = self.sql ?? "SELECT * FROM \(quoteIdentifier(table ?? ""))"
            var options = ExportOptions(format: format)
            if standardErrorIsTerminal {
                options.progressInterval = 50_000
                options.progress = { count in FileHandle.standardError.write(Data("\rexported \(count) rows".utf8)) }
            }
            let exportOptions = options
            let count = try await queue.read { db in
                if let outputURL {
                    return try db.export(sql: sql, to: outputURL, options: exportOptions)
                }
                return try db.export(sql: sql, to: FileHandle.standardOutput, options: exportOptions)
            }
            if standardErrorIsTerminal { FileHandle.standardError.write(Data("\n".utf8)) }
            if let outputURL {
                print("exported \(count) rows to \(outputURL.path)")
            }
        }
    }
}
