import Foundation
import Strata

extension TableSync {
    /// The SQL that writes a synced table's row from its document, for a
    /// row of the documents table named `row`: `NEW` in the triggers that
    /// apply one document, `d` in the statements that apply a batch.
    struct RowApplySQL {
        /// The document's key: what follows "table:" in its id.
        let docKey: String
        /// True for a document of this table whose key is spelled as the
        /// table spells its rows' (see ``TableSync/unappliedDocuments(in:)``).
        let isTable: String
        /// The row's columns, key first, and their values from the document.
        let upsertColumns: String
        let upsertValues: String
        /// `ON CONFLICT(key) DO …`: the other columns take the new values.
        let onConflict: String
        /// True when each foreign key's columns are null or its parent row
        /// is there ("1" for a table without foreign keys).
        let parentsPresent: String
        /// The synced tables or others this table's foreign keys name.
        let parents: Set<String>
        /// Each foreign key: the table it names, the columns of that table
        /// it matches, and the values it gives them, from the document.
        let parentKeys: [(parent: String, columns: [String], values: [String])]
        /// Each column's value from the document, by the column's name in
        /// lower case.
        let values: [[UInt8]: String]
        /// True when every `NOT NULL` column gets a value ("1" for a table
        /// without such columns): a row that would break that constraint is
        /// refused, not written, and its document kept.
        let fits: String
        /// Why a row that does not fit is refused (text).
        let refusal: String
        /// True when no other row has the row's values of a `UNIQUE`
        /// constraint or index ("1" for a table without one). Only the
        /// documents' triggers check it first: a batch tries its rows and
        /// refuses those SQLite refuses, so that rows passing a value along
        /// within the batch are all written.
        let unique: String
        /// Why a row that another row's unique values stop is refused (text).
        let uniqueRefusal: String
        /// For each `UNIQUE` constraint or index on columns: true for a row
        /// `u` of the table, of another key, that holds the document's
        /// values of it.
        let uniqueHolders: [String]
        /// True when the row of the document's key may be deleted: no row
        /// refers to it through a foreign key that neither cascades nor
        /// sets null ("1" when no such foreign key names this table).
        let deletable: String
        /// Why a deletion is refused (text).
        let deletionRefusal: String
        /// True when no foreign key of any table names this one with an
        /// `ON DELETE` action (CASCADE, SET NULL, SET DEFAULT): a row may be
        /// deleted and written again in a savepoint without touching
        /// another row. `referred` is true when some foreign key names it.
        let vacatable, referred: Bool

