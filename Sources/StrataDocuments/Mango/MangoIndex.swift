import Foundation
import Strata

/// A Mango index (`_index`).
public struct MangoIndex: Sendable, Equatable {
    /// The design document that holds it (`_design/…`).
    public var ddoc: String
    /// Its name within the design document.
    public var name: String
    /// The fields it orders documents by.
    public var fields: [String]
    /// Only documents matching this selector are indexed
    /// (`partial_filter_selector`).
    public var partialFilterSelector: JSON?

    /// CouchDB's description of the index (`GET /{db}/_index`).
    public var json: JSON {
        var def: JSONObject = ["fields": .array(fields.map { .object([$0: .string("asc")]) })]
        if let p = partialFilterSelector { def["partial_filter_selector"] = p }
        return .object(["ddoc": .string(ddoc), "name": .string(name), "type": .string("json"), "partitioned": .bool(false), "def": .object(def)])
    }
}
