import Foundation

/// A CouchDB database as Swift code talks to it, wherever it is: a
/// ``DocumentDatabase`` in this process or a `RemoteDatabase` on a
/// CouchDB-protocol server (StrataSync). Both answer the same calls with
/// the same types, so code written against a store runs on either: the
/// replicator copies from one store to another, an app reads its results
/// from the device or from the server with one code path.
///
/// ```swift
/// func questions(in store: some DocumentStore) async throws -> [String] {
///     let page = try await store.allDocuments(AllDocumentsOptions(includeDocs: true))
///     return page.rows.compactMap { $0["doc"]?["question"]?.stringValue }
/// }
/// ```
///
/// Every call is asynchronous: a local store's SQLite work runs off
/// Swift's cooperative threads, a remote one's is a request. Failures are
/// ``DocumentError``s with CouchDB's `status`, `error` and `reason`, the
/// same from both (`conflict`, `not_found`, `forbidden`…).
public protocol DocumentStore: Sendable {
    /// Where the store is, for messages: a server database's URL, or
    /// `local:NAME`.
    var location: String { get }

    /// A name that stays the same for the same database from one run to
    /// the next (replication ids are made from both sides' names): a
    /// server's uuid and the database's URL, or an id kept in the local
    /// file.
    func identity() async throws -> String

    /// Whether the database exists (a local store always does).
    func exists() async throws -> Bool
    /// Creates the database unless it exists (nothing to do locally).
    func createIfMissing() async throws
    /// What `GET /{db}` answers.
    func info() async throws -> DocumentDatabaseInfo
    /// Makes every write so far durable (`_ensure_full_commit`; a local
    /// store's writes already are when they return).
    func ensureFullCommit() async throws

    // MARK: Documents

    /// The document `id` (its winner unless `options.rev` names a
    /// revision). Throws `not_found` when it is missing or deleted.
    func document(id: String, options: DocumentReadOptions) async throws -> JSONObject
    /// Saves a document (`_id`, `_rev` of the leaf it edits, the body).
    /// With `newEdits: false` it carries its own revision and history, as a
    /// replicator writes. Throws `conflict` when `_rev` is not a leaf.
    @discardableResult
    func put(_ document: JSONObject, newEdits: Bool) async throws -> DocumentWriteResult
    /// Deletes a document: a new revision on `rev` marked `_deleted`.
    @discardableResult
    func delete(id: String, rev: String) async throws -> DocumentWriteResult
    /// `_bulk_docs`: one result per document, in order, not atomic. With
    /// `newEdits: false` a server answers only the failures.
    func bulkPut(_ documents: [JSONObject], newEdits: Bool) async throws -> [Result<DocumentWriteResult, DocumentError>]
    /// `_revs_diff`: of the given revisions by id, those this database
    /// lacks, with the leaves they could descend from.
    func revisionsDiff(_ request: [String: [String]]) async throws -> [String: (missing: [String], possibleAncestors: [String])]
    /// `_revs_diff` for a list of ids, each with revisions: the ids with
    /// revisions this database lacks, in the order asked. Ids are compared
    /// in bytes, as CouchDB compares them (a dictionary's `String` keys are
    /// not: a precomposed `é` and `e` with a combining accent are one key).
    func revisionsDiff(_ request: [(id: String, revisions: [String])]) async throws -> [(id: String, missing: [String], possibleAncestors: [String])]
    /// `_bulk_get` (`open_revs` per document where a server has no
    /// `_bulk_get`): for each request the revisions asked for (nil: every
    /// leaf), each a document or missing, or the error that id gave.
    func openRevisions(_ requests: [(id: String, revisions: [String]?)], options: DocumentReadOptions) async throws -> [Result<[OpenRevision], DocumentError>]
    /// `_all_docs`.
    func allDocuments(_ options: AllDocumentsOptions) async throws -> AllDocumentsResult

    // MARK: Changes

    /// A page of the changes feed; with ``ChangesOptions/longpoll`` it
    /// waits for the first change after `since`.
    func changes(_ options: ChangesOptions) async throws -> ChangesResult
    /// Every change after `options.since`, then each new one as it is
    /// made, until the task is cancelled; a failure ends it with the error.
    func liveChanges(_ options: ChangesOptions) -> AsyncThrowingStream<Change, any Error>

    // MARK: Local documents

