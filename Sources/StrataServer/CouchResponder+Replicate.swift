import Foundation
import Hummingbird
import StrataDocuments
import StrataSync

/// Continuous replications started with `POST /_replicate`, by id, until
/// cancelled or the server stops.
final class ReplicationJobs: @unchecked Sendable {
    // @unchecked: `jobs` is only touched under `lock`.
    struct Job {
        var task: Task<Void, Never>
        var source: String
        var target: String
        var started: Date
        var progress = ReplicationProgress()
        var error: String?
        /// The databases of this server it reads or writes.
        var localDatabases: Set<String> = []
    }

    private let lock = NSLock()
    private var jobs: [String: Job] = [:]

    func start(id: String, source: String, target: String, localDatabases: Set<String> = [], _ replicator: Replicator) -> Bool {
        lock.withLock {
            if jobs[id] != nil { return false }
            let task = Task { [weak self] in
                let jobs = self
                do {
                    try await replicator.run { progress in jobs?.update(id) { $0.progress = progress } }
                } catch is CancellationError {
                } catch {
                    jobs?.update(id) { $0.error = "\(error)" }
                }
            }
            jobs[id] = Job(task: task, source: source, target: target, started: Date(), localDatabases: localDatabases)
            return true
        }
    }

    private func update(_ id: String, _ change: (inout Job) -> Void) {
        lock.withLock { if jobs[id] != nil { change(&jobs[id]!) } }
    }

    func cancel(_ id: String) -> Bool {
        let job = lock.withLock { jobs.removeValue(forKey: id) }
        job?.task.cancel()
        return job != nil
    }

    /// Ends the jobs reading or writing the database `name`, which was
    /// just deleted (CouchDB drops them too; left running they would fail
    /// on a closed file forever).
    func databaseDeleted(_ name: String) {
        let ended = lock.withLock { () -> [Job] in
            let ids = jobs.filter { $0.value.localDatabases.contains(name) }.map(\.key)
            return ids.compactMap { jobs.removeValue(forKey: $0) }
        }
        for job in ended { job.task.cancel() }
    }

    func cancelAll() {
        let all = lock.withLock { () -> [Job] in
            defer { jobs.removeAll() }
            return Array(jobs.values)
        }
        for job in all { job.task.cancel() }
    }

    /// `_active_tasks` entries, CouchDB's shape.
    func activeTasks() -> [JSON] {
        lock.withLock {
            jobs.sorted { $0.key < $1.key }.map { id, job in
                .object(Self.task(id: id, source: job.source, target: job.target, continuous: true,
                                  started: job.started, progress: job.progress, error: job.error))
            }
        }
    }

    /// `_scheduler/jobs` entries.
    func schedulerJobs() -> [JSON] {
        lock.withLock {
            jobs.sorted { $0.key < $1.key }.map { id, job in
                .object(Self.job(id: id, docID: nil, source: job.source, target: job.target, started: job.started,
                                 progress: job.progress, error: job.error))
            }
        }
    }

    /// One replication as `_active_tasks` shows it.
    static func task(id: String, source: String, target: String, continuous: Bool, started: Date,
                     progress: ReplicationProgress, error: String?) -> JSONObject {
        var o: JSONObject = [
            "type": "replication", "replication_id": .string(id), "continuous": .bool(continuous),
            "source": .string(source), "target": .string(target),
            "started_on": .int(Int(started.timeIntervalSince1970)),
            "updated_on": .int(Int(Date().timeIntervalSince1970)),
        ]
        for (name, value) in stats(progress) { o[name] = value }
        o["source_seq"] = progress.lastSequence.json
        if let error { o["last_error"] = .string(error) }
        return o
    }

