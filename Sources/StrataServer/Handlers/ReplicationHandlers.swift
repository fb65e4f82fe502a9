import Foundation
import Hummingbird
import StrataDocuments
import StrataSync

/// Replication: `POST /_replicate`, and what runs, as `_active_tasks` and
/// `_scheduler` show it (server admins only). The jobs themselves belong
/// to StrataSync's scheduler.
@available(macOS 14, iOS 17, tvOS 17, *)
struct ReplicationHandlers: Sendable {
    let server: CouchServer

    /// A replication's failure as CouchDB answers it: 404 `db_not_found`,
    /// 401, 403, or 500 `replication_failed`.
    static func replicationFailure(_ error: ReplicationError) -> DocumentError {
        let status = error.underlying?.status ?? 500
        let name = error.underlying?.error == "db_not_found" ? "db_not_found" : status == 401 ? "unauthorized" : status == 403 ? "forbidden" : "replication_failed"
        return DocumentError(status: name == "db_not_found" ? 404 : DocumentError.Kind(rawValue: name)?.status ?? 500, error: name, reason: error.reason)
    }

    /// `POST /_replicate`: a one-shot replication answered when it ends, a
    /// continuous one started in the background (`cancel: true` stops it).
    /// Each side is a database of this server (by name) or a URL.
    func replicate(_ r: CouchRequest) async throws -> HTTPAnswer {
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
        if ReplicationRequest.targetNeedsCreating(targetSpec, create: options.createTarget, in: server.registry) {
            // As CouchDB: the source is opened first, so one that cannot be
            // reached leaves no new, empty target behind.
            do {
                try await ReplicationRequest.checkSource(source)
            } catch let error as ReplicationError {
                throw Self.replicationFailure(error)
            }
        }
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
            throw Self.replicationFailure(error)
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
        return HTTPAnswer.json(.object([
            "ok": true, "session_id": history["session_id"]!, "source_last_seq": seq,
            "replication_id_version": 4, "history": [history],
        ]))
    }

    func activeTasks(_ r: CouchRequest) async throws -> HTTPAnswer {
        .json(.array(server.replications.activeTasks() + server.replicatorDatabase.activeTasks()))
    }

    /// A page of a `_scheduler` listing (`limit`, `skip`).
    func page(_ r: CouchRequest, _ key: String, _ rows: [JSON]) throws -> HTTPAnswer {
        let limit = try r.int("limit"), skip = try r.int("skip") ?? 0
        let kept = rows.dropFirst(skip).prefix(limit ?? .max)
        var page: JSONObject = ["total_rows": .int(rows.count), "offset": .int(skip)]
        page[key] = .array(Array(kept))
        return .json(.object(page))
    }

    /// `GET /_scheduler/jobs` and `/_scheduler/docs`.
    func scheduler(_ r: CouchRequest) async throws -> HTTPAnswer {
        switch r.parameter("list") {
        case "jobs": return try page(r, "jobs", server.replications.schedulerJobs() + server.replicatorDatabase.schedulerJobs())
        case "docs": return try page(r, "docs", server.replicatorDatabase.schedulerDocuments())
        default: throw DocumentError(.notFound, "Unknown path: /_scheduler/\(r.parameter("list"))")
        }
    }

    /// `GET /_scheduler/docs/_replicator` (the only replicator database).
    func schedulerDocuments(_ r: CouchRequest) async throws -> HTTPAnswer {
        guard r.databaseName == ReplicatorDatabase.name else { throw DocumentError(.notFound, "Database does not exist: \(r.databaseName)") }
        return try page(r, "docs", server.replicatorDatabase.schedulerDocuments())
    }

    /// `GET /_scheduler/docs/_replicator/{docid}`.
    func schedulerDocument(_ r: CouchRequest) async throws -> HTTPAnswer {
        guard r.databaseName == ReplicatorDatabase.name else { throw DocumentError(.notFound, "Database does not exist: \(r.databaseName)") }
        guard let document = server.replicatorDatabase.schedulerDocument(r.parameter("id")) else { throw DocumentError(.notFound, "unknown") }
        return .json(document)
    }
}