    /// A `_local` document (never replicated), nil when there is none.
    /// `id` is given with its `_local/` prefix or without.
    func localDocument(id: String) async throws -> JSONObject?
    /// Saves the `_local` document `id` (last write wins).
    @discardableResult
    func putLocal(id: String, _ document: JSONObject) async throws -> DocumentWriteResult
    /// Removes the `_local` document `id`.
    func deleteLocal(id: String) async throws

    // MARK: Attachments

    /// An attachment's bytes and type.
    func attachment(id: String, name: String, rev: String?) async throws -> Attachment
    /// Adds or replaces an attachment (a new document when `rev` is nil
    /// and the document does not exist).
    @discardableResult
    func putAttachment(id: String, name: String, rev: String?, contentType: String, data: Data) async throws -> DocumentWriteResult
    /// Removes an attachment: a new revision of its document.
    @discardableResult
    func deleteAttachment(id: String, name: String, rev: String) async throws -> DocumentWriteResult

    // MARK: Queries and design functions

    /// A Mango query (`_find`).
    func find(_ query: FindQuery) async throws -> FindResult
    /// A view of a design document (brought up to date first unless
    /// `options.update` says otherwise).
    func view(design: String, view: String, options: ViewQueryOptions) async throws -> ViewResult
    /// Runs the update function `function` of a design on the document
    /// `id` (nil: none) with `request`, as CouchDB's
    /// `_design/{design}/_update/{function}[/{id}]` does, and answers what
    /// the function answered.
    func update(design: String, function: String, id: String?, request: UpdateRequest) async throws -> UpdateHandlerAnswer

    // MARK: Security

    /// The `_security` object (`{}` when none was set).
    func security() async throws -> JSONObject
    /// Replaces the `_security` object (a database admin's right).
    func setSecurity(_ security: JSONObject) async throws
}

// MARK: - Defaults and Codable

extension DocumentStore {
    /// The winner of the document `id`.
    public func document(id: String) async throws -> JSONObject {
        try await document(id: id, options: DocumentReadOptions())
    }

    /// Saves a document as a new edit.
    @discardableResult
    public func put(_ document: JSONObject) async throws -> DocumentWriteResult {
        try await put(document, newEdits: true)
    }

    /// Saves documents as new edits.
    public func bulkPut(_ documents: [JSONObject]) async throws -> [Result<DocumentWriteResult, DocumentError>] {
        try await bulkPut(documents, newEdits: true)
    }

    /// Every document id, in order.
    public func allDocuments() async throws -> AllDocumentsResult {
        try await allDocuments(AllDocumentsOptions())
    }

    /// Every change so far.
    public func changes() async throws -> ChangesResult {
        try await changes(ChangesOptions())
    }

    /// A view, with its defaults.
    public func view(design: String, view: String) async throws -> ViewResult {
        try await self.view(design: design, view: view, options: ViewQueryOptions())
    }

    /// Runs an update function with `body` as a POST's body, as the seed's
    /// voting device calls it.
    public func update(design: String, function: String, id: String? = nil, body: Data = Data(),
                       contentType: String = "application/json") async throws -> UpdateHandlerAnswer {
        try await update(design: design, function: function, id: id,
                         request: UpdateRequest(body: body, contentType: contentType))
    }

    /// Saves a Codable value as a document (its `_id` and `_rev` are its
    /// own members).
    @discardableResult
    public func put<T: Encodable>(_ value: T) async throws -> DocumentWriteResult {
        try await put(DocumentStores.object(value), newEdits: true)
    }

    /// The document `id` decoded as `T`.
    public func document<T: Decodable>(_ type: T.Type, id: String, options: DocumentReadOptions = DocumentReadOptions()) async throws -> T {
        try DocumentStores.decode(T.self, from: await document(id: id, options: options))
    }

    /// The documents a Mango query finds, decoded as `T`.
    public func find<T: Decodable>(_ type: T.Type, _ query: FindQuery) async throws -> [T] {
        try await find(query).docs.map { try DocumentStores.decode(T.self, from: $0) }
    }
}

/// Conversions every store shares.
package enum DocumentStores {
    /// A Codable value as a document: an object, without a null `_rev`.
    package static func object<T: Encodable>(_ value: T) throws -> JSONObject {
        let data = try JSONEncoder().encode(value)
        guard case .object(var object) = try JSON(parsing: data) else {
            throw DocumentError(.badRequest, "a document encodes as a JSON object, \(T.self) does not")
        }
        if object["_rev"] == .null { object["_rev"] = nil }
        return object
    }

    package static func decode<T: Decodable>(_ type: T.Type, from object: JSONObject) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(JSON.object(object).text.utf8))
    }
}
