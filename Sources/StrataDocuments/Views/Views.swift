import Foundation
import Strata

/// A row a map function emits: its key and value.
public struct EmittedRow: Sendable, Equatable {
    public var key: JSON
    public var value: JSON

    public init(key: JSON, value: JSON) {
        self.key = key
        self.value = value
    }
}

/// How a view's rows are reduced: CouchDB's built-ins, or a function.
public enum ViewReduce: Sendable {
    /// `_count`: the number of rows.
    case count
    /// `_sum`: the sum of the values (numbers, arrays of numbers summed
    /// element by element, or objects of those summed member by member).
    case sum
    /// `_stats`: `{sum, count, min, max, sumsqr}` of numeric values.
    case stats
    /// `_approx_count_distinct`: how many distinct keys (counted exactly here).
    case approxCountDistinct
    /// A reduce function: `keys` are `[key, id]` pairs (nil on a rereduce,
    /// when `values` are earlier reductions).
    case function(@Sendable (_ keys: [JSON]?, _ values: [JSON], _ rereduce: Bool) throws -> JSON)

    /// The built-in a design document names (`"_count"`, `"_sum"`, …), or nil.
    public init?(builtin name: String) {
        switch name.trimmingCharacters(in: .whitespacesAndNewlines) {
        case "_count": self = .count
        case "_sum": self = .sum
        case "_stats": self = .stats
        case "_approx_count_distinct": self = .approxCountDistinct
        default: return nil
        }
    }
}

/// The views of one design document, as the index needs them: how to map a
/// batch of documents and how each view reduces. Built from a design
/// document's JavaScript by the server, or from Swift closures
/// (``DesignFunctions``).
public struct ViewGroup: Sendable {
    /// The design document's id (`_design/voting`).
    public var design: String
    /// Changes whenever the functions change; the index is rebuilt then.
    public var signature: String
    /// The views' names, in the order `map` answers them.
    public var views: [String]
    /// The reduce of each view that has one.
    public var reduces: [String: ViewReduce]
    /// For each document, for each view (in `views` order), what it emits.
    public var map: @Sendable ([JSONObject]) throws -> [[[EmittedRow]]]

    public init(design: String, signature: String, views: [String], reduces: [String: ViewReduce],
                map: @escaping @Sendable ([JSONObject]) throws -> [[[EmittedRow]]]) {
        self.design = design
        self.signature = signature
        self.views = views
        self.reduces = reduces
        self.map = map
    }
}

/// Options of a view query (CouchDB's query parameters of `_view`).
public struct ViewQueryOptions: Sendable {
    /// When the index is brought up to date (`update=true|false|lazy`).
    public enum Update: String, Sendable {
        /// Before answering (the default).
        case yes = "true"
        /// Never: answer from the index as it is.
        case no = "false"
        /// After answering.
        case lazy
    }

    public var key: JSON?
    public var keys: [JSON]?
    public var startKey: JSON?
    public var endKey: JSON?
    public var startKeyDocID: String?
    public var endKeyDocID: String?
    public var inclusiveEnd = true
    public var descending = false
    public var limit: Int?
    public var skip = 0
    /// Nil: reduce when the view has a reduce.
    public var reduce: Bool?
    public var group = false
    public var groupLevel: Int?
    public var includeDocs = false
    public var conflicts = false
    public var update = Update.yes
    public var updateSeq = false

    public init(key: JSON? = nil, keys: [JSON]? = nil, startKey: JSON? = nil, endKey: JSON? = nil,
                startKeyDocID: String? = nil, endKeyDocID: String? = nil, inclusiveEnd: Bool = true,
                descending: Bool = false, limit: Int? = nil, skip: Int = 0, reduce: Bool? = nil,
                group: Bool = false, groupLevel: Int? = nil, includeDocs: Bool = false, conflicts: Bool = false,
                update: Update = .yes, updateSeq: Bool = false) {
        self.key = key
        self.keys = keys
        self.startKey = startKey
        self.endKey = endKey
        self.startKeyDocID = startKeyDocID
        self.endKeyDocID = endKeyDocID
        self.inclusiveEnd = inclusiveEnd
        self.descending = descending
        self.limit = limit
        self.skip = skip
        self.reduce = reduce
        self.group = group
        self.groupLevel = groupLevel
        self.includeDocs = includeDocs
        self.conflicts = conflicts
        self.update = update
        self.updateSeq = updateSeq
    }
}