        init(_ db: Database, table: SyncedTable, row: String, blobs: String, schema: SchemaFacts = SchemaFacts()) throws {
            let literal = quoteStringLiteral(table.name)
            let prefixLength = table.name.unicodeScalars.count + 1
            docKey = "substr(\(row).id, \(prefixLength + 1))"
            isTable = "substr(\(row).id, 1, \(prefixLength)) = \(literal) || ':' AND \(table.isRowKeySQL(docKey))"
            let docKey = docKey
            let others = table.columns.filter { !table.keyColumns.contains($0) }
            let info = try Row.fetchAll(db, sql: "SELECT name, \"notnull\", dflt_value FROM pragma_table_info(?) ORDER BY cid", arguments: [table.name])
            var defaults: [String: String] = [:]
            var notNull: [String] = []
            for column in info {
                let name: String = try column[0]
                if try column[1] as Bool { notNull.append(name) }
                if let value = try column[2] as String? { defaults[name] = value }
            }
            func member(_ column: String) -> String {
                var value = jsonMember(of: "\(row).body", named: column)
                // A member the document lacks (made by an app version
                // without the column) takes the column's default, as an
                // INSERT that names no value for it would; `null` is NULL.
                if let fallback = defaults[column] {
                    value = "CASE WHEN \(jsonMember(of: "\(row).body", named: column, reading: "type")) IS NULL THEN (\(fallback)) ELSE \(value) END"
                }
                guard table.blobColumns.contains(column) else { return value }
                // A BLOB column: the attachment of its name, else the member.
                let digest = jsonMember(of: "\(row).attachments", named: column, then: ".digest")
                return "CASE WHEN \(digest) IS NOT NULL THEN (SELECT data FROM \(blobs) WHERE digest = \(digest)) ELSE \(value) END"
            }
            upsertColumns = (table.keyColumns + others).map(quoteIdentifier).joined(separator: ", ")
            upsertValues = (table.keyValuesSQL(docKey) + others.map(member)).joined(separator: ", ")
            let conflictTarget = table.keyColumns.map(quoteIdentifier).joined(separator: ", ")
            onConflict = "ON CONFLICT(\(conflictTarget)) "
                + (others.isEmpty ? "DO NOTHING" : "DO UPDATE SET " + others.map { "\(quoteIdentifier($0)) = excluded.\(quoteIdentifier($0))" }.joined(separator: ", "))
            // A row whose parent rows are not all here yet waits (its
            // document is kept): each foreign key's columns are null, or
            // its parent is.
            func value(_ column: String) -> String {
                if let index = table.keyColumns.firstIndex(of: column) { return table.keyValuesSQL(docKey)[index] }
                return member(column)
            }
            var checks: [String] = []
            var parents: Set<String> = []
            var keys: [(parent: String, columns: [String], values: [String])] = []
            let foreignKeys = try schema.foreignKeys(db).first { identifiersMatch($0.table, table.name) }?.keys ?? []
            for (_, rows) in Dictionary(grouping: foreignKeys, by: { (try? $0[0] as Int) ?? 0 }).sorted(by: { $0.key < $1.key }) {
                let parent: String = try rows[0][1]
                parents.insert(parent)
                let from = try rows.map { try $0[2] as String }
                var to = try rows.map { try $0[3] as String? }
                if to.contains(where: { $0 == nil }) {
                    // The parent's primary key.
                    to = try Row.fetchAll(db, sql: "SELECT name FROM pragma_table_info(?) WHERE pk > 0 ORDER BY pk", arguments: [parent]).map { try $0[0] as String? }
                }
                let anyNull = from.map { "\(value($0)) IS NULL" }.joined(separator: " OR ")
                let match = zip(from, to).map { "\(quoteIdentifier($1 ?? "")) = \(value($0))" }.joined(separator: " AND ")
                checks.append("(\(anyNull) OR EXISTS (SELECT 1 FROM \(quoteIdentifier(parent)) WHERE \(match)))")
                keys.append((parent, to.map { $0 ?? "" }, from.map(value)))
            }
            parentsPresent = checks.isEmpty ? "1" : checks.joined(separator: " AND ")
            self.parents = parents
            parentKeys = keys
            values = Dictionary(table.columns.map { (identifierKey($0), value($0)) }, uniquingKeysWith: { first, _ in first })
            // The foreign keys of any table that name this one and would
            // refuse its row's deletion (NO ACTION, RESTRICT).
            var referrers: [(table: String, exists: String)] = []
            var acting = false, referred = false
            let alias = "p"
            for (child, keys) in try schema.foreignKeys(db) {
                for (_, rows) in Dictionary(grouping: keys, by: { (try? $0[0] as Int) ?? 0 }).sorted(by: { $0.key < $1.key }) {
                    guard identifiersMatch(try rows[0][1] as String, table.name) else { continue }
                    referred = true
                    guard ["NO ACTION", "RESTRICT"].contains((try rows[0][4] as String).uppercased()) else {
                        acting = true
                        continue
                    }
                    let from = try rows.map { try $0[2] as String }
                    var to = try rows.map { try $0[3] as String? }
                    if to.contains(where: { $0 == nil }) { to = table.keyColumns }
                    let match = zip(from, to).map { "c.\(quoteIdentifier($0)) = \(alias).\(quoteIdentifier($1 ?? ""))" }.joined(separator: " AND ")
                    let own = zip(table.keyColumns, table.keyValuesSQL(docKey)).map { "\(alias).\(quoteIdentifier($0)) = \($1)" }.joined(separator: " AND ")
                    referrers.append((child, "EXISTS (SELECT 1 FROM \(quoteIdentifier(table.name)) AS \(alias), \(quoteIdentifier(child)) AS c WHERE \(own) AND \(match))"))
                }
            }
            vacatable = !acting
            self.referred = referred
            deletable = referrers.isEmpty ? "1" : "NOT (" + referrers.map(\.exists).joined(separator: " OR ") + ")"
            let referring = referrers.map { "WHEN \($0.exists) THEN " + quoteStringLiteral($0.table) }.joined(separator: " ")
            deletionRefusal = referrers.isEmpty ? "''" : "'its deletion arrived while rows of ' || CASE \(referring) END || ' refer to it (a foreign key without ON DELETE CASCADE)'"
            // Each UNIQUE constraint or index on columns (not on
            // expressions, not partial): no row of another key holds the
            // row's values, compared as the index compares them.
            var uniques: [(columns: [String], taken: String)] = []
            var holders: [String] = []
            let ownKey = zip(table.keyColumns, table.keyValuesSQL(docKey)).map { "u.\(quoteIdentifier($0)) = \($1)" }.joined(separator: " AND ")
            for index in try Row.fetchAll(db, sql: "SELECT name FROM pragma_index_list(?) WHERE \"unique\" AND origin <> 'pk' AND NOT partial ORDER BY name",
                                          arguments: [table.name]) {
                let parts = try Row.fetchAll(db, sql: "SELECT name, coll FROM pragma_index_xinfo(?) WHERE key ORDER BY seqno", arguments: [try index[0] as String])
                let columns = try parts.map { try $0[0] as String? }
                guard !columns.isEmpty, columns.allSatisfy({ $0 != nil }) else { continue }
                let match = try zip(columns.compactMap { $0 }, parts).map { column, part in
                    "u.\(quoteIdentifier(column)) = \(value(column)) COLLATE \(quoteIdentifier(try part[1] as String? ?? "BINARY"))"
                }.joined(separator: " AND ")
                let holder = "\(match) AND NOT (\(ownKey))"
                uniques.append((columns.compactMap { $0 }, "EXISTS (SELECT 1 FROM \(quoteIdentifier(table.name)) AS u WHERE \(holder))"))
                holders.append(holder)
            }
            uniqueHolders = holders
            unique = uniques.isEmpty ? "1" : uniques.map { "NOT \($0.taken)" }.joined(separator: " AND ")
            let taken = uniques.map { "WHEN \($0.taken) THEN " + quoteStringLiteral($0.columns.joined(separator: ", ")) }.joined(separator: " ")
            uniqueRefusal = uniques.isEmpty ? "''" : "'another row has its value of ' || CASE \(taken) END || ' (UNIQUE)'"
            fits = notNull.isEmpty ? "1" : notNull.map { "\(value($0)) IS NOT NULL" }.joined(separator: " AND ")
            let missing = notNull.map { "WHEN \(value($0)) IS NULL THEN " + quoteStringLiteral($0) }.joined(separator: " ")
            refusal = notNull.isEmpty ? "''" : "'the document has no value for ' || CASE \(missing) END || ', a NOT NULL column'"
        }
    }

