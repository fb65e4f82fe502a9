import Foundation
import Strata

/// A row a map function emits: its key and value.
public struct EmittedRow: Sendable, Equatable {
    /// The row's key, collated as CouchDB collates keys.
    public var key: JSON
    /// The row's value.
    public var value: JSON

    /// An emitted row.
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

/// One call of a reduce function among many made at once
/// (``DesignFunctionRunner/reduce(tenant:source:batches:rereduce:)``):
/// `[key, id]` pairs and their values, or (no keys) earlier reductions.
public struct ReduceBatch: Sendable, Equatable {
    /// The rows' `[key, id]` pairs; nil on a rereduce.
    public var keys: [JSON]?
    /// The rows' values, or the reductions to rereduce.
    public var values: [JSON]

    /// A call with the given rows (or, without keys, reductions).
    public init(keys: [JSON]?, values: [JSON]) {
        self.keys = keys
        self.values = values
    }
}

/// A reduce function run on many batches at once: for each batch, its
/// result or the function's own error.
public typealias ViewReduceBatches = @Sendable (_ batches: [ReduceBatch], _ rereduce: Bool) throws -> [Result<JSON, DocumentError>]
