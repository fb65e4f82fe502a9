import ArgumentParser
import StrataJavaScript

/// `strata query-server`: the JavaScript process `strata serve` starts for
/// design-document functions. Not for people: it speaks CouchDB's
/// query-server protocol on standard input and output.
struct QueryServerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query-server",
        abstract: "Run design-document JavaScript for strata serve (CouchDB's query-server protocol on stdin/stdout).",
        shouldDisplay: false
    )

    @Option(name: .long, help: "The most memory, in megabytes, the functions may allocate.")
    var memoryLimit: Int = 256

    func validate() throws {
        guard memoryLimit > 0 else { throw ValidationError("--memory-limit must be positive") }
    }

    func run() throws {
        let status = JavaScriptQueryServer.run(memoryLimit: memoryLimit << 20)
        if status != 0 { throw ExitCode(status) }
    }
}