    /// What the SQL of several tables reads of the file's schema, read once
    /// for all of them (a connection's, while its schema does not change).
    final class SchemaFacts {
        private var allForeignKeys: [(table: String, keys: [Row])]?

        /// Each table of the file with its foreign keys (`id`, `table`,
        /// `from`, `to`, `on_delete`, by `id` and `seq`), by name.
        func foreignKeys(_ db: Database) throws -> [(table: String, keys: [Row])] {
            if let allForeignKeys { return allForeignKeys }
            var all: [(table: String, keys: [Row])] = []
            for table in try String.fetchAll(db, sql: "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name") {
                all.append((table, try Row.fetchAll(db, sql: "SELECT id, \"table\", \"from\", \"to\", on_delete FROM pragma_foreign_key_list(?) ORDER BY id, seq",
                                                    arguments: [table])))
            }
            allForeignKeys = all
            return all
        }
    }

    /// Applies the documents of a `bulkPut` to the tables with a few
    /// statements for the whole batch, in its transaction, instead of the
    /// documents' triggers doing it for each document (nine statements
    /// each): what a pull from the server writes. The outcome is the
    /// triggers': each changed document's winner becomes its row, a
    /// deleted one deletes it, a row whose parent has not arrived waits, and
    /// a row changed here and not yet captured keeps its change. (One
    /// difference, by design: when a batch holds two revisions of a
    /// document, the triggers would write the first to the row and then the
    /// second, where the batch writes only the winner after both; if that
    /// one waits for a parent, the row keeps what it had before the batch.)
    struct BatchApply: Sendable {
        /// One table's statements, `?1` the update sequence before the batch.
        struct TableStatements: Sendable {
            let hasForeignKeys: Bool
            /// The batch's documents whose row no longer waits, and those
            /// whose row now does (with foreign keys only).
            let unwait, wait: String
            /// Rows whose document the batch deleted; rows written from the
            /// others.
            let delete, upsert: String
            /// The batch's documents whose row is no longer refused, and
            /// those whose row is for a `NOT NULL` column (nil without one).
            let unrefuse: String
            let refuse: String?
            /// When the upsert failed on a constraint: the documents it
            /// writes, in order, and the upsert of one of them (`?2`).
            let candidates, upsertOne: String
            /// The deleted documents whose row others still refer to (nil
            /// when no foreign key could refuse a deletion).
            let refuseDeletion: String?
            /// Deletes the rows of the documents in the JSON array `?1`, so
            /// that rows swapping UNIQUE values can be written again (nil
            /// when deleting a row could touch another: an app's trigger on
            /// the table, a foreign key with an `ON DELETE` action).
            let vacate: String?
            /// Whether a foreign key names the table: deleting its rows
            /// for a moment needs the foreign keys deferred.
            let referred: Bool
            /// The documents of the JSON array `?1` that ``candidates``
            /// would write, in the order of their writes.
            let candidatesAmong: String
        }
        /// Parents' tables before their children's.
        let statements: [TableStatements]
        /// How the rows waiting for a parent are written (nil when no
        /// synced table has a foreign key).
        let waitingOrder: WaitingOrder?
        /// The refused rows (not deletions) whose document still lacks a
        /// value for a `NOT NULL` column or still has another row's value of
        /// a `UNIQUE` one, by the check the documents' triggers make before
        /// writing a row (nil when no synced table has such a column):
        /// trying them again would only refuse them again.
        let stillRefused: String?
        /// The refused rows (not deletions) that rows written together may
        /// fit: their `NOT NULL` columns have values, and each row holding
        /// one of their `UNIQUE` values is itself a refused row's (which
        /// ``writeRefusedTogether(_:ids:)`` moves out of the way). A row
        /// whose value a row that is not refused holds cannot be written so.
        let swapCandidates: String
        /// The tables' names, quoted.
        let docs, outbox, state, bases, waiting, refused: String

