import Foundation
import Strata

/// A CouchDB database inside a Strata database: JSON documents with
/// revision trees, conflicts, a changes feed, `_local` documents,
/// attachments and Mango queries.
///
/// It keeps its own tables (named after `name`), so an app stores documents
/// beside its relational tables in one file:
///
/// ```swift
/// let pool = try DatabasePool(path: "app.sqlite")
/// let votes = try DocumentDatabase(pool, name: "votes")
/// let saved = try votes.put(["_id": "q1", "question": "Tabs or spaces?"])
/// let doc = try votes.document(id: "q1")      // {"_id":"q1","_rev":"1-…",…}
/// ```
///
/// Every write runs in one transaction of the writer and is committed when
/// the method returns. Reads go through the writer's readers (a
/// `DatabasePool`'s never wait for writes).
public final class DocumentDatabase: Sendable {
    /// The Strata database the documents live in.
    public let writer: any DatabaseWriter
    /// The name the tables are derived from.
    public let name: String
    /// Unique to this open database, never reused: what keeps one
    /// database's JavaScript apart from another's (the query servers'
    /// tenant).
    package let instanceID = UUID().uuidString
    let tables: DocumentTables
    let viewLocks = ViewLocks()
    /// Run around each `bulkPut`'s writes (see ``BatchWriteHook``).
    package let batchWriteHook = Locked<BatchWriteHook?>(nil)
    let registry = FunctionRegistry()
    /// Group commit of ``commit(_:newEdits:userContext:)``: one key.
    let commits = KeyedBatcher<PendingWrite, DocumentWriteResult>(limit: 1000, queue: .global())
    /// Batches of ``runUpdate(design:function:id:request:userContext:)``.
    let updates = KeyedBatcher<JSON, (written: DocumentWriteResult?, response: JSON)>(limit: 256, queue: DocumentDatabase.functionQueue)

    /// Registers `DatabaseCollation.couch` for every connection, once.
    private static let registerCollation: Void = DatabaseCollation.registerForEveryConnection(.couch)

    /// Opens (creating its tables when missing) the document database `name`
    /// inside `writer`.
    public convenience init(_ writer: any DatabaseWriter, name: String = "couch") throws {
        try self.init(writer, name: name, rowRefusal: nil)
    }

    /// ``init(_:name:)`` with what a write alone does when a trigger of the
    /// file refuses it (`TableSync`'s; see ``RowRefusalHook``).
    package init(_ writer: any DatabaseWriter, name: String, rowRefusal: RowRefusalHook?) throws {
        guard !name.isEmpty, name.utf8.allSatisfy({ $0 == 0x5F || (0x30...0x39).contains($0) || (0x61...0x7A).contains($0) || (0x41...0x5A).contains($0) }) else {
            throw DocumentError(.badRequest, "a document database name is letters, digits and '_': \(name)")
        }
        // Mango's indexes and queries compare text with `COLLATE couch`:
        // every connection of the writer needs it, readers opened before
        // this database too.
        _ = DocumentDatabase.registerCollation
        self.writer = writer
        self.name = name
        self.tables = DocumentTables(name: name, rowRefusal: rowRefusal)
        let tables = self.tables
        try writer.write { db in try tables.create(db) }
    }

