import Foundation
import Strata

/// The asynchronous forms: the same names as the synchronous ones (which
/// async code reaches with `await`), the ``DocumentStore`` calls a
/// `RemoteDatabase` answers too. Writes go through the group commit
/// (``commit(_:newEdits:userContext:)``), reads through the core's async
/// access; the rest runs on a queue of the store's own. No thread of
/// Swift's cooperative pool waits on SQLite.
extension DocumentDatabase: DocumentStore {
    public var location: String { "local:\(name)" }

    /// An id kept in the file (made on first use), so a copy of the file
    /// is a new database only when it becomes a new file.
    ///
    /// Made in the writer's transaction, read again there: the push and the
    /// pull of a first sync ask at once, and each had made an id of its
    /// own, one of which the file then lost, with it the checkpoints kept
    /// under it (the next run checked every revision again).
    public func identity() async throws -> String {
        let tables = self.tables
        let key = "replication_peer"
        if let peer = try await writer.read({ db in try tables.meta(db, key)?.stringValue }) {
            return "local|\(peer)|\(name)"
        }
        let peer = try await writer.write { db -> String in
            if let peer = try tables.meta(db, key)?.stringValue { return peer }
            let peer = UUID().uuidString.lowercased()
            try tables.setMeta(db, key, .string(peer))
            return peer
        }
        return "local|\(peer)|\(name)"
    }

    public func exists() async throws -> Bool { true }
    public func createIfMissing() async throws {}
    public func ensureFullCommit() async throws {}

    public func info() async throws -> DocumentDatabaseInfo {
        try await run { try self.info() }
    }

    // MARK: Documents

    public func document(id: String, options: DocumentReadOptions = DocumentReadOptions()) async throws -> JSONObject {
        let tables = self.tables
        return try await writer.read { db in try tables.read(db, id: id, options: options) }
    }

    @discardableResult
    public func put(_ document: JSONObject, newEdits: Bool = true) async throws -> DocumentWriteResult {
        try await commit(document, newEdits: newEdits, userContext: nil)
    }

    /// ``put(_:newEdits:)`` as `userContext` writes it (validation sees
    /// that user).
    @discardableResult
    public func put(_ document: JSONObject, newEdits: Bool = true, userContext: JSON?) async throws -> DocumentWriteResult {
        try await commit(document, newEdits: newEdits, userContext: userContext)
    }

    @discardableResult
    public func delete(id: String, rev: String) async throws -> DocumentWriteResult {
        try await commit(["_id": .string(id), "_rev": .string(rev), "_deleted": .bool(true)], userContext: nil)
    }

    public func bulkPut(_ documents: [JSONObject], newEdits: Bool = true) async throws -> [Result<DocumentWriteResult, DocumentError>] {
        try await run { try self.bulkPut(documents, newEdits: newEdits) }
    }

    public func revisionsDiff(_ request: [String: [String]]) async throws -> [String: (missing: [String], possibleAncestors: [String])] {
        try await run { try self.revisionsDiff(request) }
    }

    public func revisionsDiff(_ request: [(id: String, revisions: [String])]) async throws -> [(id: String, missing: [String], possibleAncestors: [String])] {
        try await run { try self.revisionsDiff(request) }
    }

    public func openRevisions(_ requests: [(id: String, revisions: [String]?)], options: DocumentReadOptions = DocumentReadOptions()) async throws -> [Result<[OpenRevision], DocumentError>] {
        let requests = requests.map { Request(id: $0.id, revisions: $0.revisions) }
        return try await run { try self.openRevisions(requests.map { ($0.id, $0.revisions) }, options: options) }
    }

    /// An `open_revs` request, sendable.
    private struct Request: Sendable {
        let id: String
        let revisions: [String]?
    }

    public func allDocuments(_ options: AllDocumentsOptions = AllDocumentsOptions()) async throws -> AllDocumentsResult {
        let tables = self.tables
        return try await writer.read { db in try tables.allDocuments(db, options) }
    }

    // MARK: Changes

    public func changes(_ options: ChangesOptions = ChangesOptions()) async throws -> ChangesResult {
        var options = options
        if options.since == .now { options.since = try await run { try self.updateSequence() } }
        let final = options
        let result = try await run { try self.changes(final) }
        guard result.results.isEmpty, let wait = options.longpoll, !options.descending else { return result }
        // Wait for the next write (or the time), then read again.
        try await waitForChange(after: result.lastSeq, within: wait)
        return try await run { try self.changes(final) }
    }