        init(_ db: Database, tables: [SyncedTable], documentsName: String, docs: String, blobs: String, schema: SchemaFacts = SchemaFacts()) throws {
            self.docs = docs
            outbox = TableSync.outbox(documentsName)
            state = TableSync.state(documentsName)
            bases = TableSync.bases(documentsName)
            waiting = TableSync.waiting(documentsName)
            refused = TableSync.refused(documentsName)
            var applies: [(table: SyncedTable, sql: RowApplySQL)] = []
            var triggered: Set<String> = []
            for table in tables {
                applies.append((table, try RowApplySQL(db, table: table, row: "d", blobs: blobs, schema: schema)))
                // Triggers on the table other than the capture's.
                let own = TableSync.captureTriggers.map { TableSync.triggerName(documentsName, table: table.name, $0) }
                let others = try String.fetchAll(db, sql: """
                    SELECT name FROM sqlite_schema WHERE type = 'trigger' AND tbl_name = ?1 COLLATE NOCASE
                    UNION ALL SELECT name FROM sqlite_temp_schema WHERE type = 'trigger' AND tbl_name = ?1 COLLATE NOCASE
                    """, arguments: [table.name]).filter { !own.contains($0) }
                if !others.isEmpty { triggered.insert(table.name) }
            }
            // Parents before children, so that a child arriving with its
            // parent in one batch does not wait (a cycle keeps the given
            // order; its rows wait, then are applied below).
            var ordered: [(table: SyncedTable, sql: RowApplySQL)] = []
            while !applies.isEmpty {
                let placed = Set(ordered.map(\.table.name))
                let names = Set(applies.map(\.table.name))
                let next = applies.firstIndex { apply in apply.sql.parents.allSatisfy { $0 == apply.table.name || placed.contains($0) || !names.contains($0) } } ?? 0
                ordered.append(applies.remove(at: next))
            }
            let (bases, waiting, refused) = (bases, waiting, refused)
            let (outbox, state) = (outbox, state)
            let ready = ordered.filter { $0.sql.parentsPresent != "1" }.map { _, sql in
                "SELECT d.id FROM \(waiting) AS w JOIN \(docs) AS d ON d.id = w.id WHERE \(sql.isTable) AND \(sql.parentsPresent)"
            }
            // The refused rows of a table (not deletions), with their documents.
            func refusedRows(_ sql: RowApplySQL) -> String {
                "SELECT d.id FROM \(refused) AS r JOIN \(docs) AS d ON d.id = r.id WHERE NOT r.deletion AND \(sql.isTable) AND NOT d.deleted"
            }
            let refusing = ordered.filter { $0.sql.fits != "1" || $0.sql.unique != "1" }.map { _, sql in
                refusedRows(sql) + " AND NOT (\(sql.fits) AND \(sql.unique))"
            }
            stillRefused = refusing.isEmpty ? nil : refusing.joined(separator: " UNION ALL ")
            swapCandidates = ordered.map { table, sql in
                let literal = quoteStringLiteral(table.name + ":")
                let heldElsewhere = sql.uniqueHolders.map { holder in
                    "NOT EXISTS (SELECT 1 FROM \(quoteIdentifier(table.name)) AS u WHERE \(holder) "
                        + "AND NOT EXISTS (SELECT 1 FROM \(refused) AS h WHERE h.id = \(literal) || \(table.keySQL("u")) AND NOT h.deletion))"
                }
                return refusedRows(sql) + " AND \(sql.fits)" + heldElsewhere.map { " AND " + $0 }.joined()
            }.joined(separator: " UNION ALL ")
            waitingOrder = ready.isEmpty ? nil
                : WaitingOrder(ready: ready.joined(separator: " UNION ALL "), edges: Self.waitingEdges(ordered, docs: docs, waiting: waiting))
            statements = ordered.map { table, sql in
                let written = "FROM \(docs) AS d WHERE d.seq > ?1 AND \(sql.isTable)"
                let noted = "EXISTS (SELECT 1 FROM \(bases) WHERE id = d.id)"
                // A document whose row is written: not deleted, its parents
                // here, its NOT NULL columns given, no local change noted.
                let writable = "NOT d.deleted AND \(sql.parentsPresent) AND \(sql.fits) AND NOT \(noted)"
                // The row changed here before the batch and not yet captured.
                let literal = quoteStringLiteral(table.name)
                let pending = "EXISTS (SELECT 1 FROM \(outbox) WHERE tbl = \(literal) AND key = \(sql.docKey) AND seq <= (SELECT mark FROM \(state)))"
                let keys = "(" + table.keyColumns.map(quoteIdentifier).joined(separator: ", ") + ")"
                return TableStatements(
                    hasForeignKeys: sql.parentsPresent != "1",
                    unwait: "DELETE FROM \(waiting) WHERE id IN (SELECT d.id \(written) AND (d.deleted OR \(sql.parentsPresent)))",
                    wait: "INSERT OR IGNORE INTO \(waiting)(id) SELECT d.id \(written) AND NOT d.deleted AND NOT (\(sql.parentsPresent))",
                    delete: "DELETE FROM \(quoteIdentifier(table.name)) WHERE \(keys) IN (SELECT \(table.keyValuesSQL(sql.docKey).joined(separator: ", ")) "
                        + "\(written) AND d.deleted AND NOT \(noted) AND \(sql.deletable))",
                    upsert: "INSERT INTO \(quoteIdentifier(table.name))(\(sql.upsertColumns)) SELECT \(sql.upsertValues) "
                        + "\(written) AND \(writable) ORDER BY d.seq \(sql.onConflict)",
                    unrefuse: "DELETE FROM \(refused) WHERE id IN (SELECT d.id \(written))",
                    refuse: sql.fits == "1" ? nil : "INSERT INTO \(refused)(id, reason) SELECT d.id, \(sql.refusal) "
                        + "\(written) AND NOT d.deleted AND \(sql.parentsPresent) AND NOT (\(sql.fits)) AND NOT \(noted)",
                    candidates: "SELECT d.id \(written) AND \(writable) ORDER BY d.seq",
                    upsertOne: "INSERT INTO \(quoteIdentifier(table.name))(\(sql.upsertColumns)) SELECT \(sql.upsertValues) "
                        + "\(written) AND d.id = ?2 \(sql.onConflict)",
                    refuseDeletion: sql.deletable == "1" ? nil : "INSERT INTO \(refused)(id, reason, deletion) SELECT d.id, \(sql.deletionRefusal), 1 "
                        + "\(written) AND d.deleted AND NOT \(noted) AND NOT (\(sql.deletable))",
                    vacate: !sql.vacatable || triggered.contains(table.name) ? nil
                        : "DELETE FROM \(quoteIdentifier(table.name)) WHERE \(keys) IN (SELECT \(table.keyValuesSQL(sql.docKey).joined(separator: ", ")) "
                        + "FROM \(docs) AS d WHERE d.id IN (SELECT value FROM json_each(?1)) AND \(sql.isTable))",
                    referred: sql.referred,
                    candidatesAmong: "SELECT d.id FROM \(docs) AS d WHERE d.id IN (SELECT value FROM json_each(?1)) AND \(sql.isTable) "
                        + "AND \(writable) AND NOT \(pending) ORDER BY d.seq")
            }
        }

