import Foundation
import Strata

extension DocumentTables {
    /// Whether the stored reductions of view group `group` are current with
    /// its index at `seq`.
    func reductionsAreCurrent(_ db: Database, group: Int, seq: Int) throws -> Bool {
        try Int.fetchOne(db, sql: "SELECT seq FROM \(viewReduced) WHERE grp = ?", arguments: [group]) == seq
    }

    /// A reduce query answered from the view's stored reductions
    /// (`ReductionTree`): the same rows ``reducedRows(_:view:reduce:options:)``
    /// answers by reading every row, reading whole blocks where a block
    /// lies inside the range and inside one group, and stopping after
    /// `limit` groups. A function run elsewhere (`batches`) is called a few
    /// hundred groups at a time.
    func storedReducedRows(_ db: Database, view: Int, reduce: ViewReduce, batches: ViewReduceBatches?, options: ViewQueryOptions) throws -> ViewResult {
        let tree = ReductionTree(db, self, view: view, reduce: reduce)
        let groups = GroupResults(reduce, batches: batches, descending: options.descending)
        if let keys = options.keys {
            // Each key asked for is a group of its own.
            for key in keys {
                let bound = ViewBound(sortKey: key.viewSortKey, doc: nil, inclusive: true)
                var found = false
                try tree.walk(lower: bound, upper: bound, descending: options.descending, sameGroup: { _, _ in true }) { item in
                    if !found { groups.begin(key: key) }
                    found = true
                    try groups.add(item)
                    return true
                }
                if found { try groups.end() }
            }
            let kept = try groups.finish().dropFirst(max(0, options.skip))
            return ViewResult(rows: Array(options.limit.map { kept.prefix(max(0, $0)) } ?? kept))
        }
        if let limit = options.limit, limit <= 0 { return ViewResult(rows: []) }
        // Group by the whole key (`group=true`), by the first `level`
        // elements of array keys, or all rows together (level 0).
        let level: Int? = options.group ? nil : (options.groupLevel ?? 0)
        func groupKey(_ key: JSON) -> JSON { ViewSortKeys.groupKey(key, level: level) }
        func groupSortKey(_ sortKey: [UInt8]) -> ArraySlice<UInt8> {
            guard let level else { return sortKey[...] }
            if level == 0 { return [] }
            return ViewSortKeys.group(sortKey, level: level)
        }
        let (lower, upper) = reduceBounds(options)
        var groupsSeen = 0
        var current: ArraySlice<UInt8>?
        try tree.walk(lower: lower, upper: upper, descending: options.descending,
                      sameGroup: { level == 0 || groupSortKey($0) == groupSortKey($1) }) { item in
            let (sortKey, keyText): ([UInt8], String)
            switch item {
            case .row(let position, let key, _): (sortKey, keyText) = (position.sortKey, key)
            case .block(let block):
                (sortKey, keyText) = options.descending ? (block.last.sortKey, block.lastKey) : (block.first.sortKey, block.firstKey)
            }
            let group = groupSortKey(sortKey)
            if current != group {
                if current != nil, groupsSeen > options.skip { try groups.end() }
                if let limit = options.limit, groups.count >= limit {
                    current = nil
                    return false
                }
                current = group
                groupsSeen += 1
                // A group skipped is never reduced.
                if groupsSeen > options.skip { groups.begin(key: level == 0 ? .null : groupKey(try JSON(parsing: keyText))) }
            }
            if groupsSeen > options.skip { try groups.add(item) }
            return true
        }
        if current != nil, groupsSeen > options.skip { try groups.end() }
        return ViewResult(rows: try groups.finish())
    }

    /// The range of a query as its low and high ends, whatever its
    /// direction.
    func reduceBounds(_ options: ViewQueryOptions) -> (lower: ViewBound?, upper: ViewBound?) {
        if let key = options.key {
            let bound = ViewBound(sortKey: key.viewSortKey, doc: nil, inclusive: true)
            return (bound, bound)
        }
        let start = options.startKey.map { ViewBound(sortKey: $0.viewSortKey, doc: options.startKeyDocID, inclusive: true) }
        let end = options.endKey.map { ViewBound(sortKey: $0.viewSortKey, doc: options.endKeyDocID, inclusive: options.inclusiveEnd) }
        return options.descending ? (end, start) : (start, end)
    }
}

/// The groups of one reduce query, reduced as they end by a ``Reducer``;
/// for a function run elsewhere, gathered and reduced a few hundred groups
/// a call (their rows, then a rereduce of each group's parts), so that a
/// query calls the query server twice instead of thrice a group.
final class GroupResults {
    let reduce: ViewReduce
    let batches: ViewReduceBatches?
    let descending: Bool
    private var rows: [JSON] = []
    private var key: JSON = .null
    private var reducer: Reducer?
    private var gathered: [Gathered] = []
    private var gatheredValues = 0

    struct Gathered {
        var key: JSON
        var keys: [JSON] = []
        var values: [JSON] = []
        var parts: [JSON] = []
    }

    init(_ reduce: ViewReduce, batches: ViewReduceBatches?, descending: Bool) {
        self.reduce = reduce
        self.batches = batches
        self.descending = descending
    }

    private var gathers: Bool {
        if batches != nil, case .function = reduce { return true }
        return false
    }

    /// How many groups have ended.
    var count: Int { rows.count + gathered.count }

    func begin(key: JSON) {
        self.key = key
        if gathers {
            gathered.append(Gathered(key: key))
        } else {
            reducer = Reducer(reduce, descending: descending)
        }
    }

