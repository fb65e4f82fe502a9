import Foundation
import Hummingbird
import HTTPTypes
import StrataDocuments

/// A request as the handlers see it: path segments decoded, query
/// parameters, the body, and who is asking.
struct CouchRequest: Sendable {
    var method: HTTPRequest.Method
    /// The path's segments, decoded (`%2F` stays inside its segment, `+`
    /// is a space, as CouchDB reads paths).
    var segments: [String]
    /// What the route's pattern named (`db`, `doc`, `attachment`…).
    var parameters: [String: String] = [:]
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

    /// A server admin.
    var isAdmin: Bool { user.isServerAdmin }

    /// The value of the route's parameter `name` (every route that names
    /// one has it).
    func parameter(_ name: String) -> String { parameters[name] ?? "" }

    /// The database the route names.
    var databaseName: String { parameter("db") }

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

extension CouchRequest {
    /// The absolute URL of a resource on this server, as CouchDB's
    /// `Location` headers name it: `http://{Host}/` and the path's
    /// segments, each encoded as `couch_util:url_encode` does (letters,
    /// digits and `_.-:` kept, every other byte `%XX`).
    func location(of segments: [String]) -> String {
        let path = "/" + segments.map(Self.urlEncoded).joined(separator: "/")
        guard let authority else { return path }
        return "http://\(authority)\(path)"
    }

    static func urlEncoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: ":"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return out
    }
}

private extension String {
    func leftPadded(to width: Int) -> String { count >= width ? self : String(repeating: "0", count: width - count) + self }
}

extension CouchRequest {
    /// How a document is read: `rev`, `revs`, `revs_info`, `conflicts`,
    /// `deleted_conflicts`, `attachments`, `local_seq`, `latest`.
    ///
    /// `meta=true` is `revs_info`, `conflicts` and `deleted_conflicts`, as
    /// CouchDB's.
    ///
    /// `att_encoding_info` adds each attachment's encoding; `atts_since`
    /// (revisions) brings the attachments added since inline, as
    /// `attachments=true` brings them all.
    var readOptions: DocumentReadOptions {
        get throws {
            let meta = flag("meta")
            var options = DocumentReadOptions(rev: query["rev"], revs: flag("revs"), revsInfo: meta || flag("revs_info"), conflicts: meta || flag("conflicts"),
                                              deletedConflicts: meta || flag("deleted_conflicts"), attachments: flag("attachments"),
                                              localSequence: flag("local_seq"), latest: flag("latest"))
            options.attachmentEncodingInfo = flag("att_encoding_info")
            if let since = try jsonQuery("atts_since") {
                guard let revisions = since.arrayValue?.compactMap(\.stringValue) else {
                    throw DocumentError(.badRequest, "atts_since value must be array of revs.")
                }
                options.attachmentsSince = revisions
                options.attachments = true
            }
            return options
        }
    }

    /// Whether the client takes `type` (`Accept` missing, or naming it or a
    /// wildcard), as mochiweb's `accepts_content_type` answers.
    func accepts(_ type: String) -> Bool {
        guard let accept = headers[.accept] else { return true }
        let major = type.split(separator: "/").first.map(String.init) ?? type
        return accept.split(separator: ",").contains { range in
            let media = range.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
            return media == type || media == "*/*" || media == major + "/*"
        }
    }
}

extension CouchRequest {
    /// The `queries` of a `…/queries` body: each an object of parameters.
    static func queries(_ body: JSONObject) throws -> [[String: JSON]] {
        guard let list = body["queries"]?.arrayValue else { throw DocumentError(.badRequest, "Malformed request body: `queries` must be a list.") }
        return try list.map { query in
            guard let object = query.objectValue else { throw DocumentError(.badRequest, "Each query must be a JSON object.") }
            var parameters: [String: JSON] = [:]
            for (key, value) in object { parameters[key] = value }
            return parameters
        }
    }
}