        /// The SQL that orders the rows waiting for a parent.
        struct WaitingOrder: Sendable {
            /// The waiting documents whose rows' parents are all here now.
            let ready: String
            /// The waiting documents' edges (`child`, `parent`): a waiting
            /// document whose row a foreign key of another waiting one's
            /// row names, found by the values the documents give the key's
            /// columns (nil when no foreign key names a synced table). Only
            /// an order: whether a row is written is still its parents'
            /// rows being there.
            let edges: String?
        }

        /// The SQL of ``WaitingOrder/edges``: for each foreign key between synced
        /// tables, the waiting documents of the parent's table by the values
        /// they give its columns (kept once, so that the match is a lookup),
        /// joined with the waiting documents of the child's table by the
        /// values they give the key.
        static func waitingEdges(_ applies: [(table: SyncedTable, sql: RowApplySQL)], docs: String, waiting: String) -> String? {
            let byName = Dictionary(applies.map { (identifierKey($0.table.name), $0) }, uniquingKeysWith: { first, _ in first })
            var keyed: [String] = []
            var selects: [String] = []
            for (_, child) in applies {
                for key in child.parentKeys {
                    guard let (parentTable, parent) = byName[identifierKey(key.parent)] else { continue }
                    let columns = key.columns.compactMap { parent.values[identifierKey($0)] }
                    guard columns.count == key.columns.count else { continue }
                    // A key column's value as the column keeps it, on both
                    // sides: a document's key is text, a member may be a
                    // number.
                    let kept = key.columns.map { column -> (String) -> String in
                        guard let index = parentTable.keyColumns.firstIndex(where: { identifiersMatch($0, column) }) else { return { $0 } }
                        return { SyncedTable.keptSQL($0, affinity: parentTable.keyAffinities[index]) }
                    }
                    let name = "keyed\(keyed.count)"
                    let given = columns.enumerated().map { "\(kept[$0]($1)) AS k\($0)" }.joined(separator: ", ")
                    keyed.append("\(name) AS MATERIALIZED (SELECT d.id AS id, \(given) FROM \(waiting) AS w "
                        + "JOIN \(docs) AS d ON d.id = w.id WHERE \(parent.isTable))")
                    let match = key.values.enumerated().map { "k.k\($0) = \(kept[$0]($1))" }.joined(separator: " AND ")
                    selects.append("SELECT d.id AS child, k.id AS parent FROM \(waiting) AS w JOIN \(docs) AS d ON d.id = w.id "
                        + "JOIN \(name) AS k ON \(match) WHERE \(child.isTable) AND k.id <> d.id")
                }
            }
            guard !selects.isEmpty else { return nil }
            return "WITH " + keyed.joined(separator: ", ") + " " + selects.joined(separator: " UNION ALL ")
        }

