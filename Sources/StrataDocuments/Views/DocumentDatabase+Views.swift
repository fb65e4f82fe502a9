import Foundation
import Strata

extension DocumentDatabase {
    /// How many changed documents are mapped per batch (one transaction each).
    static let viewBatchSize = 1000

    /// Brings the index of `group` up to date with the database: only the
    /// documents changed since it was last brought up to date are mapped
    /// again. Answers the sequence it is now up to date with.
    @discardableResult
    public func updateViewIndex(_ group: ViewGroup) throws -> Int {
        let tables = self.tables
        return try viewLocks.withLock(group.design) {
            var (groupID, seq) = try writer.write { db in try tables.prepareGroup(db, group) }
            while true {
                let changed = try writer.read { db in try tables.changedForViews(db, since: seq, limit: DocumentDatabase.viewBatchSize) }
                guard let last = changed.last else { return seq }
                let toMap = changed.compactMap(\.doc)
                let mapped = toMap.isEmpty ? [] : try group.map(toMap)
                guard mapped.count == toMap.count else {
                    throw DocumentError(.internalError, "the map functions answered \(mapped.count) results for \(toMap.count) documents")
                }
                let from = seq
                try writer.write { db in
                    // Another process may have moved the group on (or rebuilt it).
                    guard let row = try Row.fetchOne(db, sql: "SELECT id, seq FROM \(tables.viewGroups) WHERE ddoc = ?", arguments: [group.design]),
                          try row[0] as Int == groupID, try row[1] as Int == from
                    else {
                        (groupID, seq) = try tables.prepareGroup(db, group)
                        return
                    }
                    let low = DocumentTables.viewID(group: groupID, position: 0)
                    let high = DocumentTables.viewID(group: groupID + 1, position: 0)
                    let delete = "DELETE FROM \(tables.viewRows) WHERE doc = ? AND view >= ? AND view < ?"
                    let insert = "INSERT INTO \(tables.viewRows)(view, sortkey, doc, key, value) VALUES (?, ?, ?, ?, ?)"
                    var position = 0
                    for change in changed {
                        if from > 0 { try db.execute(sql: delete, arguments: [change.id, low, high]) }
                        guard change.doc != nil else { continue }
                        let perView = mapped[position]
                        position += 1
                        for (index, rows) in perView.enumerated() where index < group.views.count {
                            let view = DocumentTables.viewID(group: groupID, position: index)
                            for row in rows {
                                try db.execute(sql: insert, arguments: [view, Data(row.key.viewSortKey), change.id, row.key.text, row.value.text])
                            }
                        }
                    }
                    try db.execute(sql: "UPDATE \(tables.viewGroups) SET seq = ? WHERE id = ?", arguments: [last.seq, groupID])
                    seq = last.seq
                }
            }
        }
    }

    /// Queries the view `view` of `group` (CouchDB's `_view`), bringing its
    /// index up to date first unless `options.update` says otherwise.
    public func queryView(_ group: ViewGroup, view: String, options: ViewQueryOptions = ViewQueryOptions()) throws -> ViewResult {
        guard let position = group.views.firstIndex(of: view) else {
            throw DocumentError(.notFound, "missing_named_view")
        }
        let reduce = group.reduces[view]
        let reducing = options.reduce ?? (reduce != nil)
        if reducing, reduce == nil, options.reduce == true {
            throw DocumentError(.queryParseError, "Reduce is invalid for map-only views.")
        }
        if reducing, options.includeDocs {
            throw DocumentError(.queryParseError, "`include_docs` is invalid for reduce")
        }
        if reducing, options.keys != nil, !options.group, options.groupLevel == nil {
            throw DocumentError(.queryParseError, "Multi-key fetches for reduce views must use `group=true`")
        }
        if !reducing, options.group || options.groupLevel != nil, reduce == nil {
            throw DocumentError(.queryParseError, "Invalid use of grouping on a map view.")
        }
        if let level = options.groupLevel, level < 0 {
            throw DocumentError(.queryParseError, "Invalid value for integer: \"\(level)\"")
        }
        if options.keys == nil, options.key == nil, let start = options.startKey, let end = options.endKey {
            let c = JSON.viewCollate(start, end)
            if options.descending ? c < 0 : c > 0 {
                let reversed = options.descending ? "descending=false" : "descending=true"
                throw DocumentError(.queryParseError, "No rows can match your key range, reverse your start_key and end_key or set \(reversed)")
            }
        }

        var indexedSeq: Int?
        if options.update == .yes {
            indexedSeq = try updateViewIndex(group)
        }
        let tables = self.tables
        let result = try writer.read { db -> ViewResult in
            guard let row = try Row.fetchOne(db, sql: "SELECT id, signature, seq FROM \(tables.viewGroups) WHERE ddoc = ?", arguments: [group.design]),
                  try row[1] as String == group.signature
            else {
                // Never indexed (update=false on a new view): no rows yet.
                return reducing ? ViewResult(rows: []) : ViewResult(totalRows: 0, offset: 0, rows: [], updateSequence: options.updateSeq ? 0 : nil)
            }
            let viewID = DocumentTables.viewID(group: try row[0], position: position)
            let seq: Int = try row[2]
            var result = reducing
                ? try tables.reducedRows(db, view: viewID, reduce: reduce!, options: options)
                : try tables.mapRows(db, view: viewID, options: options)
            if options.updateSeq { result.updateSequence = indexedSeq ?? seq }
            return result
        }
        if options.update == .lazy {
            let database = self
            DispatchQueue.global().async { _ = try? database.updateViewIndex(group) }
        }
        return result
    }

    /// The state of a view group's index (`_design/{ddoc}/_info`).
    public func viewGroupInfo(design: String) throws -> ViewGroupInfo? {
        let tables = self.tables
        return try writer.read { db in
            guard let row = try Row.fetchOne(db, sql: "SELECT id, signature, seq FROM \(tables.viewGroups) WHERE ddoc = ?", arguments: [design]) else { return nil }
            let id: Int = try row[0]
            let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(tables.viewRows) WHERE view >= ? AND view < ?",
                                         arguments: [DocumentTables.viewID(group: id, position: 0), DocumentTables.viewID(group: id + 1, position: 0)]) ?? 0
            return ViewGroupInfo(signature: try row[1], updateSequence: try row[2], rowCount: count)
        }
    }

    /// Drops the indexes of view groups whose signature is not among
    /// `current` (design document id → signature): CouchDB's `_view_cleanup`.
    public func cleanUpViewIndexes(keeping current: [String: String]) throws {
        let tables = self.tables
        try writer.write { db in
            for row in try Row.fetchAll(db, sql: "SELECT id, ddoc, signature FROM \(tables.viewGroups)") {
                if current[try row[1] as String] != (try row[2] as String) { try tables.dropGroup(db, id: try row[0]) }
            }
        }
    }
}