    /// A replication's counts, as `_active_tasks`, `_scheduler` and a
    /// completed `_replicator` document's `_replication_stats` show them.
    static func stats(_ progress: ReplicationProgress) -> JSONObject {
        [
            "docs_read": .int(progress.documentsRead), "docs_written": .int(progress.documentsWritten),
            "doc_write_failures": .int(progress.documentWriteFailures),
            "missing_revisions_found": .int(progress.revisionsMissing),
            "revisions_checked": .int(progress.revisionsChecked),
            "checkpointed_source_seq": progress.lastSequence.json, "through_seq": progress.lastSequence.json,
            "changes_pending": progress.pending.map(JSON.int) ?? .null,
        ]
    }

    /// One replication as `_scheduler/jobs` shows it.
    static func job(id: String, docID: String?, source: String, target: String, started: Date,
                    progress: ReplicationProgress, error: String?) -> JSONObject {
        let start = ReplicatorDatabase.timestamp(started)
        var info = stats(progress)
        info["source_seq"] = progress.lastSequence.json
        var history: [JSON] = [.object(["timestamp": .string(start), "type": "started"])]
        if let error { history.insert(.object(["timestamp": .string(ReplicatorDatabase.timestamp(Date())), "type": "crashed", "reason": .string(error)]), at: 0) }
        return [
            "id": .string(id), "database": docID == nil ? .null : .string(ReplicatorDatabase.name),
            "doc_id": docID.map(JSON.string) ?? .null, "history": .array(history),
            "node": "strata@127.0.0.1", "source": .string(source), "target": .string(target),
            "user": .null, "start_time": .string(start),
            "info": .object(info),
        ]
    }
}

extension CouchResponder {
    /// `POST /_replicate`: a one-shot replication answered when it ends, a
    /// continuous one started in the background (`cancel: true` stops it).
    /// Each side is a database of this server (by name) or a URL.
    func replicate(_ r: CouchRequest) async throws -> HTTPAnswer {
        guard r.method == .post else { return methodNotAllowed("POST") }
        try requireAdmin(r)
        let body = try r.object()
        if body["cancel"]?.boolValue == true, let id = body["replication_id"]?.stringValue {
            guard server.replications.cancel(id) else { throw DocumentError(.notFound, "Replication `\(id)` not found") }
            return HTTPAnswer(status: .ok, json: .object(["ok": true, "_local_id": .string(id)]))
        }
        let request = try ReplicationRequest(body)
        let options = request.options
        let id = request.id
        let (sourceSpec, targetSpec) = (request.source, request.target)
        if body["cancel"]?.boolValue == true {
            guard server.replications.cancel(id) else { throw DocumentError(.notFound, "Replication `\(id)` not found") }
            return HTTPAnswer(status: .ok, json: .object(["ok": true, "_local_id": .string(id)]))
        }
        let source = try server.endpoint(sourceSpec, create: false)
        let target = try server.endpoint(targetSpec, create: options.createTarget)
        let replicator = Replicator(source: source, target: target, options: options)
        if options.continuous {
            var local: Set<String> = []
            for case let db as DocumentDatabase in [source, target] { local.insert(server.registry.name(of: db) ?? "") }
            _ = server.replications.start(id: id, source: ReplicationRequest.shown(sourceSpec), target: ReplicationRequest.shown(targetSpec),
                                          localDatabases: local, replicator)
            return HTTPAnswer(status: .accepted, json: .object(["ok": true, "_local_id": .string(id)]))
        }
        let started = Date()
        let progress: ReplicationProgress
        do {
            progress = try await replicator.run()
        } catch let error as ReplicationError {
            let status = error.underlying?.status ?? 500
            let name = error.underlying?.error == "db_not_found" ? "db_not_found" : status == 401 ? "unauthorized" : status == 403 ? "forbidden" : "replication_failed"
            // CouchDB's own names: 404 db_not_found, 500 replication_failed.
            throw DocumentError(status: name == "db_not_found" ? 404 : DocumentError.Kind(rawValue: name)?.status ?? 500, error: name, reason: error.reason)
        }
        let seq = progress.lastSequence.json
        let history: JSON = .object([
            "session_id": .string(UUID().uuidString.lowercased()),
            "start_time": .string(started.description), "end_time": .string(Date().description),
            "start_last_seq": 0, "end_last_seq": seq, "recorded_seq": seq,
            "missing_checked": .int(progress.revisionsChecked), "missing_found": .int(progress.revisionsMissing),
            "docs_read": .int(progress.documentsRead), "docs_written": .int(progress.documentsWritten),
            "doc_write_failures": .int(progress.documentWriteFailures),
        ])
        return HTTPAnswer(status: .ok, json: .object([
            "ok": true, "session_id": history["session_id"]!, "source_last_seq": seq,
            "replication_id_version": 4, "history": [history],
        ]))
    }
}