        /// Before the batch's writes: the documents' triggers stand aside,
        /// and each document of the batch whose row was changed here and not
        /// yet captured has the revision the change was made on noted (the
        /// document's winner now, nil when it has none), as the triggers
        /// note it. Returns the update sequence before the batch and the
        /// documents noted.
        func before(_ db: Database, ids: [String]) throws -> (seq: Int, noted: [String]) {
            try db.execute(sql: "UPDATE \(state) SET applying = 2")
            var noted: [String] = []
            let pending = try String.fetchAll(db, sql: "SELECT DISTINCT tbl || ':' || key FROM \(outbox) WHERE key IS NOT NULL")
            if !pending.isEmpty {
                let touched = Set(pending).intersection(ids)
                    .subtracting(try String.fetchAll(db, sql: "SELECT id FROM \(bases)"))
                if !touched.isEmpty {
                    noted = touched.sorted()
                    try db.execute(sql: """
                        INSERT INTO \(bases)(id, rev)
                          SELECT j.value, (SELECT rev FROM \(docs) WHERE id = j.value) FROM json_each(?) AS j
                        """, arguments: [JSON.array(noted.map(JSON.string)).text])
                }
            }
            return (try Int.fetchOne(db, sql: "SELECT ifnull(max(seq), 0) FROM \(docs)") ?? 0, noted)
        }

        /// Whether `error` is a row's own: a constraint it breaks, or a
        /// value its column cannot hold.
        static func refusesRow(_ error: SQLiteError) -> Bool {
            error.primaryResultCode == .constraint || error.primaryResultCode == .mismatch
        }

