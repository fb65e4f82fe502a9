import Foundation
import Hummingbird
import HTTPTypes
import Strata
import StrataDocuments

/// `/_utils`, the page, and `/_sqlite`, the table browser's API.
@available(macOS 14, iOS 17, tvOS 17, *)
struct UtilsHandlers: Sendable {
    let server: CouchServer

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
    func page(_ r: CouchRequest) async throws -> HTTPAnswer {
        let file = r.parameters["file"]
        if file == nil, !r.rawPath.hasSuffix("/") {
            var headers: HTTPFields = [:]
            // Absolute: some clients (FoundationNetworking) loop on a relative one.
            headers[.location] = r.authority.map { "http://\($0)/_utils/" } ?? "/_utils/"
            return HTTPAnswer(status: .movedPermanently, json: nil, headers: headers)
        }
        let name = file ?? "index.html"
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

    /// The folder of SQLite files the server was given (`--sqlite DIR`).
    func browser() throws -> SQLiteBrowser {
        guard let browser = server.sqliteBrowser else {
            throw DocumentError(.notFound, "No SQLite folder: start the server with --sqlite DIR")
        }
        return browser
    }

    /// `GET /_sqlite`: the files, and whether the SQL box may write.
    func sqliteFiles(_ r: CouchRequest) async throws -> HTTPAnswer {
        let browser = try browser()
        return .json(["files": .array(browser.files()), "writable": .bool(browser.writable)])
    }

    /// `GET /_sqlite/{file}`: its tables and views.
    func sqliteSchema(_ r: CouchRequest) async throws -> HTTPAnswer {
        let browser = try browser(), file = r.parameter("file")
        return .json(try await offload { try browser.schema(file) })
    }

    /// `POST /_sqlite/{file}/_query {"sql": …}`: the rows, or the whole
    /// answer in `?format=` (csv, tsv, json, ndjson) to download.
    func sqliteQuery(_ r: CouchRequest) async throws -> HTTPAnswer {
        let browser = try browser(), file = r.parameter("file"), format = try Self.format(r)
        guard let sql = try r.object()["sql"]?.stringValue else { throw DocumentError(.badRequest, "Send {\"sql\": \"SELECT …\"}") }
        do {
            if let format {
                let data = try await offload { try browser.export(file, table: nil, sql: sql, sort: nil, descending: false, column: nil, value: nil, format: format) }
                return Self.exported(data, "query", format)
            }
            return .json(try await offload { try browser.query(file, sql: sql) })
        } catch let error as SQLiteError {
            throw Self.sqliteError(error)
        }
    }

    /// `GET /_sqlite/{file}/{table}`: a page of rows, sorted and filtered,
    /// or the whole table in `?format=`.
    func sqliteRows(_ r: CouchRequest) async throws -> HTTPAnswer {
        let browser = try browser(), file = r.parameter("file"), table = r.parameter("table"), format = try Self.format(r)
        let sort = r.query["sort"], column = r.query["column"], value = r.query["value"]
        let filters = try SQLiteTableFilter.parse(r.query["filters"])
        let descending = r.flag("descending")
        do {
            if let format {
                let data = try await offload { try browser.export(file, table: table, sql: nil, sort: sort, descending: descending, column: column, value: value, filters: filters, format: format) }
                return Self.exported(data, table, format)
            }
            let limit = min(try r.int("limit") ?? 50, 1000), skip = try r.int("skip") ?? 0
            return .json(try await offload {
                try browser.rows(file, table: table, limit: limit, skip: skip, sort: sort, descending: descending, column: column, value: value, filters: filters)
            })
        } catch let error as SQLiteError {
            throw Self.sqliteError(error)
        }
    }

    /// The `format` a download asks for, nil for the page's JSON.
    static func format(_ r: CouchRequest) throws -> DataFormat? {
        guard let name = r.query["format"], !name.isEmpty else { return nil }
        guard let known = DataFormat(rawValue: name) else { throw DocumentError(.badRequest, "Unknown format \(name): use csv, tsv, json or ndjson") }
        return known
    }

    /// A download: the data, its type, and a safe file name.
    static func exported(_ data: Data, _ base: String, _ format: DataFormat) -> HTTPAnswer {
        var headers: HTTPFields = [:]
        let type = format == .json ? "application/json" : format == .ndjson ? "application/x-ndjson" : format == .tsv ? "text/tab-separated-values" : "text/csv"
        let safe = base.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? $0 : "_" }
        headers[.contentDisposition] = "attachment; filename=\"\(String(safe)).\(format.rawValue)\""
        return HTTPAnswer(status: .ok, json: nil, headers: headers, raw: (type + "; charset=utf-8", data))
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
