import Foundation
import Strata

/// The stored reductions of one reduce view, so a reduce query reads a few
/// blocks instead of every row (CouchDB keeps them in its B-tree's inner
/// nodes).
///
/// The view's rows, in index order, are cut into blocks at rows chosen by a
/// hash of their position (their key's sort key and document id): a row
/// whose hash ends in 4·k zero bits starts a block at level k (1…5), so a
/// level-1 block holds about 16 rows and a level-k block about 16 blocks of
/// level k−1. The cuts depend on the rows alone, not on the order they came
/// in, so a changed row changes the blocks it lies in (one a level) and no
/// others. Rows before the first cut of a level form a block of their own,
/// whose start is the position before all rows.
///
/// Each block stores its first and last rows' positions and keys, its row
/// count and its reduction (``Reducer/partial()``): the reduction of the
/// rows for a level-1 block, the combination (a rereduce for functions) of
/// its children's for the others. A function's or built-in's own error is
/// stored as the block's reduction, answered when a query needs the block.
///
/// A query walks down from the top level: a block wholly inside the range
/// and inside one group is taken whole; one that is not is opened (its
/// children, or its rows at level 1). A whole-view reduce reads one block,
/// a range or a group boundary about 16 blocks a level at each end.
struct ReductionTree {
    static let levels = 5
    static let bitsPerLevel = 4

    let db: Database
    let tables: DocumentTables
    let view: Int
    let reduce: ViewReduce
    /// The reduce function run on many blocks in one call, when it runs
    /// elsewhere (JavaScript): blocks are reduced a level at a time.
    let batches: ViewReduceBatches?

    init(_ db: Database, _ tables: DocumentTables, view: Int, reduce: ViewReduce, batches: ViewReduceBatches? = nil) {
        self.db = db
        self.tables = tables
        self.view = view
        self.reduce = reduce
        self.batches = batches
    }

    /// The highest level whose blocks start at position `p` (0: none).
    /// FNV-1a over the sort key and the id, then splitmix64's finalizer: the
    /// same on every machine and in every version, since stored blocks
    /// depend on it.
    static func level(of p: ViewPosition) -> Int {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in p.sortKey { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01b3 }
        h = (h ^ 0xff) &* 0x0000_0100_0000_01b3
        for b in p.doc.utf8 { h = (h ^ UInt64(b)) &* 0x0000_0100_0000_01b3 }
        h ^= h >> 30
        h &*= 0xbf58_476d_1ce4_e5b9
        h ^= h >> 27
        h &*= 0x94d0_49bb_1331_11eb
        h ^= h >> 31
        return min(levels, h.trailingZeroBitCount / bitsPerLevel)
    }

    static let blockColumns = "sortkey, doc, first_sortkey, first_doc, first_key, last_sortkey, last_doc, last_key, rows, failed, reduction"

    static func block(_ row: some RowProtocol) throws -> ReductionBlock {
        ReductionBlock(
            start: ViewPosition(sortKey: [UInt8](try row[0] as Data), doc: try row[1]),
            first: ViewPosition(sortKey: [UInt8](try row[2] as Data), doc: try row[3]), firstKey: try row[4],
            last: ViewPosition(sortKey: [UInt8](try row[5] as Data), doc: try row[6]), lastKey: try row[7],
            rows: try row[8], failed: try row[9], reduction: try row[10])
    }

    // MARK: - Keeping the blocks current

    /// The start of the block at `level` that holds position `p` (strictly
    /// before `p`: the one before a block starting at `p`).
    func container(level: Int, of p: ViewPosition, strictly: Bool = false) throws -> ViewPosition {
        let row = try Row.fetchOne(db, sql: """
            SELECT sortkey, doc FROM \(tables.viewBlocks) WHERE view = ? AND level = ? AND (sortkey, doc) \(strictly ? "<" : "<=") (?, ?)
            ORDER BY sortkey DESC, doc DESC LIMIT 1
            """, arguments: [view, level, Data(p.sortKey), p.doc])
        return try row.map { ViewPosition(sortKey: [UInt8](try $0[0] as Data), doc: try $0[1]) } ?? .beforeAll
    }

