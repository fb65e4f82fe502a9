import Foundation
import StrataDocuments

/// One side of a replication: a database in this process or on a server.
public enum ReplicationEndpoint: Sendable {
    /// A `DocumentDatabase` in this process (a local file, an in-memory store).
    case local(DocumentDatabase)
    /// A database on a CouchDB-protocol server.
    case remote(RemoteDatabase)

    /// `SOURCE` as `strata replicate` takes it: an `http(s)://` URL of a
    /// database (credentials may be in the URL), or the path of a local file.
    public static func parse(_ text: String) throws -> ReplicationEndpoint {
        let lowered = text.lowercased()
        if lowered.hasPrefix("http://") || lowered.hasPrefix("https://") {
            guard let url = URL(string: text), !url.path.isEmpty, url.path != "/" else {
                throw RemoteError(status: 0, error: "bad_url", reason: "a database URL ends with the database's name: \(text)")
            }
            let name = url.lastPathComponent
            let server = url.deletingLastPathComponent()
            return .remote(try CouchClient(url: server).database(name))
        }
        return .local(try DocumentDatabase(path: text))
    }

    var peer: any ReplicationPeer {
        switch self {
        case .local(let db): LocalPeer(db: db)
        case .remote(let db): RemotePeer(db: db)
        }
    }

    /// How this side is named in the replication's id and in messages.
    var label: String {
        switch self {
        case .local(let db): "local:\(db.name)"
        case .remote(let db): db.url.absoluteString
        }
    }
}

/// What the replicator needs of each side, as the replication protocol
/// names it.
protocol ReplicationPeer: Sendable {
    /// A name that stays the same for the same database (the replication
    /// id is derived from both sides' names).
    func identity() async throws -> String
    func exists() async throws -> Bool
    func create() async throws
    /// Changes after `since` (all leaf revisions); with `wait`, a longpoll.
    func changes(since: JSON, limit: Int, filter: ReplicationFilter?, wait: Duration?) async throws -> RemoteChangesResult
    /// Of the given revisions, those missing here.
    func missingRevisions(_ revisions: [String: [String]]) async throws -> [String: [String]]
    /// The revisions with `_revisions` and attachments inline.
    func revisions(_ wanted: [String: [String]]) async throws -> [JSONObject]
    /// Writes with `new_edits=false`; answers the failures.
    func write(_ documents: [JSONObject]) async throws -> [(id: String, error: DocumentError)]
    func checkpoint(_ id: String) async throws -> JSONObject?
    func saveCheckpoint(_ id: String, _ document: JSONObject) async throws
    func ensureFullCommit() async throws
}

/// Which documents a replication carries.
public enum ReplicationFilter: Sendable {
    /// Only these ids (`doc_ids`).
    case documentIDs([String])
    /// Only documents matching a Mango selector.
    case selector(JSON)
    /// A filter function of a design document, `"ddoc/name"`, run by the
    /// source (JavaScript on a server; a registered Swift filter on a local
    /// store), with its query parameters.
    case function(String, parameters: [String: String] = [:])

    var label: String {
        switch self {
        case .documentIDs(let ids): "doc_ids:" + ids.sorted().joined(separator: ",")
        case .selector(let selector): "selector:" + selector.canonicalText
        case .function(let name, let parameters):
            "filter:\(name)?" + parameters.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: "&")
        }
    }
}

// MARK: - A database on a server

struct RemotePeer: ReplicationPeer {
    let db: RemoteDatabase
    /// Whether `_bulk_get` answered; off after a 404/405/400, as PouchDB.
    private let bulkGetWorks = Box(true)

    init(db: RemoteDatabase) { self.db = db }

    func identity() async throws -> String {
        let uuid = try await db.client.serverInfo()["uuid"]?.stringValue ?? ""
        return "\(uuid)|\(db.url.absoluteString)"
    }

    func exists() async throws -> Bool { try await db.exists() }
    func create() async throws { try await db.createIfMissing() }

    func changes(since: JSON, limit: Int, filter: ReplicationFilter?, wait: Duration?) async throws -> RemoteChangesResult {
        var options = RemoteChangesOptions(since: since, limit: limit, style: .allDocs, timeout: wait ?? .seconds(60))
        switch filter {
        case .documentIDs(let ids): options.documentIDs = ids
        case .selector(let selector): options.selector = selector
        case .function(let name, let parameters):
            options.filter = name
            options.filterParameters = parameters
        case nil: break
        }
        return try await db.changes(options, longpoll: wait != nil)
    }

    func missingRevisions(_ revisions: [String: [String]]) async throws -> [String: [String]] {
        try await db.revisionsDiff(revisions).mapValues(\.missing).filter { !$0.value.isEmpty }
    }

    func revisions(_ wanted: [String: [String]]) async throws -> [JSONObject] {
        let ids = wanted.keys.sorted()
        if bulkGetWorks.value {
            do {
                let requests = ids.flatMap { id in wanted[id]!.map { (id: id, rev: Optional($0)) } }
                let results = try await db.bulkGet(requests, revs: true, latest: true, attachments: true)
                return results.flatMap { $0.docs.compactMap { if case .ok(let doc) = $0 { doc } else { nil } } }
            } catch let error as RemoteError where [400, 404, 405, 501].contains(error.status) {
                bulkGetWorks.value = false
            }
        }
        // A server without _bulk_get: one open_revs GET per document.
        var documents: [JSONObject] = []
        for id in ids {
            let revisions = try await db.openRevisions(id: id, revisions: wanted[id]!,
                                                       options: DocumentReadOptions(revs: true, attachments: true, latest: true))
            for case .ok(let doc) in revisions { documents.append(doc) }
        }
        return documents
    }

