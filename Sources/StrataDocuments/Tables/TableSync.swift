import Foundation
import Strata

/// An app's own relational tables kept as CouchDB documents in the same
/// file, so that they replicate like any document database: each row is a
/// document, written and read through the tables as before.
///
/// ```swift
/// let pool = try DatabasePool(path: "notes.sqlite")
/// try pool.write { db in
///     try db.execute(sql: "CREATE TABLE IF NOT EXISTS notes(id TEXT PRIMARY KEY NOT NULL, title TEXT, body TEXT)")
/// }
/// let sync = try TableSync(pool, tables: ["notes"])
/// try pool.write { db in
///     try db.execute(sql: "INSERT INTO notes VALUES (?, 'Groceries', 'milk')", arguments: [UUID().uuidString])
/// }
/// try sync.captureLocalChanges()          // the row is now the document "notes:<id>"
/// // StrataSync's `sync.sync(with:)` sends and receives the documents.
/// ```
///
/// **Rows as documents.** The row of `notes` whose key is `k` is the
/// document `notes:k`, its columns members of the same names, and the
/// member `$table` names the table. A column's value maps as follows:
/// INTEGER → a JSON integer, exact at any size; REAL → a JSON number with
/// a fraction or exponent (so it comes back REAL); TEXT → a string; NULL →
/// null; a BLOB in a column of BLOB affinity (declared `BLOB`, or with no
/// type) → the document's attachment of the column's name
/// (`application/octet-stream`), and any client's attachment of that name
/// comes back as the BLOB; a BLOB in another column → a string of its
/// base64 (it comes back as that text). A document's members the table has no
/// column for are kept in the document when the row changes, so a newer
/// app version's fields survive an older one's edits.
///
/// **Local writes** are captured by triggers, in the transaction of the row
/// change, whatever made it (records, typed queries, raw SQL, another
/// process on the file): each change enters an outbox table, and
/// `captureLocalChanges()` turns the outbox into document revisions in
/// one transaction. A crash between the two loses nothing: the outbox is
/// read on the next call.
///
/// **Remote writes** (replicated into ``documents``) reach the table in
/// the transaction of the document write: a batch (`documents.bulkPut`,
/// what a pull writes) by a few statements for all of it after its
/// documents are stored, any other document write by triggers on the
/// documents table. The row is the document's winning revision by CouchDB's
/// rule, and a deleted winner deletes the row. Those writes are not
/// captured again.
///
/// **Keys.** Two devices must not hand out the same key. A synced table's
/// primary key is of globally unique values: a TEXT column of UUID strings,
/// say, or the columns of a join table's composite key. The document id is
/// the table's name, a colon, and the key's text (`notes:4F1C…`), or for a
/// composite key a JSON array of its values (`favorites:["ann",12]`). A
/// table keyed by SQLite's row id (an INTEGER PRIMARY KEY, or no primary
/// key) is refused with ``DocumentError`` `badRequest` saying why and what
/// to do, and so is a key column that may hold BLOBs, a column whose name
/// starts with `_` (CouchDB's own members), a column named `$table`, or a
/// table whose name, a colon and more is another synced table's name
/// (`parts` and `parts:old`: their documents' ids would overlap).
public final class TableSync: Sendable {
    /// The document database the rows are kept in (its tables are named
    /// after ``documentsName``), what a replicator sends and receives.
    public let documents: DocumentDatabase
    /// The synced tables and their keys.
    public let tables: [SyncedTable]
    /// The document database's name inside the file.
    public let documentsName: String
    /// The statements that apply a pull's batch to the tables (nil when
    /// the documents' triggers apply each document, see the initializer).
    let batchApply: BatchApply?

    /// A synced table: its name, its primary key's columns and all its
    /// columns.
    public struct SyncedTable: Sendable, Hashable {
        /// The table's name.
        public let name: String
        /// The primary key's columns, in the key's order.
        public let keyColumns: [String]
        /// All the table's columns, in the table's order.
        public let columns: [String]
        /// The columns of BLOB affinity (declared `BLOB`, or with no type),
        /// whose BLOB values are the document's attachments.
        public let blobColumns: Set<String>
        /// Each key column's affinity (`INTEGER`, `TEXT`, `REAL` or
        /// `NUMERIC`), in the order of ``keyColumns``.
        let keyAffinities: [String]
        /// Whether the key is an `INTEGER PRIMARY KEY`, the row id, which
        /// holds integers only (a shared integer key).
        let keyIsRowID: Bool

        /// SQL for the document key of the row `alias` (NEW, OLD, or the
        /// table): the key's text, or a JSON array of a composite key's values.
        func keySQL(_ alias: String) -> String {
            let prefix = alias.isEmpty ? "" : alias + "."
            if keyColumns.count == 1 { return "CAST(\(prefix)\(quoteIdentifier(keyColumns[0])) AS TEXT)" }
            return "json_array(" + keyColumns.map { prefix + quoteIdentifier($0) }.joined(separator: ", ") + ")"
        }

        /// SQL for each key column's value, from a document key in `text`.
        func keyValuesSQL(_ text: String) -> [String] {
            if keyColumns.count == 1 { return [text] }
            return keyColumns.indices.map { "json_extract(\(text), '$[\($0)]')" }
        }

        /// SQL that is true when the document key in `text` is spelled as
        /// ``keySQL(_:)`` spells the key of the row it makes: for an
        /// `INTEGER PRIMARY KEY`, an integer's digits (`12`, not `012`,
        /// `12.0` or `twelve`, which the row id cannot hold); for a
        /// one-column key of `INTEGER`, `REAL` or `NUMERIC` affinity, the
        /// digits the column's number is written with (`12` for an INTEGER
        /// column, `12.0` for a REAL one); for a composite key, a JSON array
        /// of one value per column as SQLite's `json_array` writes the values
        /// the columns keep (`["ann",12]` for a TEXT and an INTEGER column,
        /// not `["ann", 12]`, `["ann",12.0]`, `["ann","12"]` or
        /// `["ann",12,0]`). Malformed JSON is false, not an error.
        func isRowKeySQL(_ text: String) -> String {
            if keyIsRowID { return "\(text) = CAST(CAST(\(text) AS INTEGER) AS TEXT)" }
            let kept = zip(keyValuesSQL(text), keyAffinities).map { Self.keptSQL($0, affinity: $1) }
            if keyColumns.count == 1 {
                return keyAffinities[0] == "TEXT" ? "1" : "\(text) = CAST(\(kept[0]) AS TEXT)"
            }
            return "CASE WHEN json_valid(\(text)) THEN \(text) = json_array(\(kept.joined(separator: ", "))) ELSE 0 END"
        }

        /// SQL for the value a column of `affinity` keeps when given
        /// `value`, by SQLite's rules: a TEXT column keeps a number's text;
        /// a numeric one a well-formed number's text as the number (SQLite
        /// itself decides what is well-formed: comparing text with a
        /// `CAST(… AS NUMERIC)` applies the same affinity), a REAL column
        /// an integer as a REAL, and an INTEGER or NUMERIC column a REAL
        /// without a fraction as an INTEGER.
        static func keptSQL(_ value: String, affinity: String) -> String {
            let number = "typeof(\(value)) = 'text' AND \(value) = CAST(\(value) AS NUMERIC)"
            switch affinity {
            case "TEXT": return "CASE WHEN typeof(\(value)) IN ('integer', 'real') THEN CAST(\(value) AS TEXT) ELSE \(value) END"
            case "REAL": return "CASE WHEN typeof(\(value)) = 'integer' OR \(number) THEN CAST(\(value) AS REAL) ELSE \(value) END"
            default:
                // `CAST(… AS NUMERIC)` of text gives an INTEGER for a number without a fraction, as the column does.
                return "CASE WHEN typeof(\(value)) = 'real' AND abs(\(value)) < 9.2e18 AND \(value) = CAST(\(value) AS INTEGER) "
                    + "THEN CAST(\(value) AS INTEGER) WHEN \(number) THEN CAST(\(value) AS NUMERIC) ELSE \(value) END"
            }
        }

        /// SQL that is true for the row whose document key is `text`.
        func matchSQL(_ text: String) -> String {
            zip(keyColumns, keyValuesSQL(text)).map { "\(quoteIdentifier($0)) = \($1)" }.joined(separator: " AND ")
        }
    }

