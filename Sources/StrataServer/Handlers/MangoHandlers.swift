import Foundation
import HTTPTypes
import StrataDocuments

/// Mango: `_find`, `_explain` and `_index`.
@available(macOS 14, iOS 17, tvOS 17, *)
struct MangoHandlers: Sendable {
    let server: CouchServer

    /// The index every database has: its documents by `_id`.
    static let allDocumentsIndex: JSON = .object([
        "ddoc": .null, "name": "_all_docs", "type": "special", "def": .object(["fields": [.object(["_id": "asc"])]]),
    ])

    func find(_ db: DocumentDatabase, _ r: CouchRequest) async throws -> HTTPAnswer {
        let query = try FindQuery(json: r.json())
        let result = try await offload { try db.find(query) }
        // Laid out and sent chunked as CouchDB's mango_httpd sends it.
        var keys: [(String, JSON)] = [("bookmark", .string(result.bookmark))]
        if let warning = result.warning { keys.append(("warning", .string(warning))) }
        if let stats = result.executionStats { keys.append(("execution_stats", stats)) }
        let tail = "\r\n]" + keys.map { ",\r\n" + JSON.string($0.0).text + ": " + $0.1.text }.joined() + "}\r\n"
        return .streamedRows(head: "{\"docs\":[", first: result.docs.map(JSON.object), tail: { tail }) { _, _ in [] }
    }

    func explain(_ db: DocumentDatabase, _ r: CouchRequest) async throws -> HTTPAnswer {
        let query = try FindQuery(json: r.json())
        let result = try await offload { try db.explain(query) }
        let fields: JSON = .array((query.fields ?? []).map(JSON.string))
        let sort = JSONObject(query.sort.map { ($0.field, JSON.string($0.ascending ? "asc" : "desc")) })
        // CouchDB's answer (`mango_cursor:explain`), and the SQL Strata runs.
        return .json([
            "dbname": .string(r.databaseName), "index": result.index.map(\.json) ?? Self.allDocumentsIndex,
            "partitioned": false,
            "selector": try MangoSelector(query.selector).normalized,
            "opts": .object([
                "use_index": .array(query.useIndex.map { [.string($0)] } ?? []), "bookmark": .string(query.bookmark ?? "nil"),
                "limit": .int(query.limit), "skip": .int(query.skip), "sort": .object(sort), "fields": fields,
                "partition": "", "r": 1, "conflicts": false, "stale": false, "update": true, "stable": false,
                "execution_stats": .bool(query.executionStats), "allow_fallback": true,
            ]),
            "limit": .int(query.limit), "skip": .int(query.skip), "fields": fields,
            "sql": .string(result.sql),
        ])
    }

    func indexes(_ db: DocumentDatabase, _ r: CouchRequest) async throws -> HTTPAnswer {
        let indexes = try await offload { try db.indexes() }
        return .json(["total_rows": .int(indexes.count + 1), "indexes": .array([Self.allDocumentsIndex] + indexes.map(\.json))])
    }

    func createIndex(_ db: DocumentDatabase, _ r: CouchRequest) async throws -> HTTPAnswer {
        let body = try r.object()
        guard let index = body["index"]?.objectValue, let fieldList = index["fields"]?.arrayValue else {
            throw DocumentError(.badRequest, "Missing required key: index")
        }
        let fields = try fieldList.map { f -> String in
            if let s = f.stringValue { return s }
            if let o = f.objectValue, o.count == 1 { return o.pairs[0].key }
            throw DocumentError(.badRequest, "Invalid index field: \(f.text)")
        }
        let partial = index["partial_filter_selector"] ?? body["partial_filter_selector"]
        let ddoc = body["ddoc"]?.stringValue, name = body["name"]?.stringValue
        let created = try await offload { try db.createIndex(fields: fields, ddoc: ddoc, name: name, partialFilterSelector: partial) }
        return .json(["result": .string(created.result), "id": .string(created.ddoc), "name": .string(created.name)])
    }

    /// `DELETE /{db}/_index/{ddoc}/json/{name}` (the design document named
    /// with or without `_design/`).
    func deleteIndex(_ db: DocumentDatabase, _ r: CouchRequest) async throws -> HTTPAnswer {
        let ddoc = r.parameter("ddoc"), name = r.parameter("name")
        try await offload { try db.deleteIndex(ddoc: ddoc, name: name) }
        return .ok
    }
}