    func write(_ documents: [JSONObject]) async throws -> [(id: String, error: DocumentError)] {
        guard !documents.isEmpty else { return [] }
        let results = try await db.bulkPut(documents, newEdits: false)
        // new_edits=false answers only the failures, in order, each with its id.
        return results.compactMap { result in
            guard case .failure(let error) = result else { return nil }
            return ("", error)
        }
    }

    func checkpoint(_ id: String) async throws -> JSONObject? { try await db.localDocument(id: id) }

    func saveCheckpoint(_ id: String, _ document: JSONObject) async throws { try await db.putLocal(id: id, document) }

    func ensureFullCommit() async throws { try await db.ensureFullCommit() }
}

// MARK: - A database in this process

struct LocalPeer: ReplicationPeer {
    let db: DocumentDatabase

    func identity() async throws -> String {
        try await blocking {
            // A random id kept in the file, so a copy of the file is a new peer
            // only when it is a new file.
            if let known = try db.metadata("replication_peer")?.stringValue { return "local|\(known)|\(db.name)" }
            let made = UUID().uuidString.lowercased()
            try db.setMetadata("replication_peer", .string(made))
            return "local|\(made)|\(db.name)"
        }
    }

    func exists() async throws -> Bool { true }
    func create() async throws {}

    func changes(since: JSON, limit: Int, filter: ReplicationFilter?, wait: Duration?) async throws -> RemoteChangesResult {
        var options = ChangesOptions(since: Self.sequence(since), limit: limit, style: .allDocs)
        var function: (String, [String: String])?
        switch filter {
        case .documentIDs(let ids): options.documentIDs = Set(ids)
        case .selector(let selector): options.selector = selector
        case .function(let name, let parameters): function = (name, parameters)
        case nil: break
        }
        let final = options
        let named = function
        let db = self.db
        let read = { @Sendable () throws -> ChangesResult in
            if let (name, parameters) = named {
                let query = JSONObject(parameters.sorted { $0.key < $1.key }.map { ($0.key, JSON.string($0.value)) })
                return try db.changes(final, filter: name, request: .object(["query": .object(query)]))
            }
            return try db.changes(final)
        }
        var result = try await blocking(read)
        if result.results.isEmpty, let wait {
            // Wait for the next write (or the timeout), then read again.
            try await waitForChange(after: result.lastSeq, within: wait)
            result = try await blocking(read)
        }
        return RemoteChangesResult(results: result.results.map {
            RemoteChange(seq: .int($0.seq), id: $0.id, changes: $0.changes, deleted: $0.deleted)
        }, lastSeq: .int(result.lastSeq), pending: result.pending)
    }

    /// Returns when the database's sequence passes `sequence`, or after `timeout`.
    /// A failure to follow the database's changes is thrown, not taken
    /// for a change.
    private func waitForChange(after sequence: Int, within timeout: Duration) async throws {
        let db = self.db
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                var options = ChangesOptions(since: sequence)
                options.limit = 1
                for try await _ in db.liveChanges(options) { return }
            }
            group.addTask { try? await Task.sleep(for: timeout) }
            defer { group.cancelAll() }
            try await group.next()
        }
        try Task.checkCancellation()
    }

    func missingRevisions(_ revisions: [String: [String]]) async throws -> [String: [String]] {
        let db = self.db
        return try await blocking { try db.revisionsDiff(revisions).mapValues(\.missing).filter { !$0.value.isEmpty } }
    }

    func revisions(_ wanted: [String: [String]]) async throws -> [JSONObject] {
        let db = self.db
        return try await blocking {
            let requests = wanted.keys.sorted().map { (id: $0, revisions: Optional(wanted[$0]!)) }
            let results = try db.openRevisions(requests, options: DocumentReadOptions(revs: true, attachments: true, latest: true))
            var documents: [JSONObject] = []
            for case .success(let revisions) in results {
                for case .ok(let doc) in revisions { documents.append(doc) }
            }
            return documents
        }
    }

    func write(_ documents: [JSONObject]) async throws -> [(id: String, error: DocumentError)] {
        let db = self.db
        return try await blocking {
            let results = try db.bulkPut(documents, newEdits: false)
            return zip(documents, results).compactMap { document, result in
                guard case .failure(let error) = result else { return nil }
                return (document["_id"]?.stringValue ?? "", error)
            }
        }
    }

    func checkpoint(_ id: String) async throws -> JSONObject? {
        let db = self.db
        return try await blocking {
            do { return try db.localDocument(id: "_local/" + id) } catch let error as DocumentError where error.kind == .notFound { return nil }
        }
    }

    func saveCheckpoint(_ id: String, _ document: JSONObject) async throws {
        let db = self.db
        var document = document
        document["_id"] = .string("_local/" + id)
        document["_rev"] = nil
        let final = document
        _ = try await blocking { try db.putLocal(final) }
    }

    func ensureFullCommit() async throws {}

    /// A local sequence from what a checkpoint holds (`12`, `"12"`).
    static func sequence(_ value: JSON) -> Int {
        value.intValue ?? value.stringValue.flatMap(RemoteDatabase.sequenceNumber) ?? 0
    }
}

/// Runs SQLite work on a thread of its own, never on Swift's cooperative pool.
func blocking<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await DocumentDatabase.blocking(on: blockingQueue, work)
}

private let blockingQueue = DispatchQueue(label: "strata.sync.sqlite", attributes: .concurrent)