    /// Brings the blocks up to date after the rows at `changed` were
    /// deleted or inserted (in the same transaction).
    func update(changed: Set<ViewPosition>) throws {
        // The changed positions that start blocks, and whether a row is
        // still there.
        var cuts: [(position: ViewPosition, level: Int, present: Bool)] = []
        for p in changed {
            let level = Self.level(of: p)
            guard level > 0 else { continue }
            let present = try Bool.fetchOne(db, sql: "SELECT 1 FROM \(tables.viewRows) WHERE view = ? AND sortkey = ? AND doc = ? LIMIT 1",
                                            arguments: [view, Data(p.sortKey), p.doc]) ?? false
            cuts.append((p, level, present))
        }
        // The blocks changed at one level are those holding the blocks (or
        // rows) changed below it, and those before a cut that came or went.
        var dirty = changed
        for level in 1...Self.levels {
            for cut in cuts where cut.level >= level {
                if cut.present {
                    try db.execute(sql: """
                        INSERT OR IGNORE INTO \(tables.viewBlocks)(view, level, \(Self.blockColumns))
                        VALUES (?, ?, ?, ?, X'', '', '', X'', '', '', 0, 0, '')
                        """, arguments: [view, level, Data(cut.position.sortKey), cut.position.doc])
                } else {
                    try db.execute(sql: "DELETE FROM \(tables.viewBlocks) WHERE view = ? AND level = ? AND sortkey = ? AND doc = ?",
                                   arguments: [view, level, Data(cut.position.sortKey), cut.position.doc])
                }
            }
            var changedHere = Set<ViewPosition>()
            for p in dirty { changedHere.insert(try container(level: level, of: p)) }
            for cut in cuts where cut.level >= level { changedHere.insert(try container(level: level, of: cut.position, strictly: true)) }
            let starts = Array(changedHere)
            let pending = try starts.map { try contents(level: level, start: $0) }
            for (start, block) in zip(starts, try reduceBlocks(pending)) {
                if let block {
                    try write(block, level: level)
                } else {
                    try db.execute(sql: "DELETE FROM \(tables.viewBlocks) WHERE view = ? AND level = ? AND sortkey = ? AND doc = ?",
                                   arguments: [view, level, Data(start.sortKey), start.doc])
                }
            }
            dirty = changedHere
        }
    }

    /// What the block at `level` starting at `start` holds now: its rows
    /// (level 1) or its children.
    func contents(level: Int, start: ViewPosition) throws -> PendingBlock {
        let end = try Row.fetchOne(db, sql: """
            SELECT sortkey, doc FROM \(tables.viewBlocks) WHERE view = ? AND level = ? AND (sortkey, doc) > (?, ?)
            ORDER BY sortkey, doc LIMIT 1
            """, arguments: [view, level, Data(start.sortKey), start.doc])
            .map { ViewPosition(sortKey: [UInt8](try $0[0] as Data), doc: try $0[1]) }
        var block = PendingBlock(start: start)
        var arguments: [any DatabaseValueConvertible] = [view]
        if level > 1 { arguments.append(level - 1) }
        arguments += [Data(start.sortKey), start.doc]
        var range = "(sortkey, doc) >= (?, ?)"
        if let end {
            range += " AND (sortkey, doc) < (?, ?)"
            arguments += [Data(end.sortKey), end.doc]
        }
        if level == 1 {
            let cursor = try Row.fetchCursor(db, sql: "SELECT sortkey, doc, key, value FROM \(tables.viewRows) WHERE view = ? AND \(range) ORDER BY sortkey, doc",
                                             arguments: StatementArguments(arguments))
            while let row = try cursor.next() {
                block.add(ViewPosition(sortKey: [UInt8](try row[0] as Data), doc: try row[1]), key: try row[2], value: try row[3])
            }
        } else {
            let cursor = try Row.fetchCursor(db, sql: "SELECT \(Self.blockColumns) FROM \(tables.viewBlocks) WHERE view = ? AND level = ? AND \(range) ORDER BY sortkey, doc",
                                             arguments: StatementArguments(arguments))
            while let row = try cursor.next() { block.add(try Self.block(row)) }
        }
        return block
    }

