import Foundation
import HTTPTypes
import NIOCore
import Hummingbird
import StrataDocuments

/// `/{db}/{doc}/{attachment…}`: an attachment's bytes, streamed both ways.
@available(macOS 14, iOS 17, tvOS 17, *)
struct AttachmentHandlers: Sendable {
    let server: CouchServer

    func attachment(_ db: DocumentDatabase, _ r: CouchRequest) async throws -> HTTPAnswer {
        let id = r.parameters["ddoc"].map(DocumentDatabase.designID) ?? r.parameter("doc")
        let name = r.parameter("attachment")
        switch r.method {
        case .put: return try await save(db, r, id: id, name: name)
        case .delete: return try await delete(db, r, id: id, name: name)
        default: return try await read(db, r, id: id, name: name)
        }
    }

    /// Sent a chunk at a time, each read on its own: memory stays bounded
    /// whatever the attachment's size. As CouchDB sends it: the digest as
    /// ETag (`If-None-Match` with it is 304), `Content-Security-Policy:
    /// sandbox`, so HTML in an attachment never runs as this server's page;
    /// an attachment CouchDB keeps gzip-encoded goes `Content-Encoding:
    /// gzip` to a client that accepts it (the bytes its digest names) and
    /// takes no range, any other goes as it is with `Accept-Ranges: bytes`
    /// and a single byte range as 206.
    func read(_ db: DocumentDatabase, _ r: CouchRequest, id: String, name: String) async throws -> HTTPAnswer {
        let rev = r.query["rev"]
        let content = try await offload { try db.attachmentContent(id: id, name: name, rev: rev) }
        var headers: HTTPFields = [:]
        let etag = "\"\(content.digest.dropFirst(4))\""
        headers[.eTag] = etag
        if let match = r.headers[.ifNoneMatch], match.split(separator: ",").contains(where: { $0.trimmingCharacters(in: .whitespaces) == etag }) {
            return .notModified(etag: etag)
        }
        headers[.contentType] = content.contentType
        headers[.contentSecurityPolicy] = "sandbox"
        let encoded = content.encoding == "gzip"
        if encoded {
            headers[.acceptRanges] = "none"
            if Self.acceptsGzip(r) {
                headers[.contentEncoding] = "gzip"
                if let length = content.encodedLength { headers[.contentLength] = String(length) }
                if r.method == .head { return HTTPAnswer(status: .ok, json: nil, headers: headers, stream: ResponseBody { try await $0.finish(nil) }) }
                return HTTPAnswer(status: .ok, json: nil, headers: headers, stream: Self.body(content, range: 0..<content.length, gzip: true))
            }
        } else {
            // CouchDB 1 sent the digest as Content-MD5 too; clients still
            // read it (couchdb3's get_attachment).
            headers[.init("Content-MD5")!] = String(content.digest.dropFirst(4))
            headers[.acceptRanges] = "bytes"
        }
        var status = HTTPResponse.Status.ok
        var range = 0..<content.length
        if !encoded, let wanted = r.headers[.range], let asked = Self.byteRange(wanted, length: content.length) {
            guard let asked = asked else {
                headers[.contentRange] = "bytes */\(content.length)"
                return HTTPAnswer(status: .rangeNotSatisfiable, json: nil, headers: headers, stream: ResponseBody())
            }
            range = asked
            status = .partialContent
            headers[.contentRange] = "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(content.length)"
        }
        headers[.contentLength] = String(range.count)
        if r.method == .head { return HTTPAnswer(status: status, json: nil, headers: headers, stream: ResponseBody(contentLength: range.count) { try await $0.finish(nil) }) }
        return HTTPAnswer(status: status, json: nil, headers: headers, stream: Self.body(content, range: range, gzip: false))
    }

    /// Whether `Accept-Encoding` takes gzip.
    static func acceptsGzip(_ r: CouchRequest) -> Bool {
        (r.headers[.acceptEncoding] ?? "").split(separator: ",").contains { coding in
            let parts = coding.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            return (parts.first == "gzip" || parts.first == "x-gzip") && !parts.dropFirst().contains("q=0")
        }
    }

    /// The content of `range`, read a chunk at a time (gzipped as it goes).
    static func body(_ content: AttachmentContent, range: Range<Int>, gzip: Bool) -> ResponseBody {
        ResponseBody(contentLength: gzip ? content.encodedLength : range.count) { writer in
            let encoder = gzip ? GzipEncoder() : nil
            var offset = range.lowerBound
            while offset < range.upperBound {
                let start = offset
                let chunk = try await offload { try content.read(at: start, count: min(256 << 10, range.upperBound - start)) }
                guard !chunk.isEmpty else { break }
                let bytes = encoder.map { $0.write(chunk) } ?? Array(chunk)
                if !bytes.isEmpty { try await writer.write(ByteBuffer(bytes: bytes)) }
                offset += chunk.count
            }
            if let encoder { try await writer.write(ByteBuffer(bytes: encoder.finish())) }
            try await writer.finish(nil)
        }
    }

    /// The one byte range `Range: bytes=…` asks for: nil when the header is
    /// not a single range this answers (the whole content is sent, as
    /// CouchDB does for several), `.some(nil)` when it lies outside the
    /// content (416).
    static func byteRange(_ header: String, length: Int) -> Range<Int>?? {
        guard header.hasPrefix("bytes="), !header.contains(",") else { return nil }
        let spec = header.dropFirst(6).trimmingCharacters(in: .whitespaces)
        let parts = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        if parts[0].isEmpty {
            // The last N bytes.
            guard let suffix = Int(parts[1]), suffix > 0 else { return nil }
            return .some(max(0, length - suffix)..<length)
        }
        guard let from = Int(parts[0]) else { return nil }
        let to = parts[1].isEmpty ? length - 1 : min(Int(parts[1]) ?? -1, length - 1)
        guard from < length, from <= to else { return .some(nil) }
        return .some(from..<(to + 1))
    }

    func save(_ db: DocumentDatabase, _ r: CouchRequest, id: String, name: String) async throws -> HTTPAnswer {
        let rev = r.query["rev"] ?? r.headers[.ifMatch].map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
        let type = r.headers[.contentType] ?? "application/octet-stream"
        let context = r.userContext
        let result: DocumentWriteResult
        if let file = r.bodyFile {
            result = try await offload { try db.putAttachment(id: id, name: name, rev: rev, contentType: type, contentsOf: file, userContext: context) }
        } else {
            let data = Data(r.body)
            result = try await offload { try db.putAttachment(id: id, name: name, rev: rev, contentType: type, data: data, userContext: context) }
        }
        return DocumentHandlers.written(result, status: .created, r, attachment: name)
    }

    func delete(_ db: DocumentDatabase, _ r: CouchRequest, id: String, name: String) async throws -> HTTPAnswer {
        guard let rev = r.query["rev"] else { throw DocumentError.conflict }
        let context = r.userContext
        let result = try await offload { try db.deleteAttachment(id: id, name: name, rev: rev, userContext: context) }
        return DocumentHandlers.written(result, status: .ok, r)
    }
}
