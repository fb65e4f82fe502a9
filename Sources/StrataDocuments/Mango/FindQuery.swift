import Foundation
import Strata

/// A `_find` request.
public struct FindQuery: Sendable {
    public var selector: JSON
    public var fields: [String]?
    /// Fields with their direction (`true` ascending).
    public var sort: [(field: String, ascending: Bool)] = []
    public var limit = 25
    public var skip = 0
    public var bookmark: String?
    public var useIndex: String?
    public var executionStats = false

    public init(selector: JSON, fields: [String]? = nil, sort: [(field: String, ascending: Bool)] = [], limit: Int = 25, skip: Int = 0, bookmark: String? = nil, useIndex: String? = nil, executionStats: Bool = false) {
        self.selector = selector
        self.fields = fields
        self.sort = sort
        self.limit = limit
        self.skip = skip
        self.bookmark = bookmark
        self.useIndex = useIndex
        self.executionStats = executionStats
    }

    /// Reads CouchDB's JSON request body.
    public init(json: JSON) throws {
        guard let o = json.objectValue else { throw DocumentError(.badRequest, "Request body must be a JSON object") }
        guard let selector = o["selector"] else { throw DocumentError(.badRequest, "Missing required key: selector") }
        self.selector = selector
        if let f = o["fields"] {
            guard let a = f.arrayValue, a.allSatisfy({ $0.stringValue != nil }) else { throw DocumentError(.badRequest, "fields must be an array of strings") }
            fields = a.compactMap(\.stringValue)
        }
        if let s = o["sort"] {
            guard let a = s.arrayValue else { throw DocumentError(.badRequest, "sort must be an array") }
            for e in a {
                if let name = e.stringValue { sort.append((name, true)) }
                else if let obj = e.objectValue, obj.count == 1, let dir = obj.pairs[0].value.stringValue, dir == "asc" || dir == "desc" {
                    sort.append((obj.pairs[0].key, dir == "asc"))
                } else {
                    throw DocumentError(.badRequest, "Invalid sort field: \(e.text)")
                }
            }
        }
        if let l = o["limit"] { guard let n = l.intValue, n >= 0 else { throw DocumentError(.badRequest, "limit must be a non-negative integer") }; limit = n }
        if let s = o["skip"] { guard let n = s.intValue, n >= 0 else { throw DocumentError(.badRequest, "skip must be a non-negative integer") }; skip = n }
        bookmark = o["bookmark"]?.stringValue
        switch o["use_index"] {
        case .string(let s)?: useIndex = s
        case .array(let a)?: useIndex = a.compactMap(\.stringValue).joined(separator: "/")
        default: break
        }
        executionStats = o["execution_stats"]?.boolValue ?? false
    }
}

/// What `_find` answers.
public struct FindResult: Sendable {
    public var docs: [JSONObject]
    public var bookmark: String
    public var warning: String?
    public var executionStats: JSON?
    /// The index used, nil for a full scan.
    public var index: MangoIndex?
    /// The SQL that ran (for `_explain`): the ``statements`` joined.
    public var sql: String { statements.joined(separator: ";\n") }
    /// The SELECTs that ran, in turn: one, or one per range of the index
    /// when a comparison spans CouchDB's type ranks.
    public var statements: [String]

    public init(docs: [JSONObject], bookmark: String, warning: String? = nil, executionStats: JSON? = nil,
                index: MangoIndex? = nil, statements: [String] = []) {
        self.docs = docs
        self.bookmark = bookmark
        self.warning = warning
        self.executionStats = executionStats
        self.index = index
        self.statements = statements
    }
}