extension CouchResponder {
    /// `GET /_scheduler/jobs`, `/_scheduler/docs`, `/_scheduler/docs/_replicator`
    /// and `/_scheduler/docs/_replicator/{docid}`.
    func scheduler(_ r: CouchRequest) throws -> HTTPAnswer {
        guard r.method == .get || r.method == .head else { return methodNotAllowed("GET,HEAD") }
        try requireAdmin(r)
        let rest = Array(r.segments.dropFirst())
        let limit = try r.int("limit"), skip = try r.int("skip") ?? 0
        func page(_ key: String, _ rows: [JSON]) -> HTTPAnswer {
            let kept = rows.dropFirst(skip).prefix(limit ?? .max)
            return HTTPAnswer(status: .ok, json: .object(["total_rows": .int(rows.count), "offset": .int(skip), key: .array(Array(kept))]))
        }
        switch rest.first {
        case "jobs" where rest.count == 1:
            return page("jobs", server.replications.schedulerJobs() + server.replicatorDatabase.schedulerJobs())
        case "docs" where rest.count == 1:
            return page("docs", server.replicatorDatabase.schedulerDocuments())
        case "docs" where rest.count >= 2 && rest[1] == ReplicatorDatabase.name:
            if rest.count == 2 { return page("docs", server.replicatorDatabase.schedulerDocuments()) }
            let id = rest.dropFirst(2).joined(separator: "/")
            guard let document = server.replicatorDatabase.schedulerDocument(id) else { throw DocumentError(.notFound, "unknown") }
            return HTTPAnswer(status: .ok, json: document)
        case "docs" where rest.count >= 2:
            throw DocumentError(.notFound, "Database does not exist: \(rest[1])")
        default:
            throw DocumentError(.notFound, "Unknown path: /_scheduler/\(rest.joined(separator: "/"))")
        }
    }
}

/// What `POST /_replicate` and a `_replicator` document ask for: the two
/// sides as given, the options, and the replication's id.
struct ReplicationRequest {
    var source: JSON
    var target: JSON
    var options = ReplicationOptions()
    /// CouchDB's `_local_id`: the same for the same source, target and
    /// filter, with `+continuous` for a continuous one.
    var id: String

    /// - Throws: `bad_request` when a field has the wrong type.
    init(_ body: JSONObject) throws {
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
    static func label(_ spec: JSON) -> String { spec.stringValue ?? spec["url"]?.stringValue ?? spec.text }

    /// A side as `_active_tasks` and `_scheduler` show it: a URL's password
    /// hidden.
    static func shown(_ spec: JSON) -> String {
        let text = label(spec)
        guard var parts = URLComponents(string: text), parts.password != nil else { return text }
        parts.password = "*****"
        return parts.string ?? text
    }
}

@available(macOS 14, iOS 17, tvOS 17, *)
extension CouchServer {
    /// A side of a replication: a local database's name, a URL, or
    /// `{"url", "headers": {"Authorization"}}` / `{"url", "auth": {"basic": {…}}}`.
    func endpoint(_ spec: JSON, create: Bool) throws -> any DocumentStore {
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
        if !registry.exists(text) {
            guard create else { throw DocumentError(.notFound, "Database does not exist: \(text)") }
            try registry.create(text)
        }
        return try registry.database(text)
    }
}
