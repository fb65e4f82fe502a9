import Foundation
import StrataDocuments

/// What `POST /_replicate` and a `_replicator` document ask for: the two
/// sides as given, the options, and the replication's id.
package struct ReplicationRequest: Sendable {
    package var source: JSON
    package var target: JSON
    package var options = ReplicationOptions()
    /// CouchDB's `_local_id`: the same for the same source, target and
    /// filter, with `+continuous` for a continuous one.
    package var id: String

    /// - Throws: `bad_request` when a field has the wrong type.
    package init(_ body: JSONObject) throws {
        guard let source = body["source"], let target = body["target"] else {
            throw DocumentError(.badRequest, "Replication document must have a source and a target")
        }
        for (name, side) in [("source", source), ("target", target)] where side.stringValue == nil && side["url"]?.stringValue == nil {
            throw DocumentError(.badRequest, "`\(name)` must be a database name, a URL, or an object with a `url`")
        }
        self.source = source
        self.target = target
        for flag in ["continuous", "create_target"] where body[flag] != nil && body[flag]?.boolValue == nil {
            throw DocumentError(.badRequest, "`\(flag)` must be true or false")
        }
        options.continuous = body["continuous"]?.boolValue ?? false
        options.createTarget = body["create_target"]?.boolValue ?? false
        // CouchDB's names, in milliseconds and documents.
        if let value = body["checkpoint_interval"] {
            guard let ms = value.intValue, ms >= 0 else { throw DocumentError(.badRequest, "`checkpoint_interval` must be a number of milliseconds") }
            options.checkpointInterval = .milliseconds(ms)
        }
        if let value = body["worker_batch_size"] {
            guard let size = value.intValue, size > 0 else { throw DocumentError(.badRequest, "`worker_batch_size` must be a positive number") }
            options.batchSize = size
        }
        if let ids = body["doc_ids"] {
            guard let list = ids.arrayValue, list.allSatisfy({ $0.stringValue != nil }) else { throw DocumentError(.badRequest, "`doc_ids` should be a list of strings") }
            options.filter = .documentIDs(list.compactMap(\.stringValue))
        } else if let selector = body["selector"] {
            guard selector.objectValue != nil else { throw DocumentError(.badRequest, "`selector` must be a JSON object") }
            options.filter = .selector(selector)
        } else if let filter = body["filter"] {
            guard let name = filter.stringValue, name.contains("/") else { throw DocumentError(.badRequest, "`filter` must be `designname/filtername`") }
            var parameters: [String: String] = [:]
            for (name, value) in body["query_params"]?.objectValue ?? JSONObject() { parameters[name] = value.stringValue ?? value.text }
            options.filter = .function(name, parameters: parameters)
        }
        id = MD5.hex(Array([Self.label(source), Self.label(target), options.filter.map { "\($0)" } ?? ""].joined(separator: "\n").utf8))
            + (options.continuous ? "+continuous" : "")
    }

    /// A side as text: the name, or the URL.
    package static func label(_ spec: JSON) -> String { spec.stringValue ?? spec["url"]?.stringValue ?? spec.text }

    /// A side as `_active_tasks` and `_scheduler` show it: a URL's password
    /// hidden.
    package static func shown(_ spec: JSON) -> String {
        let text = label(spec)
        guard var parts = URLComponents(string: text), parts.password != nil else { return text }
        parts.password = "*****"
        return parts.string ?? text
    }

    /// Whether `spec` names a database of this server that does not exist
    /// yet and is to be created: it is created only once the source
    /// answers (``checkSource(_:)``), as CouchDB opens the source first, so
    /// an unreachable source leaves no new, empty target behind.
    package static func targetNeedsCreating(_ spec: JSON, create: Bool, in databases: any DatabaseResolver) -> Bool {
        let text = label(spec).lowercased()
        guard create, !text.hasPrefix("http://"), !text.hasPrefix("https://") else { return false }
        return !databases.exists(label(spec))
    }

    /// Throws a ``ReplicationError`` when the source cannot be reached or
    /// does not exist.
    package static func checkSource(_ source: any DocumentStore) async throws {
        let exists: Bool
        do {
            exists = try await source.exists()
        } catch {
            throw ReplicationError(reason: "could not open the source \(source.location): \(error)", underlying: error as? RemoteError)
        }
        guard exists else { throw ReplicationError.missingSource(source.location) }
    }

    /// A side of a replication: a local database's name, a URL, or
    /// `{"url", "headers": {"Authorization"}}` / `{"url", "auth": {"basic": {…}}}`.
    package static func store(_ spec: JSON, create: Bool, in databases: any DatabaseResolver) throws -> any DocumentStore {
        var text = spec.stringValue
        var authentication = RemoteAuthentication.none
        if let object = spec.objectValue {
            text = object["url"]?.stringValue
            if let basic = object["auth"]?["basic"] {
                authentication = .basic(name: basic["username"]?.stringValue ?? "", password: basic["password"]?.stringValue ?? "")
            } else if let header = object["headers"]?["Authorization"]?.stringValue ?? object["headers"]?["authorization"]?.stringValue,
                      header.hasPrefix("Basic "), let decoded = Data(base64Encoded: String(header.dropFirst(6))),
                      let pair = String(data: decoded, encoding: .utf8), let colon = pair.firstIndex(of: ":") {
                authentication = .basic(name: String(pair[..<colon]), password: String(pair[pair.index(after: colon)...]))
            }
        }
        guard let text, !text.isEmpty else { throw DocumentError(.badRequest, "A replication source or target must be a database name or a URL") }
        if text.lowercased().hasPrefix("http://") || text.lowercased().hasPrefix("https://") {
            guard let url = URL(string: text), url.pathComponents.count >= 2 else { throw DocumentError(.badRequest, "Invalid URL: \(text)") }
            do {
                return (try CouchClient(url: url.deletingLastPathComponent(), authentication: authentication).database(url.lastPathComponent))
            } catch {
                throw DocumentError(.badRequest, "Invalid URL: \(text)")
            }
        }
        if !databases.exists(text) {
            guard create else { throw DocumentError(.notFound, "Database does not exist: \(text)") }
            try databases.create(text)
        }
        return try databases.database(text)
    }
}
