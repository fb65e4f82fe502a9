import Foundation
import HTTPTypes
import StrataDocuments
import StrataSync

/// A database as a whole: create, delete, information, `_security`,
/// `_revs_limit`, compaction and the other maintenance calls.
@available(macOS 14, iOS 17, tvOS 17, *)
struct DatabaseHandlers: Sendable {
    let server: CouchServer

    /// `GET /{db}`.
    func info(_ db: DocumentDatabase, _ r: CouchRequest) async throws -> HTTPAnswer {
        let name = r.databaseName
        return .json(try await offload { try Self.information(name, db) })
    }

    /// CouchDB's information about a database (`GET /{db}`, `_dbs_info`).
    static func information(_ name: String, _ db: DocumentDatabase) throws -> JSON {
        var object = try db.info().json
        object["db_name"] = .string(name)
        object["instance_start_time"] = .string(try db.metadata("instance_start_time")?.stringValue ?? "0")
        return .object(object)
    }

    /// `PUT /{db}` (server admins): the database starts with the server's
    /// default `_security`.
    func create(_ r: CouchRequest) async throws -> HTTPAnswer {
        let name = r.databaseName, registry = server.registry
        try await offload { try registry.create(name) }
        if name == ReplicatorDatabase.name { server.replicatorDatabase.reset(registry) }
        var headers: HTTPFields = [:]
        headers[.location] = r.location(of: [name])
        return .json(["ok": true], status: .created, headers: headers)
    }

    /// `DELETE /{db}` (server admins). A script whose document id came out
    /// empty (`DELETE /db?rev=…`) deletes nothing.
    func delete(_ r: CouchRequest) async throws -> HTTPAnswer {
        if r.query["rev"] != nil {
            throw DocumentError(.badRequest, "You tried to DELETE a database with a ?=rev parameter. Did you mean to DELETE a document instead?")
        }
        let name = r.databaseName, registry = server.registry
        try await offload { try registry.delete(name) }
        server.replications.databaseDeleted(name)
        if name == ReplicatorDatabase.name { server.replicatorDatabase.reset(registry) }
        return .ok
    }

    func ensureFullCommit(_ db: DocumentDatabase, _ r: CouchRequest) async throws -> HTTPAnswer {
        let start = try await offload { try db.metadata("instance_start_time")?.stringValue ?? "0" }
        return .json(["ok": true, "instance_start_time": .string(start)], status: .created)
    }

    /// `POST /{db}/_compact` (and `/_compact/{ddoc}`, a design's views,
    /// which SQLite keeps compact with the database).
    func compact(_ db: DocumentDatabase, _ r: CouchRequest) async throws -> HTTPAnswer {
        try await offload { try db.compact() }
        return .json(["ok": true], status: .accepted)
    }

    /// `POST /{db}/_view_cleanup`: drops the indexes no design document
    /// builds any more.
    func viewCleanup(_ db: DocumentDatabase, _ r: CouchRequest) async throws -> HTTPAnswer {
        try await offload { try db.cleanUpViewIndexes() }
        return .json(["ok": true], status: .accepted)
    }

    func security(_ db: DocumentDatabase, _ r: CouchRequest) async throws -> HTTPAnswer {
        .json(try await offload { try db.metadata("_security") ?? .object([:]) })
    }

    func setSecurity(_ db: DocumentDatabase, _ r: CouchRequest) async throws -> HTTPAnswer {
        guard let security = try r.json().objectValue else { throw DocumentError(.badRequest, "Security object must be a JSON object") }
        let name = r.databaseName, registry = server.registry
        try await offload { try registry.setSecurity(security, of: name) }
        return .ok
    }

    func revisionsLimit(_ db: DocumentDatabase, _ r: CouchRequest) async throws -> HTTPAnswer {
        .json(.int(try await offload { try db.revisionsLimit() }))
    }

    func setRevisionsLimit(_ db: DocumentDatabase, _ r: CouchRequest) async throws -> HTTPAnswer {
        guard let n = try r.json().intValue else { throw DocumentError(.badRequest, "revs_limit must be a positive integer") }
        try await offload { try db.setRevisionsLimit(n) }
        return .ok
    }

    /// `POST /{db}/_purge {"id": ["rev", …]}` (server admins): the leaf
    /// revisions forgotten, as if never written (CouchDB's limits: 100
    /// documents, 1,000 revisions a request).
    func purge(_ db: DocumentDatabase, _ r: CouchRequest) async throws -> HTTPAnswer {
        let request = try BulkHandlers.revisionsRequest(r.object())
        guard request.count <= 100 else { throw DocumentError(.badRequest, "Exceeded maximum number of documents.") }
        guard request.map(\.revisions.count).reduce(0, +) <= 1000 else { throw DocumentError(.badRequest, "Exceeded maximum number of revisions.") }
        let purged = try await offload { try db.purge(request) }
        let answer = JSONObject(purged.sorted { $0.id < $1.id }.map { ($0.id, JSON.array($0.revisions.map(JSON.string))) })
        return .json(["purge_seq": .null, "purged": .object(answer)], status: .created)
    }

    func purgedInfosLimit(_ db: DocumentDatabase, _ r: CouchRequest) async throws -> HTTPAnswer {
        .json(.int(try await offload { try db.purgedInfosLimit() }))
    }

    func setPurgedInfosLimit(_ db: DocumentDatabase, _ r: CouchRequest) async throws -> HTTPAnswer {
        guard let limit = try r.json().intValue, limit > 0 else { throw DocumentError(.badRequest, "`purged_infos_limit` must be positive integer") }
        try await offload { try db.setPurgedInfosLimit(limit) }
        return .ok
    }

    /// Temporary views went with CouchDB 2.0: 410, as CouchDB 3 answers.
    func temporaryView(_ db: DocumentDatabase, _ r: CouchRequest) async throws -> HTTPAnswer {
        throw DocumentError(status: 410, error: "gone", reason: "Temporary views are not supported in CouchDB")
    }
}
