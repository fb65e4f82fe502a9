import Foundation
import StrataDocuments

/// Where a replication is: CouchDB's counters.
public struct ReplicationProgress: Sendable, Equatable {
    /// Document revisions read from the source.
    public var documentsRead = 0
    /// Document revisions written to the target.
    public var documentsWritten = 0
    /// Revisions the target refused (a `validate_doc_update`, a permission).
    public var documentWriteFailures = 0
    /// Revisions asked about with `_revs_diff`.
    public var revisionsChecked = 0
    /// Of those, the ones the target lacked.
    public var revisionsMissing = 0
    /// Changes still waiting at the source after the last batch, when it says.
    public var pending: Int?
    /// The source sequence everything up to which is on the target.
    public var lastSequence = ChangeSequence.start
    /// True once a continuous replication has caught up (and after a one-shot one ends).
    public var caughtUp = false

    /// Nothing replicated yet.
    public init() {}

    /// The counts of this run and of `later`, a run after it, added; where
    /// the later run ended.
    func adding(_ later: ReplicationProgress) -> ReplicationProgress {
        var sum = later
        sum.documentsRead += documentsRead
        sum.documentsWritten += documentsWritten
        sum.documentWriteFailures += documentWriteFailures
        sum.revisionsChecked += revisionsChecked
        sum.revisionsMissing += revisionsMissing
        return sum
    }
}
