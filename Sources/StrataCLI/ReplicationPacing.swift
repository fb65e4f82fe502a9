import ArgumentParser
import StrataSync

/// The options `strata replicate` and `strata sync` share: how much a
/// batch carries and how often the position is saved.
struct ReplicationPacing: ParsableArguments {
    @Option(name: .long, help: "Changes read and written per batch: documents per request and per transaction (larger batches make a first copy of many documents faster; default 500 for replicate, as CouchDB, and 2000 for sync).")
    var batchSize: Int?

    @Option(name: .long, help: "Seconds between checkpoints while batches flow (0: after every batch); catching up and the end always checkpoint.")
    var checkpointInterval = 5.0

    func validate() throws {
        if let batchSize, batchSize <= 0 { throw ValidationError("--batch-size must be positive") }
        guard checkpointInterval >= 0 else { throw ValidationError("--checkpoint-interval must not be negative") }
    }

    /// Replication options with this pacing; `defaults` gives what the
    /// command line leaves out.
    func options(_ defaults: ReplicationOptions = ReplicationOptions(), continuous: Bool = false, createTarget: Bool) -> ReplicationOptions {
        var options = defaults
        options.continuous = continuous
        options.createTarget = createTarget
        if let batchSize { options.batchSize = batchSize }
        options.checkpointInterval = .milliseconds(Int(checkpointInterval * 1000))
        return options
    }
}
