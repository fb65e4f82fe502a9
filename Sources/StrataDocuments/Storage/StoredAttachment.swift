import Foundation

/// What a revision keeps of one attachment; its content is a blob named
/// by its digest.
///
/// As CouchDB keeps it: a compressible type (`text/*`, JSON, JavaScript,
/// XML) is `gzip`-encoded, and its digest is the MD5 of the gzip form
/// (``Gzip``, zlib's bytes), while the content is kept as given (the
/// `length`) and compressed again to be sent encoded.
struct StoredAttachment {
    var contentType: String
    var digest: String
    /// The content's length.
    var length: Int
    var revpos: Int
    /// `gzip` for a compressible type (nil for content kept as it is, and
    /// for attachments written before Strata followed CouchDB here).
    var encoding: String?
    /// The gzip form's length.
    var encodedLength: Int?

    /// How it is stored in a revision's `attachments` column.
    var json: JSON {
        var o: JSONObject = ["content_type": .string(contentType), "digest": .string(digest), "length": .int(length), "revpos": .int(revpos)]
        if let encoding, let encodedLength {
            o["encoding"] = .string(encoding)
            o["encoded_length"] = .int(encodedLength)
        }
        return .object(o)
    }

    /// A stub, as a document read shows it (with `att_encoding_info`, the
    /// encoding and its length too).
    func stub(encodingInfo: Bool) -> JSON {
        var o: JSONObject = ["content_type": .string(contentType), "revpos": .int(revpos), "digest": .string(digest), "length": .int(length), "stub": .bool(true)]
        if encodingInfo { addEncoding(&o) }
        return .object(o)
    }

    /// The attachment with its content inline, base64 (as given, never
    /// encoded).
    func inline(data: Data, encodingInfo: Bool) -> JSON {
        var o: JSONObject = ["content_type": .string(contentType), "revpos": .int(revpos), "digest": .string(digest), "data": .string(data.base64EncodedString())]
        if encodingInfo { addEncoding(&o) }
        return .object(o)
    }

    private func addEncoding(_ o: inout JSONObject) {
        if let encoding, let encodedLength {
            o["encoding"] = .string(encoding)
            o["encoded_length"] = .int(encodedLength)
        }
    }

    init(contentType: String, digest: String, length: Int, revpos: Int, encoding: String? = nil, encodedLength: Int? = nil) {
        self.contentType = contentType
        self.digest = digest
        self.length = length
        self.revpos = revpos
        self.encoding = encoding
        self.encodedLength = encodedLength
    }

    init(contentType: String, content: AttachmentDigest, revpos: Int) {
        self.init(contentType: contentType, digest: content.digest, length: content.length, revpos: revpos,
                  encoding: content.encodedLength == nil ? nil : "gzip", encodedLength: content.encodedLength)
    }

    init?(_ json: JSON) {
        guard let o = json.objectValue, let digest = o["digest"]?.stringValue else { return nil }
        contentType = o["content_type"]?.stringValue ?? "application/octet-stream"
        self.digest = digest
        length = o["length"]?.intValue ?? 0
        revpos = o["revpos"]?.intValue ?? 1
        encoding = o["encoding"]?.stringValue
        encodedLength = o["encoded_length"]?.intValue
    }
}

/// A revision's attachments, in the document's order (CouchDB's: the order
/// they were given in, a new one from `PUT /{db}/{doc}/{name}` first; the
/// order goes into the revision id).
struct StoredAttachments: Sequence {
    private(set) var list: [(name: String, attachment: StoredAttachment)] = []

    init() {}

    init(_ list: [(name: String, attachment: StoredAttachment)]) { self.list = list }

    /// From a revision's `attachments` column (nil or unreadable: none).
    init(text: String?) {
        guard let text, let o = (try? JSON(parsing: text))?.objectValue else { return }
        for (name, value) in o { if let a = StoredAttachment(value) { list.append((name, a)) } }
    }

    var isEmpty: Bool { list.isEmpty }

    subscript(name: String) -> StoredAttachment? { list.first { $0.name == name }?.attachment }

    mutating func append(_ name: String, _ attachment: StoredAttachment) { list.append((name, attachment)) }

    func makeIterator() -> IndexingIterator<[(name: String, attachment: StoredAttachment)]> { list.makeIterator() }

    /// The `attachments` column's text.
    var text: String { JSON.object(JSONObject(list.map { ($0.name, $0.attachment.json) })).text }

    /// What a revision id is made of: name, type and digest, in order.
    var revisionInput: [(name: String, contentType: String, digest: String)] {
        list.map { ($0.name, $0.attachment.contentType, $0.attachment.digest) }
    }
}

/// An attachment's digest as CouchDB computes it, and its lengths.
struct AttachmentDigest: Equatable {
    var digest: String
    var length: Int
    /// The gzip form's length, for a compressible type.
    var encodedLength: Int?

    /// CouchDB's default `[attachments] compressible_types`.
    static let compressibleTypes = ["text/*", "application/javascript", "application/json", "application/xml"]

    /// Whether CouchDB stores `contentType` gzip-encoded
    /// (`couch_db:compressible_att_type`: each pattern, `*` any text, is
    /// the whole type, parameters aside, in any case).
    static func isCompressible(_ contentType: String) -> Bool {
        let essence = contentType.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        let type = essence.trimmingCharacters(in: .whitespaces).lowercased()
        return compressibleTypes.contains { pattern in
            if pattern.hasSuffix("*") { return type.hasPrefix(pattern.dropLast()) }
            return type == pattern
        }
    }

    /// Computes the digest of content given in pieces.
    final class Builder {
        private var md5 = MD5()
        private var length = 0
        private let encoder: GzipEncoder?
        private var encodedLength = 0

        init(contentType: String) {
            encoder = AttachmentDigest.isCompressible(contentType) ? GzipEncoder() : nil
        }

        func update(_ bytes: some Collection<UInt8>) {
            length += bytes.count
            if let encoder {
                let out = encoder.write(bytes)
                encodedLength += out.count
                md5.update(out)
            } else {
                md5.update(bytes)
            }
        }

        func finish() -> AttachmentDigest {
            if let encoder {
                let out = encoder.finish()
                encodedLength += out.count
                md5.update(out)
            }
            return AttachmentDigest(digest: "md5-" + Data(md5.finish()).base64EncodedString(), length: length,
                                    encodedLength: encoder == nil ? nil : encodedLength)
        }
    }

    /// The digest of `data` stored as `contentType`.
    static func of(_ data: Data, contentType: String) -> AttachmentDigest {
        let builder = Builder(contentType: contentType)
        builder.update(data)
        return builder.finish()
    }
}
