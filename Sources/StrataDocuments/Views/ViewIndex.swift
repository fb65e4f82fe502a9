import Foundation
import Strata

extension DocumentTables {
    var viewGroups: String { "\(docs.dropLast(5))view_groups\"" }
    var viewRows: String { "\(docs.dropLast(5))view_rows\"" }
    /// The stored reductions of reduce views (`ReductionTree`).
    var viewBlocks: String { "\(docs.dropLast(5))view_blocks\"" }
    /// Which view groups' stored reductions are current: the index
    /// sequence they were made at (`seq`), and the sequence at which making
    /// them last failed for a reason outside the rows (`tried`).
    var viewReduced: String { "\(docs.dropLast(5))view_reduced\"" }

    func createViewTables(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE IF NOT EXISTS \(viewGroups) (
              id INTEGER PRIMARY KEY,
              ddoc TEXT NOT NULL UNIQUE,
              signature TEXT NOT NULL,
              views TEXT NOT NULL,
              seq INTEGER NOT NULL
            );
            CREATE TABLE IF NOT EXISTS \(viewRows) (
              view INTEGER NOT NULL,
              sortkey BLOB NOT NULL,
              doc TEXT NOT NULL,
              key TEXT NOT NULL,
              value TEXT NOT NULL
            );
            CREATE INDEX IF NOT EXISTS \(trigger("view_rows_order")) ON \(viewRows)(view, sortkey, doc);
            CREATE INDEX IF NOT EXISTS \(trigger("view_rows_doc")) ON \(viewRows)(doc, view);
            CREATE TABLE IF NOT EXISTS \(viewBlocks) (
              view INTEGER NOT NULL,
              level INTEGER NOT NULL,
              sortkey BLOB NOT NULL,
              doc TEXT NOT NULL,
              first_sortkey BLOB NOT NULL,
              first_doc TEXT NOT NULL,
              first_key TEXT NOT NULL,
              last_sortkey BLOB NOT NULL,
              last_doc TEXT NOT NULL,
              last_key TEXT NOT NULL,
              rows INTEGER NOT NULL,
              failed INTEGER NOT NULL,
              reduction TEXT NOT NULL,
              PRIMARY KEY (view, level, sortkey, doc)
            ) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS \(viewReduced) (
              grp INTEGER PRIMARY KEY,
              seq INTEGER NOT NULL,
              tried INTEGER NOT NULL
            );
            """)
    }

    /// The ids of a group's views: group id × 1024 + the view's position.
    static func viewID(group: Int, position: Int) -> Int { group * 1024 + position }

    /// The group's id and how far it is indexed, creating it (or starting it
    /// over when its functions changed).
    func prepareGroup(_ db: Database, _ group: ViewGroup) throws -> (id: Int, seq: Int) {
        if let row = try Row.fetchOne(db, sql: "SELECT id, signature, seq FROM \(viewGroups) WHERE ddoc = ?", arguments: [group.design]) {
            let id: Int = try row[0]
            if try row[1] as String == group.signature { return (id, try row[2]) }
            try dropGroup(db, id: id)
        }
        let views = JSON.array(group.views.map(JSON.string)).text
        try db.execute(sql: "INSERT INTO \(viewGroups)(ddoc, signature, views, seq) VALUES (?, ?, ?, 0)",
                       arguments: [group.design, group.signature, views])
        return (Int(db.lastInsertedRowID), 0)
    }

    func dropGroup(_ db: Database, id: Int) throws {
        try db.execute(sql: "DELETE FROM \(viewRows) WHERE view >= ? AND view < ?",
                       arguments: [DocumentTables.viewID(group: id, position: 0), DocumentTables.viewID(group: id + 1, position: 0)])
        try db.execute(sql: "DELETE FROM \(viewBlocks) WHERE view >= ? AND view < ?",
                       arguments: [DocumentTables.viewID(group: id, position: 0), DocumentTables.viewID(group: id + 1, position: 0)])
        try db.execute(sql: "DELETE FROM \(viewReduced) WHERE grp = ?", arguments: [id])
        try db.execute(sql: "DELETE FROM \(viewGroups) WHERE id = ?", arguments: [id])
    }

    /// The documents changed after `seq`, as a map function sees them
    /// (design documents left out, deleted ones as nil).
    func changedForViews(_ db: Database, since seq: Int, limit: Int) throws -> [(id: String, seq: Int, doc: JSONObject?)] {
        let rows = try Row.fetchAll(db, sql: "SELECT id, seq, rev, deleted, body, attachments FROM \(docs) WHERE seq > ? ORDER BY seq LIMIT ?",
                                    arguments: [seq, limit])
        return try rows.map { row in
            let id: String = try row[0]
            let seq: Int = try row[1]
            if try row[3] as Bool || id.hasBytePrefix(DocumentTables.designPrefix) { return (id, seq, nil) }
            var doc: JSONObject = ["_id": .string(id), "_rev": .string(try row[2])]
            for (k, v) in try JSON(parsing: try row[4] as String).objectValue ?? JSONObject() { doc[k] = v }
            let attachments = StoredAttachments(text: try row[5])
            if !attachments.isEmpty {
                doc["_attachments"] = .object(JSONObject(attachments.map { ($0.name, $0.attachment.stub(encodingInfo: false)) }))
            }
            return (id, seq, doc)
        }
    }
}

extension DocumentTables {
    /// The SQL conditions of a key range on (sortkey, doc), in the query's direction.
    func rangeConditions(_ options: ViewQueryOptions) -> (start: (String, [any DatabaseValueConvertible])?, end: (String, [any DatabaseValueConvertible])?) {
        var startKey = options.startKey, endKey = options.endKey
        var startDoc = options.startKeyDocID, endDoc = options.endKeyDocID
        var inclusiveEnd = options.inclusiveEnd
        if let key = options.key {
            startKey = key
            endKey = key
            startDoc = nil
            endDoc = nil
            inclusiveEnd = true
        }
        let (ge, gt, le, lt) = options.descending ? ("<=", "<", ">=", ">") : (">=", ">", "<=", "<")
        var start: (String, [any DatabaseValueConvertible])?
        if let startKey {
            let k = Data(startKey.viewSortKey)
            start = startDoc.map { ("(sortkey, doc) \(ge) (?, ?)", [k, $0]) } ?? ("sortkey \(ge) ?", [k])
        }
        var end: (String, [any DatabaseValueConvertible])?
        if let endKey {
            let k = Data(endKey.viewSortKey)
            if let endDoc {
                end = ("(sortkey, doc) \(inclusiveEnd ? le : lt) (?, ?)", [k, endDoc])
            } else {
                end = ("sortkey \(inclusiveEnd ? le : lt) ?", [k])
            }
        }
        _ = gt
        return (start, end)
    }

    func viewRow(_ db: Database, _ row: some RowProtocol, includeDocs: Bool, conflicts: Bool) throws -> JSON {
        let id: String = try row[0]
        let value = try JSON(parsing: try row[2] as String)
        var o: JSONObject = ["id": .string(id), "key": try JSON(parsing: try row[1] as String), "value": value]
        if includeDocs {
            // A value with an `_id` links another document (CouchDB's linked documents).
            let target = value.objectValue?["_id"]?.stringValue ?? id
            let rev = value.objectValue?["_id"] != nil ? value.objectValue?["_rev"]?.stringValue : nil
            o["doc"] = (try? read(db, id: target, options: DocumentReadOptions(rev: rev, conflicts: conflicts))).map(JSON.object) ?? .null
        }
        return .object(o)
    }

    func mapRows(_ db: Database, view: Int, options: ViewQueryOptions) throws -> ViewResult {
        let total = options.countsRows ? try Int.fetchOne(db, sql: "SELECT count(*) FROM \(viewRows) WHERE view = ?", arguments: [view]) ?? 0 : nil
        let order = options.descending ? "DESC" : "ASC"
        var rows: [JSON] = []
        if let keys = options.keys {
            var skip = max(0, options.skip)
            let statement = "SELECT doc, key, value, sortkey FROM \(viewRows) WHERE view = ? AND sortkey = ? ORDER BY doc \(order)"
            // CouchDB's offset with keys: the rows before the first one
            // answered, or before the last key when none is.
            var first: (sortKey: Data, doc: String)?
            outer: for key in keys {
                let cursor = try Row.fetchCursor(db, sql: statement, arguments: [view, Data(key.viewSortKey)])
                while let row = try cursor.next() {
                    if let limit = options.limit, rows.count >= limit { break outer }
                    if skip > 0 { skip -= 1; continue }
                    if first == nil { first = (try row[3], try row[0]) }
                    rows.append(try viewRow(db, row, includeDocs: options.includeDocs, conflicts: options.conflicts))
                }
            }
            let before = options.descending ? ">" : "<"
            let offset: Int
            if let first {
                offset = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(viewRows) WHERE view = ? AND (sortkey, doc) \(before) (?, ?)",
                                          arguments: [view, first.sortKey, first.doc]) ?? 0
            } else if let last = keys.last {
                offset = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(viewRows) WHERE view = ? AND sortkey \(before) ?",
                                          arguments: [view, Data(last.viewSortKey)]) ?? 0
            } else {
                offset = 0
            }
            return ViewResult(totalRows: total, offset: offset, rows: rows, updateSequence: nil)
        }
        let (start, end) = rangeConditions(options)
        var conditions = ["view = ?"]
        var arguments: [any DatabaseValueConvertible] = [view]
        if let start { conditions.append(start.0); arguments += start.1 }
        if let end { conditions.append(end.0); arguments += end.1 }
        let limit = options.limit ?? -1
        let sql = "SELECT doc, key, value FROM \(viewRows) WHERE \(conditions.joined(separator: " AND ")) ORDER BY sortkey \(order), doc \(order) LIMIT \(limit) OFFSET \(max(0, options.skip))"
        let cursor = try Row.fetchCursor(db, sql: sql, arguments: StatementArguments(arguments))
        while let row = try cursor.next() {
            rows.append(try viewRow(db, row, includeDocs: options.includeDocs, conflicts: options.conflicts))
        }
        var before = 0
        if let start, options.countsRows {
            before = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(viewRows) WHERE view = ? AND NOT (\(start.0))",
                                      arguments: StatementArguments([view] + start.1)) ?? 0
        }
        return ViewResult(totalRows: total, offset: options.countsRows ? before + max(0, options.skip) : nil, rows: rows, updateSequence: nil)
    }

    func reducedRows(_ db: Database, view: Int, reduce: ViewReduce, options: ViewQueryOptions) throws -> ViewResult {
        let order = options.descending ? "DESC" : "ASC"
        let level: Int? = options.group ? nil : (options.groupLevel ?? (options.keys != nil ? nil : 0))
        // Group by the whole key (`group=true`), by the first `level`
        // elements of array keys, or all rows together (level 0).
        func groupKey(_ key: JSON) -> JSON { ViewSortKeys.groupKey(key, level: level) }
        var groups: [(key: JSON, reducer: Reducer)] = []
        var currentSortKey: [UInt8]?
        func add(_ row: some RowProtocol) throws {
            let key = try JSON(parsing: try row[1] as String)
            let value = try JSON(parsing: try row[2] as String)
            let gk = groupKey(key)
            let sk = level == 0 ? [] : gk.viewSortKey
            if currentSortKey != sk || groups.isEmpty {
                groups.append((gk, Reducer(reduce, descending: options.descending)))
                currentSortKey = sk
            }
            try groups[groups.count - 1].reducer.add(key: key, id: try row[0], value: value, sortKey: [UInt8](try row[3] as Data))
        }
        if let keys = options.keys {
            // Each key asked for is a group of its own.
            let statement = "SELECT doc, key, value, sortkey FROM \(viewRows) WHERE view = ? AND sortkey = ? ORDER BY doc \(order)"
            for key in keys {
                let cursor = try Row.fetchCursor(db, sql: statement, arguments: [view, Data(key.viewSortKey)])
                var reducer: Reducer?
                while let row = try cursor.next() {
                    if reducer == nil { reducer = Reducer(reduce, descending: options.descending) }
                    try reducer!.add(key: try JSON(parsing: try row[1] as String), id: try row[0], value: try JSON(parsing: try row[2] as String), sortKey: [UInt8](try row[3] as Data))
                }
                if let reducer { groups.append((key, reducer)) }
            }
        } else {
            let (start, end) = rangeConditions(options)
            var conditions = ["view = ?"]
            var arguments: [any DatabaseValueConvertible] = [view]
            if let start { conditions.append(start.0); arguments += start.1 }
            if let end { conditions.append(end.0); arguments += end.1 }
            let cursor = try Row.fetchCursor(db, sql: "SELECT doc, key, value, sortkey FROM \(viewRows) WHERE \(conditions.joined(separator: " AND ")) ORDER BY sortkey \(order), doc \(order)",
                                             arguments: StatementArguments(arguments))
            while let row = try cursor.next() { try add(row) }
        }
        var rows: [JSON] = []
        for (index, group) in groups.enumerated() {
            if index < options.skip { continue }
            if let limit = options.limit, rows.count >= limit { break }
            rows.append(.object(["key": group.key, "value": try group.reducer.result()]))
        }
        return ViewResult(rows: rows)
    }
}
