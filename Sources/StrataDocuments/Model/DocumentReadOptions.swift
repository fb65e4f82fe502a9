import Foundation
import Strata

/// Options of a document read (CouchDB's query parameters of `GET /{db}/{id}`).
public struct DocumentReadOptions: Sendable {
    /// This revision instead of the winner (`rev`).
    public var rev: String?
    /// The revision's ancestry in `_revisions` (`revs`).
    public var revs = false
    /// Each ancestor's availability in `_revs_info` (`revs_info`).
    public var revsInfo = false
    /// The other live leaves in `_conflicts` (`conflicts`).
    public var conflicts = false
    /// The deleted leaves in `_deleted_conflicts` (`deleted_conflicts`).
    public var deletedConflicts = false
    /// Attachment contents inline (base64) instead of stubs.
    public var attachments = false
    /// The document's update sequence in `_local_seq` (`local_seq`).
    public var localSequence = false
    /// With `rev`: the leaf that descends from it instead.
    public var latest = false
    /// Each attachment's `encoding` and `encoded_length` in its stub
    /// (`att_encoding_info=true`).
    public var attachmentEncodingInfo = false
    /// With `attachments`: only the attachments added after the newest of
    /// these revisions that the document descends from come inline, the
    /// others as stubs (`atts_since`, what a replicator's target has).
    public var attachmentsSince: [String]?
    /// The revision depth after which attachments come inline (from
    /// `attachmentsSince`, for the revision read).
    var attachmentsAfter = 0

    /// Options with the given values; the defaults are CouchDB's.
    public init(rev: String? = nil, revs: Bool = false, revsInfo: Bool = false, conflicts: Bool = false, deletedConflicts: Bool = false, attachments: Bool = false, localSequence: Bool = false, latest: Bool = false) {
        self.rev = rev
        self.revs = revs
        self.revsInfo = revsInfo
        self.conflicts = conflicts
        self.deletedConflicts = deletedConflicts
        self.attachments = attachments
        self.localSequence = localSequence
        self.latest = latest
    }
}
