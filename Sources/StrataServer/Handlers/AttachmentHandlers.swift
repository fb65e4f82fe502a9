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
    /// whatever the attachment's size.
    func read(_ db: DocumentDatabase, _ r: CouchRequest, id: String, name: String) async throws -> HTTPAnswer {
        let rev = r.query["rev"]
        let content = try await offload { try db.attachmentContent(id: id, name: name, rev: rev) }
        var headers: HTTPFields = [:]
        headers[.eTag] = "\"\(content.digest)\""
        headers[.init("Content-MD5")!] = String(content.digest.dropFirst(4))
        headers[.contentType] = content.contentType
        headers[.contentLength] = String(content.length)
        if r.method == .head { return HTTPAnswer(status: .ok, json: nil, headers: headers, stream: ResponseBody()) }
        let body = ResponseBody { writer in
            var offset = 0
            while offset < content.length {
                let start = offset
                let chunk = try await offload { try content.read(at: start, count: 256 << 10) }
                guard !chunk.isEmpty else { break }
                try await writer.write(ByteBuffer(bytes: chunk))
                offset += chunk.count
            }
            try await writer.finish(nil)
        }
        return HTTPAnswer(status: .ok, json: nil, headers: headers, stream: body)
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
