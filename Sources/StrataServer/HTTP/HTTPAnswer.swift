import Foundation
import Hummingbird
import HTTPTypes
import StrataDocuments

/// What a handler answers: a status, and JSON, raw bytes or a stream.
struct HTTPAnswer: Sendable {
    var status: HTTPResponse.Status
    var json: JSON?
    var headers: HTTPFields = [:]
    var raw: (contentType: String, data: Data)?
    var stream: ResponseBody?
    /// Whether the answer says `Cache-Control: must-revalidate` when it
    /// names no policy of its own: CouchDB's JSON answers do; a design
    /// function's rendered answer says what the function says.
    var revalidates = true

    /// Whether `value` can be sent as a header's value: no control character
    /// but tab (a CR or LF would split the response).
    static func isValidFieldValue(_ value: String) -> Bool {
        value.utf8.allSatisfy { $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }
    }
}

extension HTTPAnswer {
    /// A JSON answer.
    static func json(_ json: JSON, status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> HTTPAnswer {
        HTTPAnswer(status: status, json: json, headers: headers)
    }

    /// CouchDB's `{"ok":true}`.
    static let ok = HTTPAnswer(status: .ok, json: .object(["ok": .bool(true)]))

    /// CouchDB's 304 to a client whose copy is current (`If-None-Match`):
    /// the ETag alone, no body and no type.
    static func notModified(etag: String) -> HTTPAnswer {
        var headers: HTTPFields = [:]
        headers[.eTag] = etag
        return HTTPAnswer(status: .notModified, json: nil, headers: headers, stream: ResponseBody())
    }

    /// CouchDB's 405, listing the methods the path takes.
    static func methodNotAllowed(_ allowed: String) -> HTTPAnswer {
        var headers: HTTPFields = [:]
        headers[.allow] = allowed
        return HTTPAnswer(status: .methodNotAllowed, json: DocumentError(.methodNotAllowed, "Only \(allowed) allowed").json, headers: headers)
    }

    /// The answer as Hummingbird sends it: JSON (a line, as CouchDB ends its
    /// bodies), raw bytes or a stream, with its `Content-Type`; a `HEAD`
    /// gets the headers and the length of what a `GET` would send.
    func response(to method: HTTPRequest.Method) -> Response {
        var headers = headers
        if revalidates, status != .notModified, headers[.cacheControl] == nil { headers[.cacheControl] = "must-revalidate" }
        if let stream {
            if status != .notModified { headers[.contentType] = headers[.contentType] ?? "application/json" }
            return Response(status: status, headers: headers, body: stream)
        }
        if let raw {
            headers[.contentType] = raw.contentType
            if method == .head {
                headers[.contentLength] = String(raw.data.count)
                return Response(status: status, headers: headers, body: ResponseBody())
            }
            return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: raw.data)))
        }
        headers[.contentType] = "application/json"
        let text = (json?.text ?? "") + "\n"
        if method == .head {
            headers[.contentLength] = String(text.utf8.count)
            return Response(status: status, headers: headers, body: ResponseBody())
        }
        return Response(status: status, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
    }
}

extension HTTPAnswer {
    /// Rows as CouchDB streams a listing (`_all_docs`, views, `_find`,
    /// `_changes`): `head`, each row on a line of its own, `tail`, sent
    /// chunked a page at a time. The first page is read before the answer
    /// starts (its errors get their status); `next` reads the page after
    /// the one given, with the count of rows sent so far, and answers an
    /// empty page at the end. Memory holds one page, whatever the length.
    static func streamedRows(head: String, first: [JSON], separator: String = ",\r\n", start: String = "\r\n",
                             tail: @escaping @Sendable () async throws -> String,
                             next: @escaping @Sendable (_ last: [JSON], _ sent: Int) async throws -> [JSON]) -> HTTPAnswer {
        let body = ResponseBody { writer in
            var page = first
            var sent = 0
            try await writer.write(ByteBuffer(string: head))
            while !page.isEmpty {
                var text = ""
                for row in page {
                    text += (sent == 0 ? start : separator) + row.text
                    sent += 1
                }
                try await writer.write(ByteBuffer(string: text))
                page = try await next(page, sent)
            }
            try await writer.write(ByteBuffer(string: try await tail()))
            try await writer.finish(nil)
        }
        return HTTPAnswer(status: .ok, json: nil, stream: body)
    }
}
