import Foundation
import StrataDocuments

/// A document with its attachments as CouchDB sends and takes it in one
/// body: `multipart/related`, the JSON first, then each attachment marked
/// `follows`, in the order the JSON names them.
enum MultipartRelated {
    /// Reads a `multipart/related` document body. An attachment sent
    /// `gzip`-encoded (CouchDB's replicator sends compressible ones so) is
    /// decoded: what is stored is always the content itself. A digest that
    /// does not match the bytes received is refused, as CouchDB refuses it.
    static func document(body: [UInt8], contentType: String) throws -> JSONObject {
        guard let range = contentType.range(of: "boundary=") else { throw DocumentError(.badRequest, "multipart/related without a boundary") }
        let boundary = (contentType[range.upperBound...].split(separator: ";", omittingEmptySubsequences: false).first ?? "")
            .trimmingCharacters(in: CharacterSet(charactersIn: "\" "))
        guard !boundary.isEmpty else { throw DocumentError(.badRequest, "multipart/related with an empty boundary") }
        let parts = split(Data(body), boundary: Data("--\(boundary)".utf8))
        guard let first = parts.first else { throw DocumentError(.badRequest, "empty multipart body") }
        guard var doc = try JSON(parsing: first).objectValue else { throw DocumentError(.badRequest, "the first part must be a JSON object") }
        if let attachments = doc["_attachments"]?.objectValue {
            var rest = parts.dropFirst().makeIterator()
            var decoded: [(String, JSON)] = []
            for (name, value) in attachments {
                guard var o = value.objectValue, o["follows"]?.boolValue == true else {
                    decoded.append((name, value))
                    continue
                }
                guard let received = rest.next() else { throw DocumentError(.badRequest, "attachment \(name) does not follow") }
                if let digest = o["digest"]?.stringValue, digest.hasPrefix("md5-"),
                   "md5-" + Data(MD5.digest(received)).base64EncodedString() != digest {
                    throw DocumentError(status: 400, error: "content_md5_mismatch", reason: "Possible message corruption.")
                }
                var content = received
                switch o["encoding"]?.stringValue {
                case nil, "identity": break
                case "gzip": content = Data(try Gzip.decompress(Array(received), limit: CouchServer.maximumAttachmentSize))
                case let other?: throw DocumentError(status: 415, error: "bad_content_type", reason: "attachment \(name) has an encoding Strata cannot read: \(other)")
                }
                for key in ["follows", "encoding", "encoded_length", "length", "digest"] { o[key] = nil }
                o["data"] = .string(content.base64EncodedString())
                decoded.append((name, .object(o)))
            }
            doc["_attachments"] = .object(JSONObject(decoded))
        }
        return doc
    }

    /// The parts' contents, headers removed.
    static func split(_ data: Data, boundary: Data) -> [Data] {
        var parts: [Data] = []
        var searchStart = data.startIndex
        var ranges: [Range<Data.Index>] = []
        while let r = data.range(of: boundary, in: searchStart..<data.endIndex) {
            ranges.append(r)
            searchStart = r.upperBound
        }
        for (a, b) in zip(ranges, ranges.dropFirst()) {
            var part = data[a.upperBound..<b.lowerBound]
            if let headersEnd = part.range(of: Data("\r\n\r\n".utf8)) { part = part[headersEnd.upperBound...] }
            if part.starts(with: Data("\r\n".utf8)) { part = part.dropFirst(2) }
            if part.suffix(2) == Data("\r\n".utf8) { part = part.dropLast(2) }
            parts.append(Data(part))
        }
        return parts
    }

    /// A document read with its attachments inline (`data`), as CouchDB
    /// writes it for a replicator (`couch_doc:doc_to_multi_part_stream`):
    /// its type (`application/json` when no attachment follows) and its
    /// body. Each inline attachment follows the JSON in a part of its own,
    /// `gzip`-encoded when CouchDB keeps it so (the bytes its digest names).
    static func encode(_ document: JSONObject, boundary: String) throws -> (contentType: String, body: Data) {
        var following: [(name: String, type: String, content: Data, encoded: Bool)] = []
        var doc = document
        if let attachments = document["_attachments"]?.objectValue {
            var described: [(String, JSON)] = []
            for (name, value) in attachments {
                guard var o = value.objectValue, let text = o["data"]?.stringValue,
                      let content = Data(base64Encoded: text) else {
                    described.append((name, value))
                    continue
                }
                // CouchDB's members, in its order (couch_att:to_json).
                let encoded = o["encoding"]?.stringValue == "gzip"
                let bytes = encoded ? Data(Gzip.compress(content)) : content
                var follows: JSONObject = ["content_type": o["content_type"] ?? "application/octet-stream", "revpos": o["revpos"] ?? 1]
                if let digest = o["digest"] { follows["digest"] = digest }
                follows["length"] = .int(content.count)
                follows["follows"] = true
                if encoded {
                    follows["encoding"] = "gzip"
                    follows["encoded_length"] = .int(bytes.count)
                }
                o = follows
                described.append((name, .object(o)))
                following.append((name, o["content_type"]?.stringValue ?? "application/octet-stream", bytes, encoded))
            }
            doc["_attachments"] = .object(JSONObject(described))
        }
        let json = Data(JSON.object(doc).text.utf8)
        guard !following.isEmpty else { return ("application/json", json) }
        var body = Data("--\(boundary)\r\nContent-Type: application/json\r\n\r\n".utf8)
        body += json
        body += Data("\r\n--\(boundary)".utf8)
        for attachment in following {
            var headers = "\r\nContent-Disposition: attachment; filename=\"\(attachment.name)\"\r\nContent-Type: \(attachment.type)"
            headers += "\r\nContent-Length: \(attachment.content.count)"
            if attachment.encoded { headers += "\r\nContent-Encoding: gzip" }
            body += Data((headers + "\r\n\r\n").utf8)
            body += attachment.content
            body += Data("\r\n--\(boundary)".utf8)
        }
        body += Data("--".utf8)
        return ("multipart/related; boundary=\"\(boundary)\"", body)
    }
}