    func add(_ item: ReductionTree.Item) throws {
        switch item {
        case .row(let position, let key, let value):
            if gathers {
                gathered[gathered.count - 1].keys.append(.array([try JSON(parsing: key), .string(position.doc)]))
                gathered[gathered.count - 1].values.append(try JSON(parsing: value))
                gatheredValues += 1
            } else if let reducer {
                try reducer.add(key: reducer.needsKeys ? try JSON(parsing: key) : .null, id: position.doc,
                                value: reducer.needsValues ? try JSON(parsing: value) : .null, sortKey: position.sortKey)
            }
        case .block(let block):
            if block.failed { throw block.error }
            if gathers {
                gathered[gathered.count - 1].parts.append(try JSON(parsing: block.reduction))
            } else if let reducer {
                let reduction: JSON
                if case .count = reduce { reduction = .null } else { reduction = try JSON(parsing: block.reduction) }
                try reducer.add(reduction: reduction, rows: block.rows, first: block.first.sortKey, last: block.last.sortKey)
            }
        }
    }

    func end() throws {
        if gathers {
            if gathered.count >= ReductionTree.blocksPerCall || gatheredValues >= 10 * Reducer.batch { try flush() }
        } else if let reducer {
            rows.append(.object(["key": key, "value": try reducer.result()]))
            self.reducer = nil
        }
    }

    /// The groups' rows, in order.
    func finish() throws -> [JSON] {
        try flush()
        return rows
    }

    private func flush() throws {
        guard let batches, !gathered.isEmpty else { return }
        func call(_ calls: [(group: Int, batch: ReduceBatch)], rereduce: Bool, _ answered: (Int, JSON) -> Void) throws {
            for start in stride(from: 0, to: calls.count, by: ReductionTree.blocksPerCall) {
                let chunk = calls[start..<min(start + ReductionTree.blocksPerCall, calls.count)]
                let answers = try batches(chunk.map(\.batch), rereduce)
                guard answers.count == chunk.count else {
                    throw DocumentError(.osProcessError, "the reduce function answered \(answers.count) results for \(chunk.count) batches")
                }
                for (call, answer) in zip(chunk, answers) { answered(call.group, try answer.get()) }
            }
        }
        // Each group's rows, a call's worth of rows at a time.
        var calls: [(group: Int, batch: ReduceBatch)] = []
        for (index, group) in gathered.enumerated() {
            for start in stride(from: 0, to: group.values.count, by: Reducer.batch) {
                let end = min(start + Reducer.batch, group.values.count)
                calls.append((index, ReduceBatch(keys: Array(group.keys[start..<end]), values: Array(group.values[start..<end]))))
            }
        }
        try call(calls, rereduce: false) { gathered[$0].parts.append($1) }
        // Then each group's parts together, when there is more than one.
        var values = gathered.map { $0.parts.count == 1 ? $0.parts[0] : nil }
        let rereduces = gathered.indices.filter { gathered[$0].parts.count > 1 }.map { ($0, ReduceBatch(keys: nil, values: gathered[$0].parts)) }
        try call(rereduces, rereduce: true) { values[$0] = $1 }
        for (group, value) in zip(gathered, values) { rows.append(.object(["key": group.key, "value": value ?? .null])) }
        gathered.removeAll()
        gatheredValues = 0
    }
}

/// Walks the byte strings of ``JSON/viewSortKey``.
enum ViewSortKeys {
    /// The key a row's `key` is grouped under: itself (`group=true`, nil),
    /// null (level 0: all rows), or an array key's first `level` elements.
    static func groupKey(_ key: JSON, level: Int?) -> JSON {
        guard let level else { return key }
        if level == 0 { return .null }
        if let array = key.arrayValue { return .array(Array(array.prefix(level))) }
        return key
    }

    /// The sort key of an array key's first `level` elements (the key
    /// `group_level` groups it under), or the key's own when it is not an
    /// array or has no more elements: equal for two keys exactly when they
    /// fall in one group, and ordered as the keys are.
    static func group(_ key: [UInt8], level: Int) -> ArraySlice<UInt8> {
        guard key.first == 0x06 else { return key[...] }
        var i = 1
        for _ in 0..<level {
            guard i < key.count, key[i] != 0x00, skipValue(key, &i) else { return key[...] }
        }
        guard i < key.count, key[i] != 0x00 else { return key[...] }
        // Cut after the element: the array of the first `level` elements
        // ends with the array's end mark.
        return (key[..<i] + [0x00])[...]
    }

    /// Moves `i` past the value starting there; false when the bytes end
    /// first.
    static func skipValue(_ key: [UInt8], _ i: inout Int) -> Bool {
        guard i < key.count else { return false }
        switch key[i] {
        case 0x01, 0x02, 0x03:
            i += 1
        case 0x04:
            i += 9
        case 0x05:
            i += 1
            return skipString(key, &i)
        case 0x06:
            i += 1
            while i < key.count, key[i] != 0x00 {
                guard skipValue(key, &i) else { return false }
            }
            i += 1
        case 0x07:
            i += 1
            while i < key.count, key[i] != 0x00 {
                i += 1 // a member's mark
                guard skipString(key, &i), skipValue(key, &i) else { return false }
            }
            i += 1
        default:
            return false
        }
        return i <= key.count
    }

    /// A string's three levels: four-byte primary and secondary weights
    /// (never starting with a zero byte) each ended by a zero byte, then
    /// one byte a character, ended by a zero byte.
    static func skipString(_ key: [UInt8], _ i: inout Int) -> Bool {
        for _ in 0..<2 {
            while true {
                guard i < key.count else { return false }
                if key[i] == 0x00 { i += 1; break }
                i += 4
            }
        }
        while true {
            guard i < key.count else { return false }
            let byte = key[i]
            i += 1
            if byte == 0x00 { return true }
        }
    }
}
