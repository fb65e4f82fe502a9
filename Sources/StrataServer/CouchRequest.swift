import Foundation
import Hummingbird
import HTTPTypes
import StrataDocuments

/// A request as the handlers see it: path segments decoded, query
/// parameters, the body, and who is asking.
struct CouchRequest: Sendable {
    var method: HTTPRequest.Method
    var segments: [String]
    var query: [String: String]
    var headers: HTTPFields
    var body: [UInt8]
    var user: UserContext
    /// The body of an attachment `PUT`, streamed to a temporary file (which
    /// the responder removes once answered) instead of held in `body`.
    var bodyFile: URL?
    /// The database's `_security`, once the route has named a database.
    var security = SecurityObject(nil)
    /// The path and query as sent (percent-encoded).
    var rawPath = ""
    var rawQuery = ""
    /// The `Host` the request was sent to.
    var authority: String?
    /// The client's address.
    var peer: String?
    /// Whether the session cookie the request came with is due for a
    /// refresh (the answer then carries a new one).
    var renewsSession = false

    /// A server admin.
    var isAdmin: Bool { user.isServerAdmin }

    func flag(_ name: String) -> Bool { query[name] == "true" }

    /// The Boolean query parameters of listings (`_all_docs`, views,
    /// `_changes`): anything but `true` or `false` is CouchDB's 400
    /// `query_parse_error`, not silently false.
    func checkBooleans(_ names: [String]) throws {
        for name in names {
            guard let value = query[name], value != "true", value != "false" else { continue }
            throw DocumentError(.queryParseError, "Invalid boolean parameter: \"\(value)\"")
        }
    }

    static let listingBooleans = ["descending", "include_docs", "conflicts", "inclusive_end", "attachments", "att_encoding_info",
                                  "update_seq", "group", "reduce", "sorted", "stable", "style_all_docs", "seq_interval_all"]

    func int(_ name: String) throws -> Int? {
        guard let text = query[name] else { return nil }
        guard let n = Int(text), n >= 0 else {
            throw DocumentError(.queryParseError, "Invalid value for positive integer \(name): \"\(text)\"")
        }
        return n
    }

    func jsonQuery(_ name: String) throws -> JSON? {
        guard let text = query[name] else { return nil }
        do { return try JSON(parsing: text) } catch { throw DocumentError(.badRequest, "Invalid JSON in \(name)") }
    }

    func json() throws -> JSON {
        guard !body.isEmpty else { throw DocumentError(.badRequest, "Request body must be a JSON object") }
        do { return try JSON(parsing: body) } catch { throw DocumentError(.badRequest, "invalid UTF-8 JSON") }
    }

    func object() throws -> JSONObject {
        guard let o = try json().objectValue else { throw DocumentError(.badRequest, "Request body must be a JSON object") }
        return o
    }
}

struct HTTPAnswer {
    var status: HTTPResponse.Status
    var json: JSON?
    var headers: HTTPFields = [:]
    var raw: (contentType: String, data: Data)?
    var stream: ResponseBody?

    /// Whether `value` can be sent as a header's value: no control character
    /// but tab (a CR or LF would split the response).
    static func isValidFieldValue(_ value: String) -> Bool {
        value.utf8.allSatisfy { $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }
    }
}

/// Hummingbird's per-request context, with the client's address (the
/// `peer` of CouchDB's request object).
struct CouchContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let peer: String?

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        peer = source.channel.remoteAddress?.ipAddress
    }
}
