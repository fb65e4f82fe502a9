import Foundation
import Strata

extension DocumentDatabase {
    /// How many changed documents are mapped per batch (one transaction each).
    static let viewBatchSize = 1000

    /// Brings the index of `group` up to date with the database: only the
    /// documents changed since it was last brought up to date are mapped
    /// again. Answers the sequence it is now up to date with.
    ///
    /// The stored reductions of its reduce views (`ReductionTree`) are
    /// mended block by block in the same transactions when few documents
    /// changed, and made again from the rows in one pass when many did (a
    /// new index).
    @discardableResult
    public func updateViewIndex(_ group: ViewGroup) throws -> Int {
        let tables = self.tables
        let reduceViews = group.views.indices.compactMap { i in
            group.reduces[group.views[i]].map { (position: i, reduce: $0, batches: group.reduceBatches[group.views[i]]) }
        }
        return try viewLocks.withLock(group.design) {
            var (groupID, seq) = try writer.write { db in try tables.prepareGroup(db, group) }
            var mend = false
            if !reduceViews.isEmpty, seq > 0 {
                let (id, from) = (groupID, seq)
                mend = try writer.read { db in
                    guard try tables.reductionsAreCurrent(db, group: id, seq: from) else { return false }
                    let pending = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(tables.docs) WHERE seq > ?", arguments: [from]) ?? 0
                    let rows = try reduceViews.map {
                        try ReductionTree(db, tables, view: DocumentTables.viewID(group: id, position: $0.position), reduce: $0.reduce).rowCount()
                    }.min() ?? 0
                    return pending * DocumentDatabase.mendingRatio <= rows
                }
            }
            while true {
                let changed = try writer.read { db in try tables.changedForViews(db, since: seq, limit: DocumentDatabase.viewBatchSize) }
                guard let last = changed.last else { break }
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
                        mend = false
                        return
                    }
                    let low = DocumentTables.viewID(group: groupID, position: 0)
                    let high = DocumentTables.viewID(group: groupID + 1, position: 0)
                    let reduced = Set(reduceViews.map { DocumentTables.viewID(group: groupID, position: $0.position) })
                    let mending = try mend && tables.reductionsAreCurrent(db, group: groupID, seq: from)
                    // The positions of the rows that went or came, per reduce view.
                    var moved: [Int: Set<ViewPosition>] = [:]
                    let delete = "DELETE FROM \(tables.viewRows) WHERE doc = ? AND view >= ? AND view < ?"
                    let insert = "INSERT INTO \(tables.viewRows)(view, sortkey, doc, key, value) VALUES (?, ?, ?, ?, ?)"
                    var position = 0
                    for change in changed {
                        if from > 0 {
                            if mending {
                                for gone in try Row.fetchAll(db, sql: delete + " RETURNING view, sortkey", arguments: [change.id, low, high]) {
                                    let view: Int = try gone[0]
                                    if reduced.contains(view) {
                                        moved[view, default: []].insert(ViewPosition(sortKey: [UInt8](try gone[1] as Data), doc: change.id))
                                    }
                                }
                            } else {
                                try db.execute(sql: delete, arguments: [change.id, low, high])
                            }
                        }
                        guard change.doc != nil else { continue }
                        let perView = mapped[position]
                        position += 1
                        for (index, rows) in perView.enumerated() where index < group.views.count {
                            let view = DocumentTables.viewID(group: groupID, position: index)
                            for row in rows {
                                let sortKey = row.key.viewSortKey
                                try db.execute(sql: insert, arguments: [view, Data(sortKey), change.id, row.key.text, row.value.text])
                                if mending, reduced.contains(view) {
                                    moved[view, default: []].insert(ViewPosition(sortKey: sortKey, doc: change.id))
                                }
                            }
                        }
                    }
                    if mending {
                        do {
                            for view in reduced.sorted() {
                                guard let positions = moved[view], !positions.isEmpty else { continue }
                                let reduce = reduceViews.first { DocumentTables.viewID(group: groupID, position: $0.position) == view }!
                                try ReductionTree(db, tables, view: view, reduce: reduce.reduce, batches: reduce.batches).update(changed: positions)
                            }
                            try db.execute(sql: "UPDATE \(tables.viewReduced) SET seq = ? WHERE grp = ?", arguments: [last.seq, groupID])
                        } catch let error where ReductionTree.isTransient(error) {
                            // Given up here; made again from the rows below.
                            mend = false
                        }
                    }
                    try db.execute(sql: "UPDATE \(tables.viewGroups) SET seq = ? WHERE id = ?", arguments: [last.seq, groupID])
                    seq = last.seq
                }
            }
            if !reduceViews.isEmpty {
                try refreshReductions(groupID: groupID, seq: seq, views: reduceViews)
            }
            return seq
        }
    }

    /// Mending the stored reductions costs about this many times as much a
    /// changed document as making them again costs a row.
    static let mendingRatio = 32

    /// Makes the stored reductions of a group's reduce views again from
    /// their rows, unless they are current with the index at `seq` (or
    /// making them failed at `seq` for a reason outside the rows: queries
    /// then reduce the rows themselves). The blocks are made in a read
    /// transaction and written in a short write transaction.
    func refreshReductions(groupID: Int, seq: Int, views: [(position: Int, reduce: ViewReduce, batches: ViewReduceBatches?)]) throws {
        let tables = self.tables
        let state = try writer.read { db in
            try Row.fetchOne(db, sql: "SELECT seq, tried FROM \(tables.viewReduced) WHERE grp = ?", arguments: [groupID])
                .map { (seq: try $0[0] as Int, tried: try $0[1] as Int) }
        }
        if let state, state.seq == seq || state.tried == seq { return }
        func indexed(_ db: Database) throws -> Bool {
            try Int.fetchOne(db, sql: "SELECT seq FROM \(tables.viewGroups) WHERE id = ?", arguments: [groupID]) == seq
        }
        let built: [(view: Int, blocks: [(level: Int, block: ReductionBlock)])]?
        do {
            built = try writer.read { db in
                guard try indexed(db) else { return nil }
                return try views.map {
                    let view = DocumentTables.viewID(group: groupID, position: $0.position)
                    return (view, try ReductionTree(db, tables, view: view, reduce: $0.reduce, batches: $0.batches).build())
                }
            }
        } catch let error where ReductionTree.isTransient(error) {
            try writer.write { db in
                try db.execute(sql: "INSERT OR REPLACE INTO \(tables.viewReduced)(grp, seq, tried) VALUES (?, -1, ?)", arguments: [groupID, seq])
            }
            return
        }
        guard let built else { return }
        try writer.write { db in
            guard try indexed(db) else { return }
            for (view, blocks) in built {
                let reduce = views.first { DocumentTables.viewID(group: groupID, position: $0.position) == view }!.reduce
                try ReductionTree(db, tables, view: view, reduce: reduce).replace(with: blocks)
            }
            try db.execute(sql: "INSERT OR REPLACE INTO \(tables.viewReduced)(grp, seq, tried) VALUES (?, ?, -1)", arguments: [groupID, seq])
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
            var result: ViewResult
            if !reducing {
                result = try tables.mapRows(db, view: viewID, options: options)
            } else if try tables.reductionsAreCurrent(db, group: try row[0], seq: seq) {
                result = try tables.storedReducedRows(db, view: viewID, reduce: reduce!, batches: group.reduceBatches[view], options: options)
            } else {
                // Stored reductions not made (update=false, or a query
                // server that failed): every row reduced.
                result = try tables.reducedRows(db, view: viewID, reduce: reduce!, options: options)
            }
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
