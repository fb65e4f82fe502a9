import Foundation
import Strata

/// A Mango index (`_index`).
public struct MangoIndex: Sendable, Equatable {
    public var ddoc: String
    public var name: String
    public var fields: [String]
    public var partialFilterSelector: JSON?

    /// CouchDB's description of the index (`GET /{db}/_index`).
    public var json: JSON {
        var def: JSONObject = ["fields": .array(fields.map { .object([$0: .string("asc")]) })]
        if let p = partialFilterSelector { def["partial_filter_selector"] = p }
        return .object(["ddoc": .string(ddoc), "name": .string(name), "type": .string("json"), "partitioned": .bool(false), "def": .object(def)])
    }
}