    /// Starts syncing `tables` of `writer`'s file: checks their keys,
    /// installs the capture and apply triggers (again on each open, so
    /// columns added by a migration are included), and puts the rows of a
    /// table synced for the first time in the outbox.
    ///
    /// - Parameters:
    ///   - writer: the queue or pool of the app's file.
    ///   - names: the tables to sync.
    ///   - sharedIntegerKeys: tables whose `INTEGER PRIMARY KEY` holds ids
    ///     that are the same on every device (ids from a catalog every
    ///     device has, say, the app always setting them itself): synced
    ///     although SQLite could hand out such keys. Never a table whose rows
    ///     get their ids from SQLite, and never one declared `AUTOINCREMENT`,
    ///     which is refused whatever this says.
    ///   - documentsName: the name of the document database the rows are
    ///     kept in, inside the file (its tables are named after it).
    /// - Throws: ``DocumentError`` `badRequest` for a missing table, or one
    ///   whose key cannot be shared between devices.
    public init(_ writer: any DatabaseWriter, tables names: [String], sharedIntegerKeys: Set<String> = [], documentsName: String = "strata_sync") throws {
        // A document written alone whose row a constraint refuses that the
        // triggers do not check first (CHECK, a STRICT column's type, an
        // app's trigger): kept, and its row refused as a batch refuses it.
        let (state, waiting, refused) = (Self.state(documentsName), Self.waiting(documentsName), Self.refused(documentsName))
        let prefixes = names.map { lowercasedASCII($0) + ":" }
        let documentsTable = DocumentTables(name: documentsName).docs
        let rowRefusal = RowRefusalHook { db, id, error, write in
            // Compared in bytes: a key that starts with a combining mark
            // joins the colon in one Character.
            let lowered = lowercasedASCII(id)
            guard prefixes.contains(where: lowered.hasBytePrefix) else { throw error }
            let applying = try Int.fetchOne(db, sql: "SELECT applying FROM \(state)") ?? 0
            guard applying == 0 else { throw error }
            try db.execute(sql: "UPDATE \(state) SET applying = 2")
            let result: DocumentWriteResult
            do {
                result = try write()
            } catch {
                try db.execute(sql: "UPDATE \(state) SET applying = 0")
                throw error
            }
            try db.execute(sql: "UPDATE \(state) SET applying = 0")
            try db.execute(sql: "DELETE FROM \(waiting) WHERE id = ?", arguments: [id])
            try db.execute(sql: """
                INSERT OR REPLACE INTO \(refused)(id, reason, deletion) SELECT id, ?, deleted FROM \(documentsTable) WHERE id = ?
                """, arguments: [error.message ?? "\(error.code)", id])
            try Self.noteRefusal(db, id: id, error: error, refused: refused, docs: documentsTable)
            return result
        }
        self.documents = try DocumentDatabase(writer, name: documentsName, rowRefusal: rowRefusal)
        self.documentsName = documentsName
        let docs = documents.tables.docs
        let blobs = documents.tables.blobs
        let (tables, apply) = try writer.write { db -> ([SyncedTable], BatchApply?) in
            // The foreign keys of the file's tables, read once for all the
            // synced tables' SQL.
            let schema = SchemaFacts()
            try db.execute(sql: """
                CREATE TABLE IF NOT EXISTS \(Self.outbox(documentsName)) (
                  seq INTEGER PRIMARY KEY,
                  tbl TEXT NOT NULL,
                  key TEXT
                );
                CREATE TABLE IF NOT EXISTS \(Self.state(documentsName)) (
                  id INTEGER PRIMARY KEY CHECK (id = 0),
                  applying INTEGER NOT NULL,
                  mark INTEGER NOT NULL DEFAULT 0
                );
                INSERT OR IGNORE INTO \(Self.state(documentsName))(id, applying) VALUES (0, 0);
                CREATE TABLE IF NOT EXISTS \(Self.registry(documentsName)) (
                  name TEXT PRIMARY KEY NOT NULL
                ) WITHOUT ROWID;
                CREATE TABLE IF NOT EXISTS \(Self.waiting(documentsName)) (
                  id TEXT PRIMARY KEY NOT NULL
                ) WITHOUT ROWID;
                CREATE TABLE IF NOT EXISTS \(Self.refused(documentsName)) (
                  id TEXT PRIMARY KEY NOT NULL,
                  reason TEXT NOT NULL,
                  deletion INTEGER NOT NULL DEFAULT 0,
                  seq INTEGER,
                  schema INTEGER
                ) WITHOUT ROWID;
                CREATE TABLE IF NOT EXISTS \(Self.bases(documentsName)) (
                  id TEXT PRIMARY KEY NOT NULL,
                  rev TEXT
                ) WITHOUT ROWID;
                """)
            // Files synced before refusals noted the document and schema
            // they were made on.
            if try Bool.fetchOne(db, sql: "SELECT NOT EXISTS (SELECT 1 FROM pragma_table_info(?) WHERE name = 'schema')",
                                 arguments: ["\(documentsName)_refused"]) == true {
                try db.execute(sql: "ALTER TABLE \(Self.refused(documentsName)) ADD COLUMN seq INTEGER")
                try db.execute(sql: "ALTER TABLE \(Self.refused(documentsName)) ADD COLUMN schema INTEGER")
            }
            // A table synced before keeps the spelling it was synced under
            // (its documents' ids), whatever the case of the name given now;
            // a table named twice in two cases is synced once.
            var seen: Set<[UInt8]> = []
            let names = try names.map { name in
                try String.fetchOne(db, sql: "SELECT name FROM \(Self.registry(documentsName)) WHERE name = ? COLLATE NOCASE", arguments: [name]) ?? name
            }.filter { seen.insert(identifierKey($0)).inserted }
            let sharedIntegerKeys = Set(sharedIntegerKeys.map(identifierKey))
            // A document's id is its table's name, a colon and the key: the
            // ids of two tables named `a` and `a:b` overlap (`a:b:k` is row
            // `k` of one and row `b:k` of the other).
            let synced = try names + String.fetchAll(db, sql: "SELECT name FROM \(Self.registry(documentsName))").filter { try Self.tableExists(db, $0) }
            for name in synced {
                let prefix = lowercasedASCII(name) + ":"
                if let other = synced.first(where: { !identifiersMatch($0, name) && (lowercasedASCII($0) + ":").hasBytePrefix(prefix) }) {
                    let rest = String(Substring(other.utf8.dropFirst(prefix.utf8.count)))
                    throw DocumentError(.badRequest, "cannot sync \(name) and \(other) in one file: a row of \(name) whose key starts with "
                        + "\"\(rest):\" would have the document id of a row of \(other); rename one of them")
                }
            }
            let tables = try names.map { name in
                let table = try Self.check(db, table: name, integerKeyIsShared: sharedIntegerKeys.contains(identifierKey(name)))
                try Self.installTriggers(db, table: table, documentsName: documentsName, docs: docs, blobs: blobs, schema: schema)
                let isNew = try Row.fetchOne(db, sql: "SELECT 1 FROM \(Self.registry(documentsName)) WHERE name = ?", arguments: [name]) == nil
                if isNew {
                    try db.execute(sql: "INSERT INTO \(Self.registry(documentsName))(name) VALUES (?)", arguments: [name])
                    try db.execute(sql: "INSERT INTO \(Self.outbox(documentsName))(tbl, key) SELECT ?, \(table.keySQL("")) FROM \(quoteIdentifier(name))",
                                   arguments: [name])
                }
                return table
            }
            // A table an earlier open synced and the app has since dropped:
            // its apply triggers on the documents would fail every document
            // write ("no such table"). They go, and so does its name, so a
            // table made again under it is synced as a new one. (Its
            // documents stay, and replicate as any document.)
            // A table renamed (ALTER TABLE … RENAME) is such a table too:
            // its rows' documents keep the old name, and the capture
            // triggers SQLite moved to the new table, which would note each
            // change under the old name, go with the rest. The new name, if
            // synced, is a new table.
            for name in try String.fetchAll(db, sql: "SELECT name FROM \(Self.registry(documentsName))") where !names.contains(name) {
                guard try !Self.tableExists(db, name) else { continue }
                try Self.dropTriggers(db, documentsName: documentsName, table: name, Self.captureTriggers + Self.applyTriggers)
                try db.execute(sql: "DELETE FROM \(Self.outbox(documentsName)) WHERE tbl = ?", arguments: [name])
                try db.execute(sql: "DELETE FROM \(Self.registry(documentsName)) WHERE name = ?", arguments: [name])
            }
            // A batch of documents (a pull) reaches the rows with a few
            // statements for all of it rather than the triggers' nine for
            // each; unless the file has apply triggers of tables this
            // instance does not sync (synced by an earlier open), which the
            // batch would leave out: then the triggers apply every batch.
            let installed = try String.fetchAll(db, sql: "SELECT name FROM sqlite_schema WHERE type = 'trigger' AND tbl_name = ?",
                                                arguments: ["\(documentsName)_docs"]).filter { $0.hasSuffix("_applied_insert") }
            guard Set(installed.map(ExactString.init)) == Set(tables.map { ExactString(Self.triggerName(documentsName, table: $0.name, "applied_insert")) }) else {
                return (tables, nil)
            }
            return (tables, try BatchApply(db, tables: tables, documentsName: documentsName, docs: docs, blobs: blobs, schema: schema))
        }
        self.tables = tables
        batchApply = apply
        if let apply {
            documents.batchWriteHook.value = DocumentDatabase.BatchWriteHook { db, ids in
                let (seq, noted) = try apply.before(db, ids: ids)
                return { db in try apply.after(db, before: seq, noted: noted) }
            }
        }
    }

    /// Runs `change`, a migration of synced tables that SQLite refuses
    /// while the sync's triggers name their columns (dropping a column of a
    /// synced table fails with "error in trigger …_applied_insert"), with
    /// the triggers that apply documents to rows set aside; then installs
    /// them again for the tables as `change` left them, all in one
    /// savepoint (when `change` throws, nothing of it stays). Local writes
    /// stay captured throughout.
    ///
    /// ```swift
    /// try pool.write { db in
    ///     try TableSync.alter(db) { db in
    ///         try db.execute(sql: "ALTER TABLE notes DROP COLUMN body")
    ///     }
    /// }
    /// ```
    ///
    /// A document member whose column was dropped stays in the document,
    /// as any member the table has no column for. Open ``TableSync`` again
    /// after the migration, as after any.
    ///
    /// - Parameters:
    ///   - db: the connection of the migration.
    ///   - documentsName: the name given to ``init(_:tables:sharedIntegerKeys:documentsName:)``.
    ///   - change: the migration.
    public static func alter(_ db: Database, documentsName: String = "strata_sync", _ change: (Database) throws -> Void) throws {
        try db.savepoint { try alterInPlace(db, documentsName: documentsName, change) }
    }

