import Foundation
import Strata
@testable import StrataDocuments
import StrataTestHelpers
import Testing

/// Reduce queries answered from the stored reductions (``ReductionTree``)
/// give what reducing every row gives, whatever the grouping, range,
/// direction, skip and limit, after random writes, edits and deletions;
/// and the blocks mended write by write are the blocks a rebuild makes.
@Suite struct StoredReductionTests {
    /// Each view's reduce, and what the oracle computes for it.
    static let reduces: [(name: String, reduce: ViewReduce)] = [
        ("count", .count),
        ("sum", .sum),
        ("stats", .stats),
        ("distinct", .approxCountDistinct),
        // A function whose rereduce differs from its reduce: rows are
        // counted, counts are added.
        ("rows", .function { _, values, rereduce in
            .int(rereduce ? values.reduce(0) { $0 + ($1.intValue ?? 0) } : values.count)
        }),
    ]

    static func functions() -> DesignFunctions {
        var functions = DesignFunctions(version: "1")
        for (name, reduce) in reduces {
            functions.views[name] = .init(map: { doc, emit in
                guard let key = doc["k"], let value = doc["v"] else { return }
                emit(key, value)
                // The same key twice from one document: rows at one position.
                if doc["twice"] == .bool(true) { emit(key, .int((value.intValue ?? 0) * 2)) }
            }, reduce: reduce)
        }
        return functions
    }

    /// A key: arrays of one to three elements, or a string, a number, null.
    static func randomKey(_ random: inout SplitMix64) -> JSON {
        switch Int.random(in: 0..<10, using: &random) {
        case 0: return .string(["apple", "Banana", "cherry"][Int.random(in: 0..<3, using: &random)])
        case 1: return .int(Int.random(in: -3..<3, using: &random))
        case 2: return .null
        default:
            var elements: [JSON] = [.int(Int.random(in: 0..<5, using: &random))]
            if Bool.random(using: &random) { elements.append(.string(["x", "y", "z", "w"][Int.random(in: 0..<4, using: &random)])) }
            if Int.random(in: 0..<3, using: &random) == 0 { elements.append(.int(Int.random(in: 0..<50, using: &random))) }
            return .array(elements)
        }
    }

    static func randomDocument(_ id: String, _ random: inout SplitMix64) -> JSONObject {
        var doc: JSONObject = ["_id": .string(id), "k": randomKey(&random), "v": .int(Int.random(in: -50..<100, using: &random))]
        if Int.random(in: 0..<8, using: &random) == 0 { doc["twice"] = .bool(true) }
        return doc
    }

    /// What reducing `rows` (in order) by `reduce` gives.
    static func reduced(_ name: String, _ rows: [JSON]) -> JSON {
        let values = rows.map { $0["value"]?.intValue ?? 0 }
        switch name {
        case "count", "rows": return .int(rows.count)
        case "sum": return .int(values.reduce(0, +))
        case "stats":
            return .object(["sum": .int(values.reduce(0, +)), "count": .int(values.count), "min": .int(values.min() ?? 0),
                            "max": .int(values.max() ?? 0), "sumsqr": .int(values.reduce(0) { $0 + $1 * $1 })])
        default: return .int(Set(rows.map { $0["key"]!.viewSortKey }).count)
        }
    }

