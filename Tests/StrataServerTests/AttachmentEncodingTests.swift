import CompressNIO
import Foundation
import HTTPTypes
import NIOCore
import StrataDocuments
@testable import StrataServer
import StrataTestHelpers
import Testing

/// Attachments as Apache CouchDB's own replicator sends and asks for them
/// (issue 33, ../shared/couchdb/MEASURED-DIFFERENCES.md "Replication both
/// ways"): what it pushes gzip-encoded is stored as the original bytes,
/// what it pulls comes with every attachment its target lacks, and a text
/// attachment's digest is CouchDB's. The requests are shaped as CouchDB
/// 3.4.3's replicator shapes them; zlib (CompressNIO) gzips as CouchDB does.
@Suite struct AttachmentEncodingTests {
    static func zlib(_ text: String) throws -> [UInt8] {
        var buffer = ByteBuffer(string: text)
        let configuration = ZlibConfiguration(windowSize: 15, compressionLevel: 8, memoryLevel: 8, strategy: .default)
        return Array(try buffer.compress(with: .gzip(configuration: configuration)).readableBytesView)
    }

    static func md5(_ bytes: [UInt8]) -> String { "md5-" + Data(MD5.digest(bytes)).base64EncodedString() }

    /// CouchDB's `PUT /{db}/{doc}?new_edits=false` of a replicated revision
    /// whose attachments follow the JSON.
    static func multipart(_ json: String, parts: [(name: String, type: String, bytes: [UInt8], gzip: Bool)]) -> (String, Data) {
        let boundary = "a7d4c7e1c5bd2a3f9e2f8e09c3d1f6b0"
        var body = Data("--\(boundary)\r\nContent-Type: application/json\r\n\r\n\(json)".utf8)
        for part in parts {
            body += Data("\r\n--\(boundary)\r\nContent-Disposition: attachment; filename=\"\(part.name)\"\r\nContent-Type: \(part.type)\r\nContent-Length: \(part.bytes.count)".utf8)
            if part.gzip { body += Data("\r\nContent-Encoding: gzip".utf8) }
            body += Data("\r\n\r\n".utf8) + Data(part.bytes)
        }
        body += Data("\r\n--\(boundary)--".utf8)
        return ("multipart/related; boundary=\"\(boundary)\"", body)
    }

    /// Finding 2 of MEASURED-DIFFERENCES.md "c": CouchDB's push stored gzip
    /// bytes as a text attachment's content.
    @Test func aGzipEncodedPushIsStoredAsTheOriginalBytes() async throws {
        try await RouteTableTests.withServer { (client: RawHTTPClient) async throws in
            #expect(try await client.send(.put, "/db", admin: true).status == .created)
            let text = "inline from couchdb\n"
            let gzipped = try Self.zlib(text)
            #expect(gzipped.count == 40)
            let json = #"{"_id":"c-att","_rev":"1-5b1bd0f9e7cf4f4f8b4c2e4f2f5d7a1c","_revisions":{"start":1,"ids":["5b1bd0f9e7cf4f4f8b4c2e4f2f5d7a1c"]},"#
                + #""_attachments":{"inline.txt":{"content_type":"text/plain","revpos":1,"digest":"\#(Self.md5(gzipped))","length":20,"follows":true,"encoding":"gzip","encoded_length":40},"#
                + #""raw.bin":{"content_type":"application/octet-stream","revpos":1,"digest":"\#(Self.md5([0, 1, 2, 255]))","length":4,"follows":true}}}"#
            let (type, body) = Self.multipart(json, parts: [("inline.txt", "text/plain", gzipped, true), ("raw.bin", "application/octet-stream", [0, 1, 2, 255], false)])
            let put = try await client.send(.put, "/db/c-att?new_edits=false", data: body, contentType: type)
            #expect(put.status == .created, "\(put.json?.text ?? "")")
            let plain = try await client.send(.get, "/db/c-att/inline.txt")
            #expect(String(buffer: plain.body) == text && plain.headers[.contentEncoding] == nil)
            let stub = try await client.send(.get, "/db/c-att?att_encoding_info=true").json?["_attachments"]?["inline.txt"]
            #expect(stub?["length"] == 20 && stub?["digest"] == .string(Self.md5(gzipped)) && stub?["encoding"] == "gzip" && stub?["encoded_length"] == 40)
            // To a client that takes gzip: the bytes the digest names.
            let zipped = try await client.send(.get, "/db/c-att/inline.txt", headers: [.acceptEncoding: "gzip"])
            #expect(zipped.headers[.contentEncoding] == "gzip" && Array(zipped.body.readableBytesView) == gzipped)
            #expect(Array(try await client.send(.get, "/db/c-att/raw.bin").body.readableBytesView) == [0, 1, 2, 255])
        }
    }