    func write(_ block: ReductionBlock, level: Int) throws {
        try db.execute(sql: "INSERT OR REPLACE INTO \(tables.viewBlocks)(view, level, \(Self.blockColumns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                       arguments: [view, level, Data(block.start.sortKey), block.start.doc,
                                   Data(block.first.sortKey), block.first.doc, block.firstKey,
                                   Data(block.last.sortKey), block.last.doc, block.lastKey,
                                   block.rows, block.failed, block.reduction])
    }

    /// Every block of the view, built from its rows in one pass (a new
    /// index, or one changed too much to mend block by block): the level-1
    /// blocks as the rows stream by (reduced some hundreds at a time), then
    /// each level from the one below.
    func build() throws -> [(level: Int, block: ReductionBlock)] {
        var built: [(level: Int, block: ReductionBlock)] = []
        var below: [ReductionBlock] = []
        var pending: [PendingBlock] = []
        var open = PendingBlock(start: .beforeAll)
        func flush() throws {
            below += try reduceBlocks(pending).compactMap { $0 }
            pending.removeAll(keepingCapacity: true)
        }
        let cursor = try Row.fetchCursor(db, sql: "SELECT sortkey, doc, key, value FROM \(tables.viewRows) WHERE view = ? ORDER BY sortkey, doc",
                                         arguments: [view])
        while let row = try cursor.next() {
            let position = ViewPosition(sortKey: [UInt8](try row[0] as Data), doc: try row[1])
            if position != open.start, Self.level(of: position) > 0 {
                if open.rows > 0 { pending.append(open) }
                open = PendingBlock(start: position)
                if pending.count >= Self.blocksPerCall { try flush() }
            }
            open.add(position, key: try row[2], value: try row[3])
        }
        if open.rows > 0 { pending.append(open) }
        try flush()
        built += below.map { (1, $0) }
        for level in 2...Self.levels {
            // A block of this level starts at a child whose start is cut at
            // this level or above (or at the first child).
            var groups: [PendingBlock] = []
            for child in below {
                if groups.isEmpty {
                    groups.append(PendingBlock(start: child.start == .beforeAll || Self.level(of: child.start) < level ? .beforeAll : child.start))
                } else if child.start != .beforeAll, Self.level(of: child.start) >= level {
                    groups.append(PendingBlock(start: child.start))
                }
                groups[groups.count - 1].add(child)
            }
            below = []
            for chunk in stride(from: 0, to: groups.count, by: Self.blocksPerCall) {
                below += try reduceBlocks(Array(groups[chunk..<min(chunk + Self.blocksPerCall, groups.count)])).compactMap { $0 }
            }
            built += below.map { (level, $0) }
        }
        return built
    }

    /// How many blocks one call of a function run elsewhere reduces.
    static let blocksPerCall = 256

    /// Reduces blocks' contents: nil for an empty one. A function run
    /// elsewhere is called once for all of them (rows, then rereduces);
    /// a built-in or Swift function block by block.
    func reduceBlocks(_ blocks: [PendingBlock]) throws -> [ReductionBlock?] {
        var results = [ReductionBlock?](repeating: nil, count: blocks.count)
        // Which blocks go to the batched function, rows and rereduces apart.
        var rowBatches: [(index: Int, batch: ReduceBatch)] = []
        var rereduceBatches: [(index: Int, batch: ReduceBatch)] = []
        for (index, block) in blocks.enumerated() where block.rows > 0 {
            if let failed = block.children.first(where: \.failed) {
                results[index] = block.finished(failure: failed.error)
                continue
            }
            if batches != nil, case .function = reduce {
                if !block.children.isEmpty {
                    if block.children.count == 1 {
                        results[index] = block.finished(reduction: block.children[0].reduction)
                    } else {
                        let values = try block.children.map { try JSON(parsing: $0.reduction) }
                        rereduceBatches.append((index, ReduceBatch(keys: nil, values: values)))
                    }
                    continue
                }
                if block.leafRows.count <= Reducer.batch {
                    var keys: [JSON] = [], values: [JSON] = []
                    for row in block.leafRows {
                        keys.append(.array([try JSON(parsing: row.key), .string(row.position.doc)]))
                        values.append(try JSON(parsing: row.value))
                    }
                    rowBatches.append((index, ReduceBatch(keys: keys, values: values)))
                    continue
                }
            }
            results[index] = try reduceOne(block)
        }
        for (calls, rereduce) in [(rowBatches, false), (rereduceBatches, true)] where !calls.isEmpty {
            let answers: [Result<JSON, DocumentError>]
            do {
                answers = try batches!(calls.map(\.batch), rereduce)
            } catch let error as DocumentError where !Self.isTransient(error) {
                answers = calls.map { _ in .failure(error) }
            }
            guard answers.count == calls.count else {
                throw DocumentError(.osProcessError, "the reduce function answered \(answers.count) results for \(calls.count) batches")
            }
            for (call, answer) in zip(calls, answers) {
                switch answer {
                case .success(let value): results[call.index] = blocks[call.index].finished(reduction: value.text)
                case .failure(let error): results[call.index] = blocks[call.index].finished(failure: error)
                }
            }
        }
        return results
    }

    /// One block reduced here (a built-in, a Swift function, or a leaf too
    /// long for one call).
    func reduceOne(_ block: PendingBlock) throws -> ReductionBlock {
        let reducer = Reducer(reduce)
        do {
            for row in block.leafRows {
                try reducer.add(key: reducer.needsKeys ? try JSON(parsing: row.key) : .null, id: row.position.doc,
                                value: reducer.needsValues ? try JSON(parsing: row.value) : .null, sortKey: row.position.sortKey)
            }
            for child in block.children {
                try reducer.add(reduction: try JSON(parsing: child.reduction), rows: child.rows, first: child.first.sortKey, last: child.last.sortKey)
            }
            return block.finished(reduction: try reducer.partial().text)
        } catch {
            // A function's or built-in's own error is kept in the block;
            // what is not the rows' fault is thrown (the view's stored
            // reductions are then given up until made again).
            guard let error = error as? DocumentError, !Self.isTransient(error) else { throw error }
            return block.finished(failure: error)
        }
    }

    /// Replaces the view's blocks with `blocks` (from ``build()``).
    func replace(with blocks: [(level: Int, block: ReductionBlock)]) throws {
        try db.execute(sql: "DELETE FROM \(tables.viewBlocks) WHERE view = ?", arguments: [view])
        for (level, block) in blocks { try write(block, level: level) }
    }

    /// How many rows the view holds, from its top blocks.
    func rowCount() throws -> Int {
        try Int.fetchOne(db, sql: "SELECT coalesce(sum(rows), 0) FROM \(tables.viewBlocks) WHERE view = ? AND level = ?",
                         arguments: [view, Self.levels]) ?? 0
    }

    // MARK: - Reading

    /// What a walk over a range meets, in order: rows, or whole blocks.
    enum Item {
        case row(ViewPosition, key: String, value: String)
        case block(ReductionBlock)
    }

    /// Walks the rows between `lower` and `upper` in order (descending when
    /// asked), giving whole blocks where `sameGroup` holds for a block's
    /// first and last sort keys; stops when `visit` answers false.
    func walk(lower: ViewBound?, upper: ViewBound?, descending: Bool,
              sameGroup: ([UInt8], [UInt8]) -> Bool, visit: (Item) throws -> Bool) throws {
        let order = descending ? "DESC" : "ASC"
        // Whether the walk goes on past a block: false once it is beyond
        // the range's far end.
        func consider(_ block: ReductionBlock, level: Int) throws -> Bool {
            let belowLower = lower.map { !$0.admitsAsLower(block.last) } ?? false
            let aboveUpper = upper.map { !$0.admitsAsUpper(block.first) } ?? false
            if belowLower { return descending ? false : true }
            if aboveUpper { return descending ? true : false }
            let inside = (lower.map { $0.admitsAsLower(block.first) } ?? true) && (upper.map { $0.admitsAsUpper(block.last) } ?? true)
            if inside, sameGroup(block.first.sortKey, block.last.sortKey) { return try visit(.block(block)) }
            var conditions = ["view = ?", "(sortkey, doc) >= (?, ?)", "(sortkey, doc) <= (?, ?)"]
            var arguments: [any DatabaseValueConvertible] = [view, Data(block.start.sortKey), block.start.doc, Data(block.last.sortKey), block.last.doc]
            if level == 1 {
                if let lower { conditions.append(lower.condition(lower: true)); arguments += lower.arguments }
                if let upper { conditions.append(upper.condition(lower: false)); arguments += upper.arguments }
                let cursor = try Row.fetchCursor(db, sql: "SELECT sortkey, doc, key, value FROM \(tables.viewRows) WHERE \(conditions.joined(separator: " AND ")) ORDER BY sortkey \(order), doc \(order)",
                                                 arguments: StatementArguments(arguments))
                while let row = try cursor.next() {
                    guard try visit(.row(ViewPosition(sortKey: [UInt8](try row[0] as Data), doc: try row[1]), key: try row[2], value: try row[3])) else { return false }
                }
                return true
            }
            conditions.insert("level = ?", at: 1)
            arguments.insert(level - 1, at: 1)
            let children = try Row.fetchAll(db, sql: "SELECT \(Self.blockColumns) FROM \(tables.viewBlocks) WHERE \(conditions.joined(separator: " AND ")) ORDER BY sortkey \(order), doc \(order)",
                                            arguments: StatementArguments(arguments)).map(Self.block)
            for child in children {
                guard try consider(child, level: level - 1) else { return false }
            }
            return true
        }
        let top = try Row.fetchAll(db, sql: "SELECT \(Self.blockColumns) FROM \(tables.viewBlocks) WHERE view = ? AND level = ? ORDER BY sortkey \(order), doc \(order)",
                                   arguments: [view, Self.levels]).map(Self.block)
        for block in top {
            guard try consider(block, level: Self.levels) else { return }
        }
    }
}

