import Foundation
import Strata

/// An attachment's bytes and what is known of them.
public struct Attachment: Sendable, Equatable {
    /// Its MIME type (`content_type`).
    public var contentType: String
    /// The bytes.
    public var data: Data
    /// CouchDB's digest of the bytes, `md5-` and its base64.
    public var digest: String
    /// The depth of the revision that added it (`revpos`).
    public var revpos: Int

    /// An attachment with the given values.
    public init(contentType: String, data: Data, digest: String, revpos: Int) {
        self.contentType = contentType
        self.data = data
        self.digest = digest
        self.revpos = revpos
    }
}

/// An attachment's description and a reader of its content, a range at a
/// time: from ``DocumentDatabase/attachmentContent(id:name:rev:)``.
public struct AttachmentContent: Sendable {
    /// The MIME type it was stored with.
    public var contentType: String
    /// CouchDB's digest: `md5-` and the base64 MD5 of the content.
    public var digest: String
    /// The content's size in bytes.
    public var length: Int
    /// The revision depth it was added at.
    public var revpos: Int
    /// `gzip` when CouchDB keeps it compressed (a compressible type, whose
    /// digest is of the gzip form); nil when kept as it is. The content
    /// read is always the attachment itself.
    public var encoding: String?
    /// The gzip form's length, with an `encoding`.
    public var encodedLength: Int?
    private let reader: @Sendable (Int, Int) throws -> Data

    init(contentType: String, digest: String, length: Int, revpos: Int, reader: @escaping @Sendable (Int, Int) throws -> Data) {
        self.contentType = contentType
        self.digest = digest
        self.length = length
        self.revpos = revpos
        self.reader = reader
    }

    /// Up to `count` bytes of the content from `offset` (fewer at its end),
    /// each call a short read of its own.
    ///
    /// - Throws: ``DocumentError`` `not_found` when compaction removed the
    ///   content since (no revision keeps it any more).
    public func read(at offset: Int, count: Int) throws -> Data {
        try reader(offset, count)
    }
}
