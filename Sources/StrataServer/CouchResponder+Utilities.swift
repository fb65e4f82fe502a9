import Foundation
import Hummingbird
import HTTPTypes
import Strata
import StrataDocuments

@available(macOS 14, iOS 17, tvOS 17, *)
extension CouchResponder {
    /// The page's files: plain HTML, CSS and JavaScript shipped with the
    /// server target, no build step and nothing fetched from elsewhere.
    static let utilityFiles: [String: String] = [
        "index.html": "text/html; charset=utf-8",
        "app.js": "text/javascript; charset=utf-8",
        "style.css": "text/css; charset=utf-8",
        "favicon.svg": "image/svg+xml",
    ]

    /// `GET /_utils/…`: the documents page and the SQLite table browser.
    /// The page talks to the same HTTP API as any client, so every action
    /// goes through the same authorization.
    func utilities(_ r: CouchRequest) throws -> HTTPAnswer {
        guard r.method == .get || r.method == .head else { return methodNotAllowed("GET,HEAD") }
        let rest = r.segments.dropFirst()
        if rest.isEmpty, !r.rawPath.hasSuffix("/") {
            var headers: HTTPFields = [:]
            // Absolute: some clients (FoundationNetworking) loop on a relative one.
            headers[.location] = r.authority.map { "http://\($0)/_utils/" } ?? "/_utils/"
            return HTTPAnswer(status: .movedPermanently, json: nil, headers: headers)
        }
        let name = rest.isEmpty ? "index.html" : rest.joined(separator: "/")
        guard let contentType = Self.utilityFiles[name],
              let url = Bundle.module.url(forResource: name, withExtension: nil, subdirectory: "Utils"),
              let data = try? Data(contentsOf: url) else {
            throw DocumentError(.notFound, "No such file: /_utils/\(name)")
        }
        var headers: HTTPFields = [:]
        // Nothing but this server's own files runs or loads in the page.
        headers[.contentSecurityPolicy] = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
        headers[HTTPField.Name("X-Content-Type-Options")!] = "nosniff"
        headers[HTTPField.Name("X-Frame-Options")!] = "DENY"
        headers[HTTPField.Name("Referrer-Policy")!] = "no-referrer"
        return HTTPAnswer(status: .ok, json: nil, headers: headers, raw: (contentType, data))
    }

    /// `/_sqlite/…`: the table browser's API (server admins only).
    func sqlite(_ r: CouchRequest) async throws -> HTTPAnswer {
        try requireAdmin(r)
        guard let browser = server.sqliteBrowser else {
            throw DocumentError(.notFound, "No SQLite folder: start the server with --sqlite DIR")
        }
        let rest = Array(r.segments.dropFirst())
        if rest.isEmpty {
            guard r.method == .get || r.method == .head else { return methodNotAllowed("GET,HEAD") }
            return HTTPAnswer(status: .ok, json: .object(["files": .array(browser.files()), "writable": .bool(browser.writable)]))
        }
        let file = rest[0]
        var format: DataFormat?
        if let name = r.query["format"], !name.isEmpty {
            guard let known = DataFormat(rawValue: name) else { throw DocumentError(.badRequest, "Unknown format \(name): use csv, tsv, json or ndjson") }
            format = known
        }
        func exported(_ data: Data, _ base: String, _ format: DataFormat) -> HTTPAnswer {
            var headers: HTTPFields = [:]
            let type = format == .json ? "application/json" : format == .ndjson ? "application/x-ndjson" : format == .tsv ? "text/tab-separated-values" : "text/csv"
            let safe = base.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? $0 : "_" }
            headers[.contentDisposition] = "attachment; filename=\"\(String(safe)).\(format.rawValue)\""
            return HTTPAnswer(status: .ok, json: nil, headers: headers, raw: (type + "; charset=utf-8", data))
        }
        switch (r.method, rest.count) {
        case (.get, 1), (.head, 1):
            return HTTPAnswer(status: .ok, json: try await offload { try browser.schema(file) })
        case (.post, 2) where rest[1] == "_query":
            let body = try r.object()
            guard let sql = body["sql"]?.stringValue else { throw DocumentError(.badRequest, "Send {\"sql\": \"SELECT …\"}") }
            do {
                if let format {
                    let data = try await offload { try browser.export(file, table: nil, sql: sql, sort: nil, descending: false, column: nil, value: nil, format: format) }
                    return exported(data, "query", format)
                }
                return HTTPAnswer(status: .ok, json: try await offload { try browser.query(file, sql: sql) })
            } catch let error as SQLiteError {
                throw Self.sqliteError(error)
            }
        case (.get, 2), (.head, 2):
            let table = rest[1]
            let sort = r.query["sort"], column = r.query["column"], value = r.query["value"]
            let descending = r.flag("descending")
            do {
                if let format {
                    let data = try await offload { try browser.export(file, table: table, sql: nil, sort: sort, descending: descending, column: column, value: value, format: format) }
                    return exported(data, table, format)
                }
                let limit = min(try r.int("limit") ?? 50, 1000), skip = try r.int("skip") ?? 0
                return HTTPAnswer(status: .ok, json: try await offload {
                    try browser.rows(file, table: table, limit: limit, skip: skip, sort: sort, descending: descending, column: column, value: value)
                })
            } catch let error as SQLiteError {
                throw Self.sqliteError(error)
            }
        default:
            return methodNotAllowed("GET,HEAD,POST")
        }
    }

    /// SQLite's own message, as a 400 the page shows.
    static func sqliteError(_ error: SQLiteError) -> DocumentError {
        if error.code == .interrupt { return DocumentError(.badRequest, "interrupted: the query ran past the time limit") }
        if error.primaryResultCode == .readOnly { return DocumentError(.forbidden, "attempt to write a readonly database: the SQL box is read-only (start the server with --sqlite-writable to allow writes)") }
        if error.primaryResultCode == .authorization {
            return DocumentError(.forbidden, "not authorized: the SQL box is read-only (writes need --sqlite-writable) and never runs ATTACH, DETACH, VACUUM or a pragma that sets a value")
        }
        return DocumentError(.badRequest, error.message ?? "\(error)")
    }
}
