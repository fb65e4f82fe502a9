import Foundation
import StrataDocuments

/// How a replication runs.
public struct ReplicationOptions: Sendable {
    /// Keep running after catching up, carrying each new change as the
    /// source reports it (longpoll), until the task is cancelled.
    public var continuous = false
    /// Create the target database when it does not exist (a server's; a
    /// local store always exists).
    public var createTarget = false
    /// Only some documents.
    public var filter: ReplicationFilter?
    /// Leave design documents (`_design/…`) where they are: what a store of
    /// rows (StrataDocuments' `TableSync`) does not use, and a JavaScript
    /// `validate_doc_update` that would refuse every write on a device
    /// without a JavaScript runner. A replication that skips them keeps
    /// checkpoints of its own.
    public var skipsDesignDocuments = false
    /// Changes read per batch; each batch is written before the next
    /// (PouchDB reads 100, CouchDB 500).
    public var batchSize = 500
    /// How often progress is checkpointed while batches flow: a batch
    /// written at least this long after the last checkpoint saves one, and
    /// so does catching up and the end of a one-shot run. A replication
    /// stopped between checkpoints reads those changes again when it
    /// resumes and writes nothing twice (the target has their revisions).
    /// Zero checkpoints every batch. CouchDB's `checkpoint_interval`
    /// (30 s there).
    public var checkpointInterval: Duration = .seconds(5)
    /// How long a continuous replication's longpoll waits before asking
    /// again (PouchDB's live sync: 10 s).
    public var heartbeat: Duration = .seconds(10)
    /// Attempts of a request that failed for a transient reason (no answer,
    /// 5xx, 429) before the replication gives up. 401 and 403 are never
    /// retried.
    public var retries = 10
    /// The first wait between attempts; it doubles up to ``maximumBackoff``.
    public var initialBackoff: Duration = .milliseconds(200)
    /// The longest wait between attempts.
    public var maximumBackoff: Duration = .seconds(10)

    /// Options with the given values; the others keep their defaults.
    public init(continuous: Bool = false, createTarget: Bool = false, filter: ReplicationFilter? = nil, batchSize: Int = 500) {
        self.continuous = continuous
        self.createTarget = createTarget
        self.filter = filter
        self.batchSize = batchSize
    }
}
