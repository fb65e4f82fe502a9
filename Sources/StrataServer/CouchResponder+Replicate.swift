import Foundation
import Hummingbird
import StrataDocuments
import StrataSync

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
        let source = try ReplicationRequest.store(sourceSpec, create: false, in: server.registry)
        let target = try ReplicationRequest.store(targetSpec, create: options.createTarget, in: server.registry)
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