    /// Returns when the feed passes `sequence`, or after `timeout`. A
    /// failure to follow the feed is thrown, not taken for a change.
    private func waitForChange(after sequence: ChangeSequence, within timeout: Duration) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask {
                for try await _ in self.liveChanges(ChangesOptions(since: sequence)) { return }
            }
            group.addTask { try? await Task.sleep(for: timeout) }
            defer { group.cancelAll() }
            try await group.next()
        }
        try Task.checkCancellation()
    }

    // MARK: Local documents

    public func localDocument(id: String) async throws -> JSONObject? {
        try await run { try self.localDocument(id: id) }
    }

    @discardableResult
    public func putLocal(id: String, _ document: JSONObject) async throws -> DocumentWriteResult {
        try await run { try self.putLocal(id: id, document) }
    }

    public func deleteLocal(id: String) async throws {
        try await run { try self.deleteLocal(id: id) }
    }

    // MARK: Attachments

    public func attachment(id: String, name: String, rev: String? = nil) async throws -> Attachment {
        try await run { try self.attachment(id: id, name: name, rev: rev) }
    }

    @discardableResult
    public func putAttachment(id: String, name: String, rev: String?, contentType: String, data: Data) async throws -> DocumentWriteResult {
        try await run { try self.putAttachment(id: id, name: name, rev: rev, contentType: contentType, data: data) }
    }

    @discardableResult
    public func deleteAttachment(id: String, name: String, rev: String) async throws -> DocumentWriteResult {
        try await run { try self.deleteAttachment(id: id, name: name, rev: rev) }
    }

    // MARK: Queries and design functions

    public func find(_ query: FindQuery) async throws -> FindResult {
        try await run { try self.find(query) }
    }

    public func view(design: String, view: String, options: ViewQueryOptions = ViewQueryOptions()) async throws -> ViewResult {
        try await run(on: Self.functionQueue) { try self.view(design: design, view: view, options: options) }
    }

    /// Runs the update function as the app (an admin): builds CouchDB's
    /// request object from `request`, runs the function (Swift, or the
    /// stored JavaScript) in turn with other calls on the same document,
    /// validates and saves what it answers.
    public func update(design: String, function: String, id: String?, request: UpdateRequest) async throws -> UpdateHandlerAnswer {
        try await update(design: design, function: function, id: id, request: request, userContext: nil)
    }

    /// ``update(design:function:id:request:)`` as `userContext` calls it
    /// (`req.userCtx`, and what validation sees).
    public func update(design: String, function: String, id: String?, request: UpdateRequest, userContext: JSON?) async throws -> UpdateHandlerAnswer {
        let object = try await requestObject(request, database: name, design: design, function: function, id: id,
                                             info: nil, userContext: userContext)
        let outcome = try await runUpdate(design: design, function: function, id: id, request: object, userContext: userContext)
        return try UpdateHandlerAnswer(rendering: outcome.response, written: outcome.written)
    }

    /// CouchDB's request object for a call of an update function:
    /// `database` is the name the caller knows the database by, `info`
    /// its `GET /{db}` answer (nil: made here).
    package func requestObject(_ request: UpdateRequest, database: String, design: String, function: String, id: String?,
                               info: JSONObject?, userContext: JSON?) async throws -> JSON {
        let (made, security) = try await run {
            (info == nil ? try self.info() : nil, try self.metadata("_security") ?? .object([:]))
        }
        var described = info ?? made?.json ?? JSONObject()
        if info == nil { described["db_name"] = .string(database) }
        return request.object(database: database, design: design, function: function, id: id,
                              info: described, userContext: userContext, security: security)
    }

    // MARK: Security

    public func security() async throws -> JSONObject {
        try await run { try self.security() }
    }

    public func setSecurity(_ security: JSONObject) async throws {
        try await run { try self.setSecurity(security) }
    }

    // MARK: -

    /// Runs synchronous work of this store off the cooperative pool.
    private func run<T: Sendable>(on queue: DispatchQueue = DocumentDatabase.storeQueue, _ work: @escaping @Sendable () throws -> T) async throws -> T {
        try await Self.blocking(on: queue, work)
    }

    /// Where the asynchronous forms run SQLite work.
    static let storeQueue = DispatchQueue(label: "strata.documents.store", attributes: .concurrent)
}