    /// ``alter(_:documentsName:_:)``'s work, inside its savepoint.
    private static func alterInPlace(_ db: Database, documentsName: String, _ change: (Database) throws -> Void) throws {
        let registry = registry(documentsName)
        let names = try tableExists(db, "\(documentsName)_tables") ? try String.fetchAll(db, sql: "SELECT name FROM \(registry)") : []
        for name in names {
            try dropApplyTriggers(db, documentsName: documentsName, table: name)
        }
        try change(db)
        let tables = DocumentTables(name: documentsName)
        let schema = SchemaFacts()
        for name in names where try tableExists(db, name) {
            // A registered INTEGER PRIMARY KEY was declared shared when the
            // table was first synced.
            let table = try check(db, table: name, integerKeyIsShared: true)
            try installTriggers(db, table: table, documentsName: documentsName, docs: tables.docs, blobs: tables.blobs, schema: schema)
        }
    }

    /// The synced table `name` names, in any ASCII case (`Notes` for
    /// `notes`).
    private func syncedTable(_ name: String) -> SyncedTable? {
        tables.first { identifiersMatch($0.name, name) }
    }

    /// The name `table` is synced under, when it names a synced table in
    /// another case; else `table`.
    private func syncedName(_ table: String) -> String {
        syncedTable(table)?.name ?? table
    }

