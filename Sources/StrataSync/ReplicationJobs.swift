import Foundation
import Strata
import StrataDocuments

/// Continuous replications started with `POST /_replicate`, by id, until
/// cancelled or the server stops.
package final class ReplicationJobs: Sendable {
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

    package init() {}

    private let jobs = Locked<[String: Job]>([:])

    package func start(id: String, source: String, target: String, localDatabases: Set<String> = [], _ replicator: Replicator) -> Bool {
        jobs.withLock { jobs in
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
        jobs.withLock { jobs in if jobs[id] != nil { change(&jobs[id]!) } }
    }

    package func cancel(_ id: String) -> Bool {
        let job = jobs.withLock { $0.removeValue(forKey: id) }
        job?.task.cancel()
        return job != nil
    }

    /// Ends the jobs reading or writing the database `name`, which was
    /// just deleted (CouchDB drops them too; left running they would fail
    /// on a closed file forever).
    package func databaseDeleted(_ name: String) {
        let ended = jobs.withLock { jobs -> [Job] in
            let ids = jobs.filter { $0.value.localDatabases.contains(name) }.map(\.key)
            return ids.compactMap { jobs.removeValue(forKey: $0) }
        }
        for job in ended { job.task.cancel() }
    }

    package func cancelAll() {
        let all = jobs.withLock { jobs -> [Job] in
            defer { jobs.removeAll() }
            return Array(jobs.values)
        }
        for job in all { job.task.cancel() }
    }

    /// `_active_tasks` entries, CouchDB's shape.
    package func activeTasks() -> [JSON] {
        jobs.withLock { jobs in
            jobs.sorted { $0.key < $1.key }.map { id, job in
                .object(Self.task(id: id, source: job.source, target: job.target, continuous: true,
                                  started: job.started, progress: job.progress, error: job.error))
            }
        }
    }

    /// `_scheduler/jobs` entries.
    package func schedulerJobs() -> [JSON] {
        jobs.withLock { jobs in
            jobs.sorted { $0.key < $1.key }.map { id, job in
                .object(Self.job(id: id, docID: nil, source: job.source, target: job.target, started: job.started,
                                 progress: job.progress, error: job.error))
            }
        }
    }

    /// One replication as `_active_tasks` shows it.
    package static func task(id: String, source: String, target: String, continuous: Bool, started: Date,
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
    package static func stats(_ progress: ReplicationProgress) -> JSONObject {
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
    package static func job(id: String, docID: String?, source: String, target: String, started: Date,
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
