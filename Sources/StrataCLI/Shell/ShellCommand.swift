import ArgumentParser
import Foundation
import Strata

/// `strata shell [FILE]`, and `strata FILE`: the sqlite3 shell on Strata's
/// connection.
struct ShellCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "shell",
        abstract: "Type SQL and dot commands at a prompt, as in the sqlite3 shell.",
        discussion: """
            Statements end with a semicolon and may span lines; each prints its rows. Enter .help for the dot \
            commands (.tables, .schema, .mode, .import, .export, .read, .timer, …). Ctrl-C stops a running \
            statement; Ctrl-D or .quit leaves. Lines typed are kept in ~/.strata_history (or in the file \
            STRATA_HISTORY names; an empty STRATA_HISTORY keeps none). Reading from a pipe or a file, the shell \
            runs the lines without prompts and exits with 1 when one failed.
            """
    )

    @Argument(help: "The database file, created when missing; a throwaway in-memory database by default.")
    var database: String = ":memory:"

    @Flag(name: .long, help: "Open the database read-only.")
    var readOnly = false

    @Flag(name: .long, help: "Stop at the first error (as .bail on).")
    var bail = false

    @Option(name: .long, help: "How rows print: table, csv, tsv, json, ndjson, line or list.")
    var mode: String = "table"

    @Flag(name: .long, inversion: .prefixedNo, help: "Name the columns above the rows.")
    var headers = true

    func validate() throws {
        // `strata NAME` opens the shell on NAME, but a mistyped command must
        // not become a new database file: without `shell`, a new file needs a
        // name that looks like one.
        let namedShell = CommandLine.arguments.dropFirst().first == "shell"
        if !namedShell, database != ":memory:", !FileManager.default.fileExists(atPath: database),
           !database.contains("."), !database.contains("/") {
            throw ValidationError("No command or file named \(database). Enter strata --help for the commands, or strata shell \(database) to make a new database.")
        }
        if ShellOutput.Mode(name: mode) == nil {
            throw ValidationError("Unknown mode \(mode): use one of \(ShellOutput.Mode.allCases.map(\.rawValue).joined(separator: ", ")).")
        }
    }

    func run() throws {
        let db: Database
        do {
            var configuration = Configuration()
            configuration.isReadOnly = readOnly
            db = try Database(location: database == ":memory:" ? .inMemory : .path(database), configuration: configuration)
        } catch {
            FileHandle.standardError.write(Data("strata: \(oneLineMessage(error))\n".utf8))
            throw ExitCode.failure
        }
        let isInteractive = Terminal.isInteractive
        let shell = Shell(db: db, path: database, isInteractive: isInteractive, historyURL: Self.historyURL)
        shell.output.mode = ShellOutput.Mode(name: mode)!
        shell.output.showsHeaders = headers
        shell.bails = bail

        // Ctrl-C: stops the running statement. A script with nothing
        // running ends, as a program does; at the prompt, the line editor
        // reads Ctrl-C as a key and never gets here.
        signal(SIGINT, SIG_IGN)
        let signals = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        signals.setEventHandler {
            if !shell.interruption.interrupt() && !isInteractive { Foundation.exit(130) }
        }
        signals.resume()
        // Killed at the prompt (raw mode) or during a statement (echo off):
        // the terminal gets its settings back before the process ends.
        let endings = [SIGTERM, SIGHUP].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                Terminal.restore()
                Foundation.exit(128 + number)
            }
            source.resume()
            return source
        }
        defer {
            signals.cancel()
            endings.forEach { $0.cancel() }
        }

        if isInteractive {
            let place = database == ":memory:" ? "a throwaway in-memory database" : database
            Terminal.write("Strata \(StrataCommand.configuration.version) shell on \(place), SQLite \(Database.sqliteVersion).\n"
                + "Enter .help for the dot commands; statements end with \";\".\n")
        }
        let code = shell.run()
        try? db.close()
        if code != 0 { throw ExitCode(code) }
    }

    /// Where the lines typed are kept: STRATA_HISTORY, else
    /// ~/.strata_history; nil (no history) when STRATA_HISTORY is empty.
    static var historyURL: URL? {
        let environment = ProcessInfo.processInfo.environment
        if let path = environment["STRATA_HISTORY"] {
            return path.isEmpty ? nil : URL(fileURLWithPath: path)
        }
        return environment["HOME"].map { URL(fileURLWithPath: $0).appendingPathComponent(".strata_history") }
    }
}