    /// Opens the SQLite file at `path` as a standalone document database
    /// (what `strata serve` keeps per database): WAL, `synchronous=FULL` so
    /// that every committed write survives a crash of the machine.
    public convenience init(path: String) throws {
        var configuration = Configuration()
        configuration.journalMode = .wal
        configuration.prepareDatabase = { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        let pool = try DatabasePool(path: path, configuration: configuration)
        try self.init(pool, name: "couch")
    }

    // MARK: Documents

    /// Saves a document: `_id` (made when absent), `_rev` of the leaf it
    /// edits (none for a new document), `_deleted`, `_attachments`, and the
    /// body. Throws ``DocumentError`` `conflict` when `_rev` is not the
    /// current leaf.
    ///
    /// Validation sees the write with `userContext` (nil: the app itself,
    /// an admin): registered Swift functions (``DesignFunctions/validate``)
    /// and the stored design documents' JavaScript `validate_doc_update`,
    /// run by the database's ``DesignFunctionRunner``.
    @discardableResult
    public func put(_ document: JSONObject, newEdits: Bool = true, userContext: JSON? = nil) throws -> DocumentWriteResult {
        let tables = self.tables
        let document = DocumentDatabase.withID(document)
        let pass = ValidationPass()
        try checkInAdvance([document], userContext: userContext, into: pass)
        let validation = self.validation(userContext, pass: pass)
        return try writer.write { db in
            try validation(db, document)
            return try tables.write(db, document: document, newEdits: newEdits)
        }
    }

    /// Saves documents one by one in one transaction: each gets its own
    /// result, a conflict on one does not stop the others (CouchDB's
    /// `_bulk_docs`). With `allOrNothing`, the first failure rolls back all.
    ///
    /// - Throws: ``DocumentError`` when a document's shape is wrong (an id
    ///   CouchDB reserves, an unknown `_` member): as CouchDB, the whole
    ///   batch is refused and nothing written.
    public func bulkPut(_ documents: [JSONObject], newEdits: Bool = true, allOrNothing: Bool = false, userContext: JSON? = nil) throws -> [Result<DocumentWriteResult, DocumentError>] {
        let tables = self.tables
        for document in documents { try DocumentTables.checkStructure(document) }
        let documents = documents.map(DocumentDatabase.withID)
        let pass = ValidationPass()
        try checkInAdvance(documents, userContext: userContext, into: pass)
        let validation = self.validation(userContext, pass: pass)
        let hook = batchWriteHook.value
        return try writer.write { db in
            let after = try hook?.before(db, documents.compactMap { $0["_id"]?.stringValue })
            let results = try tables.bulkWrite(db, documents: documents, newEdits: newEdits, allOrNothing: allOrNothing, validation: validation)
            try after?(db)
            return results
        }
    }

    /// Work done in the transaction of each ``bulkPut(_:newEdits:allOrNothing:userContext:)``,
    /// around its writes: how `TableSync` brings its rows up to date once a
    /// batch rather than once a document.
    package struct BatchWriteHook: Sendable {
        /// Runs before the writes, with the documents' ids, and returns what
        /// runs after them, in the same transaction.
        package let before: @Sendable (Database, [String]) throws -> (Database) throws -> Void

        package init(before: @escaping @Sendable (Database, [String]) throws -> (Database) throws -> Void) {
            self.before = before
        }
    }

    /// Saves several independent writes in one transaction (one commit, one
    /// sync to disk), each with its own result: what a server does with
    /// concurrent requests (group commit). A failure of SQLite itself fails
    /// them all, and none is written.
    public func putEach(_ writes: [(document: JSONObject, newEdits: Bool, userContext: JSON?)]) throws -> [Result<DocumentWriteResult, DocumentError>] {
        try putEach(writes, checked: [])
    }

    /// ``putEach(_:)`` with the verdicts of JavaScript validation reached
    /// before (``checkInAdvance(_:userContext:)``, by each writer as it
    /// arrives): they stand when nothing changed since.
    package func putEach(_ writes: [(document: JSONObject, newEdits: Bool, userContext: JSON?)], checked: [CheckedDocument]) throws -> [Result<DocumentWriteResult, DocumentError>] {
        let tables = self.tables
        // One pass: the stored validators are read once for the group.
        let pass = ValidationPass()
        for verdict in checked { if let id = verdict.document["_id"]?.stringValue { pass.checked[id] = verdict } }
        let validations = writes.map { validation($0.userContext, pass: pass) }
        let documents = writes.map { DocumentDatabase.withID($0.document) }
        return try writer.write { db in
            try DocumentTables.eachIsolated(db, writes.count, allOrNothing: false) { i in
                try validations[i](db, documents[i])
                return try tables.write(db, document: documents[i], newEdits: writes[i].newEdits)
            }
        }
    }

    /// CouchDB's checks of a document's shape (its id, its `_` members),
    /// for a door that refuses a whole request on one bad document.
    package static func checkStructure(_ document: JSONObject) throws {
        try DocumentTables.checkStructure(document)
    }

    /// The document with an `_id`, made now when it has none: validation
    /// sees the id it is written under.
    static func withID(_ document: JSONObject) -> JSONObject {
        guard document["_id"] == nil else { return document }
        var document = document
        document["_id"] = .string(DocumentTables.newID())
        return document
    }

    /// Deletes a document: a new revision on `rev` marked `_deleted`.
    @discardableResult
    public func delete(id: String, rev: String, userContext: JSON? = nil) throws -> DocumentWriteResult {
        try put(["_id": .string(id), "_rev": .string(rev), "_deleted": .bool(true)], userContext: userContext)
    }

    /// The document `id` (its winning revision unless `options.rev` names
    /// one), with `_id` and `_rev` and what `options` ask for. Throws
    /// `notFound` (`missing` or `deleted`).
    public func document(id: String, options: DocumentReadOptions = DocumentReadOptions()) throws -> JSONObject {
        let tables = self.tables
        return try writer.read { db in try tables.read(db, id: id, options: options) }
    }

    /// The winning revision of `id` as a design function (a show, an
    /// update) is handed it: with `_revisions` of at most
    /// ``functionRevisionsLimit`` ids; nil when missing or deleted.
    package func documentForFunction(id: String) throws -> JSONObject? {
        let tables = self.tables
        return try writer.read { db in try tables.winner(db, id: id, revisions: Self.functionRevisionsLimit) }
    }

    /// The revisions `open_revs` asks for: every leaf (`revisions == nil`)
    /// or the ones listed, each a document or a `missing` entry.
    public func openRevisions(id: String, revisions: [String]?, options: DocumentReadOptions = DocumentReadOptions()) throws -> [OpenRevision] {
        let tables = self.tables
        return try writer.read { db in try tables.openRevisions(db, id: id, revisions: revisions, options: options) }
    }

    /// `open_revs` for many documents in one read (`_bulk_get`, a
    /// replicator's fetch): for each request, its revisions or the error
    /// that document gave.
    public func openRevisions(_ requests: [(id: String, revisions: [String]?)], options: DocumentReadOptions = DocumentReadOptions()) throws -> [Result<[OpenRevision], DocumentError>] {
        let tables = self.tables
        return try writer.read { db in
            // Read once for the batch, not once a document.
            let revsLimit = options.revs || options.revsInfo ? try tables.meta(db, "revs_limit")?.intValue ?? 1000 : nil
            let firsts = try tables.onlyFirstRevisions(db, ids: requests.map(\.id), options: options)
            return try requests.map { request in
                do {
                    if let first = firsts[ExactString(request.id)] {
                        return .success(try tables.openRevisions(db, first: first, revisions: request.revisions, options: options, revsLimit: revsLimit))
                    }
                    return .success(try tables.openRevisions(db, id: request.id, revisions: request.revisions, options: options, revsLimit: revsLimit))
                } catch let error as DocumentError {
                    return .failure(error)
                }
            }
        }
    }

    /// CouchDB's `_revs_diff`: for each id, the revisions this database lacks
    /// and the leaves it has that could be their ancestors.
    ///
    /// A dictionary's keys are Swift strings, which take two ids CouchDB
    /// tells apart for one (a precomposed `é` and `e` with a combining
    /// accent); the list form, `revisionsDiff(_:)` given `(id:revisions:)`
    /// pairs, keeps them apart.
    public func revisionsDiff(_ request: [String: [String]]) throws -> [String: (missing: [String], possibleAncestors: [String])] {
        var answer: [String: (missing: [String], possibleAncestors: [String])] = [:]
        for entry in try revisionsDiff(request.map { (id: $0.key, revisions: $0.value) }) {
            answer[entry.id] = (entry.missing, entry.possibleAncestors)
        }
        return answer
    }

    /// CouchDB's `_revs_diff` for a list of ids, each with revisions: the
    /// ids with revisions this database lacks, in the order asked, with the
    /// leaves it has that could be their ancestors. Ids are compared in
    /// bytes, as CouchDB compares them; an id listed twice is asked once,
    /// with the revisions of both.
    public func revisionsDiff(_ request: [(id: String, revisions: [String])]) throws -> [(id: String, missing: [String], possibleAncestors: [String])] {
        let request = Self.mergingRevisionsByID(request)
        let tables = self.tables
        return try writer.read { db in
            // The ids with a revision here, in one query: the others (most
            // of a first replication's) have no tree to read.
            let known = Set(try String.fetchAll(db, sql: "SELECT id FROM \(tables.docs) WHERE id IN (SELECT value FROM json_each(?))",
                                                arguments: [JSON.array(request.map { JSON.string($0.id) }).text]).map(ExactString.init))
            var answer: [(id: String, missing: [String], possibleAncestors: [String])] = []
            for (id, revs) in request {
                let tree = known.contains(ExactString(id)) ? try tables.loadTree(db, id: id) : RevisionTree([])
                let parsed = revs.compactMap(Revision.init)
                let unparsable = revs.filter { Revision($0) == nil }
                let (missing, ancestors) = tree.missing(parsed)
                let all = missing.map(\.description) + unparsable
                if !all.isEmpty {
                    answer.append((id, all, ancestors.map(\.description)))
                }
            }
            return answer
        }
    }

    /// `request` with each id once (compared in bytes), in the order of its
    /// first appearance, with the revisions of all its appearances.
    package static func mergingRevisionsByID(_ request: [(id: String, revisions: [String])]) -> [(id: String, revisions: [String])] {
        var places: [ExactString: Int] = [:]
        var merged: [(id: String, revisions: [String])] = []
        merged.reserveCapacity(request.count)
        for (id, revisions) in request {
            if let place = places[ExactString(id)] {
                merged[place].revisions += revisions
            } else {
                places[ExactString(id)] = merged.count
                merged.append((id, revisions))
            }
        }
        return merged
    }

    /// Facts CouchDB's `GET /{db}` gives.
    public func info() throws -> DocumentDatabaseInfo {
        let tables = self.tables
        var info = try writer.read { db in try tables.info(db) }
        info.name = name
        return info
    }

    /// CouchDB's `_all_docs`.
    public func allDocuments(_ options: AllDocumentsOptions = AllDocumentsOptions()) throws -> AllDocumentsResult {
        let tables = self.tables
        return try writer.read { db in try tables.allDocuments(db, options) }
    }

    /// The changes feed: one entry per document at its latest sequence, in
    /// sequence order.
    /// A ``ChangesOptions/designFilter`` runs here with its parameters as
    /// the request's `query`. The synchronous form answers at once; the
    /// asynchronous one also waits as ``ChangesOptions/longpoll`` asks.
    public func changes(_ options: ChangesOptions = ChangesOptions()) throws -> ChangesResult {
        if let name = options.designFilter {
            var options = options
            options.designFilter = nil
            return try changes(options, filter: name, request: Self.filterRequest(options.filterParameters))
        }
        let tables = self.tables
        return try writer.read { db in try tables.changes(db, options) }
    }

    /// The current end of the changes feed.
    public func updateSequence() throws -> ChangeSequence {
        ChangeSequence(try updateCount())
    }

    /// The current update sequence as the count it is here.
    /// Purges revisions, as CouchDB's `_purge`: for each document id, the
    /// leaf revisions named are forgotten with the revisions only they
    /// descend from, as if never written (a replication can bring them
    /// back). A document left with no revision is gone from the changes
    /// feed, the views and `_all_docs`; one with revisions left shows its
    /// new winner. Revisions that are not leaves are left alone.
    ///
    /// - Returns: for each id, the revisions purged.
    @discardableResult
    public func purge(_ request: [String: [String]]) throws -> [String: [String]] {
        var purged: [String: [String]] = [:]
        for entry in try purge(request.map { (id: $0.key, revisions: $0.value) }) { purged[entry.id] = entry.revisions }
        return purged
    }

    /// ``purge(_:)-([String:[String]])`` for a list of ids, each with
    /// revisions, in one transaction: ids are compared in bytes, as CouchDB
    /// compares them (a dictionary's `String` keys take a precomposed `é`
    /// and `e` with a combining accent for one key); an id listed twice is
    /// purged once, of the revisions of both.
    ///
    /// - Returns: each id once, in the order asked, with the revisions
    ///   purged.
    @discardableResult
    public func purge(_ request: [(id: String, revisions: [String])]) throws -> [(id: String, revisions: [String])] {
        let request = Self.mergingRevisionsByID(request)
        let tables = self.tables
        return try writer.write { db in
            try request.map { (id: $0.id, revisions: try tables.purge(db, id: $0.id, revisions: $0.revisions)) }
        }
    }

    /// How many purges the database has had (`purge_seq`).
    public func purgeSequence() throws -> Int {
        try metadata("purge_seq")?.intValue ?? 0
    }

    /// How many purges CouchDB keeps record of (`_purged_infos_limit`,
    /// 1000). Strata keeps the setting for clients that read and write it;
    /// it records no purge history (nothing here reads one).
    public func purgedInfosLimit() throws -> Int {
        try metadata("purged_infos_limit")?.intValue ?? 1000
    }

    /// Sets ``purgedInfosLimit()``.
    ///
    /// - Throws: ``DocumentError`` `bad_request` for a limit under 1.
    public func setPurgedInfosLimit(_ limit: Int) throws {
        guard limit > 0 else { throw DocumentError(.badRequest, "`purged_infos_limit` must be positive integer") }
        try setMetadata("purged_infos_limit", .int(limit))
    }

    /// How many documents changed after `seq` (CouchDB's
    /// `count_changes_since`, what `pending` counts).
    package func changeCount(after seq: ChangeSequence) throws -> Int {
        let tables = self.tables
        return try writer.read { db in try tables.changeCount(db, after: seq.number ?? 0) }
    }

    package func updateCount() throws -> Int {
        let tables = self.tables
        return try writer.read { db in try tables.updateSequence(db) }
    }

    /// The request object a filter function is given for `parameters`.
    static func filterRequest(_ parameters: [String: String]) -> JSON {
        .object(["query": .object(JSONObject(parameters.sorted { $0.key < $1.key }.map { ($0.key, JSON.string($0.value)) }))])
    }

    /// Forgets the bodies of revisions that are no longer leaves, and
    /// attachment contents no revision refers to (CouchDB's `_compact`).
    public func compact() throws {
        let tables = self.tables
        try writer.write { db in try tables.compact(db) }
    }

    // MARK: Local documents

    /// A `_local` document (no history, never replicated), nil when there
    /// is none. `id` is given with its `_local/` prefix or without, as on
    /// a `RemoteDatabase`.
    public func localDocument(id: String) throws -> JSONObject? {
        let tables = self.tables
        let id = Self.localID(id)
        do {
            return try writer.read { db in try tables.readLocal(db, id: id) }
        } catch let error as DocumentError where error.kind == .notFound {
            return nil
        }
    }

    /// Saves a `_local` document whose `_id` starts with `_local/`: last
    /// write wins, revs `0-N`.
    @discardableResult
    public func putLocal(_ document: JSONObject) throws -> DocumentWriteResult {
        let tables = self.tables
        return try writer.write { db in try tables.writeLocal(db, document: document) }
    }

    /// Saves the `_local` document `id` (with its `_local/` prefix or
    /// without), as `RemoteDatabase.putLocal(id:_:)` names it.
    @discardableResult
    public func putLocal(id: String, _ document: JSONObject) throws -> DocumentWriteResult {
        var document = document
        document["_id"] = .string(Self.localID(id))
        return try putLocal(document)
    }

    /// Removes a `_local` document (`id` with its prefix or without).
    public func deleteLocal(id: String) throws {
        let tables = self.tables
        let id = Self.localID(id)
        try writer.write { db in try tables.deleteLocal(db, id: id) }
    }

    /// A local document's id with its `_local/` prefix.
    static func localID(_ id: String) -> String {
        id.hasBytePrefix("_local/") ? id : "_local/" + id
    }

    // MARK: Security

    /// The database's `_security` object: `{"admins": {"names", "roles"},
    /// "members": {"names", "roles"}}` as CouchDB keeps it, `{}` when none
    /// was set. Validation functions see it as their fourth argument.
    public func security() throws -> JSONObject {
        try metadata("_security")?.objectValue ?? JSONObject()
    }

    /// Replaces the `_security` object. Refused (400 `bad_request`, with
    /// CouchDB's reasons) unless `admins` and `members`, where present, are
    /// objects whose `names` and `roles` are arrays of strings.
    public func setSecurity(_ security: JSONObject) throws {
        for section in ["admins", "members"] {
            guard let value = security[section] else { continue }
            // CouchDB's reasons (couch_db:validate_security_object).
            guard let object = value.objectValue else { throw DocumentError(.badRequest, "admins or members must be a JSON list of strings") }
            for list in ["names", "roles"] {
                guard let members = object[list] else { continue }
                guard let array = members.arrayValue, array.allSatisfy({ $0.stringValue != nil }) else {
                    throw DocumentError(.badRequest, "\(list) must be a JSON list of strings")
                }
            }
        }
        try setMetadata("_security", .object(security))
    }

    // MARK: Attachments

    /// An attachment's content and type, of the winning revision or `rev`.
    ///
    /// The content is read into memory; for large attachments use
    /// ``attachmentContent(id:name:rev:)``, which reads it a chunk at a time.
    public func attachment(id: String, name: String, rev: String? = nil) throws -> Attachment {
        let tables = self.tables
        return try writer.read { db in try tables.attachment(db, id: id, name: name, rev: rev) }
    }

    /// An attachment's type, digest and size, with a reader of its content
    /// a range at a time (SQLite's incremental BLOB I/O): memory stays
    /// bounded whatever the attachment's size.
    ///
    /// ```swift
    /// let content = try store.attachmentContent(id: "report", name: "scan.pdf")
    /// var offset = 0
    /// while offset < content.length {
    ///     let chunk = try content.read(at: offset, count: 1 << 20)
    ///     output.write(chunk)
    ///     offset += chunk.count
    /// }
    /// ```
    ///
    /// - Throws: ``DocumentError`` `not_found` when the document, revision
    ///   or attachment does not exist.
    public func attachmentContent(id: String, name: String, rev: String? = nil) throws -> AttachmentContent {
        let tables = self.tables
        let writer = self.writer
        return try writer.read { db in
            let stored = try tables.storedAttachment(db, id: id, name: name, rev: rev)
            let location = try tables.blobLocation(db, digest: stored.digest)
            var content = AttachmentContent(
                contentType: stored.contentType, digest: stored.digest, length: location.length, revpos: stored.revpos
            ) { offset, count in
                try writer.read { db in try tables.readBlob(db, rowID: location.rowID, at: offset, count: count) }
            }
            content.encoding = stored.encoding
            content.encodedLength = stored.encodedLength
            return content
        }
    }

    /// Adds or replaces an attachment on the leaf `rev` (nil for a new
    /// document): a new revision.
    @discardableResult
    public func putAttachment(id: String, name: String, rev: String?, contentType: String, data: Data, userContext: JSON? = nil) throws -> DocumentWriteResult {
        try putAttachment(id: id, name: name, rev: rev, contentType: contentType, userContext: userContext) { tables, db in
            try tables.storeBlob(db, data, contentType: contentType)
        }
    }

    /// Adds or replaces an attachment whose content is the file at `file`,
    /// on the leaf `rev` (nil for a new document): a new revision.
    ///
    /// The file is read a chunk at a time, twice (for its digest, then into
    /// SQLite's incremental BLOB I/O): memory stays bounded whatever its
    /// size. The file is not changed or removed.
    ///
    /// - Throws: ``DocumentError`` `conflict` when `rev` is not the leaf,
    ///   what validation refuses, or a Foundation error when the file
    ///   cannot be read.
    @discardableResult
    public func putAttachment(id: String, name: String, rev: String?, contentType: String, contentsOf file: URL, userContext: JSON? = nil) throws -> DocumentWriteResult {
        let content = try Self.digest(ofFile: file, contentType: contentType)
        return try putAttachment(id: id, name: name, rev: rev, contentType: contentType, userContext: userContext) { tables, db in
            try tables.storeBlob(db, contentsOf: file, digest: content.digest, length: content.length)
            return content
        }
    }

    /// CouchDB's digest of a file stored as `contentType` (the MD5 of its
    /// gzip form for a compressible type), read a chunk at a time.
    static func digest(ofFile file: URL, contentType: String) throws -> AttachmentDigest {
        let handle = try FileHandle(forReadingFrom: file)
        defer { try? handle.close() }
        let builder = AttachmentDigest.Builder(contentType: contentType)
        while let chunk = try handle.read(upToCount: DocumentTables.blobChunk), !chunk.isEmpty {
            builder.update(chunk)
        }
        return builder.finish()
    }

    /// The attachment write both forms share: `store` puts the content in
    /// the blobs table and answers its digest, inside the write; the
    /// document then names it with a stub (validation sees that stub, as
    /// CouchDB's does).
    private func putAttachment(
        id: String, name: String, rev: String?, contentType: String, userContext: JSON?,
        store: @escaping (DocumentTables, Database) throws -> AttachmentDigest
    ) throws -> DocumentWriteResult {
        let tables = self.tables
        let validation = self.validation(userContext)
        return try writer.write { db in
            var doc: JSONObject
            if let rev {
                doc = try tables.read(db, id: id, options: DocumentReadOptions(rev: rev))
            } else if (try? tables.read(db, id: id, options: DocumentReadOptions())) != nil {
                throw DocumentError.conflict
            } else {
                doc = ["_id": .string(id)]
            }
            let content = try store(tables, db)
            // CouchDB puts the new attachment first, the others after it in
            // their order (the order goes into the revision id).
            let others = (doc["_attachments"]?.objectValue ?? JSONObject()).filter { $0.key != name }
            let stub: JSON = .object(["content_type": .string(contentType), "digest": .string(content.digest), "length": .int(content.length), "stub": .bool(true)])
            doc["_attachments"] = .object(JSONObject([(name, stub)] + others.map { ($0.key, $0.value) }))
            try validation(db, doc)
            return try tables.write(db, document: doc, newEdits: true, stored: [name: content])
        }
    }

    /// Removes an attachment from the leaf `rev`: a new revision.
    @discardableResult
    public func deleteAttachment(id: String, name: String, rev: String, userContext: JSON? = nil) throws -> DocumentWriteResult {
        let tables = self.tables
        let validation = self.validation(userContext)
        return try writer.write { db in
            var doc = try tables.read(db, id: id, options: DocumentReadOptions(rev: rev))
            var attachments = doc["_attachments"]?.objectValue ?? JSONObject()
            guard attachments[name] != nil else { throw DocumentError(.notFound, "Document is missing attachment") }
            attachments[name] = nil
            doc["_attachments"] = attachments.isEmpty ? nil : .object(attachments)
            try validation(db, doc)
            return try tables.write(db, document: doc, newEdits: true)
        }
    }

    // MARK: Metadata

    /// A value the database keeps about itself (`_security`, `revs_limit`…).
    public func metadata(_ key: String) throws -> JSON? {
        let tables = self.tables
        return try writer.read { db in try tables.meta(db, key) }
    }

    /// Sets a value the database keeps about itself.
    public func setMetadata(_ key: String, _ value: JSON) throws {
        let tables = self.tables
        try writer.write { db in try tables.setMeta(db, key, value) }
    }

    /// The most revision ids a design function (update, show) sees in a
    /// document's `_revisions`: the newest 20, as CouchDB 3 hands documents
    /// to its query servers (its `[query_server_config] revs_limit`). A
    /// document edited many times is not sent with its whole history on
    /// every call.
    public static let functionRevisionsLimit = 20

    /// How many ancestors each leaf keeps (CouchDB's `revs_limit`, 1000).
    public func revisionsLimit() throws -> Int {
        try metadata("revs_limit")?.intValue ?? 1000
    }

    /// Sets `revs_limit`; older ancestors are forgotten at the next write of
    /// each document.
    public func setRevisionsLimit(_ limit: Int) throws {
        guard limit > 0 else { throw DocumentError(.badRequest, "revs_limit must be positive") }
        try setMetadata("revs_limit", .int(limit))
    }
}