    /// The oracle: the query's rows read without reducing, grouped and
    /// reduced here.
    static func expected(_ db: DocumentDatabase, view: String, _ options: ViewQueryOptions) throws -> [JSON] {
        var plain = options
        plain.reduce = false
        plain.group = false
        plain.groupLevel = nil
        plain.skip = 0
        plain.limit = nil
        if let keys = options.keys {
            var groups: [JSON] = []
            for key in keys {
                plain.keys = [key]
                let rows = try db.view(design: "r", view: view, options: plain).rows
                if !rows.isEmpty { groups.append(["key": key, "value": reduced(view, rows)]) }
            }
            return Array(groups.dropFirst(options.skip).prefix(options.limit ?? .max))
        }
        let rows = try db.view(design: "r", view: view, options: plain).rows
        let level: Int? = options.group ? nil : (options.groupLevel ?? 0)
        // CouchDB's grouping: the whole key, nothing, or an array's head.
        func groupKey(_ key: JSON) -> JSON {
            switch (level, key) {
            case (nil, _): key
            case (0, _): .null
            case (let level?, .array(let elements)): .array(Array(elements[..<min(level, elements.count)]))
            default: key
            }
        }
        var groups: [(key: JSON, rows: [JSON])] = []
        for row in rows {
            let key = groupKey(row["key"]!)
            if let last = groups.last, JSON.viewCollate(last.key, key) == 0 {
                groups[groups.count - 1].rows.append(row)
            } else {
                groups.append((key, [row]))
            }
        }
        return groups.dropFirst(options.skip).prefix(options.limit ?? .max).map { ["key": $0.key, "value": reduced(view, $0.rows)] }
    }

    /// Random reduce queries: groupings, ranges (with document ids and an
    /// excluded end), both directions, skip and limit, and keys.
    static func randomQuery(_ random: inout SplitMix64, keys known: [JSON]) -> ViewQueryOptions {
        var options = ViewQueryOptions()
        options.descending = Bool.random(using: &random)
        switch Int.random(in: 0..<5, using: &random) {
        case 0: options.group = true
        case 1: break
        default: options.groupLevel = Int.random(in: 0...3, using: &random)
        }
        func someKey() -> JSON {
            Int.random(in: 0..<4, using: &random) == 0 || known.isEmpty ? randomKey(&random) : known[Int.random(in: 0..<known.count, using: &random)]
        }
        switch Int.random(in: 0..<6, using: &random) {
        case 0: break
        case 1: options.key = someKey()
        case 2:
            options.group = true
            options.groupLevel = nil
            options.keys = (0..<Int.random(in: 1...4, using: &random)).map { _ in someKey() }
        default:
            var (a, b) = (someKey(), someKey())
            if JSON.viewCollate(a, b) > 0 { swap(&a, &b) }
            let (start, end) = options.descending ? (b, a) : (a, b)
            if Int.random(in: 0..<4, using: &random) != 0 { options.startKey = start }
            if Int.random(in: 0..<4, using: &random) != 0 { options.endKey = end }
            if Int.random(in: 0..<4, using: &random) == 0, options.startKey != nil { options.startKeyDocID = "d\(Int.random(in: 0..<2000, using: &random))" }
            if Int.random(in: 0..<4, using: &random) == 0, options.endKey != nil { options.endKeyDocID = "d\(Int.random(in: 0..<2000, using: &random))" }
            options.inclusiveEnd = Int.random(in: 0..<3, using: &random) != 0
        }
        if Int.random(in: 0..<4, using: &random) == 0 { options.skip = Int.random(in: 0..<5, using: &random) }
        if Int.random(in: 0..<3, using: &random) == 0 { options.limit = Int.random(in: 0..<12, using: &random) }
        return options
    }

    /// The blocks stored for each reduce view against those a rebuild from
    /// the rows makes now.
    static func expectBlocksAsRebuilt(_ db: DocumentDatabase) throws {
        let group = try db.viewGroup(design: "r")
        let tables = db.tables
        try db.writer.read { sqlite in
            let groupRow = try #require(try Row.fetchOne(sqlite, sql: "SELECT id, seq FROM \(tables.viewGroups) WHERE ddoc = ?", arguments: [group.design]))
            #expect(try tables.reductionsAreCurrent(sqlite, group: try groupRow[0], seq: try groupRow[1]), "queries read the stored reductions")
            for (position, name) in group.views.enumerated() {
                let view = DocumentTables.viewID(group: try groupRow[0], position: position)
                let tree = ReductionTree(sqlite, tables, view: view, reduce: group.reduces[name]!)
                let stored = try Row.fetchAll(sqlite, sql: "SELECT \(ReductionTree.blockColumns), level FROM \(tables.viewBlocks) WHERE view = ? ORDER BY level, sortkey, doc",
                                              arguments: [view]).map { row in
                    (level: try row[11] as Int, block: try ReductionTree.block(row))
                }
                let rebuilt = try tree.build().sorted {
                    $0.level != $1.level ? $0.level < $1.level : ViewPosition.compare($0.block.start, $1.block.start) < 0
                }
                #expect(stored.count == rebuilt.count, "\(name): \(stored.count) blocks stored, \(rebuilt.count) rebuilt")
                for (a, b) in zip(stored, rebuilt) where a.level != b.level || a.block != b.block {
                    Issue.record("\(name): the stored block \(a) is not the rebuilt \(b)")
                    break
                }
            }
        }
    }

