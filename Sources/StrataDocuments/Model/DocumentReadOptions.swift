import Foundation
import Strata

/// Options of a document read (CouchDB's query parameters of `GET /{db}/{id}`).
public struct DocumentReadOptions: Sendable {
    public var rev: String?
    public var revs = false
    public var revsInfo = false
    public var conflicts = false
    public var deletedConflicts = false
    /// Attachment contents inline (base64) instead of stubs.
    public var attachments = false
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