/// A row's place in a view's index: its key's sort key, then its
/// document's id (SQLite's order of the `(sortkey, doc)` index: bytes, then
/// UTF-8 bytes).
struct ViewPosition: Hashable {
    var sortKey: [UInt8]
    var doc: String

    /// Before every row: the start of the blocks before a level's first cut.
    static let beforeAll = ViewPosition(sortKey: [], doc: "")

    static func compare(_ a: ViewPosition, _ b: ViewPosition) -> Int {
        if a.sortKey != b.sortKey { return a.sortKey.lexicographicallyPrecedes(b.sortKey) ? -1 : 1 }
        if a.doc == b.doc { return 0 }
        return a.doc.utf8.lexicographicallyPrecedes(b.doc.utf8) ? -1 : 1
    }
}

/// One end of a key range: a sort key, or a sort key and a document id
/// (`startkey_docid`, `endkey_docid`), included or not.
struct ViewBound {
    var sortKey: [UInt8]
    var doc: String?
    var inclusive: Bool

    private func compare(_ p: ViewPosition) -> Int {
        guard let doc else {
            if p.sortKey == sortKey { return 0 }
            return p.sortKey.lexicographicallyPrecedes(sortKey) ? -1 : 1
        }
        return ViewPosition.compare(p, ViewPosition(sortKey: sortKey, doc: doc))
    }

