import ArgumentParser
import Foundation
import Strata

extension DataFormat: ExpressibleByArgument {}
extension ImportMode: ExpressibleByArgument {}

/// `strata import DB FILE`: loads a CSV, TSV, JSON or NDJSON file into a table.
struct ImportCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Import a CSV, TSV, JSON or NDJSON file into a table, in one transaction.",
        discussion: """
            The table defaults to the file's base name and the format to its extension. A missing table is \
            created with INTEGER, REAL or TEXT columns inferred from the data (or all TEXT with --text).
            """
    )

    @OptionGroup var database: DatabaseArgument

    @Argument(help: "The file to import.")
    var file: String

    @Option(name: .long, help: "The table; by default the file's base name.")
    var table: String?

    @Option(name: .long, help: "csv, tsv, json or ndjson; by default from the file's extension.")
    var format: DataFormat?

    @Option(name: .long, help: "create, append or replace.")
    var mode: ImportMode = .append

    @Flag(name: .long, help: "Make every created column TEXT.")
    var text = false

    @Flag(name: .long, help: "Skip malformed or rejected records, reporting each, instead of stopping.")
    var skipBadLines = false

    @Flag(name: .long, help: "The CSV or TSV file has no header line.")
    var noHeader = false

    func validate() throws {
        if format == nil && DataFormat(fileExtension: URL(fileURLWithPath: file).pathExtension) == nil {
            throw ValidationError("Cannot tell the format of \(file) from its extension; use --format.")
        }
    }

    func run() async throws {
        try await reportingErrors {
            var options = ImportOptions()
            options.format = format
            options.mode = mode
            options.isAllText = text
            options.skipsBadRecords = skipBadLines
            options.hasHeader = !noHeader
            if standardErrorIsTerminal {
                options.progressInterval = 50_000
                options.progress = { progress in
                    var line = "\rimported \(progress.rowCount) rows"
                    if let total = progress.totalByteCount, total > 0 {
                        line += String(format: " (%.0f%%)", Double(progress.byteCount) * 100 / Double(total))
                    }
                    FileHandle.standardError.write(Data(line.utf8))
                }
            }
            let queue = try database.openQueue()
            let url = URL(fileURLWithPath: file)
            let table = self.table
            let importOptions = options
            let result = try await queue.writeWithoutTransaction { db in
                try db.importFile(url, into: table, options: importOptions)
            }
            if standardErrorIsTerminal { FileHandle.standardError.write(Data("\n".utf8)) }
            for skipped in result.skippedRecords {
                FileHandle.standardError.write(Data("skipped \(skipped)\n".utf8))
            }
            print("imported \(result.rowCount) rows into \(result.tableName)"
                + (result.skippedRecords.isEmpty ? "" : ", skipped \(result.skippedRecords.count)"))
        }
    }
}
