import Foundation
import Strata

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