    @Test func storedReductionsAnswerAsEveryRowReduced() throws {
        let db = try DocumentDatabase(DatabaseQueue(), name: "reduce")
        try db.register(design: "r", Self.functions())
        var random = SplitMix64(seed: 34)
        var documents: [String: JSONObject] = [:]
        for i in 0..<2000 {
            let doc = Self.randomDocument("d\(i)", &random)
            documents["d\(i)"] = doc
        }
        for result in try db.bulkPut(Array(documents.values)) { _ = try result.get() }

        // Rounds of a few writes (the blocks mended), then one of many
        // (the blocks made again).
        for round in 0..<4 {
            if round > 0 {
                let changes = round == 2 ? 1000 : 30
                var writes: [JSONObject] = []
                for _ in 0..<changes {
                    let id = "d\(Int.random(in: 0..<2200, using: &random))"
                    guard !writes.contains(where: { $0["_id"] == .string(id) }) else { continue }
                    let current = try? db.document(id: id)
                    var doc = Self.randomDocument(id, &random)
                    if let rev = current?["_rev"] { doc["_rev"] = rev }
                    // A fifth deleted, the rest edited or created.
                    if current != nil, Int.random(in: 0..<5, using: &random) == 0 { doc["_deleted"] = .bool(true) }
                    writes.append(doc)
                }
                for result in try db.bulkPut(writes) { _ = try result.get() }
            }
            let known = try db.view(design: "r", view: "count", options: ViewQueryOptions(limit: 400, reduce: false)).rows.compactMap { $0["key"] }
            for (name, _) in Self.reduces {
                for _ in 0..<10 {
                    let options = Self.randomQuery(&random, keys: known)
                    let stored = try db.view(design: "r", view: name, options: options).rows
                    let expected = try Self.expected(db, view: name, options)
                    #expect(stored == expected, "round \(round), \(name): \(options)")
                }
                // The whole view, and every group of every level.
                for options in [ViewQueryOptions(), ViewQueryOptions(group: true), ViewQueryOptions(groupLevel: 1), ViewQueryOptions(groupLevel: 2)] {
                    #expect(try db.view(design: "r", view: name, options: options).rows == (try Self.expected(db, view: name, options)), "round \(round), \(name): \(options)")
                }
            }
            try Self.expectBlocksAsRebuilt(db)
        }
    }

