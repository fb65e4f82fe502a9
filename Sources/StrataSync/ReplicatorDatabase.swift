import Foundation
import Strata
import StrataDocuments

/// The `_replicator` database, as CouchDB 3's scheduling replicator runs it:
/// a document there (the same fields as a `POST /_replicate` body) starts a
/// replication, deleting it stops the replication, and a one-shot
/// replication writes its end into the document (`_replication_state`
/// `completed` with `_replication_stats`, or `failed` with
/// `_replication_state_reason` when the document cannot be run). States
/// along the way (`running`, `crashing` with the error and a retry after a
/// back-off) are shown by `GET /_scheduler/docs`, not written.
///
/// Jobs start again when the server starts, continuous ones from their
/// checkpoints. Documents in a terminal state are left alone; design and
/// `_local` documents are ignored.
package final class ReplicatorDatabase: Sendable {
    package static let name = "_replicator"

    /// What the scheduler knows of one replication document.
    struct Entry {
        var fingerprint: String
        var replicationID: String?
        var source: String
        var target: String
        var state: String
        var errorCount = 0
        var error: String?
        var progress = ReplicationProgress()
        var continuous = false
        var started = Date()
        var updated = Date()
        var task: Task<Void, Never>?
    }

    private let documents = Locked<[String: Entry]>([:])
    private let follower = Locked<Task<Void, Never>?>(nil)
    /// How long a crashed job waits before its next try, doubled each time up
    /// to `maximumBackoff`.
    let initialBackoff: Duration
    let maximumBackoff: Duration

    package init(initialBackoff: Duration = .seconds(1), maximumBackoff: Duration = .seconds(300)) {
        self.initialBackoff = initialBackoff
        self.maximumBackoff = maximumBackoff
    }

    /// The validation of `_replicator` documents: admins only, and the
    /// fields a replication needs, with their types.
    package static var designFunctions: DesignFunctions {
        var functions = DesignFunctions(version: "1")
        functions.validate = { document, _, user, _ in
            let roles = user["roles"]?.arrayValue ?? []
            guard roles.contains(.string("_admin")) else {
                if user["name"] == nil || user["name"] == .null { throw DocumentError(.unauthorized, "You are not a server admin.") }
                throw DocumentError(.forbidden, "Only server admins may write replication documents")
            }
            if document["_deleted"]?.boolValue == true || document["_id"]?.stringValue?.hasBytePrefix(DocumentDatabase.designPrefix) == true { return }
            do {
                _ = try ReplicationRequest(document)
            } catch let error as DocumentError {
                throw DocumentError(.forbidden, error.reason)
            }
        }
        return functions
    }

    // MARK: following the database

    /// Follows `_replicator` until cancelled; starts again from the first
    /// change when the database is deleted and made again (`reset`).
    package func start(_ server: any DatabaseResolver) {
        follower.withLock { follower in
            follower?.cancel()
            follower = Task { [weak self, weak server] in
                while !Task.isCancelled, let self, let server {
                    await self.follow(server)
                    // The database is gone or failed: try again shortly.
                    try? await Task.sleep(for: .seconds(1))
                }
            }
        }
    }

    /// After `_replicator` is deleted or created: every job stops, and the
    /// documents are read again from the start.
    package func reset(_ server: any DatabaseResolver) {
        stopAll()
        start(server)
    }

    package func stopAll() {
        let tasks = documents.withLock { documents -> [Task<Void, Never>] in
            defer { documents.removeAll() }
            return documents.values.compactMap(\.task)
        }
        for task in tasks { task.cancel() }
    }

    package func stop() {
        follower.value?.cancel()
        stopAll()
    }

    /// Follows the `_replicator` database's changes. A failure to read
    /// them is not the end: the follower starts again from where it was
    /// (after a pause), until it is cancelled or the database is gone.
    private func follow(_ server: any DatabaseResolver) async {
        var since = ChangeSequence.start
        var pause = Duration.milliseconds(100)
        while !Task.isCancelled {
            guard server.exists(Self.name), let db = try? server.database(Self.name) else { return }
            do {
                for try await change in db.liveChanges(ChangesOptions(since: since)) {
                    since = change.seq
                    pause = .milliseconds(100)
                    if change.id.hasBytePrefix(DocumentDatabase.designPrefix) || change.id.hasBytePrefix("_local/") { continue }
                    if change.deleted {
                        remove(change.id)
                        continue
                    }
                    guard let document = try? await db.document(id: change.id) else { continue }
                    examine(document, db: db, server: server)
                }
                return
            } catch is CancellationError {
                return
            } catch {
                FileHandle.standardError.write(Data("strata: reading the _replicator database's changes failed (\(error)); following again\n".utf8))
                try? await Task.sleep(for: pause)
                pause = min(pause * 2, .seconds(10))
            }
        }
    }

    // MARK: documents

    /// The fields that describe the replication: everything but `_id`,
    /// `_rev` and the fields the replicator writes.
    static func fingerprint(_ document: JSONObject) -> String {
        JSON.object(JSONObject(document.filter { !$0.key.hasBytePrefix("_") }.map { ($0.key, $0.value) })).text
    }

    private func remove(_ id: String) {
        let entry = documents.withLock { $0.removeValue(forKey: id) }
        entry?.task?.cancel()
    }

    private func examine(_ document: JSONObject, db: DocumentDatabase, server: any DatabaseResolver) {
        guard let id = document["_id"]?.stringValue else { return }
        let fingerprint = Self.fingerprint(document)
        let state = document["_replication_state"]?.stringValue
        let previous = documents.withLock { $0[id] }
        if let previous, previous.fingerprint == fingerprint {
            // Already running, or the terminal state this scheduler wrote.
            // (A finished document whose state was removed runs again.)
            let finished = previous.state == "completed" || previous.state == "failed"
            if state == previous.state || (state == nil && !finished) { return }
        }
        previous?.task?.cancel()
        let source = document["source"].map(ReplicationRequest.shown) ?? ""
        let target = document["target"].map(ReplicationRequest.shown) ?? ""
        if state == "completed" || state == "failed" {
            // Finished before: shown, never run again (as CouchDB).
            var entry = Entry(fingerprint: fingerprint, source: source, target: target, state: state!)
            entry.error = document["_replication_state_reason"]?.stringValue
            documents.withLock { $0[id] = entry }
            return
        }
        let request: ReplicationRequest
        let makeReplicator: @Sendable () async throws -> Replicator
        do {
            request = try ReplicationRequest(document)
            // The scheduler retries a crashed job itself, with its own back-off.
            var options = request.options
            options.retries = 3
            let source = try ReplicationRequest.store(request.source, create: false, in: server)
            let targetSpec = request.target
            if ReplicationRequest.targetNeedsCreating(targetSpec, create: options.createTarget, in: server) {
                // Created by the job once the source answers.
                makeReplicator = { [options] in
                    try await ReplicationRequest.checkSource(source)
                    return Replicator(source: source, target: try ReplicationRequest.store(targetSpec, create: true, in: server), options: options)
                }
            } else {
                let replicator = Replicator(source: source, target: try ReplicationRequest.store(targetSpec, create: false, in: server), options: options)
                makeReplicator = { replicator }
            }
        } catch {
            let reason = (error as? DocumentError)?.reason ?? "\(error)"
            documents.withLock { $0[id] = Entry(fingerprint: fingerprint, source: source, target: target, state: "failed", error: reason) }
            Task { await self.finish(id, fingerprint: fingerprint, db: db, fields: [
                "_replication_state": "failed", "_replication_state_reason": .string(reason),
            ]) }
            return
        }
        var entry = Entry(fingerprint: fingerprint, replicationID: request.id, source: source, target: target, state: "running")
        entry.continuous = request.options.continuous
        entry.task = Task { [weak self] in await self?.run(makeReplicator, id: id, fingerprint: fingerprint, db: db) }
        documents.withLock { $0[id] = entry }
    }

    /// Runs one document's job: again after a back-off when it fails, until
    /// it completes or the document changes.
    private func run(_ makeReplicator: @Sendable () async throws -> Replicator, id: String, fingerprint: String, db: DocumentDatabase) async {
        var backoff = initialBackoff
        while !Task.isCancelled {
            do {
                let progress = try await makeReplicator().run { [weak self] progress in
                    self?.update(id, fingerprint) {
                        $0.progress = progress
                        $0.state = "running"
                        $0.errorCount = 0
                        $0.error = nil
                    }
                }
                update(id, fingerprint) {
                    $0.progress = progress
                    $0.state = "completed"
                }
                await finish(id, fingerprint: fingerprint, db: db, fields: [
                    "_replication_state": "completed", "_replication_stats": .object(ReplicationJobs.stats(progress)),
                ])
                return
            } catch {
                if Task.isCancelled || error is CancellationError { return }
                update(id, fingerprint) {
                    $0.state = "crashing"
                    $0.errorCount += 1
                    $0.error = "\(error)"
                }
                try? await Task.sleep(for: backoff)
                backoff = min(backoff * 2, maximumBackoff)
            }
        }
    }

    private func update(_ id: String, _ fingerprint: String, _ change: (inout Entry) -> Void) {
        documents.withLock { documents in
            guard documents[id]?.fingerprint == fingerprint else { return }
            change(&documents[id]!)
            documents[id]!.updated = Date()
        }
    }

    /// Writes a terminal state into the document, unless the document
    /// changed meanwhile (then its new version is what counts).
    private func finish(_ id: String, fingerprint: String, db: DocumentDatabase, fields: JSONObject) async {
        for _ in 0..<5 {
            guard var document = try? await db.document(id: id),
                  Self.fingerprint(document) == fingerprint else { return }
            for (name, value) in fields { document[name] = value }
            document["_replication_state_time"] = .string(Self.timestamp(Date()))
            let written = document
            do {
                _ = try await db.put(written)
                return
            } catch let error as DocumentError where error.kind == .conflict {
                continue
            } catch {
                return
            }
        }
    }

    /// `2026-11-24T10:15:00Z`, as CouchDB writes times.
    package static func timestamp(_ date: Date) -> String { ISO8601DateFormatter().string(from: date) }

    // MARK: what `_scheduler` shows

    /// `_scheduler/docs` entries, by document id.
    package func schedulerDocuments() -> [JSON] {
        documents.withLock { documents in
            documents.sorted { $0.key < $1.key }.map { id, entry in Self.schedulerDocument(id, entry) }
        }
    }

    package func schedulerDocument(_ id: String) -> JSON? {
        documents.withLock { $0[id].map { Self.schedulerDocument(id, $0) } }
    }

    private static func schedulerDocument(_ id: String, _ entry: Entry) -> JSON {
        var info: JSON = .null
        if let error = entry.error {
            info = .object(["error": .string(error)])
        } else if entry.state == "running" || entry.state == "completed" {
            info = .object(ReplicationJobs.stats(entry.progress))
        }
        let running = entry.state == "running" || entry.state == "crashing"
        return .object([
            "database": .string(name), "doc_id": .string(id),
            "id": running ? entry.replicationID.map(JSON.string) ?? .null : .null,
            "node": "strata@127.0.0.1", "source": .string(entry.source), "target": .string(entry.target),
            "state": .string(entry.state), "info": info, "error_count": .int(entry.errorCount),
            "last_updated": .string(timestamp(entry.updated)), "start_time": .string(timestamp(entry.started)),
        ])
    }

    /// Running jobs, as `_active_tasks` shows them.
    package func activeTasks() -> [JSON] {
        running().map { id, entry in
            var task = ReplicationJobs.task(id: entry.replicationID ?? "", source: entry.source, target: entry.target,
                                            continuous: entry.continuous, started: entry.started, progress: entry.progress, error: entry.error)
            task["doc_id"] = .string(id)
            task["database"] = .string(Self.name)
            return .object(task)
        }
    }

    /// Running jobs, as `_scheduler/jobs` shows them.
    package func schedulerJobs() -> [JSON] {
        running().map { id, entry in
            .object(ReplicationJobs.job(id: entry.replicationID ?? "", docID: id, source: entry.source, target: entry.target,
                                        started: entry.started, progress: entry.progress, error: entry.error))
        }
    }

    private func running() -> [(docID: String, entry: Entry)] {
        documents.withLock { documents in
            documents.sorted { $0.key < $1.key }.filter { $0.value.state == "running" || $0.value.state == "crashing" }
                .map { (docID: $0.key, entry: $0.value) }
        }
    }
}
