import ArgumentParser
import StrataSync

/// The options `strata replicate` and `strata sync` share: how much a
/// batch carries and how often the position is saved.
struct ReplicationPacing: ParsableArguments {
    @Option(name: .long, help: "Changes read and written per batch: documents per request and per transaction (larger batches make a first copy of many documents faster).")
    var batchSize = 500

    @Option(name: .long, help: "Seconds between checkpoints while batches flow (0: after every batch); catching up and the end always checkpoint.")
    var checkpointInterval = 5.0

    func validate() throws {
        guard batchSize > 0 else { throw ValidationError("--batch-size must be positive") }
        guard checkpointInterval >= 0 else { throw ValidationError("--checkpoint-interval must not be negative") }
    }

    /// Replication options with this pacing.
    func options(continuous: Bool = false, createTarget: Bool) -> ReplicationOptions {
        var options = ReplicationOptions(continuous: continuous, createTarget: createTarget, batchSize: batchSize)
        options.checkpointInterval = .milliseconds(Int(checkpointInterval * 1000))
        return options
    }
}
