import Foundation
import Strata

/// Reduces one group's rows as they stream by, and the stored reductions of
/// whole blocks of rows (`ReductionTree`): built-ins keep running totals;
/// a function is called on batches of rows, then once more over the
/// batches' and blocks' results (a rereduce), as CouchDB reduces B-tree
/// nodes.
final class Reducer {
    let reduce: ViewReduce
    /// Whether rows and blocks come in descending order (what
    /// `_approx_count_distinct` compares with the one before).
    let descending: Bool
    var count = 0
    var sum: JSON?
    var stats: [Stats] = []
    var statsIsArray = false
    /// The distinct keys counted so far, and the sort key at the edge the
    /// next row or block meets.
    var distinct = 0
    var edge: [UInt8]?
    var keys: [JSON] = []
    var values: [JSON] = []
    var partials: [JSON] = []
    /// A function's or a built-in's own error met on the way, answered by
    /// ``result()`` (a stored block keeps it, as a value does).
    var failure: DocumentError?
    static let batch = 1000

    struct Stats {
        var sum = 0.0, count = 0.0, min = Double.infinity, max = -Double.infinity, sumsqr = 0.0
        mutating func add(_ x: Double) {
            sum += x; count += 1; min = Swift.min(min, x); max = Swift.max(max, x); sumsqr += x * x
        }
        mutating func merge(_ other: Stats) {
            sum += other.sum; count += other.count; min = Swift.min(min, other.min); max = Swift.max(max, other.max); sumsqr += other.sumsqr
        }
        var json: JSON {
            .object(["sum": Reducer.number(sum), "count": Reducer.number(count), "min": Reducer.number(min),
                     "max": Reducer.number(max), "sumsqr": Reducer.number(sumsqr)])
        }
    }

    init(_ reduce: ViewReduce, descending: Bool = false) {
        self.reduce = reduce
        self.descending = descending
    }

    /// Whether rows' keys are read (a function gets them).
    var needsKeys: Bool {
        if case .function = reduce { return true }
        return false
    }

    /// Whether rows' values are read (`_count` and `_approx_count_distinct`
    /// need none).
    var needsValues: Bool {
        switch reduce {
        case .count, .approxCountDistinct: return false
        default: return true
        }
    }

    func add(key: JSON, id: String, value: JSON, sortKey: [UInt8]) throws {
        guard failure == nil else { return }
        count += 1
        switch reduce {
        case .count: break
        case .sum: sum = try sum.map { try Reducer.add($0, value) } ?? Reducer.checkedSummand(value)
        case .stats: try addStats(value)
        case .approxCountDistinct:
            if edge != sortKey { distinct += 1 }
            edge = sortKey
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

    /// Adds a block's stored reduction (``partial()`` of its rows): `rows`
    /// rows whose sort keys run from `first` to `last`.
    func add(reduction: JSON, rows: Int, first: [UInt8], last: [UInt8]) throws {
        guard failure == nil else { return }
        count += rows
        switch reduce {
        case .count: break
        case .sum: sum = try sum.map { try Reducer.add($0, reduction) } ?? reduction
        case .stats: mergeStats(reduction)
        case .approxCountDistinct:
            let (near, far) = descending ? (last, first) : (first, last)
            distinct += (reduction.intValue ?? 0) - (edge == near ? 1 : 0)
            edge = far
        case .function(let f):
            if !values.isEmpty {
                partials.append(try f(keys, values, false))
                keys.removeAll(keepingCapacity: true)
                values.removeAll(keepingCapacity: true)
            }
            partials.append(reduction)
        }
    }

    /// Records a failure (the first one is kept).
    func fail(_ error: DocumentError) {
        if failure == nil { failure = error }
    }

    /// What a block stores of its rows: a value further blocks and rows
    /// combine with (the result, except for `_stats`, which keeps its
    /// running totals, and `_approx_count_distinct`, its count).
    func partial() throws -> JSON {
        if let failure { throw failure }
        switch reduce {
        case .stats:
            func n(_ d: Double) -> JSON { d.isFinite ? Reducer.number(d) : .null }
            return .object(["a": .bool(statsIsArray),
                            "s": .array(stats.map { .array([n($0.sum), n($0.count), n($0.min), n($0.max), n($0.sumsqr)]) })])
        default:
            return try result()
        }
    }

    func result() throws -> JSON {
        if let failure { throw failure }
        switch reduce {
        case .count: return .int(count)
        case .sum: return sum ?? .int(0)
        case .stats:
            if statsIsArray { return .array(stats.map(\.json)) }
            return (stats.first ?? Stats()).json
        case .approxCountDistinct: return .int(distinct)
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

    /// Merges the running totals a block stored (``partial()``).
    func mergeStats(_ state: JSON) {
        if state.objectValue?["a"]?.boolValue == true { statsIsArray = true }
        for (i, entry) in (state.objectValue?["s"]?.arrayValue ?? []).enumerated() {
            let f = entry.arrayValue ?? []
            func d(_ j: Int, _ missing: Double) -> Double { j < f.count ? f[j].doubleValue ?? missing : missing }
            while stats.count <= i { stats.append(Stats()) }
            stats[i].merge(Stats(sum: d(0, 0), count: d(1, 0), min: d(2, .infinity), max: d(3, -.infinity), sumsqr: d(4, 0)))
        }
    }

    /// A JSON number for a double: integral values without a fraction, as
    /// CouchDB writes them.
    static func number(_ d: Double) -> JSON {
        if d.rounded() == d, abs(d) < 9.0e15 { return .int(Int(d)) }
        return .number("\(d)")
    }
}
