import ArgumentParser
import Foundation
import StrataDocuments
import StrataSync

/// `strata replicate SOURCE TARGET`: CouchDB replication between two
/// databases, each a server's URL or a local file.
struct ReplicateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "replicate",
        abstract: "Copy the documents one database has and another lacks (CouchDB replication).",
        discussion: """
            SOURCE and TARGET are each a database URL (http://admin:secret@127.0.0.1:5984/voting) \
            or the path of a local file (created when missing). Both sides end with the same \
            revisions: conflicts are kept, deletions carried. A checkpoint on both sides lets \
            the next run start where this one stopped. --continuous keeps carrying new changes \
            until interrupted.
            """
    )

    @Argument(help: "Where documents come from: a database URL or a local file.")
    var source: String

    @Argument(help: "Where they go: a database URL or a local file.")
    var target: String

    @Flag(name: .long, help: "Keep running and carry each new change as it happens.")
    var continuous = false

    @Flag(name: .long, help: "Create the target database on its server when missing.")
    var createTarget = false

    @Option(name: .long, help: "Only documents a filter function passes: DESIGN/NAME (run by the source).")
    var filter: String?

    @Option(name: .long, help: "Only the documents with these ids (comma-separated).")
    var docIds: String?

    @Option(name: .long, help: "Only documents matching this Mango selector (JSON).")
    var selector: String?

    @Option(name: .long, help: "A query parameter for the filter function, NAME=VALUE (repeatable).")
    var queryParam: [String] = []

    @OptionGroup var pacing: ReplicationPacing

    func validate() throws {
        if [filter != nil, docIds != nil, selector != nil].filter({ $0 }).count > 1 {
            throw ValidationError("give at most one of --filter, --doc-ids and --selector")
        }
        if let filter, filter.split(separator: "/").count != 2 {
            throw ValidationError("--filter takes DESIGN/NAME, got '\(filter)'")
        }
    }

    func run() async throws {
        try await reportingErrors {
            var options = pacing.options(continuous: continuous, createTarget: createTarget)
            if let filter {
                var parameters: [String: String] = [:]
                for pair in queryParam {
                    guard let equals = pair.firstIndex(of: "=") else { throw ValidationError("--query-param takes NAME=VALUE, got '\(pair)'") }
                    parameters[String(pair[..<equals])] = String(pair[pair.index(after: equals)...])
                }
                options.filter = .function(filter, parameters: parameters)
            } else if let docIds {
                options.filter = .documentIDs(docIds.split(separator: ",").map(String.init))
            } else if let selector {
                do { options.filter = .selector(try JSON(parsing: selector)) } catch {
                    throw ValidationError("--selector: \(error)")
                }
            }
            let replicator = Replicator(source: try openDocumentStore(source), target: try openDocumentStore(target), options: options)
            let terminal = standardErrorIsTerminal
            let continuous = self.continuous
            let done = try await replicator.run { progress in
                let line = "read \(progress.documentsRead), written \(progress.documentsWritten), failed \(progress.documentWriteFailures)"
                    + (progress.pending.map { ", pending \($0)" } ?? "")
                if terminal {
                    FileHandle.standardError.write(Data("\r\u{1B}[K\(line)".utf8))
                } else if continuous {
                    FileHandle.standardError.write(Data((line + "\n").utf8))
                }
            }
            if terminal { FileHandle.standardError.write(Data("\n".utf8)) }
            print("replicated: \(done.documentsWritten) written, \(done.documentWriteFailures) refused by the target, "
                  + "\(done.revisionsChecked) revisions checked; last source sequence \(done.lastSequence)")
            if done.documentWriteFailures > 0 { throw ExitCode.failure }
        }
    }
}
