import Foundation
import StrataDocuments

/// The store `strata replicate` names: an `http(s)://` URL of a database
/// (credentials may be in the URL), or the path of a local file.
///
/// ```swift
/// let source = try openDocumentStore("votes.sqlite")
/// let target = try openDocumentStore("http://admin:secret@127.0.0.1:5984/voting")
/// try await Replicator(source: source, target: target).run()
/// ```
public func openDocumentStore(_ location: String) throws -> any DocumentStore {
    let lowered = location.lowercased()
    if lowered.hasPrefix("http://") || lowered.hasPrefix("https://") {
        guard let url = URL(string: location), !url.path.isEmpty, url.path != "/" else {
            throw RemoteError(status: 0, error: "bad_url", reason: "a database URL ends with the database's name: \(location)")
        }
        let name = url.lastPathComponent
        let server = url.deletingLastPathComponent()
        return try CouchClient(url: server).database(name)
    }
    return try DocumentDatabase(path: location)
}

/// What the replicator needs of each side, as the replication protocol
/// names it: a `DocumentStore` (``StorePeer``), or a stand-in a test
/// puts in its place.
protocol ReplicationPeer: Sendable {
    /// A name that stays the same for the same database (the replication
    /// id is derived from both sides' names).
    func identity() async throws -> String
    func exists() async throws -> Bool
    func create() async throws
    /// Changes after `since` (all leaf revisions); with `wait`, a longpoll.
    func changes(since: ChangeSequence, limit: Int, filter: ReplicationFilter?, wait: Duration?) async throws -> ChangesResult
    /// Of the given revisions, those missing here.
    /// Ids are kept apart by their bytes, as CouchDB keeps them.
    func missingRevisions(_ revisions: [(id: String, revisions: [String])]) async throws -> [(id: String, revisions: [String])]
    /// The revisions with `_revisions` and attachments inline.
    func revisions(_ wanted: [(id: String, revisions: [String])]) async throws -> [JSONObject]
    /// Writes with `new_edits=false`; answers the failures.
    func write(_ documents: [JSONObject]) async throws -> [DocumentError]
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

/// A store as the replicator talks to it: the same calls for a database
/// in this process and one on a server.
struct StorePeer: ReplicationPeer {
    let store: any DocumentStore

    func identity() async throws -> String { try await store.identity() }
    func exists() async throws -> Bool { try await store.exists() }
    func create() async throws { try await store.createIfMissing() }

    func changes(since: ChangeSequence, limit: Int, filter: ReplicationFilter?, wait: Duration?) async throws -> ChangesResult {
        var options = ChangesOptions(since: since, limit: limit, style: .allDocs, longpoll: wait)
        switch filter {
        case .documentIDs(let ids): options.documentIDs = ids
        case .selector(let selector): options.selector = selector
        case .function(let name, let parameters):
            options.designFilter = name
            options.filterParameters = parameters
        case nil: break
        }
        return try await store.changes(options)
    }

    func missingRevisions(_ revisions: [(id: String, revisions: [String])]) async throws -> [(id: String, revisions: [String])] {
        try await store.revisionsDiff(revisions).filter { !$0.missing.isEmpty }.map { (id: $0.id, revisions: $0.missing) }
    }

    func revisions(_ wanted: [(id: String, revisions: [String])]) async throws -> [JSONObject] {
        let requests = wanted.sorted { $0.id < $1.id }.map { (id: $0.id, revisions: Optional($0.revisions)) }
        let results = try await store.openRevisions(requests, options: DocumentReadOptions(revs: true, attachments: true, latest: true))
        var documents: [JSONObject] = []
        for case .success(let revisions) in results {
            for case .ok(let doc) in revisions { documents.append(doc) }
        }
        return documents
    }

    func write(_ documents: [JSONObject]) async throws -> [DocumentError] {
        guard !documents.isEmpty else { return [] }
        // A server answers only the failures of new_edits=false; a local
        // store answers every document: the failures are the same.
        return try await store.bulkPut(documents, newEdits: false).compactMap { result in
            guard case .failure(let error) = result else { return nil }
            return error
        }
    }

    func checkpoint(_ id: String) async throws -> JSONObject? { try await store.localDocument(id: id) }

    func saveCheckpoint(_ id: String, _ document: JSONObject) async throws {
        var document = document
        document["_rev"] = nil
        _ = try await store.putLocal(id: id, document)
    }

    func ensureFullCommit() async throws { try await store.ensureFullCommit() }
}