        /// After the batch's writes: the rows of the documents it changed.
        /// `seq` and `noted` are what ``before(_:ids:)`` returned.
        func after(_ db: Database, before seq: Int, noted: [String]) throws {
            if !noted.isEmpty {
                // A document the batch did not change (it had the
                // revisions already) has nothing to note.
                try db.execute(sql: """
                    DELETE FROM \(bases) WHERE id IN (SELECT value FROM json_each(?))
                      AND NOT EXISTS (SELECT 1 FROM \(docs) WHERE id = \(bases).id AND seq > ?)
                    """, arguments: [JSON.array(noted.map(JSON.string)).text, seq])
            }
            // What the rows' capture triggers put in the outbox for the
            // batch's own rows is taken back after: past `mark`, of a key
            // whose document the batch wrote. Other rows changed meanwhile
            // (by an `ON DELETE CASCADE`, say) stay to be captured.
            try db.execute(sql: "UPDATE \(state) SET applying = 1, mark = (SELECT ifnull(max(seq), 0) FROM \(outbox))")
            var waited = false
            let anyRefused = try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(refused))") ?? false
            // Deletions first, children's before their parents', so that a
            // parent deleted with its children is no longer referred to.
            for table in statements.reversed() {
                if anyRefused { try db.execute(sql: table.unrefuse, arguments: [seq]) }
                try db.execute(sql: table.delete, arguments: [seq])
                if let refuseDeletion = table.refuseDeletion { try db.execute(sql: refuseDeletion, arguments: [seq]) }
            }
            for table in statements {
                if table.hasForeignKeys {
                    // Whether the parents are here is read before any row of
                    // the table is written, as the upsert reads it.
                    try db.execute(sql: table.unwait, arguments: [seq])
                    try db.execute(sql: table.wait, arguments: [seq])
                    waited = waited || db.changesCount > 0
                }
                if let refuse = table.refuse { try db.execute(sql: refuse, arguments: [seq]) }
                do {
                    try db.savepoint { try db.execute(sql: table.upsert, arguments: [seq]) }
                } catch let error as SQLiteError where Self.refusesRow(error) {
                    // A row breaks a constraint (CHECK, UNIQUE, a STRICT
                    // column's type, an app's trigger): the rows are
                    // written one at a time, and those that fail refused,
                    // so that the rest of the pull arrives; rows that swap
                    // UNIQUE values are written together.
                    var failures = try writeOneByOne(db, table, ids: try String.fetchAll(db, sql: table.candidates, arguments: [seq]), seq: seq)
                    if failures.count > 1 {
                        let written = try writeVacating(db, table, ids: failures.map(\.id), seq: seq)
                        failures.removeAll { written.contains($0.id) }
                    }
                    for (id, error) in failures {
                        try db.execute(sql: "DELETE FROM \(refused) WHERE id = ?", arguments: [id])
                        try db.execute(sql: "INSERT INTO \(refused)(id, reason) VALUES (?, ?)", arguments: [id, error.message ?? "\(error.code)"])
                        try TableSync.noteRefusal(db, id: id, error: error, refused: refused, docs: docs)
                    }
                }
            }
            try db.execute(sql: """
                DELETE FROM \(outbox) WHERE seq > (SELECT mark FROM \(state))
                  AND EXISTS (SELECT 1 FROM \(docs) WHERE id = \(outbox).tbl || ':' || \(outbox).key AND seq > ?)
                """, arguments: [seq])
            try db.execute(sql: "UPDATE \(state) SET applying = 0")
            // A child whose parent came later in the batch (a table that
            // refers to itself, or a cycle) is applied now.
            if waited { _ = try TableSync.applyWaiting(db, waiting: waiting, refused: refused, docs: docs, order: waitingOrder) }
        }

        /// Writes the rows of the documents `ids`, in order, each in its
        /// own savepoint, and again while a pass writes any: a row that
        /// collided with one written after it (a UNIQUE value another row
        /// gives up) is tried once that row moved. Returns the rows SQLite
        /// refused, each with its error.
        func writeOneByOne(_ db: Database, _ table: TableStatements, ids: [String], seq: Int) throws -> [(id: String, error: SQLiteError)] {
            var left = ids
            var failures: [(id: String, error: SQLiteError)] = []
            while !left.isEmpty {
                failures = []
                for id in left {
                    do {
                        try db.savepoint { try db.execute(sql: table.upsertOne, arguments: [seq, id]) }
                    } catch let error as SQLiteError where Self.refusesRow(error) {
                        failures.append((id, error))
                    }
                }
                if failures.count == left.count { break }
                left = failures.map(\.id)
            }
            return failures
        }

