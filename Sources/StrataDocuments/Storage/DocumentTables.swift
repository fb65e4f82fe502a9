import Foundation
import Strata

/// The SQL side of a ``DocumentDatabase``: its tables and every operation on
/// one connection. Sendable (names only), so closures on the writer take it.
struct DocumentTables: Sendable {
    let docs: String
    let revs: String
    let local: String
    let blobs: String
    let meta: String
    let indexes: String
    /// One row: the live and deleted document counts and the bodies' size,
    /// kept by triggers so `info` and `_all_docs` need no scan.
    let counts: String
    /// What a write alone does when a trigger of the file refuses it (see
    /// ``RowRefusalHook``).
    let rowRefusal: RowRefusalHook?

    init(name: String, rowRefusal: RowRefusalHook? = nil) {
        self.rowRefusal = rowRefusal
        func q(_ suffix: String) -> String { "\"\(name)_\(suffix)\"" }
        docs = q("docs")
        revs = q("revs")
        local = q("local")
        blobs = q("attachments")
        meta = q("meta")
        indexes = q("mango_indexes")
        counts = q("counts")
    }

    /// A trigger's name beside the tables'.
    func trigger(_ suffix: String) -> String {
        "\(docs.dropLast())_\(suffix)\""
    }

    func create(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE IF NOT EXISTS \(docs) (
              id TEXT PRIMARY KEY NOT NULL,
              seq INTEGER NOT NULL UNIQUE,
              rev TEXT NOT NULL,
              deleted INTEGER NOT NULL,
              body TEXT NOT NULL,
              attachments TEXT,
              leaves INTEGER
            ) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS \(revs) (
              doc TEXT NOT NULL,
              rev TEXT NOT NULL,
              depth INTEGER NOT NULL,
              parent TEXT,
              deleted INTEGER NOT NULL,
              seq INTEGER,
              body TEXT,
              attachments TEXT,
              PRIMARY KEY (doc, rev)
            ) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS \(local) (
              id TEXT PRIMARY KEY NOT NULL,
              rev INTEGER NOT NULL,
              body TEXT NOT NULL
            ) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS \(blobs) (
              digest TEXT NOT NULL UNIQUE,
              data BLOB NOT NULL
            );
            CREATE TABLE IF NOT EXISTS \(meta) (
              key TEXT PRIMARY KEY NOT NULL,
              value TEXT NOT NULL
            ) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS \(indexes) (
              ddoc TEXT NOT NULL,
              name TEXT NOT NULL,
              definition TEXT NOT NULL,
              predicate TEXT NOT NULL,
              PRIMARY KEY (ddoc, name)
            ) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS \(counts) (
              id INTEGER PRIMARY KEY CHECK (id = 0),
              live INTEGER NOT NULL,
              deleted INTEGER NOT NULL,
              size INTEGER NOT NULL
            );
            INSERT OR IGNORE INTO \(counts)(id, live, deleted, size)
              SELECT 0, count(*) FILTER (WHERE deleted = 0), count(*) FILTER (WHERE deleted = 1), coalesce(sum(length(body)), 0) FROM \(docs);
            CREATE TRIGGER IF NOT EXISTS \(trigger("inserted")) AFTER INSERT ON \(docs) BEGIN
              UPDATE \(counts) SET live = live + (NEW.deleted = 0), deleted = deleted + (NEW.deleted = 1),
                size = size + length(NEW.body) WHERE id = 0;
            END;
            CREATE TRIGGER IF NOT EXISTS \(trigger("updated")) AFTER UPDATE ON \(docs) BEGIN
              UPDATE \(counts) SET live = live + (NEW.deleted = 0) - (OLD.deleted = 0), deleted = deleted + (NEW.deleted = 1) - (OLD.deleted = 1),
                size = size + length(NEW.body) - length(OLD.body) WHERE id = 0;
            END;
            CREATE TRIGGER IF NOT EXISTS \(trigger("deleted")) AFTER DELETE ON \(docs) BEGIN
              UPDATE \(counts) SET live = live - (OLD.deleted = 0), deleted = deleted - (OLD.deleted = 1),
                size = size - length(OLD.body) WHERE id = 0;
            END;
            """)
        // How many leaves each document's tree has (NULL: not known yet, in
        // files from before the column), so that a write extending the only
        // leaf needs no tree.
        try migrateBlobsToRowIDs(db)
        let docsColumns = try Row.fetchAll(db, sql: "PRAGMA table_info(\(docs))").map { try $0[1] as String }
        if !docsColumns.contains("leaves") { try db.execute(sql: "ALTER TABLE \(docs) ADD COLUMN leaves INTEGER") }
        try createViewTables(db)
        try rebuildOutdatedMangoIndexes(db)
        if try meta(db, "instance_start_time") == nil {
            try setMeta(db, "instance_start_time", .string(String(Int(Date().timeIntervalSince1970 * 1_000_000))))
        }
    }

    // MARK: meta

    func meta(_ db: Database, _ key: String) throws -> JSON? {
        guard let text = try String.fetchOne(db, sql: "SELECT value FROM \(meta) WHERE key = ?", arguments: [key]) else { return nil }
        return try JSON(parsing: text)
    }

    func setMeta(_ db: Database, _ key: String, _ value: JSON) throws {
        try db.execute(sql: "INSERT INTO \(meta)(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value", arguments: [key, value.text])
    }

    func updateSequence(_ db: Database) throws -> Int {
        try meta(db, "update_seq")?.intValue ?? 0
    }

    /// What the writes of one batch share. Update sequences, handed out
    /// without a statement each: the sequence and `revs_limit` are read
    /// once before the batch, and the sequence recorded once after it (a
    /// tenth of a replicated batch's time went to taking them one by one).
    /// And, for a batch of `preparedFrom` documents or more, the statements
    /// that write a revision and its document, prepared once, their values
    /// bound by type (a smaller batch, a capture of one commit say, uses the
    /// connection's cached statements rather than preparing two).
    final class Batch {
        let start: Int
        let revsLimit: Int
        private(set) var last: Int
        let insertRevision: Statement?
        let upsertDocument: Statement?

        /// The smallest batch worth its own statements, and a query for
        /// which of its documents are new (``bulkWrite``).
        static let preparedFrom = 8

        init(_ db: Database, tables: DocumentTables, documents count: Int) throws {
            start = try tables.updateSequence(db)
            last = start
            revsLimit = try tables.meta(db, "revs_limit")?.intValue ?? 1000
            let prepares = count >= Self.preparedFrom
            insertRevision = prepares ? try db.makeStatement(sql: tables.insertRevisionSQL) : nil
            upsertDocument = prepares ? try db.makeStatement(sql: tables.upsertDocumentSQL) : nil
        }

        func next() -> Int {
            last += 1
            return last
        }

        /// Forgets the sequences taken after `sequence`: their writes were
        /// rolled back.
        func rewind(to sequence: Int) { last = sequence }

        /// Records the last sequence taken, in the batch's transaction.
        func record(_ db: Database, tables: DocumentTables) throws {
            if last != start { try tables.setMeta(db, "update_seq", .int(last)) }
        }
    }

    /// The next update sequence and `revs_limit`: from `batch`, else taken
    /// (and recorded) in one statement.
    private func nextSequence(_ db: Database, _ batch: Batch?) throws -> (seq: Int, revsLimit: Int) {
        guard let batch else { return try nextSequenceAndRevsLimit(db) }
        return (batch.next(), batch.revsLimit)
    }

    /// Takes the next update sequence (recording it) and reads `revs_limit`,
    /// in one statement: a document write needs both.
    func nextSequenceAndRevsLimit(_ db: Database) throws -> (seq: Int, revsLimit: Int) {
        let row = try Row.fetchOne(db, sql: """
            INSERT INTO \(meta)(key, value) VALUES ('update_seq', '1')
            ON CONFLICT(key) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)
            RETURNING CAST(value AS INTEGER), (SELECT value FROM \(meta) WHERE key = 'revs_limit')
            """)
        guard let row, let seq = try row[0] as Int? else { throw DocumentError(.internalError, "the update sequence could not be read") }
        let limitText: String? = try row[1]
        let revsLimit = try limitText.flatMap { try JSON(parsing: $0).intValue } ?? 1000
        return (seq, revsLimit)
    }

    // MARK: trees

    func loadTree(_ db: Database, id: String) throws -> RevisionTree {
        let rows = try Row.fetchAll(db, sql: "SELECT rev, parent, deleted, body IS NOT NULL FROM \(revs) WHERE doc = ?", arguments: [id])
        return RevisionTree(try rows.compactMap(DocumentTables.treeNode))
    }

    /// A node of a revision tree from a row starting with `rev, parent,
    /// deleted, body IS NOT NULL`; nil for a revision that does not parse.
    private static func treeNode(_ row: Row) throws -> RevisionTree.Node? {
        let revText: String = try row[0]
        let parentText: String? = try row[1]
        guard let rev = Revision(revText) else { return nil }
        return RevisionTree.Node(revision: rev, parent: parentText.flatMap(Revision.init), deleted: try row[2], hasBody: try row[3])
    }

    /// The stored form of one revision, as ``assemble(_:id:rev:tree:options:revsLimit:stored:)``
    /// reads it.
    struct StoredRevision {
        var rev: Revision
        var body: String
        var attachments: String?
        var deleted: Bool
        var seq: Int?
    }

    /// ``loadTree(_:id:)`` and, in the same query, the stored form of the
    /// winning revision (the one the documents table names): what a read of
    /// the latest revision needs, without a second query for its body.
    func loadTreeAndWinner(_ db: Database, id: String) throws -> (RevisionTree, StoredRevision?) {
        let rows = try Row.fetchAll(db, sql: """
            SELECT r.rev, r.parent, r.deleted, r.body IS NOT NULL, r.rev = d.rev,
                   CASE WHEN r.rev = d.rev THEN r.body END, CASE WHEN r.rev = d.rev THEN r.attachments END, r.seq
            FROM \(docs) d JOIN \(revs) r ON r.doc = d.id WHERE d.id = ?
            """, arguments: [id])
        var nodes: [RevisionTree.Node] = []
        nodes.reserveCapacity(rows.count)
        var winner: StoredRevision?
        for row in rows {
            guard let node = try DocumentTables.treeNode(row) else { continue }
            nodes.append(node)
            if try row[4] as Bool, let body = try row[5] as String? {
                winner = StoredRevision(rev: node.revision, body: body, attachments: try row[6], deleted: node.deleted, seq: try row[7])
            }
        }
        return (RevisionTree(nodes), winner)
    }

    // MARK: writing

    /// The prefix of design documents' ids: the one place it is written.
    static let designPrefix = "_design/"

    /// A design document's id from its name or its id.
    static func designID(_ design: String) -> String {
        design.hasBytePrefix(designPrefix) ? design : designPrefix + design
    }

    /// A design's name (`voting`) from its id (`_design/voting`) or its name.
    static func designName(_ design: String) -> String {
        design.hasBytePrefix(designPrefix) ? String(Substring(design.utf8.dropFirst(designPrefix.utf8.count))) : design
    }

    static func newID() -> String {
        var g = SystemRandomNumberGenerator()
        return (0..<16).map { _ in UInt8.random(in: 0...255, using: &g) }.hexString
    }

    static let specialMembers: Set<String> = [
        "_id", "_rev", "_deleted", "_attachments", "_revisions", "_revs_info", "_conflicts",
        "_deleted_conflicts", "_local_seq",
    ]
    /// Fields the replicator writes into `_replicator` documents: kept in
    /// the body, in any database, as CouchDB keeps them.
    static let replicationMembers: Set<String> = [
        "_replication_state", "_replication_state_time", "_replication_state_reason",
        "_replication_id", "_replication_stats",
    ]

    static func checkID(_ id: String) throws {
        if id.isEmpty { throw DocumentError(.illegalDocumentID, "Document id must not be empty") }
        if id.hasBytePrefix("_"), !id.hasBytePrefix(DocumentTables.designPrefix), !id.hasBytePrefix("_local/") {
            throw DocumentError(.illegalDocumentID, "Only reserved document ids may start with underscore.")
        }
        if id == DocumentTables.designPrefix || id == "_local/" {
            throw DocumentError(.illegalDocumentID, "Document id must not be empty")
        }
    }

    /// CouchDB's checks of a document's shape, made before anything is
    /// written (`couch_doc:from_json_obj_validate`): its id, its special
    /// members (`_foo` is CouchDB's `doc_validation`), `_deleted` a
    /// boolean. `_bulk_docs` refuses a whole batch that holds one document
    /// failing them.
    static func checkStructure(_ document: JSONObject) throws {
        switch document["_id"] {
        case .string(let id)?: try checkID(id)
        case nil: break
        default: throw DocumentError(.illegalDocumentID, "Document id must be a string")
        }
        if document["_id"]?.stringValue?.hasBytePrefix("_local/") == true { return }
        for (key, _) in document where key.hasBytePrefix("_") && !specialMembers.contains(key) && !replicationMembers.contains(key) {
            throw DocumentError(status: 400, error: "doc_validation", reason: "Bad special document member: \(key)")
        }
        switch document["_deleted"] {
        case nil, .null?, .bool?: break
        default: throw DocumentError(status: 400, error: "doc_validation", reason: "_deleted must be a boolean")
        }
    }

    /// CouchDB's checks on a design document's members: the function
    /// groups are objects, the validation function and language are strings.
    static func checkDesign(_ document: JSONObject) throws {
        for key in ["views", "updates", "filters", "shows", "lists", "options"] {
            if let value = document[key], value.objectValue == nil {
                throw DocumentError(.invalidDesignDocument, "`\(key)` parameter must be an object.")
            }
        }
        for key in ["validate_doc_update", "language"] {
            if let value = document[key], value.stringValue == nil {
                throw DocumentError(.invalidDesignDocument, "`\(key)` parameter must be a string.")
            }
        }
        for (name, view) in document["views"]?.objectValue ?? JSONObject() {
            guard let object = view.objectValue else { throw DocumentError(.invalidDesignDocument, "View \(name) must be an object") }
            if let map = object["map"], map.stringValue == nil, map.objectValue == nil {
                throw DocumentError(.invalidDesignDocument, "View \(name) has a non-string map function")
            }
            if let reduce = object["reduce"]?.stringValue, reduce.hasBytePrefix("_"),
               !["_sum", "_count", "_stats", "_approx_count_distinct"].contains(where: reduce.hasPrefix) {
                throw DocumentError(.invalidDesignDocument, "`\(reduce)` is not a supported reduce function.")
            }
        }
    }

    func bulkWrite(_ db: Database, documents: [JSONObject], newEdits: Bool, allOrNothing: Bool,
                   validation: (@Sendable (Database, JSONObject) throws -> Void)? = nil) throws -> [Result<DocumentWriteResult, DocumentError>] {
        let batch = try Batch(db, tables: self, documents: documents.count)
        var new = try newDocuments(db, documents)
        let results = try DocumentTables.eachIsolated(db, documents.count, allOrNothing: allOrNothing) { i in
            // `eachIsolated` starts again from the first write after rolling
            // back all of them.
            if i == 0 { batch.rewind(to: batch.start) }
            let before = batch.last
            // A document's second revision in the batch reads the tree the
            // first made (and so does every write after a rollback).
            let isNew = documents[i]["_id"]?.stringValue.map { new.remove(ExactString($0)) != nil } ?? false
            do {
                try validation?(db, documents[i])
                // `DocumentDatabase.bulkPut` checked every document's shape
                // before the transaction.
                return try write(db, document: documents[i], newEdits: newEdits, structureChecked: true, batch: batch, isNew: isNew)
            } catch {
                // Nothing of a refused write stays.
                batch.rewind(to: before)
                throw error
            }
        }
        try batch.record(db, tables: self)
        return results
    }

    private struct RefusedAfterWriting: Error {}

    /// The ids of a batch's documents that have no revision here, in one
    /// query (a batch of fewer than `Batch.preparedFrom` asks none): their
    /// trees are empty, and need not be read one by one. Compared in bytes:
    /// an id Swift's `==` takes for another's is another document.
    private func newDocuments(_ db: Database, _ documents: [JSONObject]) throws -> Set<ExactString> {
        guard documents.count >= Batch.preparedFrom else { return [] }
        let ids = documents.compactMap { $0["_id"]?.stringValue }
        return Set(try String.fetchAll(db, sql: "SELECT j.value FROM json_each(?) AS j WHERE NOT EXISTS (SELECT 1 FROM \(revs) WHERE doc = j.value)",
                                       arguments: [JSON.array(ids.map(JSON.string)).text]).map(ExactString.init))
    }

    /// Runs `write(0)`, `write(1)`, … `write(count - 1)` in the open
    /// transaction, each with its own result: a ``DocumentError`` from one
    /// leaves nothing of it written and the others go on (with
    /// `allOrNothing`, it is thrown and nothing of any is written).
    ///
    /// The writes share one savepoint rather than opening and releasing one
    /// each (two statements a document, and as many resets of SQLite's
    /// statement journal). Almost every refused write is refused before it
    /// changes a row (a conflict, a bad revision, a validation); when one
    /// is refused after (SQLite's count of changed rows moved), the batch
    /// is rolled back and written again with a savepoint per write.
    static func eachIsolated<T>(_ db: Database, _ count: Int, allOrNothing: Bool,
                                _ write: (Int) throws -> T) throws -> [Result<T, DocumentError>] {
        do {
            return try db.savepoint {
                var results: [Result<T, DocumentError>] = []
                results.reserveCapacity(count)
                for i in 0..<count {
                    let changed = db.totalChangesCount
                    do {
                        results.append(.success(try write(i)))
                    } catch let error as DocumentError {
                        guard db.totalChangesCount == changed else { throw RefusedAfterWriting() }
                        if allOrNothing { throw error }
                        results.append(.failure(error))
                    }
                }
                return results
            }
        } catch is RefusedAfterWriting {
            var results: [Result<T, DocumentError>] = []
            results.reserveCapacity(count)
            for i in 0..<count {
                do {
                    results.append(.success(try db.savepoint { try write(i) }))
                } catch let error as DocumentError {
                    if allOrNothing { throw error }
                    results.append(.failure(error))
                }
            }
            return results
        }
    }

    /// Writes one document; must run inside a transaction.
    /// - Parameters:
    ///   - stored: attachments whose content the engine has just stored
    ///     (name → digest), given in `document` as stubs.
    ///   - structureChecked: whether the caller has already made
    ///     ``checkStructure(_:)``'s checks of the document.
    ///   - batch: what a batch's writes share (nil: a write alone).
    ///   - isNew: whether the caller knows the document has no revision
    ///     here (its tree is then not read).
    func write(_ db: Database, document: JSONObject, newEdits: Bool, stored: [String: AttachmentDigest] = [:],
               structureChecked: Bool = false, batch: Batch? = nil, isNew: Bool = false) throws -> DocumentWriteResult {
        if !structureChecked { try DocumentTables.checkStructure(document) }
        // A write alone, in a file whose triggers may refuse it (TableSync's,
        // bringing a row up to date from the document): in a savepoint, so
        // that a refusal can be handed to the hook whole.
        guard batch == nil, let hook = rowRefusal, document["_id"]?.stringValue?.hasBytePrefix("_local/") != true else {
            return try writeOnce(db, document: document, newEdits: newEdits, stored: stored, batch: batch, isNew: isNew)
        }
        var document = document
        if document["_id"] == nil { document["_id"] = .string(DocumentTables.newID()) }
        let id = document["_id"]?.stringValue ?? ""
        do {
            return try db.savepoint { try writeOnce(db, document: document, newEdits: newEdits, stored: stored, batch: batch, isNew: isNew) }
        } catch let error as SQLiteError where error.primaryResultCode == .constraint || error.primaryResultCode == .mismatch {
            return try hook.refuse(db, id, error) {
                try writeOnce(db, document: document, newEdits: newEdits, stored: stored, batch: batch, isNew: isNew)
            }
        }
    }

    /// ``write(_:document:newEdits:stored:structureChecked:batch:isNew:)``'s
    /// work, the document's structure checked.
    private func writeOnce(_ db: Database, document: JSONObject, newEdits: Bool, stored: [String: AttachmentDigest],
                           batch: Batch?, isNew: Bool) throws -> DocumentWriteResult {
        let id = document["_id"]?.stringValue ?? DocumentTables.newID()
        if id.hasBytePrefix("_local/") { return try writeLocal(db, document: document) }
        if id.hasBytePrefix(DocumentTables.designPrefix), document["_deleted"]?.boolValue != true { try DocumentTables.checkDesign(document) }

        var body = JSONObject()
        for (key, value) in document where !key.hasBytePrefix("_") || DocumentTables.replicationMembers.contains(key) {
            body[key] = value
        }
        let deleted = document["_deleted"]?.boolValue ?? false
        if newEdits, !deleted, document["_attachments"] == nil, let revText = document["_rev"]?.stringValue,
           let written = try extendOnlyLeaf(db, id: id, rev: revText, body: body, batch: batch) {
            return written
        }
        var tree = isNew ? RevisionTree() : try loadTree(db, id: id)
        let newRev: Revision
        let parent: Revision?
        if newEdits {
            var given: Revision?
            if let revValue = document["_rev"] {
                guard let text = revValue.stringValue, let r = Revision(text), r.depth > 0 else { throw DocumentError.badRev }
                if r.hash.utf8.count == 32, !r.hash.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) }) {
                    throw DocumentError.badRev
                }
                given = r
            }
            if let given {
                guard tree.isLeaf(given) else { throw DocumentError.conflict }
                if let node = tree[given], node.deleted, !deleted {
                    // Editing a deleted leaf by its rev: CouchDB calls it a conflict.
                    throw DocumentError.conflict
                }
                parent = given
            } else if let winner = tree.winner {
                guard winner.deleted else { throw DocumentError.conflict }
                parent = winner.revision
            } else {
                parent = nil
            }
            let attachments = try resolveAttachments(db, id: id, document: document, tree: tree, parent: parent, depth: (parent?.depth ?? 0) + 1, stored: stored)
            newRev = Revision(depth: (parent?.depth ?? 0) + 1,
                              hash: RevisionID.make(deleted: deleted, parent: parent, body: body, attachments: attachments?.revisionInput ?? []))
            if tree.contains(newRev) { throw DocumentError.conflict }
            tree.add(newRev, parent: parent, deleted: deleted)
            try finishWrite(db, id: id, tree: &tree, added: [newRev], newest: newRev, body: body, attachments: attachments, deleted: deleted, batch: batch)
        } else {
            guard let text = document["_rev"]?.stringValue, let rev = Revision(text) else {
                throw DocumentError(.badRequest, "Document rev is required when new_edits is false")
            }
            var path = [rev]
            if let revisions = document["_revisions"]?.objectValue {
                guard let start = revisions["start"]?.intValue, let ids = revisions["ids"]?.arrayValue,
                      ids.count >= 1, start == rev.depth, ids.first?.stringValue == rev.hash
                else { throw DocumentError(.badRequest, "_revisions does not match _rev") }
                path = []
                for (i, hash) in ids.enumerated() {
                    guard let h = hash.stringValue, start - i > 0 else { throw DocumentError(.badRequest, "bad _revisions") }
                    path.append(Revision(depth: start - i, hash: h))
                }
            }
            if tree.contains(rev) { return DocumentWriteResult(id: id, rev: rev.description) }
            let attachments = try resolveAttachments(db, id: id, document: document, tree: tree, parent: path.dropFirst().first { tree.contains($0) }, depth: rev.depth)
            let added = tree.merge(path: path, deleted: deleted)
            try finishWrite(db, id: id, tree: &tree, added: added, newest: rev, body: body, attachments: attachments, deleted: deleted, batch: batch)
            newRev = rev
        }
        return DocumentWriteResult(id: id, rev: newRev.description)
    }

    /// The common write, done without loading the revision tree: a new
    /// revision (no attachments, not a deletion) on the document's winning
    /// revision when it is the tree's only leaf. The new revision is then
    /// the winner and the only leaf, and stemming cuts the one path.
    /// Answers nil when the write is not of that kind.
    static let stemmingInterval = 64

    private func extendOnlyLeaf(_ db: Database, id: String, rev revText: String, body: JSONObject, batch: Batch?) throws -> DocumentWriteResult? {
        guard let row = try Row.fetchOne(db, sql: "SELECT rev, deleted, leaves FROM \(docs) WHERE id = ?", arguments: [id]),
              try row[0] as String == revText, !(try row[1] as Bool), try row[2] as Int? == 1,
              let parent = Revision(revText), parent.depth > 0,
              parent.hash.utf8.count != 32 || parent.hash.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
        else { return nil }
        let (seq, limit) = try nextSequence(db, batch)
        let newRev = try appendRevision(db, id: id, parent: parent, body: body, seq: seq, revsLimit: limit)
        return DocumentWriteResult(id: id, rev: newRev.description)
    }

    /// Writes a live revision on `parent`, the document's only leaf, with
    /// the update sequence `seq` (the caller records it), and stems the
    /// path to `revsLimit` now and then. Answers the new revision.
    func appendRevision(_ db: Database, id: String, parent: Revision, body: JSONObject, seq: Int, revsLimit limit: Int) throws -> Revision {
        let newRev = Revision(depth: parent.depth + 1, hash: RevisionID.make(deleted: false, parent: parent, body: body, attachments: []))
        let bodyText = JSON.object(body).text
        try db.execute(sql: "INSERT INTO \(revs)(doc, rev, depth, parent, deleted, seq, body, attachments) VALUES (?, ?, ?, ?, 0, ?, ?, NULL)",
                       arguments: [id, newRev.description, newRev.depth, parent.description, seq, bodyText])
        // Stemming reads the document's revisions, so it is done every
        // `stemmingInterval` revisions, not at each: the path holds at most
        // that many more than `revs_limit` in between, and reads show no
        // more than `revs_limit` of them.
        let cut = newRev.depth - limit
        if cut >= 1, newRev.depth % DocumentTables.stemmingInterval == 0 {
            try db.execute(sql: "DELETE FROM \(revs) WHERE doc = ? AND depth <= ?", arguments: [id, cut])
            try db.execute(sql: "UPDATE \(revs) SET parent = NULL WHERE doc = ? AND depth = ?", arguments: [id, cut + 1])
        }
        try db.execute(sql: "UPDATE \(docs) SET seq = ?, rev = ?, deleted = 0, body = ?, attachments = NULL, leaves = 1 WHERE id = ?",
                       arguments: [seq, newRev.description, bodyText, id])
        return newRev
    }

    /// Writes the first revision of a document that has never been in the
    /// database (no revision of it, not even a deleted one), with the update
    /// sequence `seq`, taken from `batch` (which records it). Answers the
    /// revision.
    func createDocument(_ db: Database, _ batch: Batch, id: String, body: JSONObject, seq: Int) throws -> Revision {
        let rev = Revision(depth: 1, hash: RevisionID.make(deleted: false, parent: nil, body: body, attachments: []))
        let bodyText = JSON.object(body).text
        let revText = rev.description
        try insertRevision(db, batch, id: id, rev: revText, depth: 1, parent: nil, deleted: false, seq: seq, body: bodyText, attachments: nil)
        try upsertDocument(db, batch, id: id, seq: seq, rev: revText, deleted: false, body: bodyText, attachments: nil, leaves: 1)
        return rev
    }

    /// Purges the leaf revisions `revisions` of the document `id`: they and
    /// the revisions only they descend from are forgotten, as if never
    /// written. A document left with no revision is gone (its view rows
    /// too); one left with others gets its new winner and a new sequence,
    /// so views and the changes feed see it again. Answers the revisions
    /// purged.
    func purge(_ db: Database, id: String, revisions: [String]) throws -> [String] {
        var tree = try loadTree(db, id: id)
        let (purged, removed) = tree.removeLeaves(Set(revisions.compactMap(Revision.init)))
        guard !purged.isEmpty else { return [] }
        let seq = try updateSequence(db) + 1
        try setMeta(db, "update_seq", .int(seq))
        try setMeta(db, "purge_seq", .int((try meta(db, "purge_seq")?.intValue ?? 0) + 1))
        guard let winner = tree.winner else {
            try db.execute(sql: "DELETE FROM \(docs) WHERE id = ?", arguments: [id])
            try db.execute(sql: "DELETE FROM \(revs) WHERE doc = ?", arguments: [id])
            try db.execute(sql: "DELETE FROM \(viewRows) WHERE doc = ?", arguments: [id])
            // The stored reductions no longer match the rows: made again
            // when the views are next brought up to date.
            try db.execute(sql: "DELETE FROM \(viewReduced)")
            return purged.map(\.description)
        }
        try db.execute(sql: "DELETE FROM \(revs) WHERE doc = ? AND rev IN (SELECT value FROM json_each(?))",
                       arguments: [id, JSON.array(removed.map { .string($0.description) }).text])
        let row = try Row.fetchOne(db, sql: "SELECT body, attachments FROM \(revs) WHERE doc = ? AND rev = ?", arguments: [id, winner.revision.description])
        try db.execute(sql: "UPDATE \(docs) SET seq = ?, rev = ?, deleted = ?, body = ?, attachments = ?, leaves = ? WHERE id = ?",
                       arguments: [seq, winner.revision.description, winner.deleted, (try row?[0] as String?) ?? "{}",
                                   try row?[1] as String?, tree.leaves.count, id])
        return purged.map(\.description)
    }

    private func finishWrite(_ db: Database, id: String, tree: inout RevisionTree, added: [Revision], newest: Revision, body: JSONObject, attachments: StoredAttachments?, deleted: Bool,
                             batch: Batch?) throws {
        let (seq, limit) = try nextSequence(db, batch)
        // A tree no larger than the limit has no path longer than it.
        let removed = tree.nodes.count > limit ? tree.stem(limit: limit) : []
        let bodyText = JSON.object(body).text
        let attachmentsText = attachments?.text
        for rev in added.reversed() where tree.contains(rev) {
            let node = tree[rev]!
            let isNewest = rev == newest
            try insertRevision(db, batch, id: id, rev: rev.description, depth: rev.depth, parent: node.parent?.description, deleted: node.deleted,
                               seq: isNewest ? seq : nil, body: isNewest ? bodyText : nil, attachments: isNewest ? attachmentsText : nil)
        }
        for rev in removed {
            try db.execute(sql: "DELETE FROM \(revs) WHERE doc = ? AND rev = ?", arguments: [id, rev.description])
        }
        // The revisions whose parent was forgotten are roots now.
        if !removed.isEmpty {
            try db.execute(sql: "UPDATE \(revs) SET parent = NULL WHERE doc = ? AND parent IN (SELECT value FROM json_each(?))",
                           arguments: [id, JSON.array(removed.map { .string($0.description) }).text])
        }
        guard let winner = tree.winner else { return }
        let winnerBody: String
        let winnerAttachments: String?
        if winner.revision == newest {
            winnerBody = bodyText
            winnerAttachments = attachmentsText
        } else if let row = try Row.fetchOne(db, sql: "SELECT body, attachments FROM \(revs) WHERE doc = ? AND rev = ?", arguments: [id, winner.revision.description]) {
            winnerBody = (try row[0] as String?) ?? "{}"
            winnerAttachments = try row[1]
        } else {
            winnerBody = "{}"
            winnerAttachments = nil
        }
        try upsertDocument(db, batch, id: id, seq: seq, rev: winner.revision.description, deleted: winner.deleted, body: winnerBody,
                           attachments: winnerAttachments, leaves: tree.leaves.count)
    }

    /// Writes a row of the revisions table: through `batch`'s statement
    /// when it has one, else the connection's cached one.
    private func insertRevision(_ db: Database, _ batch: Batch?, id: String, rev: String, depth: Int, parent: String?, deleted: Bool,
                                seq: Int?, body: String?, attachments: String?) throws {
        if let statement = batch?.insertRevision {
            try statement.execute(binding: id, rev, depth, parent, deleted, seq, body, attachments)
        } else {
            try db.execute(sql: insertRevisionSQL, arguments: [id, rev, depth, parent, deleted, seq, body, attachments])
        }
    }

    /// Writes (or replaces) a document's row: through `batch`'s statement
    /// when it has one, else the connection's cached one.
    private func upsertDocument(_ db: Database, _ batch: Batch?, id: String, seq: Int, rev: String, deleted: Bool, body: String,
                                attachments: String?, leaves: Int) throws {
        if let statement = batch?.upsertDocument {
            try statement.execute(binding: id, seq, rev, deleted, body, attachments, leaves)
        } else {
            try db.execute(sql: upsertDocumentSQL, arguments: [id, seq, rev, deleted, body, attachments, leaves])
        }
    }

    /// The statements of a revision, and of the document's row.
    private var insertRevisionSQL: String {
        "INSERT INTO \(revs)(doc, rev, depth, parent, deleted, seq, body, attachments) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
    }

    private var upsertDocumentSQL: String {
        """
        INSERT INTO \(docs)(id, seq, rev, deleted, body, attachments, leaves) VALUES (?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT(id) DO UPDATE SET seq = excluded.seq, rev = excluded.rev, deleted = excluded.deleted,
          body = excluded.body, attachments = excluded.attachments, leaves = excluded.leaves
        """
    }

    // MARK: attachments

    func storedAttachments(_ db: Database, id: String, rev: Revision) throws -> StoredAttachments {
        guard let text = try String.fetchOne(db, sql: "SELECT attachments FROM \(revs) WHERE doc = ? AND rev = ?", arguments: [id, rev.description]) else { return StoredAttachments() }
        return StoredAttachments(text: text)
    }

    /// Stores `data` as the content of an attachment of `contentType`,
    /// under CouchDB's digest for it (of the gzip form for a compressible
    /// type).
    func storeBlob(_ db: Database, _ data: Data, contentType: String) throws -> AttachmentDigest {
        let digest = AttachmentDigest.of(data, contentType: contentType)
        try db.execute(sql: "INSERT INTO \(blobs)(digest, data) VALUES (?, ?) ON CONFLICT(digest) DO NOTHING", arguments: [digest.digest, data])
        return digest
    }

    /// The blobs table's name as SQLite's C API takes it (unquoted).
    var blobsTable: String { String(blobs.dropFirst().dropLast()) }

    /// Files from before incremental BLOB I/O kept attachments in a
    /// `WITHOUT ROWID` table, which `sqlite3_blob_open` cannot open: copied
    /// once into a rowid table.
    private func migrateBlobsToRowIDs(_ db: Database) throws {
        guard let sql = try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", arguments: [blobsTable]),
              sql.uppercased().contains("WITHOUT ROWID") else { return }
        let copy = "\"\(blobsTable)_rowid\""
        try db.execute(sql: """
            CREATE TABLE \(copy) (digest TEXT NOT NULL UNIQUE, data BLOB NOT NULL);
            INSERT INTO \(copy)(digest, data) SELECT digest, data FROM \(blobs);
            DROP TABLE \(blobs);
            ALTER TABLE \(copy) RENAME TO \(blobs);
            """)
    }

    /// Stores `length` bytes read from `file` as the blob `digest` (its MD5,
    /// computed by the caller), a chunk at a time: memory stays bounded
    /// whatever the size. Nothing is stored when the blob is there already.
    func storeBlob(_ db: Database, contentsOf file: URL, digest: String, length: Int) throws {
        if try Int.fetchOne(db, sql: "SELECT 1 FROM \(blobs) WHERE digest = ?", arguments: [digest]) != nil { return }
        guard let rowID = try Int64.fetchOne(db, sql: "INSERT INTO \(blobs)(digest, data) VALUES (?, zeroblob(?)) RETURNING rowid", arguments: [digest, length]) else {
            throw DocumentError(.internalError, "the attachment's row was not created")
        }
        let handle = try FileHandle(forReadingFrom: file)
        defer { try? handle.close() }
        try db.withBlob(table: blobsTable, column: "data", rowID: rowID, writable: true) { blob in
            var offset = 0
            while offset < length, let chunk = try handle.read(upToCount: min(Self.blobChunk, length - offset)), !chunk.isEmpty {
                try blob.write(chunk, at: offset)
                offset += chunk.count
            }
            guard offset == length, try handle.read(upToCount: 1)?.isEmpty ?? true else {
                throw DocumentError(.badRequest, "the attachment's content changed while it was stored")
            }
        }
    }

    /// The size of the chunks attachments are copied and sent in.
    static let blobChunk = 1 << 20

    /// Where an attachment's content is: its blob's rowid and size.
    func blobLocation(_ db: Database, digest: String) throws -> (rowID: Int64, length: Int) {
        guard let row = try Row.fetchOne(db, sql: "SELECT rowid, length(data) FROM \(blobs) WHERE digest = ?", arguments: [digest]) else {
            throw DocumentError(.notFound, "attachment content is missing")
        }
        return (try row[0], try row[1])
    }

    /// `count` bytes of the blob at `rowID` from `offset`.
    func readBlob(_ db: Database, rowID: Int64, at offset: Int, count: Int) throws -> Data {
        do {
            return try db.withBlob(table: blobsTable, column: "data", rowID: rowID) { try $0.read(count: count, at: offset) }
        } catch let error as SQLiteError where error.primaryResultCode == .error {
            // The row went away (compaction removed an attachment no
            // revision keeps any more) between two chunks.
            throw DocumentError(.notFound, "attachment content is missing")
        }
    }

    /// The attachments of a revision being written: inline data stored as
    /// blobs, stubs taken from the parent (or, when replicated, any revision
    /// with the same digest).
    func resolveAttachments(_ db: Database, id: String, document: JSONObject, tree: RevisionTree, parent: Revision?, depth: Int,
                            stored: [String: AttachmentDigest] = [:]) throws -> StoredAttachments? {
        guard let value = document["_attachments"] else { return nil }
        guard let given = value.objectValue else { throw DocumentError(.badRequest, "_attachments must be an object") }
        if given.isEmpty { return nil }
        let parentAttachments = try parent.map { try storedAttachments(db, id: id, rev: $0) } ?? StoredAttachments()
        var out = StoredAttachments()
        for (name, spec) in given {
            // CouchDB keeps names starting with `_` for itself.
            if name.hasBytePrefix("_") { throw DocumentError(.badRequest, "Attachment name '\(name)' starts with prohibited character '_'") }
            guard let o = spec.objectValue else { throw DocumentError(.badRequest, "attachment \(name) must be an object") }
            let contentType = o["content_type"]?.stringValue ?? "application/octet-stream"
            func revpos(_ digest: String, given: Int?) -> Int {
                if let previous = parentAttachments[name], previous.digest == digest { return previous.revpos }
                return given ?? depth
            }
            if let content = stored[name] {
                out.append(name, StoredAttachment(contentType: contentType, content: content, revpos: revpos(content.digest, given: nil)))
            } else if let data = o["data"] {
                guard let text = data.stringValue, let bytes = Data(base64Encoded: text, options: .ignoreUnknownCharacters) else {
                    throw DocumentError(.badRequest, "Invalid attachment data for \(name)")
                }
                let content = try storeBlob(db, bytes, contentType: contentType)
                out.append(name, StoredAttachment(contentType: contentType, content: content, revpos: revpos(content.digest, given: o["revpos"]?.intValue)))
            } else if o["stub"]?.boolValue == true || o["follows"]?.boolValue == true {
                if let existing = parentAttachments[name] {
                    out.append(name, existing)
                } else if let digest = o["digest"]?.stringValue,
                          try Int.fetchOne(db, sql: "SELECT 1 FROM \(blobs) WHERE digest = ?", arguments: [digest]) != nil {
                    let encoding = o["encoding"]?.stringValue
                    out.append(name, StoredAttachment(contentType: contentType, digest: digest, length: o["length"]?.intValue ?? 0,
                                                      revpos: o["revpos"]?.intValue ?? depth, encoding: encoding,
                                                      encodedLength: encoding == nil ? nil : o["encoded_length"]?.intValue))
                } else {
                    throw DocumentError(.badRequest, "Invalid attachment stub in \(id) for \(name)")
                }
            } else {
                throw DocumentError(.badRequest, "attachment \(name) needs data or stub")
            }
        }
        return out
    }

    func attachment(_ db: Database, id: String, name: String, rev: String?) throws -> Attachment {
        let a = try storedAttachment(db, id: id, name: name, rev: rev)
        guard let data = try Data.fetchOne(db, sql: "SELECT data FROM \(blobs) WHERE digest = ?", arguments: [a.digest]) else {
            throw DocumentError(.notFound, "attachment content is missing")
        }
        return Attachment(contentType: a.contentType, data: data, digest: a.digest, revpos: a.revpos)
    }

    /// The attachment `name` of the winning revision or of `rev`.
    func storedAttachment(_ db: Database, id: String, name: String, rev: String?) throws -> StoredAttachment {
        let attachments: StoredAttachments
        if let rev {
            guard let r = Revision(rev) else { throw DocumentError.badRev }
            guard try String.fetchOne(db, sql: "SELECT rev FROM \(revs) WHERE doc = ? AND rev = ?", arguments: [id, rev]) != nil else { throw DocumentError.missing }
            attachments = try storedAttachments(db, id: id, rev: r)
        } else {
            guard let row = try Row.fetchOne(db, sql: "SELECT deleted, attachments FROM \(docs) WHERE id = ?", arguments: [id]) else { throw DocumentError.missing }
            if try row[0] as Bool { throw DocumentError.deleted }
            attachments = StoredAttachments(text: try row[1])
        }
        guard let a = attachments[name] else { throw DocumentError(.notFound, "Document is missing attachment") }
        return a
    }

    // MARK: reading

    /// - Parameter revsLimit: the most revision ids `_revisions` and
    ///   `_revs_info` list (nil: `revs_limit`).
    func read(_ db: Database, id: String, options: DocumentReadOptions, revsLimit: Int? = nil) throws -> JSONObject {
        if id.hasBytePrefix("_local/") { return try readLocal(db, id: id) }
        if options.rev == nil, !options.revs, !options.revsInfo, !options.conflicts, !options.deletedConflicts, options.attachmentsSince == nil {
            // The winner as the documents table keeps it: no tree to load.
            guard let row = try Row.fetchOne(db, sql: "SELECT rev, deleted, body, attachments, seq FROM \(docs) WHERE id = ?", arguments: [id]) else {
                throw DocumentError.missing
            }
            if try row[1] as Bool { throw DocumentError.deleted }
            return try document(db, id: id, rev: try row[0], deleted: false, body: try row[2], attachments: try row[3], seq: try row[4], options: options)
        }
        let tree = try loadTree(db, id: id)
        guard let winner = tree.winner else { throw DocumentError.missing }
        var rev = winner.revision
        if let text = options.rev {
            guard let r = Revision(text) else { throw DocumentError.badRev }
            rev = r
            if options.latest, let leaf = latestLeaf(tree, from: r) { rev = leaf }
            guard tree[rev]?.hasBody == true else { throw DocumentError.missing }
        } else if winner.deleted {
            throw DocumentError.deleted
        }
        return try assemble(db, id: id, rev: rev, tree: tree, options: options, revsLimit: revsLimit)
    }

    /// The winning revision of `id`, nil when there is none (or it is
    /// deleted); with `_revisions` of at most `revisions` ids (and no more
    /// than `revs_limit`) when given: what CouchDB hands a design function
    /// (see ``DocumentDatabase/functionRevisionsLimit``).
    ///
    /// The ids are read by walking up from the winner, one lookup each,
    /// rather than by loading the revision tree: a document edited a
    /// thousand times has a thousand revisions, and every validated write
    /// and update call reads them.
    func winner(_ db: Database, id: String, revisions: Int? = nil) throws -> JSONObject? {
        let document: JSONObject
        do {
            document = try read(db, id: id, options: DocumentReadOptions())
        } catch let error as DocumentError where error.kind == .notFound {
            return nil
        }
        guard let revisions else { return document }
        return try withRevisions(db, document, revisions: revisions)
    }

    /// `document`, a revision read from `db`, with `_revisions` listing at
    /// most `revisions` ids of its path (and no more than `revs_limit`).
    func withRevisions(_ db: Database, _ document: JSONObject, revisions: Int) throws -> JSONObject {
        guard let id = document["_id"]?.stringValue, let rev = document["_rev"]?.stringValue.flatMap(Revision.init) else { return document }
        let limit = min(revisions, try meta(db, "revs_limit")?.intValue ?? 1000)
        var document = document
        let ids = try newestRevisionIDs(db, id: id, from: rev, limit: limit)
        document["_revisions"] = .object(["start": .int(rev.depth), "ids": .array(ids.map(JSON.string))])
        return document
    }

    /// The hashes of `rev` and its ancestors, newest first, at most
    /// `limit` of them: the path `_revisions` lists, as far as the tree
    /// keeps it.
    func newestRevisionIDs(_ db: Database, id: String, from rev: Revision, limit: Int) throws -> [String] {
        guard limit > 0 else { return [] }
        let revisions = try String.fetchAll(db, sql: """
            WITH RECURSIVE path(rev, parent, n) AS (
              SELECT rev, parent, 1 FROM \(revs) WHERE doc = ?1 AND rev = ?2
              UNION ALL
              SELECT r.rev, r.parent, path.n + 1 FROM path JOIN \(revs) AS r ON r.doc = ?1 AND r.rev = path.parent WHERE path.n < ?3
            )
            SELECT rev FROM path ORDER BY n
            """, arguments: [id, rev.description, limit])
        return revisions.compactMap { Revision($0)?.hash }
    }

    func latestLeaf(_ tree: RevisionTree, from rev: Revision) -> Revision? {
        tree.leaves.filter { tree.ancestry(of: $0.revision).contains(rev) }.map(\.revision).max()
    }

    /// A revision's document from its stored columns: `_id`, `_rev`, the
    /// body, attachment stubs (or contents when asked) and `_local_seq`.
    func document(_ db: Database, id: String, rev: String, deleted: Bool, body bodyText: String, attachments attachmentsText: String?,
                  seq: Int?, options: DocumentReadOptions) throws -> JSONObject {
        var doc: JSONObject = ["_id": .string(id), "_rev": .string(rev)]
        if deleted { doc["_deleted"] = .bool(true) }
        for (k, v) in try JSON(parsing: bodyText).objectValue ?? JSONObject() { doc[k] = v }
        let attachments = StoredAttachments(text: attachmentsText)
        if !attachments.isEmpty {
            var o = JSONObject()
            for (name, a) in attachments {
                if options.attachments && a.revpos > options.attachmentsAfter {
                    let data = try Data.fetchOne(db, sql: "SELECT data FROM \(blobs) WHERE digest = ?", arguments: [a.digest]) ?? Data()
                    o[name] = a.inline(data: data, encodingInfo: options.attachmentEncodingInfo)
                } else {
                    o[name] = a.stub(encodingInfo: options.attachmentEncodingInfo)
                }
            }
            doc["_attachments"] = .object(o)
        }
        if options.localSequence, let seq { doc["_local_seq"] = .int(seq) }
        return doc
    }

    /// - Parameters:
    ///   - revsLimit: `revs_limit`, when the caller read it for many
    ///     documents (read here otherwise, when `_revisions` or `_revs_info`
    ///     is asked for).
    ///   - stored: the revision's stored form when the caller read it
    ///     (read here otherwise).
    func assemble(_ db: Database, id: String, rev: Revision, tree: RevisionTree, options: DocumentReadOptions, revsLimit: Int? = nil,
                  stored: StoredRevision? = nil) throws -> JSONObject {
        let revision: StoredRevision
        if let stored, stored.rev == rev {
            revision = stored
        } else {
            guard let row = try Row.fetchOne(db, sql: "SELECT body, attachments, deleted, seq FROM \(revs) WHERE doc = ? AND rev = ?", arguments: [id, rev.description]),
                  let bodyText = try row[0] as String?
            else { throw DocumentError.missing }
            revision = StoredRevision(rev: rev, body: bodyText, attachments: try row[1], deleted: try row[2], seq: try row[3])
        }
        var options = options
        if let since = options.attachmentsSince {
            // CouchDB's find_ancestor_rev_pos: the newest of them on this
            // revision's path.
            let known = Set(since.compactMap(Revision.init))
            options.attachmentsAfter = tree.ancestry(of: rev).first(where: known.contains)?.depth ?? 0
        }
        var doc = try document(db, id: id, rev: rev.description, deleted: revision.deleted, body: revision.body, attachments: revision.attachments, seq: nil, options: options)
        if options.conflicts, rev == tree.winner?.revision {
            let c = tree.conflicts
            if !c.isEmpty { doc["_conflicts"] = .array(c.map { .string($0.description) }) }
        }
        if options.deletedConflicts, rev == tree.winner?.revision {
            let c = tree.deletedConflicts
            if !c.isEmpty { doc["_deleted_conflicts"] = .array(c.map { .string($0.description) }) }
        }
        if options.localSequence, let seq = revision.seq { doc["_local_seq"] = .int(seq) }
        let limit = options.revs || options.revsInfo ? try revsLimit ?? meta(db, "revs_limit")?.intValue ?? 1000 : 0
        if options.revs {
            let path = tree.ancestry(of: rev).prefix(limit)
            doc["_revisions"] = .object(["start": .int(rev.depth), "ids": .array(path.map { .string($0.hash) })])
        }
        if options.revsInfo {
            doc["_revs_info"] = .array(tree.ancestry(of: rev).prefix(limit).map { r in
                let node = tree[r]!
                let status = node.deleted ? "deleted" : (node.hasBody ? "available" : "missing")
                return .object(["rev": .string(r.description), "status": .string(status)])
            })
        }
        return doc
    }

    /// A document whose whole tree is its first revision, without
    /// attachments (every document of a first replication): what
    /// `open_revs` answers for it needs no tree read.
    struct OnlyFirstRevision {
        let id: String
        let rev: Revision
        let deleted: Bool
        let body: String
    }

    /// Of the documents `ids`, those whose tree is their first revision
    /// alone and have no attachments, read in one query; none when
    /// `options` asks for what only the tree or the stored revision gives
    /// (`revs_info`, the local sequence).
    /// By id, compared in bytes.
    func onlyFirstRevisions(_ db: Database, ids: [String], options: DocumentReadOptions) throws -> [ExactString: OnlyFirstRevision] {
        guard !options.revsInfo, !options.localSequence, !ids.isEmpty else { return [:] }
        var firsts: [ExactString: OnlyFirstRevision] = [:]
        let rows = try Row.fetchCursor(db, sql: """
            SELECT id, rev, deleted, body FROM \(docs)
            WHERE id IN (SELECT value FROM json_each(?)) AND leaves = 1 AND attachments IS NULL AND rev LIKE '1-%'
            """, arguments: [JSON.array(ids.map(JSON.string)).text])
        while let row = try rows.next() {
            guard let rev = Revision(try row[1] as String), rev.depth == 1 else { continue }
            let id: String = try row[0]
            firsts[ExactString(id)] = OnlyFirstRevision(id: id, rev: rev, deleted: try row[2], body: try row[3])
        }
        return firsts
    }

    /// `openRevisions(_:id:revisions:options:revsLimit:)` for a document
    /// whose tree is `first` alone: the same answer, from its row.
    func openRevisions(_ db: Database, first: OnlyFirstRevision, revisions: [String]?, options: DocumentReadOptions, revsLimit: Int?) throws -> [OpenRevision] {
        var options = options
        options.rev = nil
        func assembled() throws -> JSONObject {
            var doc = try document(db, id: first.id, rev: first.rev.description, deleted: first.deleted, body: first.body, attachments: nil, seq: nil, options: options)
            if options.revs {
                let limit = try revsLimit ?? meta(db, "revs_limit")?.intValue ?? 1000
                doc["_revisions"] = .object(["start": .int(1), "ids": .array(limit > 0 ? [.string(first.rev.hash)] : [])])
            }
            return doc
        }
        guard let revisions else { return [.ok(try assembled())] }
        // Any other revision asked for is not in the tree (`latest` finds
        // no leaf from it either).
        return try revisions.map { Revision($0) == first.rev ? .ok(try assembled()) : .missing($0) }
    }

    func openRevisions(_ db: Database, id: String, revisions: [String]?, options: DocumentReadOptions, revsLimit: Int? = nil) throws -> [OpenRevision] {
        // A replication asks for the latest leaf, almost always the winner.
        let (tree, winner) = try loadTreeAndWinner(db, id: id)
        var options = options
        options.rev = nil
        if let revisions {
            var out: [OpenRevision] = []
            for text in revisions {
                guard var r = Revision(text) else { out.append(.missing(text)); continue }
                if options.latest, let leaf = latestLeaf(tree, from: r) { r = leaf }
                if tree[r]?.hasBody == true {
                    out.append(.ok(try assemble(db, id: id, rev: r, tree: tree, options: options, revsLimit: revsLimit, stored: winner)))
                } else {
                    out.append(.missing(text))
                }
            }
            return out
        }
        if tree.isEmpty { throw DocumentError.missing }
        return try tree.leaves.sorted { $0.revision < $1.revision }.map { .ok(try assemble(db, id: id, rev: $0.revision, tree: tree, options: options, revsLimit: revsLimit, stored: winner)) }
    }

    func info(_ db: Database) throws -> DocumentDatabaseInfo {
        let row = try Row.fetchOne(db, sql: "SELECT live, deleted, size FROM \(counts) WHERE id = 0")!
        let pageCount = try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0
        let pageSize = try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 4096
        var info = DocumentDatabaseInfo(name: "", documentCount: try row[0], deletedDocumentCount: try row[1], updateSequence: ChangeSequence(try updateSequence(db)),
                                        fileSize: pageCount * pageSize, activeSize: try row[2])
        info.purgeSequence = try meta(db, "purge_seq")?.intValue ?? 0
        return info
    }

    func allDocuments(_ db: Database, _ options: AllDocumentsOptions) throws -> AllDocumentsResult {
        let table = options.namespace == .local ? local : docs
        // The namespace's ids: a range of the table's primary key.
        var range: (low: String, high: String)?
        switch options.namespace {
        case .all: range = nil
        case .design: range = (DocumentTables.designPrefix, "_design0")
        case .local: range = ("_local/", "_local0")
        }
        var namespace = range.map { _ in "id >= ? AND id < ?" } ?? "1"
        var namespaceArguments: [(any DatabaseValueConvertible)?] = range.map { [$0.low, $0.high] } ?? []
        if options.namespace != .local {
            namespace = "deleted = 0 AND " + namespace
        }
        let total: Int?
        switch options.namespace {
        case _ where !options.countsRows: total = nil
        case .all: total = try Int.fetchOne(db, sql: "SELECT live FROM \(counts) WHERE id = 0") ?? 0
        case .design: total = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(docs) WHERE \(namespace)", arguments: StatementArguments(namespaceArguments))
        case .local: total = nil
        }
        var rows: [JSON] = []
        func row(id: String, rev: String, deleted: Bool) throws -> JSON {
            var value: JSONObject = ["rev": .string(rev)]
            if deleted { value["deleted"] = .bool(true) }
            var o: JSONObject = ["id": .string(id), "key": .string(id), "value": .object(value)]
            if options.includeDocs {
                if options.namespace == .local {
                    o["doc"] = .object(try readLocal(db, id: id))
                } else {
                    o["doc"] = deleted ? .null : .object(try read(db, id: id, options: DocumentReadOptions(conflicts: options.conflicts)))
                }
            }
            return .object(o)
        }
        let revColumn = options.namespace == .local ? "'0-' || rev" : "rev"
        let deletedColumn = options.namespace == .local ? "0" : "deleted"
        if var keys = options.keys {
            // As CouchDB: the keys in order (reversed for descending), then
            // skip and limit, then those of the namespace.
            if options.descending { keys.reverse() }
            keys = Array(keys.dropFirst(max(0, options.skip)).prefix(options.limit ?? .max))
            if let range { keys = keys.filter { $0 >= range.low && $0 < range.high } }
            for key in keys {
                if let r = try Row.fetchOne(db, sql: "SELECT \(revColumn), \(deletedColumn) FROM \(table) WHERE id = ?", arguments: [key]) {
                    rows.append(try row(id: key, rev: try r[0], deleted: try r[1]))
                } else {
                    rows.append(.object(["key": .string(key), "error": .string("not_found")]))
                }
            }
            return AllDocumentsResult(totalRows: total, offset: nil, rows: rows)
        }
        var conditions = [namespace]
        var arguments = namespaceArguments
        let lowerOp = options.descending ? "<=" : ">="
        if let start = options.startKey { conditions.append("id \(lowerOp) ?"); arguments.append(start) }
        if let end = options.endKey {
            let op = options.descending ? (options.inclusiveEnd ? ">=" : ">") : (options.inclusiveEnd ? "<=" : "<")
            conditions.append("id \(op) ?")
            arguments.append(end)
        }
        var before = 0
        if let start = options.startKey, options.namespace != .local, options.countsRows {
            namespaceArguments.append(start)
            before = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(docs) WHERE \(namespace) AND id \(options.descending ? ">" : "<") ?",
                                      arguments: StatementArguments(namespaceArguments)) ?? 0
        }
        let order = options.descending ? "DESC" : "ASC"
        let limit = options.limit ?? -1
        let found = try Row.fetchAll(db, sql: "SELECT id, \(revColumn) FROM \(table) WHERE \(conditions.joined(separator: " AND ")) ORDER BY id \(order) LIMIT \(limit) OFFSET \(max(0, options.skip))",
                                     arguments: StatementArguments(arguments))
        for r in found {
            rows.append(try row(id: try r[0], rev: try r[1], deleted: false))
        }
        return AllDocumentsResult(totalRows: total, offset: options.namespace == .local || !options.countsRows ? nil : before + max(0, options.skip), rows: rows)
    }

    func changeCount(_ db: Database, after seq: Int) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT count(*) FROM \(docs) WHERE seq > ?", arguments: [seq]) ?? 0
    }

    func changes(_ db: Database, _ options: ChangesOptions) throws -> ChangesResult {
        let lastSeq = try updateSequence(db)
        let since = options.since == .now ? lastSeq : options.since.number ?? 0
        let order = options.descending ? "DESC" : "ASC"
        // The body only for a selector or a filter; `leaves` says when the
        // winner is the only leaf, whose tree `all_docs` need not read.
        let readsBody = options.selector != nil || options.filter != nil
        var sql = "SELECT id, seq, rev, deleted, \(readsBody ? "body" : "NULL"), leaves FROM \(docs) WHERE seq > ?"
        var arguments: [(any DatabaseValueConvertible)?] = [options.descending ? 0 : since]
        if options.designOnly { sql += " AND id >= '_design/' AND id < '_design0'" }
        if let ids = options.documentIDs {
            sql += " AND id IN (SELECT value FROM json_each(?))"
            arguments.append(JSON.array(ids.sorted().map(JSON.string)).text)
        }
        sql += " ORDER BY seq \(order)"
        let matcher = try options.selector.map { try MangoSelector($0) }
        var results: [Change] = []
        // CouchDB's `pending`: the changes after the last one it looked at
        // (`count_changes_since`, less each row enumerated). For a few
        // `doc_ids` and for `_design` it looks only at those documents, so
        // the others stay pending.
        let direct = options.readsNamedDocumentsOnly
        let raw = options.countsPending ? try changeCount(db, after: options.descending ? 0 : since) : 0
        var examined = 0
        var stoppedAt: Int?
        let cursor = try Row.fetchCursor(db, sql: sql, arguments: StatementArguments(arguments))
        while let row = try cursor.next() {
            let id: String = try row[0]
            let seq: Int = try row[1]
            let deleted: Bool = try row[3]
            examined += 1
            if readsBody {
                // As CouchDB: the winner, deleted or not, as JSON with its
                // `_id`, `_rev` and `_deleted` (`couch_doc:to_json_obj`: the
                // body, then `_deleted`), so a deletion that kept the
                // document's members passes a selector or a filter on them.
                var doc: JSONObject = ["_id": .string(id), "_rev": .string(try row[2])]
                for (k, v) in try JSON(parsing: try row[4] as String).objectValue ?? JSONObject() { doc[k] = v }
                if deleted { doc["_deleted"] = true }
                if let matcher, !matcher.matches(.object(doc)) { continue }
                // A filter function gets `_revisions` too, its newest 20 ids
                // (`couch_query_servers:json_doc`).
                if let filter = options.filter,
                   try !filter(try withRevisions(db, doc, revisions: DocumentDatabase.functionRevisionsLimit)) { continue }
            }
            var revisions: [String] = [try row[2]]
            // The tree, read once, when the style or the documents need it
            // (the style not when the winner is the only leaf).
            let onlyLeaf = try row[5] as Int? == 1
            let tree = options.style == .allDocs && !onlyLeaf || options.includeDocs ? try loadTree(db, id: id) : nil
            if options.style == .allDocs, let tree {
                let winner = tree.winner?.revision
                revisions = [winner?.description ?? revisions[0]] + tree.leaves.map(\.revision).filter { $0 != winner }.sorted(by: >).map(\.description)
            }
            var doc: JSONObject?
            if options.includeDocs, let tree {
                if let w = tree.winner?.revision {
                    doc = try assemble(db, id: id, rev: w, tree: tree, options: DocumentReadOptions(conflicts: options.conflicts))
                }
            }
            results.append(Change(seq: ChangeSequence(seq), id: id, changes: revisions, deleted: deleted, doc: doc))
            if let limit = options.limit, results.count >= limit {
                stoppedAt = seq
                break
            }
        }
        let pending: Int?
        if !options.countsPending {
            pending = nil
        } else if direct {
            pending = raw - examined
        } else if let stoppedAt {
            pending = options.descending ? try Int.fetchOne(db, sql: "SELECT count(*) FROM \(docs) WHERE seq < ?", arguments: [stoppedAt]) ?? 0
                : try changeCount(db, after: stoppedAt)
        } else {
            pending = 0
        }
        let last: ChangeSequence
        if options.descending {
            last = results.last?.seq ?? .start
        } else if stoppedAt != nil, let seq = results.last?.seq {
            last = seq
        } else {
            last = ChangeSequence(max(lastSeq, since))
        }
        return ChangesResult(results: results, lastSeq: last, pending: pending)
    }

    func compact(_ db: Database) throws {
        // A revision is a leaf when nothing names it as parent.
        try db.execute(sql: """
            UPDATE \(revs) SET body = NULL, attachments = NULL
            WHERE body IS NOT NULL AND EXISTS (SELECT 1 FROM \(revs) AS child WHERE child.doc = \(revs).doc AND child.parent = \(revs).rev)
            """)
        try db.execute(sql: """
            DELETE FROM \(blobs) WHERE digest NOT IN (
              SELECT json_extract(a.value, '$.digest') FROM \(revs), json_each(\(revs).attachments) AS a WHERE \(revs).attachments IS NOT NULL)
            """)
    }

    // MARK: local documents

    func readLocal(_ db: Database, id: String) throws -> JSONObject {
        guard let row = try Row.fetchOne(db, sql: "SELECT rev, body FROM \(local) WHERE id = ?", arguments: [id]) else { throw DocumentError.missing }
        var doc: JSONObject = ["_id": .string(id), "_rev": .string("0-\(try row[0] as Int)")]
        for (k, v) in try JSON(parsing: try row[1] as String).objectValue ?? JSONObject() { doc[k] = v }
        return doc
    }

    func writeLocal(_ db: Database, document: JSONObject) throws -> DocumentWriteResult {
        guard let id = document["_id"]?.stringValue, id.hasBytePrefix("_local/"), id.utf8.count > 7 else {
            throw DocumentError(.illegalDocumentID, "a local document id starts with _local/")
        }
        if document["_deleted"]?.boolValue == true {
            try deleteLocal(db, id: id)
            return DocumentWriteResult(id: id, rev: "0-0")
        }
        var body = JSONObject()
        for (k, v) in document where k != "_id" && k != "_rev" { body[k] = v }
        let current = try Int.fetchOne(db, sql: "SELECT rev FROM \(local) WHERE id = ?", arguments: [id]) ?? 0
        try db.execute(sql: "INSERT INTO \(local)(id, rev, body) VALUES (?, ?, ?) ON CONFLICT(id) DO UPDATE SET rev = excluded.rev, body = excluded.body",
                       arguments: [id, current + 1, JSON.object(body).text])
        return DocumentWriteResult(id: id, rev: "0-\(current + 1)")
    }

    func deleteLocal(_ db: Database, id: String) throws {
        try db.execute(sql: "DELETE FROM \(local) WHERE id = ?", arguments: [id])
        if db.changesCount == 0 { throw DocumentError.missing }
    }
}

/// What `TableSync` does when a trigger refuses a document written alone:
/// the trigger that brings the document's row up to date, on a constraint
/// no check of its own foresees (a `CHECK`, a `STRICT` column's type, an
/// app's trigger that raises). `refuse` gets the document's id, the error,
/// and the write to run again (its first attempt was rolled back); it
/// writes the document without the row and reports the row, or throws.
package struct RowRefusalHook: Sendable {
    package let refuse: @Sendable (Database, String, SQLiteError, () throws -> DocumentWriteResult) throws -> DocumentWriteResult

    package init(refuse: @escaping @Sendable (Database, String, SQLiteError, () throws -> DocumentWriteResult) throws -> DocumentWriteResult) {
        self.refuse = refuse
    }
}
