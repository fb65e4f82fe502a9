import Foundation
import StrataDocuments

/// Reads a `multipart/related` document body: the JSON first, then each
/// attachment marked `follows` in order.
enum MultipartRelated {
    static func document(body: [UInt8], contentType: String) throws -> JSONObject {
        guard let range = contentType.range(of: "boundary=") else { throw DocumentError(.badRequest, "multipart/related without a boundary") }
        let boundary = (contentType[range.upperBound...].split(separator: ";", omittingEmptySubsequences: false).first ?? "")
            .trimmingCharacters(in: CharacterSet(charactersIn: "\" "))
        guard !boundary.isEmpty else { throw DocumentError(.badRequest, "multipart/related with an empty boundary") }
        let parts = split(Data(body), boundary: Data("--\(boundary)".utf8))
        guard let first = parts.first else { throw DocumentError(.badRequest, "empty multipart body") }
        guard var doc = try JSON(parsing: first).objectValue else { throw DocumentError(.badRequest, "the first part must be a JSON object") }
        if var attachments = doc["_attachments"]?.objectValue {
            var rest = parts.dropFirst().makeIterator()
            for (name, value) in attachments {
                guard var o = value.objectValue, o["follows"]?.boolValue == true else { continue }
                guard let data = rest.next() else { throw DocumentError(.badRequest, "attachment \(name) does not follow") }
                o["follows"] = nil
                o["data"] = .string(data.base64EncodedString())
                attachments[name] = .object(o)
            }
            doc["_attachments"] = .object(attachments)
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
}