        /// Writes rows that each collide with another of them, such as two
        /// rows that swap their values of a UNIQUE column (SQLite checks
        /// the constraint at each row, so neither can be written first):
        /// in a savepoint, their rows are deleted, then all written from
        /// their documents. A row that still fails is left out and the rest
        /// tried again. Returns the documents whose rows were written.
        ///
        /// Not done for a table whose rows cannot be deleted for a moment
        /// without touching others (an app's trigger on it, a foreign key
        /// that cascades or sets null), nor for a row changed here and not
        /// yet captured; a foreign key that names the table is deferred
        /// meanwhile, and the rows written are those whose parents are here.
        func writeVacating(_ db: Database, _ table: TableStatements, ids: [String], seq: Int) throws -> Set<String> {
            guard let vacate = table.vacate, ids.count > 1 else { return [] }
            var trying = try String.fetchAll(db, sql: table.candidatesAmong, arguments: [JSON.array(ids.map(JSON.string)).text])
            guard trying.count > 1 else { return [] }
            let deferred = try Bool.fetchOne(db, sql: "PRAGMA defer_foreign_keys") ?? false
            let deferring = table.referred && !deferred
            if deferring { try db.execute(sql: "PRAGMA defer_foreign_keys = ON") }
            defer { if deferring { try? db.execute(sql: "PRAGMA defer_foreign_keys = OFF") } }
            struct StillRefused: Error { let ids: Set<String> }
            while trying.count > 1 {
                do {
                    try db.savepoint {
                        try db.execute(sql: vacate, arguments: [JSON.array(trying.map(JSON.string)).text])
                        let failures = try writeOneByOne(db, table, ids: trying, seq: seq)
                        if !failures.isEmpty { throw StillRefused(ids: Set(failures.map(\.id))) }
                    }
                    return Set(trying)
                } catch let refused as StillRefused {
                    trying.removeAll { refused.ids.contains($0) }
                } catch let error as SQLiteError where Self.refusesRow(error) {
                    // A deletion a foreign key restricts.
                    return []
                }
            }
            return []
        }

        /// ``writeVacating(_:_:ids:seq:)`` for the refused rows of the
        /// documents `ids`, which `applyWaitingRows()` tried one at a time
        /// in vain; their refusals go when written. Returns how many were.
        func writeRefusedTogether(_ db: Database, ids: [String]) throws -> Int {
            guard ids.count > 1 else { return 0 }
            // What the capture triggers record of these writes is taken
            // back after, as for a batch.
            try db.execute(sql: "UPDATE \(state) SET mark = (SELECT ifnull(max(seq), 0) FROM \(outbox))")
            var count = 0
            for table in statements {
                let written = try writeVacating(db, table, ids: ids, seq: 0)
                guard !written.isEmpty else { continue }
                let list = JSON.array(written.sorted().map(JSON.string)).text
                try db.execute(sql: "DELETE FROM \(refused) WHERE id IN (SELECT value FROM json_each(?))", arguments: [list])
                try db.execute(sql: """
                    DELETE FROM \(outbox) WHERE seq > (SELECT mark FROM \(state)) AND tbl || ':' || key IN (SELECT value FROM json_each(?))
                    """, arguments: [list])
                count += written.count
            }
            return count
        }
    }
}

/// SQL reading the member `name` of the JSON object `json` (an SQL
/// expression): its value as `json_extract` gives it, or with `reading:
/// "type"` its JSON type as `json_type` does (NULL when it is missing);
/// `then` goes on into the member (".digest").
///
/// SQLite's JSON paths have no escapes (`$."a\"b"` ends at the inner
/// quote), so a name with a double quote is looked up among the object's
/// members by `json_each`, which gives the same values and types.
func jsonMember(of json: String, named name: String, reading: String = "value", then subpath: String = "") -> String {
    let function = reading == "type" ? "json_type" : "json_extract"
    guard name.unicodeScalars.contains("\"") else {
        return "\(function)(\(json), \(quoteStringLiteral("$.\"" + name + "\"" + subpath)))"
    }
    let read = subpath.isEmpty ? reading : "\(function)(value, \(quoteStringLiteral("$" + subpath)))"
    return "(SELECT \(read) FROM json_each(\(json)) WHERE key = \(quoteStringLiteral(name)))"
}