/// What a view query answers: CouchDB's `{total_rows, offset, rows}` (map)
/// or `{rows}` (reduce).
public struct ViewResult: Sendable, Equatable {
    /// Nil for a reduced answer.
    public var totalRows: Int?
    /// Nil for a reduced answer.
    public var offset: Int?
    /// `{"id","key","value"[,"doc"]}` or, reduced, `{"key","value"}`.
    public var rows: [JSON]
    /// The sequence the index was up to date with, when asked.
    public var updateSequence: Int?

    public init(totalRows: Int?, offset: Int?, rows: [JSON], updateSequence: Int? = nil) {
        self.totalRows = totalRows
        self.offset = offset
        self.rows = rows
        self.updateSequence = updateSequence
    }

    /// CouchDB's JSON for the answer.
    public var json: JSON {
        var o = JSONObject()
        if let totalRows { o["total_rows"] = .int(totalRows) }
        if let offset { o["offset"] = .int(offset) }
        if let updateSequence { o["update_seq"] = .string(String(updateSequence)) }
        o["rows"] = .array(rows)
        return .object(o)
    }
}

/// What `_design/{ddoc}/_info` tells of a view group's index.
public struct ViewGroupInfo: Sendable, Equatable {
    public var signature: String
    public var updateSequence: Int
    public var rowCount: Int
}

extension DocumentTables {
    var viewGroups: String { "\(docs.dropLast(5))view_groups\"" }
    var viewRows: String { "\(docs.dropLast(5))view_rows\"" }

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
            if try row[3] as Bool || id.hasPrefix(DocumentTables.designPrefix) { return (id, seq, nil) }
            var doc: JSONObject = ["_id": .string(id), "_rev": .string(try row[2])]
            for (k, v) in try JSON(parsing: try row[4] as String).objectValue ?? JSONObject() { doc[k] = v }
            let attachments = DocumentTables.decodeAttachments(try row[5])
            if !attachments.isEmpty {
                var o = JSONObject()
                for (name, a) in attachments.sorted(by: { $0.key < $1.key }) {
                    o[name] = .object(["content_type": .string(a.contentType), "revpos": .int(a.revpos), "digest": .string(a.digest),
                                       "length": .int(a.length), "stub": .bool(true)])
                }
                doc["_attachments"] = .object(o)
            }
            return (id, seq, doc)
        }
    }
}

/// One lock per view group, so that one caller at a time brings an index up
/// to date (the others wait, then find it current).
final class ViewLocks: Sendable {
    private let locks = Locked<[String: Locked<Void>]>([:])

    func withLock<T>(_ key: String, _ body: () throws -> T) rethrows -> T {
        let groupLock = locks.withLock { locks -> Locked<Void> in
            if let l = locks[key] { return l }
            let l = Locked(())
            locks[key] = l
            return l
        }
        return try groupLock.withLock { _ in try body() }
    }
}

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

extension ViewResult {
    init(rows: [JSON]) {
        self.init(totalRows: nil, offset: nil, rows: rows, updateSequence: nil)
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
        let total = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(viewRows) WHERE view = ?", arguments: [view]) ?? 0
        let order = options.descending ? "DESC" : "ASC"
        var rows: [JSON] = []
        if let keys = options.keys {
            var skip = max(0, options.skip)
            let statement = "SELECT doc, key, value FROM \(viewRows) WHERE view = ? AND sortkey = ? ORDER BY doc \(order)"
            outer: for key in keys {
                let cursor = try Row.fetchCursor(db, sql: statement, arguments: [view, Data(key.viewSortKey)])
                while let row = try cursor.next() {
                    if let limit = options.limit, rows.count >= limit { break outer }
                    if skip > 0 { skip -= 1; continue }
                    rows.append(try viewRow(db, row, includeDocs: options.includeDocs, conflicts: options.conflicts))
                }
            }
            return ViewResult(totalRows: total, offset: nil, rows: rows, updateSequence: nil)
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
        if let start {
            before = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(viewRows) WHERE view = ? AND NOT (\(start.0))",
                                      arguments: StatementArguments([view] + start.1)) ?? 0
        }
        return ViewResult(totalRows: total, offset: before + max(0, options.skip), rows: rows, updateSequence: nil)
    }

