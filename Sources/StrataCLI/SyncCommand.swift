import ArgumentParser
import Foundation
import Strata
import StrataDocuments
import StrataSync

/// `strata sync FILE URL --tables notes,folders`: an app's tables shared
/// with a CouchDB-protocol database.
struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Share tables of a SQLite file with a CouchDB database, both ways (rows become documents).",
        discussion: """
            Each row of the tables becomes a document (table:key), kept in the file beside the tables; the \
            documents are pushed to and pulled from URL (http://alice:secret@127.0.0.1:5984/notes-alice), and \
            the rows that arrive are written into the tables. A table needs a primary key of globally unique \
            values (UUID text, or a join table's composite key). --continuous keeps syncing each change as it \
            happens until interrupted.
            """
    )

    @Argument(help: "The SQLite file whose tables are shared.")
    var file: String

    @Argument(help: "The database URL (credentials may be in it).")
    var url: String

    @Option(name: .long, help: "The tables to share, comma-separated.")
    var tables: String

    @Option(name: .long, help: ArgumentHelp(
        "Only the rows whose documents match this Mango selector (JSON), both ways.",
        discussion: #"The table's name is the member $table, written \\$table in a selector: {"\\$table": "notes", "folder": "work"}."#))
    var selector: String?

    @OptionGroup var pacing: ReplicationPacing

    @Flag(name: .long, help: "Keep syncing each change as it happens, until interrupted.")
    var continuous = false

    @Flag(name: .long, help: "Create the database on its server when missing.")
    var createTarget = false

    func validate() throws {
        if tables.split(separator: ",").isEmpty { throw ValidationError("--tables names at least one table") }
        if !FileManager.default.fileExists(atPath: file) { throw ValidationError("No file at \(file).") }
        if let selector {
            do { _ = try JSON(parsing: selector) } catch { throw ValidationError("--selector: \(error)") }
        }
    }

    /// A line for each row that arrived and is not in its table: waiting
    /// for a row it refers to, refused by a constraint, or a document
    /// whose id is not the table's spelling of a key.
    static func rowsNotWritten(_ sync: TableSync) throws -> [String] {
        var lines: [String] = []
        for table in sync.tables.map(\.name) {
            let waiting = try sync.waitingRows(in: table)
            if !waiting.isEmpty {
                lines.append("\(table): \(waiting.count) row\(waiting.count == 1 ? "" : "s") wait for a row \(waiting.count == 1 ? "it refers" : "they refer") to: "
                             + waiting.joined(separator: ", "))
            }
            for (key, reason) in try sync.refusedRows(in: table) { lines.append("\(table): row \(key) not written: \(reason)") }
            for id in try sync.unappliedDocuments(in: table) {
                lines.append("\(table): document \(id) not applied: its id is not the table's spelling of a key")
            }
        }
        return lines
    }

    func run() async throws {
        try await reportingErrors {
            let pool = try DatabasePool(path: file)
            let sync = try TableSync(pool, tables: tables.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
            let remote = try openDocumentStore(url)
            var options = pacing.options(TableSync.defaultReplicationOptions, createTarget: createTarget)
            if let selector { options.filter = .selector(try JSON(parsing: selector)) }
            if continuous {
                if createTarget { try await remote.createIfMissing() }
                FileHandle.standardError.write(Data("syncing \(sync.tables.map(\.name).joined(separator: ", ")) with \(remote.location) until interrupted\n".utf8))
                try await sync.run(with: remote, options: options)
            } else {
                let (push, pull) = try await sync.sync(with: remote, options: options)
                print("sent \(push.documentsWritten) documents, received \(pull.documentsWritten)"
                      + (push.documentWriteFailures > 0 ? "; the server refused \(push.documentWriteFailures)" : ""))
                for line in try Self.rowsNotWritten(sync) { FileHandle.standardError.write(Data((line + "\n").utf8)) }
                if push.documentWriteFailures + pull.documentWriteFailures > 0 { throw ExitCode.failure }
            }
        }
    }
}
