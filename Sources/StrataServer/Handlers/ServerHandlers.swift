import Foundation
import HTTPTypes
import StrataDocuments

/// The server's own paths: `/`, `/_up`, `/_uuids`, `/_all_dbs`,
/// `/_dbs_info` and the settings under `/_node/{node}/_config`.
@available(macOS 14, iOS 17, tvOS 17, *)
struct ServerHandlers: Sendable {
    let server: CouchServer

    func welcome(_ r: CouchRequest) async throws -> HTTPAnswer {
        .json([
            "couchdb": "Welcome",
            "version": "3.4.3",
            "git_sha": "strata",
            "uuid": .string(server.uuid),
            "features": ["access-ready", "pluggable-storage-engines", "reshard", "partitioned", "scheduler"],
            "vendor": ["name": "Strata"],
        ])
    }

    func up(_ r: CouchRequest) async throws -> HTTPAnswer {
        .json(["status": "ok", "seeds": .object([:])])
    }

    /// `GET /_uuids?count=N` (at most 1,000), never cached (CouchDB's
    /// `Cache-Control: no-cache`, with an ETag).
    func uuids(_ r: CouchRequest) async throws -> HTTPAnswer {
        let count = min(max(try r.int("count") ?? 1, 1), 1000)
        var headers: HTTPFields = [:]
        headers[.cacheControl] = "no-cache"
        headers[.expires] = "Fri, 01 Jan 1990 00:00:00 GMT"
        headers[HTTPField.Name("Pragma")!] = "no-cache"
        let uuids = (0..<count).map { _ in JSON.string(CouchServer.makeUUID()) }
        headers[.eTag] = "\"\(MD5.hex(Array(JSON.array(uuids).text.utf8)))\""
        return .json(["uuids": .array(uuids)], headers: headers)
    }

    /// `GET /_all_dbs` (server admins, as CouchDB 3's `admin_only_all_dbs`),
    /// with `startkey`, `endkey`, `descending`, `limit` and `skip`.
    func allDatabases(_ r: CouchRequest) async throws -> HTTPAnswer {
        .json(.array(try names(r).map(JSON.string)))
    }

    /// `GET /_dbs_info` (every database) and `POST /_dbs_info {"keys": […]}`:
    /// each database's information, or `not_found` for a name that has none.
    func databasesInformation(_ r: CouchRequest) async throws -> HTTPAnswer {
        var names = try names(r)
        if r.method == .post {
            guard let keys = try r.object()["keys"]?.arrayValue else { throw DocumentError(.badRequest, "`keys` member must exist.") }
            names = try keys.map { key in
                guard let name = key.stringValue else { throw DocumentError(.badRequest, "`keys` member must be a list of database names.") }
                return name
            }
        }
        let registry = server.registry, wanted = names
        let rows: [JSON] = try await offload {
            wanted.map { name in
                guard registry.exists(name), let db = try? registry.database(name), let info = try? DatabaseHandlers.information(name, db) else {
                    return .object(["key": .string(name), "error": "not_found"])
                }
                return .object(["key": .string(name), "info": info])
            }
        }
        return .json(.array(rows))
    }

    /// The databases' names, in order, as the listing's parameters ask.
    func names(_ r: CouchRequest) throws -> [String] {
        var names = server.registry.names()
        if let start = try (r.jsonQuery("startkey") ?? r.jsonQuery("start_key"))?.stringValue { names = names.filter { $0 >= start } }
        if let end = try (r.jsonQuery("endkey") ?? r.jsonQuery("end_key"))?.stringValue { names = names.filter { $0 <= end } }
        if r.flag("descending") { names.reverse() }
        return Array(names.dropFirst(try r.int("skip") ?? 0).prefix(try r.int("limit") ?? .max))
    }

    /// `GET /_node/{node}/_config[/{section}[/{key}]]`: the settings Strata
    /// has, under CouchDB's names (read-only). `_local` names this node, as
    /// does `nonode@nohost`, the name a single CouchDB node has.
    func configuration(_ r: CouchRequest) async throws -> HTTPAnswer {
        guard ["_local", CouchServer.nodeName].contains(r.parameter("node")) else {
            throw DocumentError(.notFound, "no such node: \(r.parameter("node"))")
        }
        let settings = server.configuration.couchSettings
        func object(_ values: [String: String]) -> JSON {
            .object(JSONObject(values.sorted { $0.key < $1.key }.map { ($0.key, JSON.string($0.value)) }))
        }
        guard let section = r.parameters["section"] else {
            return .json(.object(JSONObject(settings.sorted { $0.key < $1.key }.map { ($0.key, object($0.value)) })))
        }
        guard let key = r.parameters["key"] else { return .json(object(settings[section] ?? [:])) }
        guard let value = settings[section]?[key] else { throw DocumentError(.notFound, "unknown_config_value") }
        return .json(.string(value))
    }
}
