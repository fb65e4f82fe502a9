import Foundation

/// A call of an update function as the caller makes it: what CouchDB's
/// `_design/{design}/_update/{function}` takes over HTTP. The store turns
/// it into CouchDB's request object (`req`: `body`, `query`, `headers`,
/// `form`, `cookie`, `userCtx`, `secObj`, `info`, `uuid`…), so a function
/// sees the same `req` whether it runs in this process or on a server.
///
/// ```swift
/// let vote = UpdateRequest(body: Data(#"{"answer":"1","uid":"d1"}"#.utf8))
/// let answer = try await store.update(design: "voting", function: "addvote", id: "q1", request: vote)
/// ```
public struct UpdateRequest: Sendable {
    /// `POST` or `PUT`.
    public var method: String
    /// The request body (`req.body`; a form's fields are parsed into
    /// `req.form`).
    public var body: Data
    /// The body's type (`application/json`,
    /// `application/x-www-form-urlencoded`…; empty: none sent).
    public var contentType: String
    /// The query parameters (`req.query`).
    public var query: [String: String]
    /// More request headers (`req.headers`; `Content-Type` is added).
    public var headers: [String: String]
    /// The client's address (`req.peer`), when a server received the call.
    public var peer: String?
    /// The path as a server received it, in segments (`req.path`); nil:
    /// made from the database, design, function and id.
    public var path: [String]?
    /// The path and query as received (`req.raw_path`); nil: made.
    public var rawPath: String?

    /// A request with the given values; its path is made from the call.
    public init(method: String = "POST", body: Data = Data(), contentType: String = "application/json",
                query: [String: String] = [:], headers: [String: String] = [:]) {
        self.method = method
        self.body = body
        self.contentType = contentType
        self.query = query
        self.headers = headers
    }

    /// CouchDB's request object for this call of `function` on the
    /// document `id` of the database `database`.
    package func object(database: String, design: String, function: String, id: String?,
                        info: JSONObject, userContext: JSON?, security: JSON) -> JSON {
        var headers = JSONObject()
        for (name, value) in self.headers.sorted(by: { $0.key < $1.key }) { headers[name] = .string(value) }
        if !contentType.isEmpty, !self.headers.keys.contains(where: { $0.lowercased() == "content-type" }) {
            headers["Content-Type"] = .string(contentType)
        }
        var query = JSONObject()
        for (key, value) in self.query.sorted(by: { $0.key < $1.key }) { query[key] = .string(value) }
        let text = String(decoding: body, as: UTF8.self)
        var form = JSONObject()
        if contentType.hasPrefix("application/x-www-form-urlencoded") {
            for pair in text.split(separator: "&") {
                let kv = pair.split(separator: "=", maxSplits: 1).map { String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String($0) }
                form[kv[0]] = .string(kv.count > 1 ? kv[1] : "")
            }
        }
        var cookie = JSONObject()
        let cookieHeader = self.headers.first { $0.key.lowercased() == "cookie" }?.value ?? ""
        for part in cookieHeader.split(separator: ";") {
            let kv = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if kv.count == 2 { cookie[kv[0]] = .string(kv[1]) }
        }
        var user = (userContext ?? DocumentDatabase.appUserContext).objectValue ?? JSONObject()
        user["db"] = .string(database)
        let segments = path ?? [database, DocumentTables.designID(design), "_update", function] + (id.map { [$0] } ?? [])
        var segmentCharacters = CharacterSet.urlPathAllowed
        segmentCharacters.remove("/")
        let encoded: [String] = segments.map { $0.addingPercentEncoding(withAllowedCharacters: segmentCharacters) ?? $0 }
        let pairs: [String] = self.query.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        let raw: String = rawPath ?? ("/" + encoded.joined(separator: "/") + (pairs.isEmpty ? "" : "?" + pairs.joined(separator: "&")))
        let pathJSON = JSON.array(segments.map(JSON.string))
        return .object([
            "info": .object(info),
            "id": id.map(JSON.string) ?? .null,
            "uuid": .string(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()),
            "method": .string(method),
            "requested_path": pathJSON,
            "path": pathJSON,
            "raw_path": .string(raw),
            "query": .object(query),
            "headers": .object(headers),
            "body": .string(body.isEmpty ? "undefined" : text),
            "peer": peer.map(JSON.string) ?? .null,
            "form": .object(form),
            "cookie": .object(cookie),
            "userCtx": .object(user),
            "secObj": security,
        ])
    }
}