    /// Whether the file has a table named `name`.
    private static func tableExists(_ db: Database, _ name: String) throws -> Bool {
        // SQLite's names ignore ASCII case: `Notes` names the table `notes`.
        try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ? COLLATE NOCASE)", arguments: [name]) ?? false
    }

    /// Drops the triggers that apply `table`'s documents to its rows.
    private static func dropApplyTriggers(_ db: Database, documentsName: String, table: String) throws {
        try dropTriggers(db, documentsName: documentsName, table: table, applyTriggers)
    }

    /// The suffixes of a table's capture triggers (on the table) and of its
    /// apply triggers (on the documents).
    static let captureTriggers = ["inserted", "updated", "deleted"]
    static let applyTriggers = ["applied_insert", "applied_update"]

    /// Drops `table`'s triggers of these suffixes, where they are.
    private static func dropTriggers(_ db: Database, documentsName: String, table: String, _ suffixes: [String]) throws {
        for suffix in suffixes {
            try db.execute(sql: "DROP TRIGGER IF EXISTS \(quoteIdentifier(triggerName(documentsName, table: table, suffix)))")
        }
    }

    /// The number of row changes waiting in the outbox.
    public func pendingChangeCount() throws -> Int {
        try documents.writer.read { db in try pendingChangeCount(db) }
    }

    /// The number of row changes waiting in the outbox, read on `db`.
    public func pendingChangeCount(_ db: Database) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT count(*) FROM \(Self.outbox(documentsName))") ?? 0
    }

    /// Turns the captured row changes into document revisions, in one
    /// transaction, and empties the outbox: a changed row becomes a new
    /// revision of its document (unless it equals the document already),
    /// a deleted row a deletion. Returns the number of documents written.
    @discardableResult
    public func captureLocalChanges() throws -> Int {
        try documents.writer.write { try capture($0) }
    }

    /// `captureLocalChanges()` without holding the calling thread: the
    /// writer's queue does the work while the task waits.
    @discardableResult
    public func captureLocalChanges() async throws -> Int {
        try await documents.writer.write { try self.capture($0) }
    }

    /// `captureLocalChanges()` in transactions of at most `rows` changed
    /// rows each, in the order of their last change, so that what one
    /// transaction wrote can be sent while the next is made (a first sync
    /// of a large table: StrataSync's `sync(with:)` does so). Each
    /// transaction keeps the guarantees of one capture: its rows and their
    /// revisions commit together, and a row is captured whole, every
    /// change it had when the call began in one transaction. `committed`
    /// is told the documents each transaction wrote. Returns the number of
    /// documents written; row changes made meanwhile wait for the next
    /// capture, and so do the rows not reached when the task is cancelled
    /// (it then throws `CancellationError`).
    @discardableResult
    public func captureLocalChanges(inTransactionsOf rows: Int,
                                    committed: (@Sendable (Int) async -> Void)? = nil) async throws -> Int {
        precondition(rows > 0, "a transaction captures at least one row")
        let outbox = Self.outbox(documentsName)
        // Each changed row once, with its last change, in that order.
        let names = JSON.array(tables.map { JSON.string($0.name) }).text
        let (changed, end) = try await documents.writer.read { db in
            (try Row.fetchAll(db, sql: "SELECT tbl, key, max(seq) AS last FROM \(outbox) WHERE key IS NOT NULL AND tbl IN (SELECT value FROM json_each(?)) "
                                + "GROUP BY tbl, key ORDER BY last", arguments: [names])
                .map { (table: try $0.decode(String.self, at: 0), key: try $0.decode(String.self, at: 1), last: try $0.decode(Int.self, at: 2)) },
             try Int.fetchOne(db, sql: "SELECT ifnull(max(seq), 0) FROM \(outbox)") ?? 0)
        }
        guard changed.count > rows else {
            let count = try await captureLocalChanges()
            await committed?(count)
            return count
        }
        var written = 0
        for start in stride(from: 0, to: changed.count, by: rows) {
            // Cancelled: the rows not reached stay in the outbox.
            try Task.checkCancellation()
            let part = changed[start..<min(start + rows, changed.count)]
            // Through the part's last change: what the outbox holds up to
            // there is the part's rows and earlier changes of rows captured
            // later (their last change is past it, so they stay pending).
            let isLast = start + rows >= changed.count
            let chunk = CaptureChunk(bound: part.last!.last, planned: changed.last!.last, others: isLast ? end : part.last!.last, tables: names,
                                     keys: Dictionary(grouping: part, by: \.table).mapValues { JSON.array($0.map { JSON.string($0.key) }).text })
            let count = try await documents.writer.write { try self.capture($0, chunk: chunk) }
            written += count
            await committed?(count)
        }
        return written
    }

    /// Part of a capture: the rows `keys` names (by table, a JSON array of
    /// keys each), through the outbox's change `bound`; `planned`, the last
    /// change of a row of the plan; `others`, through which change the
    /// outbox's entries of no synced row are removed (a table no longer
    /// synced, whose triggers are still there), as a whole capture removes
    /// them; `tables`, the synced tables' names (a JSON array).
    struct CaptureChunk: Sendable {
        let bound: Int
        let planned: Int
        let others: Int
        let tables: String
        let keys: [String: String]
    }

    /// The page cache a large capture runs with, in KiB.
    static let captureCacheKiB = 32_768

    /// The capture, in `db`'s transaction: the whole outbox, or `chunk`'s
    /// part of it.
    private func capture(_ db: Database, chunk: CaptureChunk? = nil) throws -> Int {
        let documentTables = documents.tables
        let outbox = Self.outbox(documentsName)
        let state = Self.state(documentsName)
        let range = try Row.fetchOne(db, sql: "SELECT min(seq), max(seq) FROM \(outbox)")
        guard let first: Int = try range?[0], let end: Int = try range?[1] else { return 0 }
        let last = chunk.map { min($0.bound, end) } ?? end
        guard last >= first else { return 0 }
        // A large capture (a first sync) writes more pages than the
        // default cache holds, which SQLite would spill and read back:
        // up to 32 MB of cache while it runs (1.8 times as fast at
        // 50,000 rows), given back after.
        let cache = try Int.fetchOne(db, sql: "PRAGMA cache_size") ?? -2000
        let large = last - first > 2_000 && (cache > 0 ? cache * 4 : -cache) < Self.captureCacheKiB
        if large { try db.execute(sql: "PRAGMA cache_size = -\(Self.captureCacheKiB)") }
        defer { if large { try? db.execute(sql: "PRAGMA cache_size = \(cache)") } }
        // The remote side's triggers must not write the rows back.
        try db.execute(sql: "UPDATE \(state) SET applying = 1")
        // Each row once, with its document, in the order of its last
        // change: a parent made before its child is sent before it.
        var changes: [Change] = []
        for table in tables {
            var arguments: [(any DatabaseValueConvertible)?] = [table.name, last, table.name + ":"]
            if let chunk {
                guard let keys = chunk.keys[table.name] else { continue }
                arguments.append(keys)
            }
            guard try Self.tableExists(db, table.name) else {
                throw DocumentError(.badRequest, "the synced table \(table.name) is no longer in the file (dropped or renamed): "
                    + "open TableSync again with the tables as they are now")
            }
            let rows = try Row.fetchCursor(db, sql: Self.changesSQL(table, outbox: outbox, docs: documentTables.docs, onlyGivenKeys: chunk != nil),
                                           arguments: StatementArguments(arguments))
            while let row = try rows.next() {
                changes.append(try Change(row, table: table))
            }
        }
        changes.sort { $0.order < $1.order }
        var edits = try LocalEdits(db, tables: documentTables, changes: changes.count)
        let bases = Self.bases(documentsName)
        for row in try Row.fetchAll(db, sql: "SELECT id, rev FROM \(bases)") {
            edits.bases[try row[0]] = .some(try row[1])
        }
        var written = 0
        for change in changes where try edits.write(change) {
            written += 1
        }
        try edits.finish()
        if let chunk {
            // The part's rows, not all up to `bound`: another capture may
            // have emptied the outbox since the part was planned, and the
            // changes made since may then have taken seqs up to `bound`
            // again. And the changes its rows had since the part was
            // planned: the rows are captured as they are now.
            for (table, keys) in chunk.keys {
                for range in ["seq <= ?", "seq > ?"] {
                    try db.execute(sql: "DELETE FROM \(outbox) WHERE \(range) AND tbl = ? AND key IN (SELECT value FROM json_each(?))",
                                   arguments: [range.hasPrefix("seq <=") ? last : chunk.planned, table, keys])
                }
            }
            try db.execute(sql: "DELETE FROM \(outbox) WHERE seq <= ? AND (key IS NULL OR tbl NOT IN (SELECT value FROM json_each(?)))",
                           arguments: [chunk.others, chunk.tables])
        } else {
            try db.execute(sql: "DELETE FROM \(outbox) WHERE seq <= ?", arguments: [last])
        }
        try db.execute(sql: "UPDATE \(state) SET applying = 0")
        if !edits.bases.isEmpty {
            if chunk == nil {
                try db.execute(sql: "DELETE FROM \(bases)")
            } else {
                // The rows captured here: the others still wait.
                try db.execute(sql: "DELETE FROM \(bases) WHERE id IN (SELECT value FROM json_each(?))",
                               arguments: [JSON.array(changes.map { JSON.string($0.id) }).text])
            }
        }
        if !edits.branched.isEmpty || !edits.takingWinner.isEmpty {
            // A change made on an older revision is a branch of its
            // own: the row takes the document's winner, whichever
            // branch that is (the documents' triggers write it). So does a
            // row written back unchanged.
            try db.execute(sql: "UPDATE \(documentTables.docs) SET seq = seq WHERE id IN (SELECT value FROM json_each(?))",
                           arguments: [JSON.array((edits.branched + edits.takingWinner).map(JSON.string)).text])
        }
        return written
    }

    /// The changed rows of `table` in the outbox up to `?2` (with
    /// `onlyGivenKeys`, of the keys in the JSON array `?4`), each once: the
    /// seq of its last change, its key, its document's winner (`rev`,
    /// `deleted`, `leaves`, `body`, `attachments`, nulls when it has none), whether the row
    /// is there, then the row's columns.
    private static func changesSQL(_ table: SyncedTable, outbox: String, docs: String, onlyGivenKeys: Bool = false) -> String {
        let key = "o.key"
        let match = zip(table.keyColumns, table.keyValuesSQL(key)).map { "t.\(quoteIdentifier($0)) = \($1)" }.joined(separator: " AND ")
        return """
            SELECT o.last, o.key, d.rev, d.deleted, d.leaves, d.body, d.attachments, t.\(quoteIdentifier(table.keyColumns[0])) IS NOT NULL, \
            \(table.columns.map { "t." + quoteIdentifier($0) }.joined(separator: ", "))
            FROM (SELECT key, max(seq) AS last FROM \(outbox) WHERE tbl = ?1 AND seq <= ?2 AND key IS NOT NULL\
            \(onlyGivenKeys ? " AND key IN (SELECT value FROM json_each(?4))" : "") GROUP BY key) AS o
            LEFT JOIN \(docs) AS d ON d.id = ?3 || o.key
            LEFT JOIN \(quoteIdentifier(table.name)) AS t ON \(match)
            """
    }

    /// One changed row, as `changesSQL` reads it.
    private struct Change {
        let order: Int
        let table: SyncedTable
        let id: String
        /// The document's winning revision, if it has one.
        let rev: Revision?
        let deleted: Bool
        let leaves: Int
        let storedBody: String?
        /// The winner's attachments (`DocumentTables`' `attachments` column).
        let storedAttachments: String?
        /// The row's columns, nil when the row is gone.
        let values: [DatabaseValue]?

        init(_ row: some RowProtocol, table: SyncedTable) throws {
            self.table = table
            order = try row.decode(Int.self, at: 0)
            id = table.name + ":" + (try row.decode(String.self, at: 1))
            rev = try row.decode(String?.self, at: 2).flatMap(Revision.init)
            deleted = try row.decode(Bool?.self, at: 3) ?? true
            leaves = try row.decode(Int?.self, at: 4) ?? 0
            storedBody = try row.decode(String?.self, at: 5)
            storedAttachments = try row.decode(String?.self, at: 6)
            values = try row.decode(Bool.self, at: 7) ? Array(row.databaseValues.dropFirst(8)) : nil
        }
    }

    /// Writes the documents of captured rows, one transaction's worth: the
    /// common cases (a document's first revision, a new revision on its only
    /// leaf) straight into the document tables, the others (deletions,
    /// conflicted or deleted documents) through the general write; all of
    /// them with update sequences in the order of the changes, from one
    /// batch that records the last once at the end.
    private struct LocalEdits {
        let db: Database
        let tables: DocumentTables
        let batch: DocumentTables.Batch
        /// The documents whose row was changed here on an older revision
        /// than the winner, and that revision (nil: none), from the
        /// bases table.
        var bases: [String: String?] = [:]
        /// The documents written as a branch of their own.
        var branched: [String] = []
        /// The documents whose row was written back unchanged over a
        /// revision that arrived since: not edits, the row takes the winner.
        var takingWinner: [String] = []
        /// First revisions, and new revisions on a document's only leaf,
        /// each with its update sequence (in the order of the changes), not
        /// yet written: they are written in the order of their ids, which
        /// fills the documents' and revisions' B-trees page by page instead
        /// of at random places (a quarter less time for a first capture).
        var buffered: [(id: String, seq: Int, body: JSONObject, parent: Revision?)] = []

        init(_ db: Database, tables: DocumentTables, changes: Int) throws {
            self.db = db
            self.tables = tables
            batch = try DocumentTables.Batch(db, tables: tables, documents: changes)
        }

        /// Writes one row's document as the row is now; false when it
        /// needed no new revision.
        mutating func write(_ change: Change) throws -> Bool {
            let live = change.rev != nil && !change.deleted
            var body = JSONObject()
            if live, let text = change.storedBody, case .object(let stored) = try JSON(parsing: text) {
                body = stored
            }
            guard let values = change.values else {
                // The row is gone: delete its document, if it has a live
                // one. The deletion keeps the row's last members, so that a
                // filter on them (a Mango selector) lets it through.
                guard live, let rev = change.rev else { return false }
                var document = body
                document["_id"] = .string(change.id)
                document["_deleted"] = true
                if let base = bases[change.id] {
                    try branch(document, id: change.id, on: base, attachments: [])
                } else {
                    document["_rev"] = .string(rev.description)
                    try general(document)
                }
                return true
            }
            let before = body
            // A BLOB in a BLOB column is the attachment of its name.
            let blobs = Self.overlay(&body, change.table, values)
            let stored = live ? StoredAttachments(text: change.storedAttachments) : StoredAttachments()
            let digests = blobs.map { AttachmentDigest.of($0.data, contentType: TableSync.blobContentType).digest }
            let sameAttachments = stored.list.count == blobs.count && zip(blobs, digests).allSatisfy { stored[$0.name]?.digest == $1 }
            if live, body == before, sameAttachments { return false }
            if let base = bases[change.id], let rev = base, try isRevision(rev, of: change, values: values, digests: digests) {
                // The row was written back as it was at `rev` (an update
                // that set the same values): no edit of its own, so no
                // branch; it takes the winner, the change that arrived.
                takingWinner.append(change.id)
                return false
            }
            if let base = bases[change.id] {
                var document = body
                document["_id"] = .string(change.id)
                if !blobs.isEmpty { document["_attachments"] = Self.attachments(blobs, digests, stubbing: StoredAttachments()) }
                try branch(document, id: change.id, on: base,
                           attachments: zip(blobs, digests).map { ($0.name, TableSync.blobContentType, $1) })
            } else if blobs.isEmpty, stored.isEmpty, change.rev == nil {
                buffered.append((change.id, batch.next(), body, nil))
            } else if blobs.isEmpty, stored.isEmpty, live, change.leaves == 1, let parent = change.rev {
                buffered.append((change.id, batch.next(), body, parent))
            } else {
                var document = body
                document["_id"] = .string(change.id)
                // A row made again after its document was deleted starts
                // the document anew (CouchDB's way: no `_rev`).
                if live, let rev = change.rev { document["_rev"] = .string(rev.description) }
                if !blobs.isEmpty { document["_attachments"] = Self.attachments(blobs, digests, stubbing: stored) }
                try general(document)
            }
            return true
        }

        /// The `_attachments` of a row's BLOBs: each its bytes, or a stub
        /// where `stored` has the same digest (it keeps its revpos, and
        /// replication does not send it again).
        static func attachments(_ blobs: [(name: String, data: Data)], _ digests: [String], stubbing stored: StoredAttachments) -> JSON {
            .object(JSONObject(zip(blobs, digests).map { blob, digest in
                (blob.name, stored[blob.name]?.digest == digest ? ["stub": true]
                    : ["content_type": .string(TableSync.blobContentType), "data": .string(blob.data.base64EncodedString())])
            }))
        }

        /// Sets the members of `table`'s columns in `body` to the row's
        /// `values`, `$table` to its name; returns the BLOBs of its BLOB
        /// columns, which are attachments (their members removed).
        static func overlay(_ body: inout JSONObject, _ table: SyncedTable, _ values: [DatabaseValue]) -> [(name: String, data: Data)] {
            body["$table"] = .string(table.name)
            var blobs: [(name: String, data: Data)] = []
            for (name, value) in zip(table.columns, values) {
                if case .blob(let data) = value, table.blobColumns.contains(name) {
                    blobs.append((name, data))
                    body[name] = nil
                } else {
                    body[name] = TableSync.json(value)
                }
            }
            return blobs
        }

        /// Whether the row, `values` with the attachments of `digests`, is
        /// the document as revision `rev` has it. False when that
        /// revision's body is no longer kept (compacted away).
        private func isRevision(_ rev: String, of change: Change, values: [DatabaseValue], digests: [String]) throws -> Bool {
            let stored = try Row.fetchOne(db, sql: "SELECT body, attachments, deleted FROM \(tables.revs) WHERE doc = ? AND rev = ?",
                                          arguments: [change.id, rev])
            guard let stored, let text: String = try stored[0], try stored[2] as Int == 0,
                  case .object(let members) = try JSON(parsing: text) else { return false }
            var row = members
            let blobs = Self.overlay(&row, change.table, values)
            let attachments = StoredAttachments(text: try stored[1])
            return row == members && attachments.list.count == blobs.count
                && zip(blobs, digests).allSatisfy { attachments[$0.name]?.digest == $1 }
        }

        /// Writes `document` as a new revision on `base` (nil: a new root)
        /// although `base` is no longer a leaf: a branch, as a replicated
        /// revision is, so that it and the revisions that arrived on `base`
        /// are a conflict, both kept.
        private mutating func branch(_ document: JSONObject, id: String, on base: String?,
                                     attachments: [(name: String, contentType: String, digest: String)]) throws {
            let parent = base.flatMap(Revision.init)
            let deleted = document["_deleted"]?.boolValue ?? false
            let members = JSONObject(document.filter { !$0.key.hasBytePrefix("_") })
            let rev = Revision(depth: (parent?.depth ?? 0) + 1,
                               hash: RevisionID.make(deleted: deleted, parent: parent, body: members, attachments: attachments))
            var revision = document
            revision["_rev"] = .string(rev.description)
            revision["_revisions"] = ["start": .int(rev.depth), "ids": .array(([rev.hash] + (parent.map { [$0.hash] } ?? [])).map(JSON.string))]
            try general(revision, newEdits: false)
            branched.append(id)
        }

        /// A write through `DocumentTables.write`, its sequence from the
        /// batch.
        private func general(_ document: JSONObject, newEdits: Bool = true) throws {
            _ = try tables.write(db, document: document, newEdits: newEdits, batch: batch)
        }

        /// Writes the buffered revisions and records the update sequence.
        mutating func finish() throws {
            buffered.sort { $0.id.utf8.lexicographicallyPrecedes($1.id.utf8) }
            for write in buffered {
                if let parent = write.parent {
                    _ = try tables.appendRevision(db, id: write.id, parent: parent, body: write.body, seq: write.seq, revsLimit: batch.revsLimit)
                } else {
                    _ = try tables.createDocument(db, batch, id: write.id, body: write.body, seq: write.seq)
                }
            }
            buffered.removeAll()
            try batch.record(db, tables: tables)
        }
    }

    /// Applies the documents whose row waited for a parent row that has
    /// arrived since (a foreign key), and the deletions refused while other
    /// rows referred to the row that no longer do, until none more can be;
    /// then tries again each row a constraint refused (see
    /// ``refusedRows(in:)``). Returns how many were applied. StrataSync's
    /// `sync(with:)` and `run(with:)` call it after receiving.
    @discardableResult
    public func applyWaitingRows() throws -> Int {
        try documents.writer.write { try applyWaiting($0) }
    }

    /// `applyWaitingRows()` without holding the calling thread.
    @discardableResult
    public func applyWaitingRows() async throws -> Int {
        try await documents.writer.write { try self.applyWaiting($0) }
    }

    /// Applies the waiting rows, in `db`'s transaction.
    private func applyWaiting(_ db: Database) throws -> Int {
        let (refused, docs) = (Self.refused(documentsName), documents.tables.docs)
        var applied = try Self.applyWaiting(db, waiting: Self.waiting(documentsName), refused: refused, docs: docs,
                                            order: batchApply?.waitingOrder)
        // The rows a constraint refused, each tried again: a row it
        // collided with may have changed, or a migration made it fit.
        // Again while a pass writes any: one may free a value another
        // needs. Not the rows whose document still lacks a NOT NULL
        // column's value or still collides on a UNIQUE one (the SQL check
        // the triggers make): a try would refuse them again, and each is a
        // trigger run in a savepoint, on every sync and every batch of a
        // continuous one.
        // Nor the rows a CHECK, a STRICT column's type or a rowid refused
        // on the same revision and schema as the last try: those depend on
        // the row alone.
        var left = try String.fetchAll(db, sql: """
            SELECT id FROM \(refused) AS r WHERE NOT deletion
              AND NOT (r.seq IS (SELECT seq FROM \(docs) WHERE id = r.id) AND r.schema IS (SELECT schema_version FROM pragma_schema_version))
            ORDER BY id
            """)
        while !left.isEmpty {
            let hopeless = try batchApply?.stillRefused.map { Set(try String.fetchAll(db, sql: $0)) } ?? []
            var still: [String] = []
            var wrote = false
            for id in left {
                if hopeless.contains(id) {
                    still.append(id)
                    continue
                }
                do {
                    try db.savepoint { try db.execute(sql: "UPDATE \(docs) SET seq = seq WHERE id = ?", arguments: [id]) }
                } catch let error as SQLiteError where BatchApply.refusesRow(error) {
                    // A refusal of the row alone is the same on another
                    // pass: not tried again in this call.
                    if try !Self.noteRefusal(db, id: id, error: error, refused: refused, docs: docs) { still.append(id) }
                    continue
                }
                if try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(refused) WHERE id = ?)", arguments: [id]) == false {
                    applied += 1
                    wrote = true
                } else {
                    still.append(id)
                }
            }
            left = still
            if !wrote { break }
        }
        // Rows that swap UNIQUE values, which no order writes one by one:
        // those whose values only other refused rows hold.
        if left.count > 1, let batchApply {
            let candidates = Set(try String.fetchAll(db, sql: batchApply.swapCandidates))
            applied += try batchApply.writeRefusedTogether(db, ids: left.filter(candidates.contains))
        }
        return applied
    }

    /// Applies the rows named in the table `waiting` whose parents are
    /// there, in `db`'s transaction, until none more can be.
    ///
    /// With `order` (``BatchApply/waitingOrder``), only the rows whose
    /// parents are here are written, and the rows waiting for those, every
    /// parent before its children: a chain of rows arriving deepest first
    /// (a table that refers to itself) takes one pass, not one for each row
    /// of it, and rows whose parents have not arrived are not touched.
    /// Without it, every waiting row is written again, while a pass writes
    /// any.
    static func applyWaiting(_ db: Database, waiting: String, refused: String, docs: String, order: BatchApply.WaitingOrder? = nil) throws -> Int {
        var applied = 0
        // The rows waiting for a parent, and the deletions refused while
        // other rows referred to the row.
        let pending = "SELECT id FROM \(waiting) UNION ALL SELECT id FROM \(refused) WHERE deletion"
        let deletions = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(refused) WHERE deletion)") ?? false
        if let order, !deletions {
            var left = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(waiting)") ?? 0
            let touch = try db.makeStatement(sql: "UPDATE \(docs) SET seq = seq WHERE id = ?")
            // Again while a pass writes any: an edge the documents' values
            // did not show (a key spelled otherwise by the child) leaves
            // a child for the next pass.
            while left > 0 {
                let ready = try String.fetchAll(db, sql: order.ready)
                guard !ready.isEmpty else { break }
                let ids = try String.fetchAll(db, sql: "SELECT id FROM \(waiting) ORDER BY id")
                let edges = try order.edges.map { try Row.fetchAll(db, sql: $0).map { (try $0[0] as String, try $0[1] as String) } } ?? []
                for id in Self.parentsFirst(ids, edges: edges, roots: Set(ready)) { try touch.execute(binding: id) }
                let now = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(waiting)") ?? 0
                guard now < left else { break }
                applied += left - now
                left = now
            }
            return applied
        }
        while true {
            let before = try Int.fetchOne(db, sql: "SELECT count(*) FROM (\(pending))") ?? 0
            guard before > 0 else { return applied }
            // Touching the document runs its triggers again.
            try db.execute(sql: "UPDATE \(docs) SET seq = seq WHERE id IN (\(pending))")
            let after = try Int.fetchOne(db, sql: "SELECT count(*) FROM (\(pending))") ?? 0
            guard after < before else { return applied }
            applied += before - after
        }
    }

    /// The ids of `roots`, and those of `ids` that `edges` show waiting for
    /// them (`(child, parent)`), each after its parents; otherwise in the
    /// order given. An id waiting for one that is not placed (its parent
    /// not here, or a cycle) is left out.
    static func parentsFirst(_ ids: [String], edges: [(child: String, parent: String)], roots: Set<String>) -> [String] {
        let position = Dictionary(ids.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        var parentCount = [Int](repeating: 0, count: ids.count)
        var children = [[Int]](repeating: [], count: ids.count)
        var seen = Set<Int>()
        for edge in edges {
            guard let child = position[edge.child], let parent = position[edge.parent], child != parent,
                  seen.insert(child * ids.count + parent).inserted else { continue }
            parentCount[child] += 1
            children[parent].append(child)
        }
        var order: [Int] = []
        order.reserveCapacity(ids.count)
        var placed = [Bool](repeating: false, count: ids.count)
        for start in ids.indices where roots.contains(ids[start]) && !placed[start] {
            // Depth first from each row whose parents are here.
            placed[start] = true
            var stack = [start]
            while let index = stack.popLast() {
                order.append(index)
                for child in children[index].reversed() {
                    parentCount[child] -= 1
                    if parentCount[child] == 0 && !placed[child] {
                        placed[child] = true
                        stack.append(child)
                    }
                }
            }
        }
        return order.map { ids[$0] }
    }

    /// The number of rows, in all the synced tables, that wait for a
    /// parent row (see ``waitingRows(in:)``).
    public func waitingRowCount() throws -> Int {
        try documents.writer.read { db in try waitingRowCount(db) }
    }

    /// The number of rows that wait for a parent row, read on `db`.
    public func waitingRowCount(_ db: Database) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT count(*) FROM \(Self.waiting(documentsName))") ?? 0
    }

    /// The keys of `table`'s rows that arrived before a row they refer to
    /// (a foreign key) and wait for it: their documents are kept, and the
    /// row is written when its parent comes.
    public func waitingRows(in table: String) throws -> [String] {
        let table = syncedName(table)
        let waiting = Self.waiting(documentsName)
        return try documents.writer.read { db in
            try String.fetchAll(db, sql: "SELECT substr(id, ?) FROM \(waiting) WHERE substr(id, 1, ?) = ? ORDER BY id",
                                arguments: [table.unicodeScalars.count + 2, table.unicodeScalars.count + 1, table + ":"])
        }
    }

    /// The rows of `table` that arrived and were not written because they
    /// break a constraint of the table: each row's key, and why.
    ///
    /// A document made by another client, or by an app version without a
    /// column, may lack the column's member (a column with a `DEFAULT`
    /// takes its default instead) or hold `null` for a `NOT NULL` column; in
    /// a pull's batch, a row may also break a `CHECK`, a `UNIQUE` column or
    /// a `STRICT` column's type. Its document is kept, the row keeps what it
    /// had (none, for a new row), the rest of the batch is written, and the
    /// document's next revision that fits is written as usual; each sync
    /// (`applyWaitingRows()`) also tries the row again, since the row it
    /// collided with may have changed or a migration made it fit, unless
    /// its document still lacks a `NOT NULL` column's value or another row
    /// still holds its `UNIQUE` value, or a `CHECK` or a `STRICT` column's
    /// type refused it and neither its document nor the file's schema
    /// (`PRAGMA schema_version`) changed since (a try would only refuse it
    /// again). A row of a table with a default that may change from one
    /// write to the next (`CURRENT_TIMESTAMP`, a function's value) is
    /// tried each time: the default it takes may fit.
    /// A document written alone, not by a pull (the app's `put` through
    /// ``documents``) while a `TableSync` is open on the file, is kept and
    /// its row refused the same way, for any of these constraints and for
    /// an app's trigger that raises an error.
    ///
    /// A deletion is refused while rows refer to the row through a foreign
    /// key that neither cascades nor sets null; `applyWaitingRows()`
    /// (each sync calls it) applies it once none does.
    public func refusedRows(in table: String) throws -> [(key: String, reason: String)] {
        let table = syncedName(table)
        let refused = Self.refused(documentsName)
        return try documents.writer.read { db in
            try Row.fetchAll(db, sql: "SELECT substr(id, ?), reason FROM \(refused) WHERE substr(id, 1, ?) = ? ORDER BY id",
                             arguments: [table.unicodeScalars.count + 2, table.unicodeScalars.count + 1, table + ":"])
                .map { (key: try $0[0], reason: try $0[1]) }
        }
    }

    /// The ids of the live documents named for `table` (`table:…`) that are
    /// not applied to it because their key is not spelled as the table
    /// spells its rows' ids.
    ///
    /// A composite key's id is the JSON array SQLite's `json_array` writes,
    /// `favorites:["ann",12]`. Another client may write
    /// `favorites:["ann", 12]` (with a space, as Python's `json.dumps`
    /// does), or an id that is no key of the table at all (malformed JSON,
    /// another number of values). Applied, such a document would give its
    /// row a second document: the row's later changes would go to the
    /// other one, and a deletion here would leave it live on every other
    /// device. So it is kept in the document store and not applied; write
    /// its content under the row's id to apply it.
    ///
    /// - Throws: ``DocumentError`` `badRequest` when `table` is not synced.
    public func unappliedDocuments(in table: String) throws -> [String] {
        guard let synced = syncedTable(table) else {
            throw DocumentError(.badRequest, "\(table) is not a synced table")
        }
        let table = synced.name
        let docs = documents.tables.docs
        let key = "substr(id, \(table.unicodeScalars.count + 2))"
        return try documents.writer.read { db in
            try String.fetchAll(db, sql: "SELECT id FROM \(docs) WHERE id >= ? AND id < ? AND NOT deleted AND NOT (\(synced.isRowKeySQL(key))) ORDER BY id",
                                arguments: [table + ":", table + ";"])
        }
    }

    /// The rows whose document has conflicting revisions: the key, the
    /// winning revision (the one the row holds) and the losing leaves.
    public func conflicts(in table: String) throws -> [(key: String, winner: String, losers: [String])] {
        let table = syncedName(table)
        let docs = documents.tables.docs
        let ids = try documents.writer.read { db in
            try String.fetchAll(db, sql: "SELECT id FROM \(docs) WHERE leaves > 1 AND substr(id, 1, ?) = ? ORDER BY id",
                                arguments: [table.unicodeScalars.count + 1, table + ":"])
        }
        return try ids.compactMap { id in
            let document = try documents.document(id: id, options: DocumentReadOptions(conflicts: true))
            let losers = document["_conflicts"]?.arrayValue?.compactMap(\.stringValue) ?? []
            guard !losers.isEmpty, let rev = document["_rev"]?.stringValue else { return nil }
            // The key after the name and its colon, in code points as the
            // query matched them (a key that starts with a combining mark
            // would join the colon in one Character).
            return (String(id.unicodeScalars.dropFirst(table.unicodeScalars.count + 1)), rev, losers)
        }
    }

    /// How ``resolveConflicts(in:using:)`` settles a row edited on two
    /// devices. Every policy makes an ordinary write (a new revision of the
    /// winner, the other leaves deleted), which replicates like any other.
    public enum ConflictPolicy: Sendable {
        /// CouchDB's winner stays, the other versions are deleted.
        case keepWinner
        /// The version whose `column` is greatest wins (numbers by value,
        /// text by its characters, null lowest; a tie keeps CouchDB's
        /// winner): for an `updatedAt` column, the newest edit.
        case newest(by: String)
        /// Column by column against the versions' common ancestor: a column
        /// changed by one version takes that change, so edits of different
        /// columns on different devices are all kept. A column changed
        /// differently by several versions takes the value of the one whose
        /// `newestBy` column is greatest (null lowest), or without it
        /// CouchDB's winner's. When the ancestor's body is no longer kept (a
        /// compaction ran since the versions parted), every column that
        /// differs is settled that way.
        case mergeColumns(newestBy: String? = nil)
        /// Your function makes the row from the conflicting versions (the
        /// documents' members, CouchDB's winner first; a BLOB column's
        /// attachment as its base64 text); what it returns becomes the row.
        case custom(@Sendable (_ key: String, _ versions: [JSONObject]) throws -> JSONObject)
    }

    /// Settles every conflicted row of `table` by `policy` and returns how
    /// many were settled. The row takes the chosen version in the same
    /// transaction; the next sync sends the resolution to the other devices.
    @discardableResult
    public func resolveConflicts(in table: String, using policy: ConflictPolicy) throws -> Int {
        guard let synced = syncedTable(table) else {
            throw DocumentError(.badRequest, "\(table) is not a synced table")
        }
        let table = synced.name
        let blobColumns = synced.blobColumns
        var settled = 0
        for conflict in try conflicts(in: table) {
            let id = table + ":" + conflict.key
            let revisions = [conflict.winner] + conflict.losers
            // A BLOB column's attachment is seen as the member of its name,
            // its content in base64.
            let versions = try revisions.map { rev in
                let document = try documents.document(id: id, options: DocumentReadOptions(rev: rev, attachments: true))
                var version = JSONObject(document.filter { !$0.key.hasBytePrefix("_") })
                for (name, attachment) in document["_attachments"]?.objectValue ?? JSONObject() where blobColumns.contains(name) {
                    version[name] = attachment["data"] ?? .null
                }
                return version
            }
            let chosen: JSONObject
            switch policy {
            case .keepWinner:
                chosen = versions[0]
            case .newest(let column):
                chosen = versions.dropFirst().reduce(versions[0]) { best, version in
                    Self.isGreater(version[column] ?? .null, than: best[column] ?? .null) ? version : best
                }
            case .mergeColumns(let column):
                chosen = Self.merge(versions, ancestor: try commonAncestor(id: id, of: revisions), newestBy: column)
            case .custom(let resolve):
                chosen = JSONObject(try resolve(conflict.key, versions).filter { !$0.key.hasBytePrefix("_") })
            }
            let documentTables = documents.tables
            try documents.writer.write { db in
                // The winner's branch takes the chosen version; the other
                // leaves end. The documents' triggers write the row.
                if chosen != versions[0] {
                    var document: JSONObject = ["_id": .string(id), "_rev": .string(conflict.winner)]
                    var attachments = JSONObject()
                    for (name, value) in chosen {
                        if blobColumns.contains(name), let base64 = value.stringValue, Data(base64Encoded: base64) != nil {
                            attachments[name] = ["content_type": .string(Self.blobContentType), "data": .string(base64)]
                        } else {
                            document[name] = value
                        }
                    }
                    if !attachments.isEmpty { document["_attachments"] = .object(attachments) }
                    document["$table"] = .string(table)
                    _ = try documentTables.write(db, document: document, newEdits: true)
                }
                // Each deletion keeps its version's members, as a deleted
                // row's does (a filtered sync lets it through).
                for (loser, version) in zip(conflict.losers, versions.dropFirst()) {
                    var deletion = JSONObject(version.filter { !blobColumns.contains($0.key) })
                    deletion["_id"] = .string(id)
                    deletion["_rev"] = .string(loser)
                    deletion["_deleted"] = true
                    _ = try documentTables.write(db, document: deletion, newEdits: true)
                }
            }
            settled += 1
        }
        return settled
    }

    /// The members of the deepest revision all of `revisions` descend
    /// from, when its body is still kept.
    private func commonAncestor(id: String, of revisions: [String]) throws -> JSONObject? {
        let tables = documents.tables
        return try documents.writer.read { db in
            let tree = try tables.loadTree(db, id: id)
            let paths = revisions.compactMap(Revision.init).map(tree.ancestry)
            guard let first = paths.first else { return nil }
            let others = paths.dropFirst().map(Set.init)
            guard let ancestor = first.dropFirst().first(where: { rev in others.allSatisfy { $0.contains(rev) } }),
                  let text = try String.fetchOne(db, sql: "SELECT body FROM \(tables.revs) WHERE doc = ? AND rev = ?",
                                                 arguments: [id, ancestor.description]),
                  case .object(let body) = try JSON(parsing: text)
            else { return nil }
            return JSONObject(body.filter { !$0.key.hasBytePrefix("_") })
        }
    }

    /// `versions` (CouchDB's winner first) merged member by member against
    /// `ancestor` (see ``ConflictPolicy/mergeColumns(newestBy:)``).
    static func merge(_ versions: [JSONObject], ancestor: JSONObject?, newestBy column: String?) -> JSONObject {
        // The order in which versions win a member several changed.
        var ranked = versions
        if let column {
            // A stable sort: among equals, CouchDB's winner stays first.
            ranked = versions.enumerated().sorted { a, b in
                let (x, y) = (a.element[column] ?? .null, b.element[column] ?? .null)
                if isGreater(x, than: y) { return true }
                if isGreater(y, than: x) { return false }
                return a.offset < b.offset
            }.map(\.element)
        }
        var names: [String] = []
        for object in [ancestor ?? JSONObject()] + ranked {
            for (name, _) in object where !names.contains(name) { names.append(name) }
        }
        var merged = JSONObject()
        for name in names {
            let changed = ranked.filter { ancestor == nil || $0[name] != ancestor?[name] }
            // Nobody changed it: the ancestor's; otherwise the first
            // (ranked) of those who did. A member a version removed stays
            // removed.
            let value = changed.first.map { $0[name] } ?? ancestor?[name]
            if let value = value ?? nil { merged[name] = value }
        }
        return merged
    }

    /// Whether `value` orders after `other`: null first, then numbers by
    /// value, then text, then the rest by their JSON text.
    static func isGreater(_ value: JSON, than other: JSON) -> Bool {
        func rank(_ json: JSON) -> Int {
            switch json {
            case .null: 0
            case .bool: 1
            case .number: 2
            case .string: 3
            default: 4
            }
        }
        switch (value, other) {
        case (.number(let a), .number(let b)): return (Double(a) ?? 0) > (Double(b) ?? 0)
        case (.string(let a), .string(let b)): return a > b
        case (.bool(let a), .bool(let b)): return a && !b
        default:
            return rank(value) != rank(other) ? rank(value) > rank(other) : value.text > other.text
        }
    }

    // MARK: - Rows to documents

    /// The content type of a BLOB column's attachment.
    static let blobContentType = "application/octet-stream"

    /// A column's value as a document member (see the type's discussion).
    static func json(_ value: DatabaseValue) -> JSON {
        switch value {
        case .null: return .null
        case .integer(let integer): return .number(String(integer))
        case .real(let real):
            // Swift's text has a fraction or an exponent ("3.0", "1e+20"),
            // so the value is read back as REAL.
            return real.isFinite ? .number(String(real)) : .null
        case .text(let text): return .string(text)
        case .blob(let data): return .string(data.base64EncodedString())
        }
    }

    // MARK: - Schema

    static func outbox(_ documentsName: String) -> String { quoteIdentifier("\(documentsName)_outbox") }
    static func state(_ documentsName: String) -> String { quoteIdentifier("\(documentsName)_state") }
    static func registry(_ documentsName: String) -> String { quoteIdentifier("\(documentsName)_tables") }
    /// The documents whose row waits for a parent row (a foreign key).
    static func waiting(_ documentsName: String) -> String { quoteIdentifier("\(documentsName)_waiting") }
    /// The documents whose row a constraint refused, and why: the row
    /// breaks one of its table's (`deletion` 0), or its deletion arrived
    /// while other rows referred to it (`deletion` 1).
    static func refused(_ documentsName: String) -> String { quoteIdentifier("\(documentsName)_refused") }

    /// Notes on the refused row `id` whether `error` depends on the row
    /// alone (a CHECK, a STRICT column's type, a rowid that is no integer),
    /// and then the document's sequence and the schema's version it was
    /// made on: until either changes, `applyWaitingRows()` does not try the
    /// row again, since SQLite would refuse it again. Any other refusal (an
    /// app's trigger, which may read other rows) is tried each time, and so
    /// is a row of a table with a default that may change (`CURRENT_TIME`,
    /// a function's value): a member the document lacks takes it.
    /// Returns whether the refusal depends on the row alone.
    @discardableResult
    static func noteRefusal(_ db: Database, id: String, error: SQLiteError, refused: String, docs: String) throws -> Bool {
        let rowAlone = try (error.code == .constraintCheck || error.code == .constraintDataType || error.primaryResultCode == .mismatch)
            && !defaultsMayChange(db, documentID: id)
        try db.execute(sql: rowAlone
            ? "UPDATE \(refused) SET seq = (SELECT seq FROM \(docs) WHERE id = ?1), schema = (SELECT schema_version FROM pragma_schema_version) WHERE id = ?1"
            : "UPDATE \(refused) SET seq = NULL, schema = NULL WHERE id = ?1",
            arguments: [id])
        return rowAlone
    }
    /// Whether a column of the table of the document `id` ("table:key",
    /// the longest such table) has a default that may differ from one
    /// write to the next: `CURRENT_TIME`, `CURRENT_DATE`,
    /// `CURRENT_TIMESTAMP`, or an expression that calls a function
    /// (`(random())`, `(strftime('%s', 'now'))`). Any parenthesis counts,
    /// so `(0)` does too: such a row is only tried more often. True when
    /// no table is found.
    static func defaultsMayChange(_ db: Database, documentID id: String) throws -> Bool {
        var end = id.endIndex
        while let colon = id[..<end].lastIndex(of: ":") {
            let defaults = try Row.fetchAll(db, sql: "SELECT dflt_value FROM pragma_table_info(?)", arguments: [String(id[..<colon])])
            if !defaults.isEmpty {
                return try defaults.contains { row in
                    guard let value = try row[0] as String? else { return false }
                    return value.uppercased().hasPrefix("CURRENT_") || value.contains("(")
                }
            }
            end = colon
        }
        return true
    }

    /// For a row changed here while another device's revision of it
    /// arrived, before the change was captured: the revision the change was
    /// made on (null: the document did not exist), which the capture makes
    /// its parent, so that the two edits are a conflict.
    static func bases(_ documentsName: String) -> String { quoteIdentifier("\(documentsName)_bases") }

    /// Whether a column declared `type` has BLOB affinity (SQLite's rules:
    /// no INT, CHAR, CLOB or TEXT in it, and BLOB or nothing).
    static func hasBlobAffinity(_ type: String) -> Bool {
        affinity(type) == "BLOB"
    }

    /// The table's key and columns, or why it cannot be synced.
    private static func check(_ db: Database, table name: String, integerKeyIsShared: Bool) throws -> SyncedTable {
        let columns = try Row.fetchAll(db, sql: "SELECT name, type, pk FROM pragma_table_info(?) ORDER BY cid", arguments: [name])
        guard !columns.isEmpty else {
            throw DocumentError(.badRequest, "cannot sync \(name): there is no such table")
        }
        let keys = try columns.filter { try $0[2] as Int > 0 }.sorted { (a: Row, b: Row) in try (a[2] as Int) < (b[2] as Int) }
        let why = "two devices would hand out the same keys. Give it a primary key of globally unique values, "
            + "for example `id TEXT PRIMARY KEY NOT NULL` filled with UUID().uuidString"
        guard !keys.isEmpty else {
            throw DocumentError(.badRequest, "cannot sync \(name): it has no primary key but its row id, and \(why)")
        }
        let withoutRowID = try Bool.fetchOne(db, sql: "SELECT wr FROM pragma_table_list WHERE name = ? COLLATE NOCASE", arguments: [name]) ?? false
        let keyIsRowID = try keys.count == 1 && !withoutRowID && (keys[0][1] as String).uppercased() == "INTEGER"
        if keyIsRowID {
            let column: String = try keys[0][0]
            let sql = try String.fetchOne(db, sql: "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ? COLLATE NOCASE", arguments: [name]) ?? ""
            if sql.uppercased().contains("AUTOINCREMENT") {
                throw DocumentError(.badRequest, "cannot sync \(name): its key \(column) is AUTOINCREMENT, the row id SQLite hands out, and \(why)")
            }
            if !integerKeyIsShared {
                throw DocumentError(.badRequest, "cannot sync \(name): its key \(column) is an INTEGER PRIMARY KEY, the row id SQLite hands out, and \(why)"
                    + " (or, if its ids are the same on every device and the app always sets them, name it in sharedIntegerKeys)")
            }
        }
        for key in keys where hasBlobAffinity(try key[1] as String) {
            throw DocumentError(.badRequest, "cannot sync \(name): its key column \(try key[0] as String) may hold BLOBs, which cannot name a document; "
                + "declare it TEXT (a UUID string, say)")
        }
        for column in columns where (try column[0] as String).hasBytePrefix("_") {
            throw DocumentError(.badRequest, "cannot sync \(name): its column \(try column[0] as String) starts with `_`, which CouchDB keeps for its own members")
        }
        for column in columns where try column[0] as String == "$table" {
            throw DocumentError(.badRequest, "cannot sync \(name): its column $table has the name of the member that names a row's table in its document; rename the column")
        }
        return SyncedTable(name: name, keyColumns: try keys.map { try $0[0] as String }, columns: try columns.map { try $0[0] as String },
                           blobColumns: Set(try columns.filter { hasBlobAffinity(try $0[1] as String) }.map { try $0[0] as String }),
                           keyAffinities: try keys.map { affinity(try $0[1] as String) }, keyIsRowID: keyIsRowID)
    }

    /// SQLite's affinity of a column declared with `type` (SQLite's rules,
    /// in their order): `INTEGER`, `TEXT`, `BLOB`, `REAL` or `NUMERIC`.
    static func affinity(_ type: String) -> String {
        let type = type.uppercased()
        if type.contains("INT") { return "INTEGER" }
        if ["CHAR", "CLOB", "TEXT"].contains(where: type.contains) { return "TEXT" }
        if type.isEmpty || type.contains("BLOB") { return "BLOB" }
        if ["REAL", "FLOA", "DOUB"].contains(where: type.contains) { return "REAL" }
        return "NUMERIC"
    }

    /// The name of one of `table`'s triggers (`inserted`, `applied_insert`, …).
    static func triggerName(_ documentsName: String, table: String, _ suffix: String) -> String {
        "\(documentsName)_\(table)_\(suffix)"
    }

    /// The triggers of one table: capture (row changes into the outbox) and
    /// apply (document writes into the row).
    private static func installTriggers(_ db: Database, table: SyncedTable, documentsName: String, docs: String, blobs: String,
                                        schema: SchemaFacts = SchemaFacts()) throws {
        let outbox = outbox(documentsName)
        let state = state(documentsName)
        let name = quoteIdentifier(table.name)
        let literal = quoteStringLiteral(table.name)
        func trigger(_ suffix: String) -> String { quoteIdentifier(triggerName(documentsName, table: table.name, suffix)) }
        let idle = "(SELECT applying FROM \(state)) = 0"
        // The rows' capture triggers have no condition (a quarter of the
        // insert trigger's cost): what the documents' triggers write to a
        // document's own row is captured, and that capture is taken back at
        // once (below, in `apply`: what the outbox gained past `mark` for
        // that row's key), so it is never sent back. Anything else the
        // apply changes is kept and sent: the rows an `ON DELETE CASCADE`
        // or `SET NULL` changed, or an app's own trigger.
        let sql = try RowApplySQL(db, table: table, row: "NEW", blobs: blobs, schema: schema)
        let (docKey, parentsPresent) = (sql.docKey, sql.parentsPresent)
        let waiting = waiting(documentsName)
        let refused = refused(documentsName)
        // A row changed here and not yet captured keeps its change, and the
        // revision it was made on is noted (in `bases`): the capture writes
        // the change as a branch from it, a conflict with what arrived.
        let pending = "EXISTS (SELECT 1 FROM \(outbox) WHERE tbl = \(literal) AND key = \(docKey))"
        let bases = bases(documentsName)
        // Whether the row is pending, once `pending` was looked at (a scan
        // of the outbox) and its base noted: a base is noted exactly while
        // its row's change waits for the capture, which empties both.
        let noted = "EXISTS (SELECT 1 FROM \(bases) WHERE id = NEW.id)"
        // No `INSERT OR IGNORE` here: the document write that fires these
        // triggers is an upsert, whose conflict handling SQLite imposes on
        // the triggers' statements, so an ignored conflict would fail it.
        func apply(base: String) -> String { """
            UPDATE \(state) SET applying = 1, mark = (SELECT ifnull(max(seq), 0) FROM \(outbox));
            INSERT INTO \(bases)(id, rev) SELECT NEW.id, \(base) WHERE \(pending) AND NOT \(noted);
            DELETE FROM \(name) WHERE NEW.deleted AND \(table.matchSQL(docKey)) AND NOT \(noted) AND \(sql.deletable);
            INSERT INTO \(name)(\(sql.upsertColumns)) SELECT \(sql.upsertValues) WHERE NOT NEW.deleted AND \(parentsPresent) AND \(sql.fits) AND \(sql.unique) AND NOT \(noted)
              \(sql.onConflict);
            DELETE FROM \(refused) WHERE id = NEW.id;
            INSERT INTO \(refused)(id, reason) SELECT NEW.id, CASE WHEN \(sql.fits) THEN \(sql.uniqueRefusal) ELSE \(sql.refusal) END
              WHERE NOT NEW.deleted AND \(parentsPresent) AND NOT (\(sql.fits) AND \(sql.unique)) AND NOT \(noted);
            INSERT INTO \(refused)(id, reason, deletion) SELECT NEW.id, \(sql.deletionRefusal), 1 WHERE NEW.deleted AND NOT \(noted) AND NOT (\(sql.deletable));
            DELETE FROM \(outbox) WHERE seq > (SELECT mark FROM \(state)) AND tbl = \(literal) AND key = \(docKey);
            DELETE FROM \(waiting) WHERE id = NEW.id AND (NEW.deleted OR \(parentsPresent));
            INSERT INTO \(waiting)(id) SELECT NEW.id WHERE NOT NEW.deleted AND NOT (\(parentsPresent))
              AND NOT EXISTS (SELECT 1 FROM \(waiting) WHERE id = NEW.id);
            UPDATE \(state) SET applying = 0;
            """
        }
        // Each trigger's statement as SQLite keeps it (no `;`), so that an
        // open that would make the same triggers again leaves the schema
        // alone: no schema change, no statement of any connection prepared
        // again.
        let statements: [(suffix: String, sql: String)] = [
            ("inserted", """
                CREATE TRIGGER \(trigger("inserted")) AFTER INSERT ON \(name) BEGIN
                  INSERT INTO \(outbox)(tbl, key) VALUES (\(literal), \(table.keySQL("NEW")));
                END
                """),
            ("updated", """
                CREATE TRIGGER \(trigger("updated")) AFTER UPDATE ON \(name) BEGIN
                  INSERT INTO \(outbox)(tbl, key) SELECT \(literal), \(table.keySQL("OLD")) WHERE \(table.keySQL("OLD")) IS NOT \(table.keySQL("NEW"));
                  INSERT INTO \(outbox)(tbl, key) VALUES (\(literal), \(table.keySQL("NEW")));
                END
                """),
            ("deleted", """
                CREATE TRIGGER \(trigger("deleted")) AFTER DELETE ON \(name) BEGIN
                  INSERT INTO \(outbox)(tbl, key) VALUES (\(literal), \(table.keySQL("OLD")));
                END
                """),
            ("applied_insert", """
                CREATE TRIGGER \(trigger("applied_insert")) AFTER INSERT ON \(docs) WHEN \(sql.isTable) AND \(idle) BEGIN
                \(apply(base: "NULL"))
                END
                """),
            ("applied_update", """
                CREATE TRIGGER \(trigger("applied_update")) AFTER UPDATE ON \(docs) WHEN \(sql.isTable) AND \(idle) BEGIN
                \(apply(base: "OLD.rev"))
                END
                """),
        ]
        let names = statements.map { triggerName(documentsName, table: table.name, $0.suffix) }
        let existing = try Row.fetchAll(db, sql: "SELECT name, sql FROM sqlite_schema WHERE type = 'trigger' AND name IN (SELECT value FROM json_each(?))",
                                        arguments: [JSON.array(names.map(JSON.string)).text])
        // Keyed and compared in bytes: Swift's `==` takes a table named with
        // a precomposed `é` for one named with `e` and a combining accent.
        var kept: [ExactString: ExactString] = [:]
        for row in existing { kept[ExactString(try row[0])] = ExactString(try row[1]) }
        if zip(names, statements).allSatisfy({ kept[ExactString($0)] == ExactString($1.sql) }) { return }
        try dropTriggers(db, documentsName: documentsName, table: table.name, statements.map(\.suffix))
        for statement in statements {
            try db.execute(sql: statement.sql)
        }
    }
}