    /// Whether a row at `p` is inside a range starting here.
    func admitsAsLower(_ p: ViewPosition) -> Bool {
        let c = compare(p)
        return c > 0 || (c == 0 && inclusive)
    }

    /// Whether a row at `p` is inside a range ending here.
    func admitsAsUpper(_ p: ViewPosition) -> Bool {
        let c = compare(p)
        return c < 0 || (c == 0 && inclusive)
    }

    func condition(lower: Bool) -> String {
        let op = lower ? (inclusive ? ">=" : ">") : (inclusive ? "<=" : "<")
        return doc == nil ? "sortkey \(op) ?" : "(sortkey, doc) \(op) (?, ?)"
    }

    var arguments: [any DatabaseValueConvertible] {
        doc.map { [Data(sortKey), $0] } ?? [Data(sortKey)]
    }
}

/// A block as stored: where it starts, its first and last rows, how many
/// rows it holds and their reduction.
struct ReductionBlock: Equatable {
    var start: ViewPosition
    var first: ViewPosition
    var firstKey: String
    var last: ViewPosition
    var lastKey: String
    var rows: Int
    /// Whether `reduction` is the error the rows' reduction raised
    /// (`{"status":…,"error":…,"reason":…}`).
    var failed: Bool
    var reduction: String

    /// The error a failed block stores.
    var error: DocumentError {
        let o = (try? JSON(parsing: reduction))?.objectValue
        return DocumentError(status: o?["status"]?.intValue ?? 500, error: o?["error"]?.stringValue ?? "unknown_error",
                             reason: o?["reason"]?.stringValue ?? "")
    }
}

/// A block's contents before they are reduced: its rows (level 1) or its
/// children.
struct PendingBlock {
    let start: ViewPosition
    var first: (position: ViewPosition, key: String)?
    var last: (position: ViewPosition, key: String)?
    var rows = 0
    var leafRows: [(position: ViewPosition, key: String, value: String)] = []
    var children: [ReductionBlock] = []

    init(start: ViewPosition) {
        self.start = start
    }

    mutating func add(_ position: ViewPosition, key: String, value: String) {
        if first == nil { first = (position, key) }
        last = (position, key)
        rows += 1
        leafRows.append((position, key, value))
    }

    mutating func add(_ child: ReductionBlock) {
        if first == nil { first = (child.first, child.firstKey) }
        last = (child.last, child.lastKey)
        rows += child.rows
        children.append(child)
    }

    func finished(reduction: String) -> ReductionBlock {
        ReductionBlock(start: start, first: first!.position, firstKey: first!.key, last: last!.position, lastKey: last!.key,
                       rows: rows, failed: false, reduction: reduction)
    }

    func finished(failure error: DocumentError) -> ReductionBlock {
        ReductionBlock(start: start, first: first!.position, firstKey: first!.key, last: last!.position, lastKey: last!.key, rows: rows, failed: true,
                       reduction: JSON.object(["status": .int(error.status), "error": .string(error.error), "reason": .string(error.reason)]).text)
    }
}

extension ReductionTree {
    /// Whether a failure says nothing of the rows (the query server gone or
    /// out of time, a Swift error): not stored in a block.
    static func isTransient(_ error: Error) -> Bool {
        guard let error = error as? DocumentError else { return true }
        return error.error == DocumentError.Kind.osProcessError.rawValue
    }
}