    @Test func whatCannotBeDecodedOrDoesNotMatchItsDigestIsRefused() async throws {
        try await RouteTableTests.withServer { (client: RawHTTPClient) async throws in
            #expect(try await client.send(.put, "/db", admin: true).status == .created)
            var gzipped = try Self.zlib("some text that will be damaged")
            let digest = Self.md5(gzipped)
            gzipped[gzipped.count - 3] ^= 0x55
            let damaged = #"{"_id":"bad","_rev":"1-aaaa","_attachments":{"t.txt":{"content_type":"text/plain","revpos":1,"digest":"\#(Self.md5(gzipped))","length":30,"follows":true,"encoding":"gzip"}}}"#
            let (type, body) = Self.multipart(damaged, parts: [("t.txt", "text/plain", gzipped, true)])
            let refused = try await client.send(.put, "/db/bad?new_edits=false", data: body, contentType: type)
            #expect(refused.status == .badRequest)
            // The bytes are not the ones their digest names.
            let mismatch = #"{"_id":"bad","_rev":"1-aaaa","_attachments":{"t.txt":{"content_type":"text/plain","revpos":1,"digest":"\#(digest)","length":30,"follows":true,"encoding":"gzip"}}}"#
            let (type2, body2) = Self.multipart(mismatch, parts: [("t.txt", "text/plain", gzipped, true)])
            let corrupt = try await client.send(.put, "/db/bad?new_edits=false", data: body2, contentType: type2)
            #expect(corrupt.status == .badRequest && corrupt.json?["error"] == "content_md5_mismatch")
            #expect(try await client.send(.get, "/db/bad").status == .notFound)
        }
    }

    /// Finding 1: CouchDB's pull asks `open_revs` with `Accept:
    /// multipart/mixed` and no `attachments=true`, and needs every
    /// attachment its target lacks as a part of its own.
    @Test func openRevisionsAnswerTheAttachmentsATargetLacks() async throws {
        try await RouteTableTests.withServer { (client: RawHTTPClient) async throws in
            #expect(try await client.send(.put, "/db", admin: true).status == .created)
            let first = try await client.send(.put, "/db/s-att/note.txt", body: "a note\n", contentType: "text/plain").json?["rev"]?.stringValue ?? ""
            let second = try await client.send(.put, "/db/s-att/big.bin?rev=\(first)", body: String(repeating: "x", count: 3000), contentType: "application/octet-stream")
                .json?["rev"]?.stringValue ?? ""
            func parts(_ query: String) async throws -> (String?, String) {
                let answer = try await client.send(.get, "/db/s-att?revs=true&latest=true&open_revs=%5B%22\(second)%22%5D" + query, headers: [.accept: "multipart/mixed"])
                return (answer.headers[.contentType], String(buffer: answer.body))
            }
            let (type, all) = try await parts("")
            #expect(type?.hasPrefix("multipart/mixed; boundary=") == true)
            #expect(all.contains("Content-Type: multipart/related; boundary="))
            // Both follow: the text one gzip-encoded, as CouchDB sends it.
            #expect(all.contains(#""big.bin":{"content_type":"application/octet-stream","revpos":2,"digest":"#) && all.contains(#""length":3000,"follows":true"#))
            #expect(all.contains(#""follows":true,"encoding":"gzip","encoded_length":"#))
            #expect(all.contains("Content-Disposition: attachment; filename=\"note.txt\"\r\nContent-Type: text/plain\r\nContent-Length: ") && all.contains("Content-Encoding: gzip"))
            #expect(all.contains(String(repeating: "x", count: 3000)))
            // Since the first revision: the note is a stub, the binary follows.
            let (_, since) = try await parts("&atts_since=%5B%22\(first)%22%5D")
            #expect(since.contains(#""note.txt":{"content_type":"text/plain","revpos":1,"#) && since.contains(#""length":7,"stub":true"#))
            #expect(since.contains(String(repeating: "x", count: 3000)) && !since.contains("filename=\"note.txt\""))
            // A revision this database lacks is CouchDB's error part.
            let missing = try await client.send(.get, "/db/s-att?open_revs=%5B%229-abc%22%5D", headers: [.accept: "multipart/mixed"])
            #expect(String(buffer: missing.body).contains("Content-Type: application/json; error=\"true\"\r\n\r\n{\"missing\":\"9-abc\"}"))
            // A client that asks for JSON gets JSON.
            let json = try await client.send(.get, "/db/s-att?open_revs=all", headers: [.accept: "application/json"])
            #expect(json.json?.arrayValue?.count == 1)
        }
    }
}
