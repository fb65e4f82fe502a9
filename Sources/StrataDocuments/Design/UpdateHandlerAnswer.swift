import Foundation

/// What an update function answered, as CouchDB sends it back.
public struct UpdateHandlerAnswer: Sendable, Equatable {
    /// 201 when the function saved a document, 200 when not (or the
    /// function's own `code`).
    public var status: Int
    /// The response body.
    public var body: Data
    /// Its type: the function's `Content-Type`, or `text/html` for a
    /// string, `application/json` for `json`.
    public var contentType: String
    /// The other headers the function set.
    public var headers: [String: String]
    /// `X-Couch-Id`: the document saved.
    public var documentID: String?
    /// `X-Couch-Update-NewRev`: its new revision.
    public var newRevision: String?

    /// An answer with the given values.
    public init(status: Int, body: Data, contentType: String = "text/html; charset=utf-8", headers: [String: String] = [:],
                documentID: String? = nil, newRevision: String? = nil) {
        self.status = status
        self.body = body
        self.contentType = contentType
        self.headers = headers
        self.documentID = documentID
        self.newRevision = newRevision
    }

    /// The body as text.
    public var text: String { String(decoding: body, as: UTF8.self) }

    /// The function's response (a string, or `{code, headers,
    /// json|body|base64}`) after it saved `written` (nil: nothing).
    /// Everything the function answers is untrusted: a status HTTP cannot
    /// carry is the function's `render_error`.
    package init(rendering response: JSON, written: DocumentWriteResult?) throws {
        self.init(status: written == nil ? 200 : 201, body: Data(), documentID: written?.id, newRevision: written?.rev)
        guard let object = response.objectValue else {
            body = Data((response.stringValue ?? "").utf8)
            return
        }
        if let code = object["code"], code != .null {
            guard let number = code.intValue, (100...599).contains(number) else {
                throw DocumentError(status: 500, error: "render_error",
                                    reason: "the function's response has an invalid HTTP status \(code.text): it must be an integer from 100 to 599")
            }
            status = number
        }
        var type: String?
        for (name, value) in object["headers"]?.objectValue ?? JSONObject() {
            guard let text = value.stringValue else { continue }
            if name.lowercased() == "content-type" { type = text } else { headers[name] = text }
        }
        if let json = object["json"] {
            body = Data(json.text.utf8)
            contentType = type ?? "application/json"
        } else if let base64 = object["base64"]?.stringValue {
            body = Data(base64Encoded: base64) ?? Data()
            contentType = type ?? "application/binary"
        } else {
            body = Data((object["body"]?.stringValue ?? "").utf8)
            contentType = type ?? "text/html; charset=utf-8"
        }
    }
}
