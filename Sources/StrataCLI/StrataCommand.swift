import ArgumentParser
import Foundation
import Strata

/// `strata`: Strata's command-line tool.
@main
struct StrataCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strata",
        abstract: "Keep and query application data in SQLite.",
        version: "0.1.0",
        subcommands: [ShellCommand.self, DemoCommand.self, SQLCommand.self, ImportCommand.self, ExportCommand.self, SchemaCommand.self, ServeCommand.self, ReplicateCommand.self, SyncCommand.self, QueryServerCommand.self],
        // `strata FILE` opens the shell on FILE, as `sqlite3 FILE` does.
        defaultSubcommand: ShellCommand.self
    )
}

/// Runs a command's work; an error becomes one line on standard error and
/// exit code 1 (bad usage stays ArgumentParser's exit code 64).
func reportingErrors<T>(_ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch let error as ExitCode {
        throw error
    } catch {
        FileHandle.standardError.write(Data("strata: \(oneLineMessage(error))\n".utf8))
        throw ExitCode.failure
    }
}

/// An error message on one line: line breaks become spaces.
func oneLineMessage(_ error: any Error) -> String {
    // Scalars, since "\r\n" is a single Character.
    String(String.UnicodeScalarView(String(describing: error).unicodeScalars.map {
        $0 == "\r" || $0 == "\n" ? " " : $0
    }))
}

/// Whether standard error is a terminal, where progress lines belong.
var standardErrorIsTerminal: Bool {
    isatty(STDERR_FILENO) == 1
}

/// Opens a database file (or `:memory:`).
func openQueue(_ path: String, readOnly: Bool = false, mustExist: Bool = false) throws -> DatabaseQueue {
    var configuration = Configuration()
    configuration.isReadOnly = readOnly
    configuration.createsMissingFile = !mustExist
    return try DatabaseQueue(location: path == ":memory:" ? .inMemory : .path(path), configuration: configuration)
}

/// The database argument the commands that work on a file share.
struct DatabaseArgument: ParsableArguments {
    @Argument(help: "The database file (:memory: for a throwaway in-memory one).")
    var database: String

    /// Opens it; a missing file is created unless `mustExist`.
    func openQueue(readOnly: Bool = false, mustExist: Bool = false) throws -> DatabaseQueue {
        try StrataCLI.openQueue(database, readOnly: readOnly, mustExist: mustExist)
    }
}