    func reducedRows(_ db: Database, view: Int, reduce: ViewReduce, options: ViewQueryOptions) throws -> ViewResult {
        let order = options.descending ? "DESC" : "ASC"
        let level: Int? = options.group ? nil : (options.groupLevel ?? (options.keys != nil ? nil : 0))
        // Group by the whole key (`group=true`), by the first `level`
        // elements of array keys, or all rows together (level 0).
        func groupKey(_ key: JSON) -> JSON {
            guard let level else { return key }
            if level == 0 { return .null }
            if let array = key.arrayValue { return .array(Array(array.prefix(level))) }
            return key
        }
        var groups: [(key: JSON, reducer: Reducer)] = []
        var currentSortKey: [UInt8]?
        func add(_ row: some RowProtocol) throws {
            let key = try JSON(parsing: try row[1] as String)
            let value = try JSON(parsing: try row[2] as String)
            let gk = groupKey(key)
            let sk = level == 0 ? [] : gk.viewSortKey
            if currentSortKey != sk || groups.isEmpty {
                groups.append((gk, Reducer(reduce)))
                currentSortKey = sk
            }
            try groups[groups.count - 1].reducer.add(key: key, id: try row[0], value: value, sortKey: try row[3] as Data)
        }
        if let keys = options.keys {
            // Each key asked for is a group of its own.
            let statement = "SELECT doc, key, value, sortkey FROM \(viewRows) WHERE view = ? AND sortkey = ? ORDER BY doc \(order)"
            for key in keys {
                let cursor = try Row.fetchCursor(db, sql: statement, arguments: [view, Data(key.viewSortKey)])
                var reducer: Reducer?
                while let row = try cursor.next() {
                    if reducer == nil { reducer = Reducer(reduce) }
                    try reducer!.add(key: try JSON(parsing: try row[1] as String), id: try row[0], value: try JSON(parsing: try row[2] as String), sortKey: try row[3] as Data)
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

/// Reduces one group's rows as they stream by: built-ins keep running
/// totals; a function is called on batches of rows, then once more over
/// the batches' results (a rereduce), as CouchDB reduces B-tree nodes.
final class Reducer {
    let reduce: ViewReduce
    var count = 0
    var sum: JSON?
    var stats: [Stats] = []
    var statsIsArray = false
    var distinct = Set<Data>()
    var keys: [JSON] = []
    var values: [JSON] = []
    var partials: [JSON] = []
    static let batch = 1000

    struct Stats {
        var sum = 0.0, count = 0.0, min = Double.infinity, max = -Double.infinity, sumsqr = 0.0
        mutating func add(_ x: Double) {
            sum += x; count += 1; min = Swift.min(min, x); max = Swift.max(max, x); sumsqr += x * x
        }
        var json: JSON {
            .object(["sum": Reducer.number(sum), "count": Reducer.number(count), "min": Reducer.number(min),
                     "max": Reducer.number(max), "sumsqr": Reducer.number(sumsqr)])
        }
    }

    init(_ reduce: ViewReduce) { self.reduce = reduce }

    func add(key: JSON, id: String, value: JSON, sortKey: Data) throws {
        count += 1
        switch reduce {
        case .count: break
        case .sum: sum = try sum.map { try Reducer.add($0, value) } ?? Reducer.checkedSummand(value)
        case .stats: try addStats(value)
        case .approxCountDistinct: distinct.insert(sortKey)
        case .function(let f):
            keys.append(.array([key, .string(id)]))
            values.append(value)
            if values.count >= Reducer.batch {
                partials.append(try f(keys, values, false))
                keys.removeAll(keepingCapacity: true)
                values.removeAll(keepingCapacity: true)
            }
        }
    }

    func result() throws -> JSON {
        switch reduce {
        case .count: return .int(count)
        case .sum: return sum ?? .int(0)
        case .stats:
            if statsIsArray { return .array(stats.map(\.json)) }
            return (stats.first ?? Stats()).json
        case .approxCountDistinct: return .int(distinct.count)
        case .function(let f):
            if partials.isEmpty { return try f(keys, values, false) }
            if !values.isEmpty {
                partials.append(try f(keys, values, false))
                keys.removeAll()
                values.removeAll()
            }
            return partials.count == 1 ? partials[0] : try f(nil, partials, true)
        }
    }

    static let sumReason = "The _sum function requires that map values be numbers, arrays of numbers, or objects. Objects cannot be mixed with other data structures. Objects can be arbitrarily nested, provided that the values for all fields are themselves numbers, arrays of numbers, or objects."

    static func checkedSummand(_ value: JSON) throws -> JSON {
        switch value {
        case .number: return value
        case .array(let a):
            guard a.allSatisfy({ if case .number = $0 { return true } else { return false } }) else { throw DocumentError(.builtinReduceError, sumReason) }
            return value
        case .object(let o):
            for (_, v) in o { _ = try checkedSummand(v) }
            return value
        default: throw DocumentError(.builtinReduceError, sumReason)
        }
    }

    /// CouchDB's `_sum` of two values: numbers added, arrays element by
    /// element (the longer one's tail kept), objects member by member.
    static func add(_ a: JSON, _ b: JSON) throws -> JSON {
        switch (a, b) {
        case (.number, .number):
            return number((a.doubleValue ?? 0) + (b.doubleValue ?? 0))
        case (.array(let x), .array(let y)):
            _ = try checkedSummand(b)
            var out: [JSON] = []
            for i in 0..<max(x.count, y.count) {
                if i < x.count, i < y.count { out.append(try add(x[i], y[i])) } else { out.append(i < x.count ? x[i] : y[i]) }
            }
            return .array(out)
        case (.number, .array), (.array, .number):
            // A number sums with the first element of an array.
            let (n, arr) = a.arrayValue == nil ? (a, b.arrayValue!) : (b, a.arrayValue!)
            _ = try checkedSummand(.array(arr))
            return .array(arr.isEmpty ? [n] : [try add(n, arr[0])] + arr.dropFirst())
        case (.object(let x), .object(let y)):
            var out = x
            for (k, v) in y {
                _ = try checkedSummand(v)
                out[k] = try out[k].map { try add($0, v) } ?? v
            }
            return .object(out)
        default:
            throw DocumentError(.builtinReduceError, sumReason)
        }
    }

    func addStats(_ value: JSON) throws {
        switch value {
        case .number:
            if stats.isEmpty { stats = [Stats()] }
            stats[0].add(value.doubleValue ?? 0)
        case .array(let a) where a.allSatisfy({ $0.doubleValue != nil }):
            statsIsArray = true
            while stats.count < a.count { stats.append(Stats()) }
            for (i, x) in a.enumerated() { stats[i].add(x.doubleValue!) }
        case .object(let o) where o["sum"]?.doubleValue != nil && o["count"]?.doubleValue != nil:
            // A precomputed statistics object, as CouchDB accepts.
            if stats.isEmpty { stats = [Stats()] }
            stats[0].sum += o["sum"]!.doubleValue!
            stats[0].count += o["count"]!.doubleValue!
            stats[0].min = min(stats[0].min, o["min"]?.doubleValue ?? .infinity)
            stats[0].max = max(stats[0].max, o["max"]?.doubleValue ?? -.infinity)
            stats[0].sumsqr += o["sumsqr"]?.doubleValue ?? 0
        default:
            throw DocumentError(.builtinReduceError, "The _stats function requires that map values be numbers or arrays of numbers, not '\(value.text)'")
        }
    }

    /// A JSON number for a double: integral values without a fraction, as
    /// CouchDB writes them.
    static func number(_ d: Double) -> JSON {
        if d.rounded() == d, abs(d) < 9.0e15 { return .int(Int(d)) }
        return .number("\(d)")
    }
}
