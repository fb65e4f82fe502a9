import Foundation
import Strata

extension DocumentTables {
    /// Whether the stored reductions of view group `group` are current with
    /// its index at `seq`.
    func reductionsAreCurrent(_ db: Database, group: Int, seq: Int) throws -> Bool {
        try Int.fetchOne(db, sql: "SELECT seq FROM \(viewReduced) WHERE grp = ?", arguments: [group]) == seq
    }

    /// A reduce query answered from the view's stored reductions
    /// (``ReductionTree``): the same rows ``reducedRows(_:view:reduce:options:)``
    /// answers by reading every row, reading whole blocks where a block
    /// lies inside the range and inside one group, and stopping after
    /// `limit` groups.
    func storedReducedRows(_ db: Database, view: Int, reduce: ViewReduce, options: ViewQueryOptions) throws -> ViewResult {
        let tree = ReductionTree(db, self, view: view, reduce: reduce)
        func add(_ item: ReductionTree.Item, to reducer: Reducer) throws {
            switch item {
            case .row(let position, let key, let value):
                try reducer.add(key: reducer.needsKeys ? try JSON(parsing: key) : .null, id: position.doc,
                                value: reducer.needsValues ? try JSON(parsing: value) : .null, sortKey: position.sortKey)
            case .block(let block):
                if block.failed { throw block.error }
                let reduction: JSON
                if case .count = reduce { reduction = .null } else { reduction = try JSON(parsing: block.reduction) }
                try reducer.add(reduction: reduction, rows: block.rows, first: block.first.sortKey, last: block.last.sortKey)
            }
        }
        if let keys = options.keys {
            // Each key asked for is a group of its own.
            var groups: [JSON] = []
            for key in keys {
                let bound = ViewBound(sortKey: key.viewSortKey, doc: nil, inclusive: true)
                let reducer = Reducer(reduce, descending: options.descending)
                var found = false
                try tree.walk(lower: bound, upper: bound, descending: options.descending, sameGroup: { _, _ in true }) { item in
                    found = true
                    try add(item, to: reducer)
                    return true
                }
                if found { groups.append(.object(["key": key, "value": try reducer.result()])) }
            }
            let kept = groups.dropFirst(max(0, options.skip))
            return ViewResult(rows: Array(options.limit.map { kept.prefix(max(0, $0)) } ?? kept))
        }
        if let limit = options.limit, limit <= 0 { return ViewResult(rows: []) }
        // Group by the whole key (`group=true`), by the first `level`
        // elements of array keys, or all rows together (level 0).
        let level: Int? = options.group ? nil : (options.groupLevel ?? 0)
        func groupKey(_ key: JSON) -> JSON {
            guard let level else { return key }
            if level == 0 { return .null }
            if let array = key.arrayValue { return .array(Array(array.prefix(level))) }
            return key
        }
        func groupSortKey(_ sortKey: [UInt8]) -> ArraySlice<UInt8> {
            guard let level else { return sortKey[...] }
            if level == 0 { return [] }
            return ViewSortKeys.group(sortKey, level: level)
        }
        let (lower, upper) = reduceBounds(options)
        var rows: [JSON] = []
        var groupsSeen = 0
        var current: (sortKey: ArraySlice<UInt8>, key: JSON, reducer: Reducer)?
        func finishGroup() throws {
            if let current, groupsSeen > options.skip {
                rows.append(.object(["key": current.key, "value": try current.reducer.result()]))
            }
        }
        try tree.walk(lower: lower, upper: upper, descending: options.descending,
                      sameGroup: { level == 0 || groupSortKey($0) == groupSortKey($1) }) { item in
            let (sortKey, keyText): ([UInt8], String)
            switch item {
            case .row(let position, let key, _): (sortKey, keyText) = (position.sortKey, key)
            case .block(let block):
                (sortKey, keyText) = options.descending ? (block.last.sortKey, block.lastKey) : (block.first.sortKey, block.firstKey)
            }
            let group = groupSortKey(sortKey)
            if current == nil || current!.sortKey != group {
                try finishGroup()
                if let limit = options.limit, rows.count >= limit {
                    current = nil
                    return false
                }
                groupsSeen += 1
                current = (group, level == 0 ? .null : groupKey(try JSON(parsing: keyText)), Reducer(reduce, descending: options.descending))
            }
            // A group skipped is never reduced.
            if groupsSeen > options.skip { try add(item, to: current!.reducer) }
            return true
        }
        try finishGroup()
        return ViewResult(rows: rows)
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

/// Walks the byte strings of ``JSON/viewSortKey``.
enum ViewSortKeys {
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