    /// A built-in's own error (`_sum` of text) is stored in the blocks
    /// that hold the row and answered by the queries that reach it, as
    /// when every row is reduced; queries that do not reach it answer.
    @Test func aReduceErrorIsAnsweredWhereItsRowIs() throws {
        let db = try DocumentDatabase(DatabaseQueue(), name: "errors")
        var functions = DesignFunctions(version: "1")
        functions.views["sum"] = .init(map: { doc, emit in emit(doc["k"] ?? .null, doc["v"] ?? .null) }, reduce: .sum)
        try db.register(design: "r", functions)
        var docs: [JSONObject] = (0..<500).map { ["_id": .string("d\($0)"), "k": .int($0), "v": .int(1)] }
        docs.append(["_id": "bad", "k": 250, "v": "text"])
        for result in try db.bulkPut(docs) { _ = try result.get() }
        #expect(throws: DocumentError(.builtinReduceError, Reducer.sumReason)) { try db.view(design: "r", view: "sum") }
        #expect(throws: DocumentError(.builtinReduceError, Reducer.sumReason)) { try db.view(design: "r", view: "sum", options: ViewQueryOptions(startKey: 200, endKey: 300)) }
        #expect(try db.view(design: "r", view: "sum", options: ViewQueryOptions(endKey: 249)).rows == [["key": .null, "value": 250]])
        #expect(try db.view(design: "r", view: "sum", options: ViewQueryOptions(startKey: 251)).rows == [["key": .null, "value": 249]])
        #expect(try db.view(design: "r", view: "sum", options: ViewQueryOptions(limit: 3, group: true)).rows.count == 3)
        // Mended away: the row's value becomes a number.
        var bad = try db.document(id: "bad")
        bad["v"] = 1
        try db.put(bad)
        #expect(try db.view(design: "r", view: "sum").rows == [["key": .null, "value": 501]])
        try Self.expectBlocksAsRebuilt(db)
    }

    /// A Swift reduce that throws an error of its own type (not the rows'
    /// fault as far as the index can tell): nothing is stored, and queries
    /// reduce the rows themselves and throw it, as before.
    @Test func aSwiftErrorLeavesTheRowsToBeReducedByTheQuery() throws {
        struct Refused: Error, Equatable {}
        let db = try DocumentDatabase(DatabaseQueue(), name: "swift_errors")
        var functions = DesignFunctions(version: "1")
        functions.views["v"] = .init(map: { doc, emit in emit(doc["k"] ?? .null, doc["v"] ?? .null) },
                                     reduce: .function { _, values, _ in
                                         if values.contains(.string("no")) { throw Refused() }
                                         return .int(values.count)
                                     })
        try db.register(design: "r", functions)
        for result in try db.bulkPut((0..<100).map { ["_id": .string("d\($0)"), "k": .int($0), "v": $0 == 50 ? "no" : 1] }) { _ = try result.get() }
        #expect(throws: Refused()) { try db.view(design: "r", view: "v") }
        #expect(try db.view(design: "r", view: "v", options: ViewQueryOptions(endKey: 40)).rows == [["key": .null, "value": 41]])
    }

    /// A purge deletes view rows outside the index's sequence: the stored
    /// reductions are made again before the next query.
    @Test func aPurgeIsReducedAway() throws {
        let db = try DocumentDatabase(DatabaseQueue(), name: "purge")
        var functions = DesignFunctions(version: "1")
        functions.views["sum"] = .init(map: { doc, emit in emit(doc["k"] ?? .null, doc["v"] ?? .null) }, reduce: .sum)
        try db.register(design: "r", functions)
        for result in try db.bulkPut((0..<300).map { ["_id": .string("d\($0)"), "k": .int($0), "v": .int($0)] }) { _ = try result.get() }
        #expect(try db.view(design: "r", view: "sum").rows == [["key": .null, "value": 44850]])
        let rev = try #require(try db.document(id: "d299")["_rev"]?.stringValue)
        _ = try db.purge(["d299": [rev]])
        #expect(try db.view(design: "r", view: "sum").rows == [["key": .null, "value": 44551]])
        try Self.expectBlocksAsRebuilt(db)
    }

    /// The sort key of an array key's first elements, for `group_level`.
    @Test func groupSortKeysCutArraysAfterTheirLevel() {
        let keys: [JSON] = [[1, "a", 3], [1, "a"], [1], [], ["é", ["x", 1], ["k": 2]], "text", 5, .null]
        for key in keys {
            for level in 1...4 {
                let cut: JSON = key.arrayValue.map { $0.count > level ? .array(Array($0.prefix(level))) : key } ?? key
                #expect(Array(ViewSortKeys.group(key.viewSortKey, level: level)) == cut.viewSortKey, "\(key) at level \(level)")
            }
        }
    }
}
