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
    }

    private let lock = NSLock()
    private var jobs: [String: Job] = [:]

    func start(id: String, source: String, target: String, _ replicator: Replicator) -> Bool {
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
            jobs[id] = Job(task: task, source: source, target: target, started: Date())
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
                var o: JSONObject = [
                    "type": "replication", "replication_id": .string(id), "continuous": true,
                    "source": .string(job.source), "target": .string(job.target),
                    "started_on": .int(Int(job.started.timeIntervalSince1970)),
                    "docs_read": .int(job.progress.documentsRead), "docs_written": .int(job.progress.documentsWritten),
                    "doc_write_failures": .int(job.progress.documentWriteFailures),
                    "missing_revisions_found": .int(job.progress.revisionsMissing),
                    "revisions_checked": .int(job.progress.revisionsChecked),
                    "source_seq": job.progress.lastSequence, "checkpointed_source_seq": job.progress.lastSequence,
                    "changes_pending": job.progress.pending.map(JSON.int) ?? .null,
                ]
                if let error = job.error { o["last_error"] = .string(error) }
                return .object(o)
            }
        }
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
        guard let sourceSpec = body["source"], let targetSpec = body["target"] else {
            throw DocumentError(.badRequest, "Replication document must have a source and a target")
        }
        var options = ReplicationOptions()
        options.continuous = body["continuous"]?.boolValue ?? false
        options.createTarget = body["create_target"]?.boolValue ?? false
        if let ids = body["doc_ids"] {
            guard let list = ids.arrayValue, list.allSatisfy({ $0.stringValue != nil }) else { throw DocumentError(.badRequest, "`doc_ids` should be a list of strings") }
            options.filter = .documentIDs(list.compactMap(\.stringValue))
        } else if let selector = body["selector"] {
            guard selector.objectValue != nil else { throw DocumentError(.badRequest, "`selector` must be a JSON object") }
            options.filter = .selector(selector)
        } else if let filter = body["filter"]?.stringValue {
            var parameters: [String: String] = [:]
            for (name, value) in body["query_params"]?.objectValue ?? JSONObject() { parameters[name] = value.stringValue ?? value.text }
            options.filter = .function(filter, parameters: parameters)
        }
        let source = try endpoint(sourceSpec, create: false)
        let target = try endpoint(targetSpec, create: options.createTarget)
        let label = { (spec: JSON) in spec.stringValue ?? spec["url"]?.stringValue ?? spec.text }
        let id = MD5.hex(Array([label(sourceSpec), label(targetSpec), options.filter.map { "\($0)" } ?? ""].joined(separator: "\n").utf8))
            + (options.continuous ? "+continuous" : "")
        if body["cancel"]?.boolValue == true {
            guard server.replications.cancel(body["replication_id"]?.stringValue ?? id) else {
                throw DocumentError(.notFound, "Replication `\(body["replication_id"]?.stringValue ?? id)` not found")
            }
            return HTTPAnswer(status: .ok, json: .object(["ok": true, "_local_id": .string(id)]))
        }
        let replicator = Replicator(source: source, target: target, options: options)
        if options.continuous {
            _ = server.replications.start(id: id, source: label(sourceSpec), target: label(targetSpec), replicator)
            return HTTPAnswer(status: .accepted, json: .object(["ok": true, "_local_id": .string(id)]))
        }
        let started = Date()
        let progress: ReplicationProgress
        do {
            progress = try await replicator.run()
        } catch let error as ReplicationError {
            let status = error.underlying?.status ?? 500
            let name = error.underlying?.error == "db_not_found" ? "db_not_found" : status == 401 ? "unauthorized" : status == 403 ? "forbidden" : "replication_failed"
            throw DocumentError(DocumentError.Kind(rawValue: name) ?? (status == 404 ? .notFound : .internalError), error.reason)
        }
        let seq = progress.lastSequence
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

    /// A side of a replication: a local database's name, a URL, or
    /// `{"url", "headers": {"Authorization"}}` / `{"url", "auth": {"basic": {…}}}`.
    func endpoint(_ spec: JSON, create: Bool) throws -> ReplicationEndpoint {
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
                return .remote(try CouchClient(url: url.deletingLastPathComponent(), authentication: authentication).database(url.lastPathComponent))
            } catch {
                throw DocumentError(.badRequest, "Invalid URL: \(text)")
            }
        }
        if !server.registry.exists(text) {
            guard create else { throw DocumentError(.notFound, "Database does not exist: \(text)") }
            try server.registry.create(text)
        }
        return .local(try server.registry.database(text))
    }
}
