import ArgumentParser

/// `strata`: Strata's command-line tool.
@main
struct StrataCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "strata",
        abstract: "Keep and query application data in SQLite.",
        version: "0.1.0",
        subcommands: [DemoCommand.self, SQLCommand.self]
    )
}
