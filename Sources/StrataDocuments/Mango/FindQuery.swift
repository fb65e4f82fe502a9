import Foundation
import Strata

/// A `_find` request.
public struct FindQuery: Sendable {
    /// The Mango selector documents must match (`selector`).
    public var selector: JSON
    /// The members each answered document keeps (`fields`); nil: all.
    public var fields: [String]?
    /// Fields with their direction (`true` ascending).
    public var sort: [(field: String, ascending: Bool)] = []
    /// At most this many documents (`limit`, 25 as in CouchDB).
    public var limit = 25
    /// Documents left out before the first answered (`skip`).
    public var skip = 0
    /// Where the previous page ended (`bookmark`, from ``FindResult``).
    public var bookmark: String?
    /// The index to use, `"ddoc"` or `"ddoc/name"` (`use_index`).
    public var useIndex: String?
    /// Whether the answer counts what was examined (`execution_stats`).
    public var executionStats = false

    /// A query with the given values; the defaults are CouchDB's.
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
    /// The matching documents (or their ``FindQuery/fields``).
    public var docs: [JSONObject]
    /// Hand it back as ``FindQuery/bookmark`` for the next page.
    public var bookmark: String
    /// CouchDB's warnings, one a line (no index used, documents examined…).
    public var warning: String?
    /// What was examined, when ``FindQuery/executionStats`` asked.
    public var executionStats: JSON?
    /// The index used, nil for a full scan.
    public var index: MangoIndex?
    /// The SQL that ran (for `_explain`): the ``statements`` joined.
    public var sql: String { statements.joined(separator: ";\n") }
    /// The SELECTs that ran, in turn: one, or one per range of the index
    /// when a comparison spans CouchDB's type ranks.
    public var statements: [String]

    /// An answer with the given values.
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
