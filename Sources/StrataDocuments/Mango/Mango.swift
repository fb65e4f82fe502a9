import Foundation
import Strata

/// A Mango selector (CouchDB's `_find` query language), parsed once.
///
/// Every operator CouchDB documents is evaluated here, in Swift, with
/// CouchDB's semantics (comparisons by CouchDB's collation, a missing field
/// matching only `$exists: false`). The comparisons SQLite can do are also
/// compiled to SQL over SQLite's JSON functions, so that an index made by
/// `_index` turns a `_find` into an index search.
public struct MangoSelector: Sendable {
    indirect enum Node: Sendable {
        case and([Node])
        case or([Node])
        case nor([Node])
        case not(Node)
        case field([String], Node)
        case op(Operator)
        case elemMatch(Node)
        case allMatch(Node)
    }

    enum Operator: Sendable {
        case eq(JSON), ne(JSON), gt(JSON), gte(JSON), lt(JSON), lte(JSON)
        case exists(Bool), type(String), `in`([JSON]), nin([JSON]), all([JSON]), size(Int)
        case regex(String), mod(Int, Int), beginsWith(String)
    }

    let root: Node
    /// The selector as given.
    public let json: JSON

    /// Parses a selector; throws `invalid_operator` for an unknown operator
    /// and `bad_request` for a malformed argument.
    public init(_ json: JSON) throws {
        guard let object = json.objectValue else { throw DocumentError(.badRequest, "selector must be a JSON object") }
        self.json = json
        root = .and(try MangoSelector.parse(object))
    }

    /// The selector as CouchDB normalizes it (what `_explain` shows): every
    /// condition an explicit operator on a dotted path, several conditions
    /// under `$and`. `{"type":"Person"}` becomes `{"type":{"$eq":"Person"}}`.
    public var normalized: JSON { MangoSelector.render(root, path: []) }

    static func render(_ node: Node, path: [String]) -> JSON {
        func atPath(_ condition: JSON) -> JSON {
            guard !path.isEmpty else { return condition }
            let key = path.map { $0.replacingOccurrences(of: ".", with: "\\.") }.joined(separator: ".")
            return .object([key: condition])
        }
        switch node {
        case .and(let nodes):
            let parts = nodes.map { render($0, path: path) }
            return parts.count == 1 ? parts[0] : .object(["$and": .array(parts)])
        case .or(let nodes): return .object(["$or": .array(nodes.map { render($0, path: path) })])
        case .nor(let nodes): return .object(["$nor": .array(nodes.map { render($0, path: path) })])
        case .not(let inner): return .object(["$not": render(inner, path: path)])
        case .field(let more, let inner): return render(inner, path: path + more)
        case .elemMatch(let inner): return atPath(.object(["$elemMatch": render(inner, path: [])]))
        case .allMatch(let inner): return atPath(.object(["$allMatch": render(inner, path: [])]))
        case .op(let op):
            let (name, argument): (String, JSON)
            switch op {
            case .eq(let v): (name, argument) = ("$eq", v)
            case .ne(let v): (name, argument) = ("$ne", v)
            case .gt(let v): (name, argument) = ("$gt", v)
            case .gte(let v): (name, argument) = ("$gte", v)
            case .lt(let v): (name, argument) = ("$lt", v)
            case .lte(let v): (name, argument) = ("$lte", v)
            case .exists(let b): (name, argument) = ("$exists", .bool(b))
            case .type(let t): (name, argument) = ("$type", .string(t))
            case .in(let list): (name, argument) = ("$in", .array(list))
            case .nin(let list): (name, argument) = ("$nin", .array(list))
            case .all(let list): (name, argument) = ("$all", .array(list))
            case .size(let n): (name, argument) = ("$size", .int(n))
            case .regex(let r): (name, argument) = ("$regex", .string(r))
            case .mod(let d, let r): (name, argument) = ("$mod", .array([.int(d), .int(r)]))
            case .beginsWith(let p): (name, argument) = ("$beginsWith", .string(p))
            }
            return atPath(.object([name: argument]))
        }
    }

    static func splitPath(_ field: String) -> [String] {
        var parts: [String] = []
        var current = ""
        var escaped = false
        for ch in field {
            if escaped { current.append(ch); escaped = false }
            else if ch == "\\" { escaped = true }
            else if ch == "." { parts.append(current); current = "" }
            else { current.append(ch) }
        }
        parts.append(current)
        return parts
    }

    static func parse(_ object: JSONObject) throws -> [Node] {
        var nodes: [Node] = []
        for (key, value) in object {
            if key.hasPrefix("$") {
                nodes.append(try parseOperator(key, value))
            } else {
                let path = splitPath(key)
                if let inner = value.objectValue, !inner.isEmpty {
                    nodes.append(.field(path, .and(try parse(inner))))
                } else {
                    nodes.append(.field(path, .op(.eq(value))))
                }
            }
        }
        return nodes
    }

    static func selectors(_ value: JSON, _ op: String) throws -> [Node] {
        guard let array = value.arrayValue else { throw DocumentError(.badRequest, "\(op) needs an array of selectors") }
        return try array.map { element in
            guard let o = element.objectValue else { throw DocumentError(.badRequest, "\(op) needs an array of selectors") }
            return .and(try parse(o))
        }
    }

    static func parseOperator(_ op: String, _ value: JSON) throws -> Node {
        func array() throws -> [JSON] {
            guard let a = value.arrayValue else { throw DocumentError(.badRequest, "Argument of \(op) must be an array") }
            return a
        }
        func sub() throws -> Node {
            guard let o = value.objectValue else { throw DocumentError(.badRequest, "\(op) needs a selector") }
            return .and(try parse(o))
        }
        switch op {
        case "$and": return .and(try selectors(value, op))
        case "$or": return .or(try selectors(value, op))
        case "$nor": return .nor(try selectors(value, op))
        case "$not": return .not(try sub())
        case "$elemMatch": return .elemMatch(try sub())
        case "$allMatch": return .allMatch(try sub())
        case "$eq": return .op(.eq(value))
        case "$ne": return .op(.ne(value))
        case "$gt": return .op(.gt(value))
        case "$gte": return .op(.gte(value))
        case "$lt": return .op(.lt(value))
        case "$lte": return .op(.lte(value))
        case "$exists":
            guard let b = value.boolValue else { throw DocumentError(.badRequest, "Argument of $exists must be a boolean") }
            return .op(.exists(b))
        case "$type":
            guard let t = value.stringValue, ["null", "boolean", "number", "string", "array", "object"].contains(t) else {
                throw DocumentError(.badRequest, "Invalid type for $type: \(value.text)")
            }
            return .op(.type(t))
        case "$in": return .op(.in(try array()))
        case "$nin": return .op(.nin(try array()))
        case "$all": return .op(.all(try array()))
        case "$size":
            guard let n = value.intValue, n >= 0 else { throw DocumentError(.badRequest, "Argument of $size must be a non-negative integer") }
            return .op(.size(n))
        case "$regex":
            guard let pattern = value.stringValue, (try? NSRegularExpression(pattern: pattern)) != nil else {
                throw DocumentError(.badRequest, "Invalid regular expression for $regex: \(value.text)")
            }
            return .op(.regex(pattern))
        case "$mod":
            guard let a = value.arrayValue, a.count == 2, let d = a[0].intValue, let r = a[1].intValue, d != 0 else {
                throw DocumentError(.badRequest, "Argument of $mod must be [divisor, remainder] with a non-zero divisor")
            }
            return .op(.mod(d, r))
        case "$beginsWith":
            guard let p = value.stringValue else { throw DocumentError(.badRequest, "Argument of $beginsWith must be a string") }
            return .op(.beginsWith(p))
        default:
            throw DocumentError(.invalidOperator, "Invalid operator: \(op)")
        }
    }

    /// Whether `document` matches.
    public func matches(_ document: JSON) -> Bool {
        MangoSelector.evaluate(root, document)
    }

    static func evaluate(_ node: Node, _ value: JSON?) -> Bool {
        switch node {
        case .and(let nodes): return nodes.allSatisfy { evaluate($0, value) }
        case .or(let nodes): return nodes.contains { evaluate($0, value) }
        case .nor(let nodes): return !nodes.contains { evaluate($0, value) }
        case .not(let inner): return !evaluate(inner, value)
        case .field(let path, let inner):
            var current = value
            for key in path {
                current = current?.objectValue?[key]
            }
            return evaluate(inner, current)
        case .elemMatch(let inner):
            guard let a = value?.arrayValue else { return false }
            return a.contains { evaluate(inner, $0) }
        case .allMatch(let inner):
            guard let a = value?.arrayValue, !a.isEmpty else { return false }
            return a.allSatisfy { evaluate(inner, $0) }
        case .op(let op):
            guard let value else {
                if case .exists(let b) = op { return !b }
                return false
            }
            return apply(op, value)
        }
    }

    static func apply(_ op: Operator, _ v: JSON) -> Bool {
        switch op {
        case .eq(let a): return JSON.collate(v, a) == 0
        case .ne(let a): return JSON.collate(v, a) != 0
        case .gt(let a): return JSON.collate(v, a) > 0
        case .gte(let a): return JSON.collate(v, a) >= 0
        case .lt(let a): return JSON.collate(v, a) < 0
        case .lte(let a): return JSON.collate(v, a) <= 0
        case .exists(let b): return b
        case .type(let t):
            switch v {
            case .null: return t == "null"
            case .bool: return t == "boolean"
            case .number: return t == "number"
            case .string: return t == "string"
            case .array: return t == "array"
            case .object: return t == "object"
            }
        case .in(let list):
            if let a = v.arrayValue { return a.contains { e in list.contains { JSON.collate(e, $0) == 0 } } }
            return list.contains { JSON.collate(v, $0) == 0 }
        case .nin(let list):
            if let a = v.arrayValue { return !a.contains { e in list.contains { JSON.collate(e, $0) == 0 } } }
            return !list.contains { JSON.collate(v, $0) == 0 }
        case .all(let list):
            guard let a = v.arrayValue else { return false }
            return list.allSatisfy { want in a.contains { JSON.collate($0, want) == 0 } }
        case .size(let n): return v.arrayValue?.count == n
        case .regex(let pattern):
            guard let s = v.stringValue, let re = try? NSRegularExpression(pattern: pattern) else { return false }
            return re.firstMatch(in: s, range: NSRange(s.startIndex..., in: s)) != nil
        case .mod(let d, let r):
            guard case .number(let text) = v, let i = Int(text) else { return false }
            return i % d == r
        case .beginsWith(let p): return v.stringValue?.hasPrefix(p) ?? false
        }
    }

    // MARK: SQL

    /// The fields the top level of the selector constrains (for choosing an
    /// index): a field counts when a document lacking it cannot match.
    var constrainedFields: Set<String> {
        var out = Set<String>()
        func visit(_ node: Node, _ prefix: [String]) {
            switch node {
            case .and(let nodes): nodes.forEach { visit($0, prefix) }
            case .field(let path, let inner): visit(inner, prefix + path)
            case .op(let op):
                if case .exists(false) = op { return }
                out.insert(prefix.joined(separator: "."))
            default: return
            }
        }
        visit(root, [])
        return out
    }

    /// SQL conditions implied by the selector (a prefilter: rows it keeps
    /// are checked again by ``matches(_:)``), with their arguments.
    func sqlConditions() -> [(sql: String, arguments: [(any DatabaseValueConvertible)?], path: [String], op: Operator)] {
        var out: [(sql: String, arguments: [(any DatabaseValueConvertible)?], path: [String], op: Operator)] = []
        func visit(_ node: Node, _ prefix: [String]) {
            switch node {
            case .and(let nodes): nodes.forEach { visit($0, prefix) }
            case .field(let path, let inner): visit(inner, prefix + path)
            case .op(let op):
                guard let field = MangoSQL.Field(prefix) else { return }
                if let c = MangoSQL.condition(op, field) { out.append((c.sql, c.arguments, prefix, op)) }
            default: return
            }
        }
        visit(root, [])
        return out
    }
}

/// How Mango fields become SQL over the winning body of each document.
enum MangoSQL {
    struct Field {
        let path: [String]
        init?(_ path: [String]) {
            guard !path.isEmpty, path.allSatisfy({ !$0.isEmpty && !$0.contains("\"") && !$0.contains("'") }) else { return nil }
            self.path = path
        }
        var isID: Bool { path == ["_id"] }
        var jsonPath: String { "$" + path.map { ".\"\($0)\"" }.joined() }
        /// The CouchDB collation rank of the field's type, NULL when absent.
        var rank: String {
            if isID { return "4" }
            return "(CASE json_type(body, '\(jsonPath)') WHEN 'null' THEN 0 WHEN 'false' THEN 1 WHEN 'true' THEN 2 WHEN 'integer' THEN 3 WHEN 'real' THEN 3 WHEN 'text' THEN 4 WHEN 'array' THEN 5 WHEN 'object' THEN 6 END)"
        }
        /// The field's value, its text compared and sorted in CouchDB's
        /// collation (`COLLATE couch`, as Mango indexes are built). The
        /// `_id` keeps the byte order of `_all_docs`, which is what CouchDB
        /// reads for a range or a sort on `_id`.
        var value: String { isID ? "id" : "json_extract(body, '\(jsonPath)') COLLATE couch" }
        /// The value with its text compared byte by byte.
        var bytes: String { isID ? "id" : "json_extract(body, '\(jsonPath)')" }
    }

    /// The rank and SQL value of a scalar JSON argument; nil for arrays and
    /// objects (left to the Swift matcher).
    static func scalar(_ json: JSON) -> (rank: Int, value: (any DatabaseValueConvertible)?)? {
        switch json {
        case .null: return (0, nil)
        case .bool(let b): return (b ? 2 : 1, b ? 1 : 0)
        case .number(let n):
            if let i = Int(n) { return (3, i) }
            if let d = Double(n), d.isFinite { return (3, d) }
            return nil
        case .string(let s): return (4, s)
        default: return nil
        }
    }

    static func condition(_ op: MangoSelector.Operator, _ f: Field) -> (sql: String, arguments: [(any DatabaseValueConvertible)?])? {
        func compare(_ sqlOp: String, _ a: JSON) -> (sql: String, arguments: [(any DatabaseValueConvertible)?])? {
            guard let (rank, value) = scalar(a) else { return nil }
            if rank <= 2 { // null, false, true: the rank says it all
                return ("\(f.rank) \(sqlOp) \(rank)", [])
            }
            if sqlOp == "=" { return ("\(f.rank) = \(rank) AND \(f.value) = ?", [value]) }
            return ("(\(f.rank), \(f.value)) \(sqlOp) (\(rank), ?)", [value])
        }
        switch op {
        case .eq(let a): return compare("=", a)
        case .gt(let a): return compare(">", a)
        case .gte(let a): return compare(">=", a)
        case .lt(let a): return compare("<", a)
        case .lte(let a): return compare("<=", a)
        case .exists(true): return ("\(f.rank) IS NOT NULL", [])
        case .exists(false): return f.isID ? nil : ("\(f.rank) IS NULL", [])
        case .beginsWith(let p):
            // A string starting with p is in [p, p + U+10FFFF) by bytes,
            // and not before p in the collation: the latter is the index's
            // range.
            if f.isID { return ("id >= ? AND id < ?", [p, p + "\u{10FFFF}"]) }
            return ("\(f.rank) = 4 AND \(f.value) >= ? AND \(f.bytes) >= ? AND \(f.bytes) < ?", [p, p, p + "\u{10FFFF}"])
        default: return nil
        }
    }
}

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
        return .object(["ddoc": .string(ddoc), "name": .string(name), "type": .string("json"), "def": .object(def)])
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

extension DocumentTables {
    func mangoIndexes(_ db: Database) throws -> [(MangoIndex, String)] {
        try Row.fetchAll(db, sql: "SELECT ddoc, name, definition, predicate FROM \(indexes) ORDER BY ddoc, name").map { row in
            let def = try JSON(parsing: try row[2] as String)
            return (MangoIndex(ddoc: try row[0], name: try row[1], fields: def["fields"]?.arrayValue?.compactMap(\.stringValue) ?? [],
                               partialFilterSelector: def["partial_filter_selector"]), try row[3])
        }
    }

    func partialSQL(_ selector: JSON?) throws -> (String, [(any DatabaseValueConvertible)?]) {
        guard let selector else { return ("", []) }
        let conditions = try MangoSelector(selector).sqlConditions().map { (sql: $0.sql, arguments: $0.arguments) }
        guard !conditions.isEmpty else { return ("", []) }
        return (" AND " + conditions.map { "(\($0.sql))" }.joined(separator: " AND "), conditions.flatMap(\.arguments))
    }

    static func literal(_ v: (any DatabaseValueConvertible)?) -> String {
        switch v {
        case nil: return "NULL"
        case let i as Int: return String(i)
        case let d as Double: return "\(d)"
        case let s as String: return "'" + s.replacingOccurrences(of: "'", with: "''") + "'"
        default: return "NULL"
        }
    }

    func createIndex(_ db: Database, fields: [String], ddoc: String?, name: String?, partialFilterSelector: JSON?) throws -> (result: String, ddoc: String, name: String) {
        guard !fields.isEmpty else { throw DocumentError(.badRequest, "Index fields must not be empty") }
        var def: JSONObject = ["fields": .array(fields.map(JSON.string))]
        if let p = partialFilterSelector { def["partial_filter_selector"] = p }
        let hash = MD5.hex(Array(JSON.object(def).canonicalText.utf8))
        let ddocID = DocumentTables.designID(ddoc ?? hash)
        let indexName = name ?? hash
        if let existing = try String.fetchOne(db, sql: "SELECT definition FROM \(indexes) WHERE ddoc = ? AND name = ?", arguments: [ddocID, indexName]) {
            if existing == JSON.object(def).text { return ("exists", ddocID, indexName) }
            throw DocumentError(.badRequest, "an index named \(indexName) already exists in \(ddocID) with other fields")
        }
        let (sql, whereText) = try mangoIndexSQL(ddoc: ddocID, name: indexName, fields: fields, partialFilterSelector: partialFilterSelector)
        try db.execute(sql: sql)
        try db.execute(sql: "INSERT INTO \(indexes)(ddoc, name, definition, predicate) VALUES (?, ?, ?, ?)",
                       arguments: [ddocID, indexName, JSON.object(def).text, whereText])
        return ("created", ddocID, indexName)
    }

    /// The SQLite index of a Mango index: its name.
    func mangoIndexName(ddoc: String, name: String) -> String {
        "\(docs.dropLast())_idx_\(MD5.hex(Array((ddoc + "/" + name).utf8)).prefix(16))\""
    }

    /// The `CREATE INDEX` of a Mango index, and its `WHERE`.
    func mangoIndexSQL(ddoc: String, name: String, fields: [String], partialFilterSelector: JSON?) throws -> (sql: String, whereText: String) {
        var columns: [String] = []
        for field in fields {
            guard let f = MangoSQL.Field(MangoSelector.splitPath(field)) else { throw DocumentError(.badRequest, "Invalid index field: \(field)") }
            columns.append(f.rank)
            if !f.isID { columns.append(f.value) }
        }
        // The id last: rows equal on every field come in id order, so the
        // index gives the whole ORDER BY and SQLite needs no sort.
        if !fields.contains("_id") { columns.append("id") }
        // Partial indexes need their WHERE as literals; the same text is
        // added to queries through that index so SQLite sees it is implied.
        let (partial, arguments) = try partialSQL(partialFilterSelector)
        var whereText = "deleted = 0" + partial
        for a in arguments { whereText = whereText.replacingFirst("?", with: DocumentTables.literal(a)) }
        return ("CREATE INDEX \(mangoIndexName(ddoc: ddoc, name: name)) ON \(docs)(\(columns.joined(separator: ", "))) WHERE \(whereText)", whereText)
    }

    /// Builds again the Mango indexes whose SQLite index is not the one
    /// this version makes: those of files written before strings were
    /// indexed in CouchDB's collation (`COLLATE couch`), which would still
    /// answer rightly but sort every query instead of reading the index in
    /// order.
    func rebuildOutdatedMangoIndexes(_ db: Database) throws {
        for (index, predicate) in try mangoIndexes(db) {
            let (sql, whereText) = try mangoIndexSQL(ddoc: index.ddoc, name: index.name, fields: index.fields, partialFilterSelector: index.partialFilterSelector)
            let name = mangoIndexName(ddoc: index.ddoc, name: index.name)
            let existing = try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?", arguments: [String(name.dropFirst().dropLast())])
            if existing == sql, predicate == whereText { continue }
            try db.execute(sql: "DROP INDEX IF EXISTS \(name)")
            try db.execute(sql: sql)
            try db.execute(sql: "UPDATE \(indexes) SET predicate = ? WHERE ddoc = ? AND name = ?", arguments: [whereText, index.ddoc, index.name])
        }
    }

    func deleteIndex(_ db: Database, ddoc: String, name: String) throws {
        let ddocID = DocumentTables.designID(ddoc)
        guard try String.fetchOne(db, sql: "SELECT name FROM \(indexes) WHERE ddoc = ? AND name = ?", arguments: [ddocID, name]) != nil else {
            throw DocumentError(.notFound, "Index not found")
        }
        try db.execute(sql: "DROP INDEX IF EXISTS \(mangoIndexName(ddoc: ddocID, name: name))")
        try db.execute(sql: "DELETE FROM \(indexes) WHERE ddoc = ? AND name = ?", arguments: [ddocID, name])
    }

    func find(_ db: Database, _ query: FindQuery, explainOnly: Bool = false) throws -> FindResult {
        let selector = try MangoSelector(query.selector)
        let constrained = selector.constrainedFields
        let sortFields = query.sort.map(\.field)
        if Set(query.sort.map(\.ascending)).count > 1 {
            throw DocumentError(.badRequest, "Sorts currently only support a single direction for all fields.")
        }
        let ascending = query.sort.first?.ascending ?? true
        // Choose an index: every field of it constrained by the selector or
        // named by the sort, and the sort a prefix of its fields.
        var chosen: (MangoIndex, String)?
        var warning: String?
        let all = try mangoIndexes(db)
        if let wanted = query.useIndex {
            chosen = all.first { wanted == $0.0.name || wanted == $0.0.ddoc || wanted == "\($0.0.ddoc)/\($0.0.name)" || DocumentTables.designPrefix + wanted == $0.0.ddoc || DocumentTables.designPrefix + wanted == "\($0.0.ddoc)/\($0.0.name)" }
            if chosen == nil { warning = "\(wanted) was not used because it does not contain a valid index for this query." }
        }
        if chosen == nil {
            chosen = all.filter { index in
                index.0.fields.allSatisfy { constrained.contains($0) || sortFields.contains($0) }
                    && Array(index.0.fields.prefix(sortFields.count)) == sortFields
                    && (index.0.partialFilterSelector == nil)
            }.max { $0.0.fields.filter(constrained.contains).count < $1.0.fields.filter(constrained.contains).count }
        }
        let sortByID = sortFields.isEmpty || sortFields == ["_id"]
        if !sortByID, chosen == nil || Array(chosen!.0.fields.prefix(sortFields.count)) != sortFields {
            throw DocumentError(.noUsableIndex, "No index exists for this sort, try indexing by the sort fields.")
        }
        if chosen == nil, warning == nil {
            warning = "No matching index found, create an index to optimize query time."
        }
        var conditions = ["deleted = 0", "id NOT LIKE '\\_design/%' ESCAPE '\\'"]
        var arguments: [(any DatabaseValueConvertible)?] = []
        if let (index, whereText) = chosen {
            if whereText != "deleted = 0" { conditions.append(String(whereText.dropFirst("deleted = 0 AND ".count))) }
            for field in index.fields {
                if let f = MangoSQL.Field(MangoSelector.splitPath(field)), !f.isID { conditions.append("\(f.rank) IS NOT NULL") }
            }
        }
        // Where each field's comparisons are bound (1-based parameter
        // numbers), for the index segments below.
        var bounds: [[String]: [(op: MangoSelector.Operator, parameter: Int)]] = [:]
        for c in selector.sqlConditions() {
            conditions.append(c.sql)
            arguments.append(contentsOf: c.arguments)
            if c.arguments.count == 1 { bounds[c.path, default: []].append((c.op, arguments.count)) }
        }
        let segments = chosen.map { indexSegments($0.0, bounds: bounds, ascending: ascending) } ?? [IndexSegment()]
        let direction = ascending ? "ASC" : "DESC"
        func orderBy(_ segment: IndexSegment) -> String {
            var order: [String] = []
            if let (index, _) = chosen, !sortByID || sortFields.isEmpty {
                for (i, field) in index.fields.enumerated() where i >= segment.constantFields {
                    guard let f = MangoSQL.Field(MangoSelector.splitPath(field)) else { continue }
                    // Terms the WHERE pins are left out: SQLite does not see
                    // that they are constant and would sort instead of
                    // reading the index in order.
                    if !(i == segment.constantFields && segment.pinsRank) { order.append("\(f.rank) \(direction)") }
                    if !f.isID { order.append("\(f.value) \(direction)") }
                }
            }
            order.append("id \(direction)")
            return order.joined(separator: ", ")
        }
        var skip = query.skip
        if let bookmark = query.bookmark, bookmark != "nil" {
            guard let data = Data(base64Encoded: bookmark), let json = try? JSON(parsing: data), let n = json["skip"]?.intValue else {
                throw DocumentError(.badRequest, "Invalid bookmark value: \(bookmark)")
            }
            skip = n
        }
        let statements = segments.map { segment in
            "SELECT id, rev, body, attachments FROM \(docs) WHERE \((conditions + segment.conditions).joined(separator: " AND ")) ORDER BY \(orderBy(segment))"
        }
        var docsOut: [JSONObject] = []
        var examined = 0
        var skipped = 0
        let started = Date()
        if !explainOnly, query.limit > 0 {
            scan: for sql in statements {
                let cursor = try Row.fetchCursor(db, sql: sql, arguments: StatementArguments(arguments))
                while let row = try cursor.next() {
                    examined += 1
                    var doc: JSONObject = ["_id": .string(try row[0]), "_rev": .string(try row[1])]
                    for (k, v) in try JSON(parsing: try row[2] as String).objectValue ?? JSONObject() { doc[k] = v }
                    if !selector.matches(.object(doc)) { continue }
                    if skipped < skip { skipped += 1; continue }
                    if let fields = query.fields { doc = DocumentTables.project(doc, fields) }
                    docsOut.append(doc)
                    if docsOut.count >= query.limit { break scan }
                }
            }
        }
        let next = JSON.object(["skip": .int(skip + docsOut.count)]).text
        let stats: JSON? = query.executionStats ? .object([
            "total_keys_examined": .int(chosen == nil ? 0 : examined),
            "total_docs_examined": .int(examined),
            "total_quorum_docs_examined": .int(0),
            "results_returned": .int(docsOut.count),
            "execution_time_ms": .number(String(format: "%.3f", Date().timeIntervalSince(started) * 1000)),
        ]) : nil
        return FindResult(docs: docsOut, bookmark: Data(next.utf8).base64EncodedString(), warning: warning,
                          executionStats: stats, index: chosen?.0, statements: statements)
    }

    /// One range of an index, read in its order. A comparison on the first
    /// field after those pinned by `$eq` compares CouchDB's (type rank,
    /// value) pairs, which SQLite cannot turn into one index range; split
    /// by rank, each part is a range (`rank = 3 AND value >= ?`, then
    /// `rank > 3`), and the parts in turn are the index's order.
    struct IndexSegment {
        /// Extra conditions; they refer to already-bound parameters by number.
        var conditions: [String] = []
        /// Leading index fields pinned by `$eq`.
        var constantFields = 0
        /// Whether the conditions pin the rank of the next field.
        var pinsRank = false
    }

    func indexSegments(_ index: MangoIndex, bounds: [[String]: [(op: MangoSelector.Operator, parameter: Int)]], ascending: Bool) -> [IndexSegment] {
        var constant = 0
        for field in index.fields {
            let pinned = bounds[MangoSelector.splitPath(field)]?.contains { if case .eq(let v) = $0.op, MangoSQL.scalar(v) != nil { return true } else { return false } } ?? false
            guard pinned else { break }
            constant += 1
        }
        guard constant < index.fields.count, let f = MangoSQL.Field(MangoSelector.splitPath(index.fields[constant])), !f.isID else {
            return [IndexSegment(constantFields: constant)]
        }
        var lower: (op: String, rank: Int, parameter: Int)?
        var upper: (op: String, rank: Int, parameter: Int)?
        for (op, parameter) in bounds[f.path] ?? [] {
            switch op {
            case .gt(let v), .gte(let v):
                if let rank = MangoSQL.scalar(v)?.rank, rank >= 3, lower == nil {
                    if case .gt = op { lower = (">", rank, parameter) } else { lower = (">=", rank, parameter) }
                }
            case .lt(let v), .lte(let v):
                if let rank = MangoSQL.scalar(v)?.rank, rank >= 3, upper == nil {
                    if case .lt = op { upper = ("<", rank, parameter) } else { upper = ("<=", rank, parameter) }
                }
            default: break
            }
        }
        func pinned(_ rank: Int, _ bounds: [(op: String, rank: Int, parameter: Int)]) -> IndexSegment {
            IndexSegment(conditions: ["\(f.rank) = \(rank)"] + bounds.map { "\(f.value) \($0.op) ?\($0.parameter)" }, constantFields: constant, pinsRank: true)
        }
        var segments: [IndexSegment]
        switch (lower, upper) {
        case let (lower?, upper?) where lower.rank == upper.rank:
            segments = [pinned(lower.rank, [lower, upper])]
        case let (lower?, _):
            segments = [pinned(lower.rank, [lower]), IndexSegment(conditions: ["\(f.rank) > \(lower.rank)"], constantFields: constant)]
        case let (nil, upper?):
            segments = [IndexSegment(conditions: ["\(f.rank) < \(upper.rank)"], constantFields: constant), pinned(upper.rank, [upper])]
        default:
            segments = [IndexSegment(constantFields: constant)]
        }
        return ascending ? segments : segments.reversed()
    }

    static func project(_ doc: JSONObject, _ fields: [String]) -> JSONObject {
        var out = JSONObject()
        for field in fields {
            let path = MangoSelector.splitPath(field)
            var value: JSON? = .object(doc)
            for key in path { value = value?.objectValue?[key] }
            guard let value else { continue }
            out = set(out, path[...], value)
        }
        return out
    }

    static func set(_ object: JSONObject, _ path: ArraySlice<String>, _ value: JSON) -> JSONObject {
        var object = object
        guard let first = path.first else { return object }
        if path.count == 1 {
            object[first] = value
        } else {
            object[first] = .object(set(object[first]?.objectValue ?? JSONObject(), path.dropFirst(), value))
        }
        return object
    }
}

extension String {
    func replacingFirst(_ target: String, with replacement: String) -> String {
        guard let r = range(of: target) else { return self }
        return replacingCharacters(in: r, with: replacement)
    }
}

extension DocumentDatabase {
    /// Runs a Mango query (`_find`).
    public func find(_ query: FindQuery) throws -> FindResult {
        let tables = self.tables
        return try writer.read { db in try tables.find(db, query) }
    }

    /// What `_find` would do, without running it (`_explain`).
    public func explain(_ query: FindQuery) throws -> FindResult {
        let tables = self.tables
        return try writer.read { db in try tables.find(db, query, explainOnly: true) }
    }

    /// Creates a Mango index: a SQLite index on the JSON expressions of
    /// `fields` (partial when `partialFilterSelector` is given). Answers
    /// `created` or `exists`, with the design document id and the name.
    public func createIndex(fields: [String], ddoc: String? = nil, name: String? = nil, partialFilterSelector: JSON? = nil) throws -> (result: String, ddoc: String, name: String) {
        let tables = self.tables
        return try writer.write { db in
            try tables.createIndex(db, fields: fields, ddoc: ddoc, name: name, partialFilterSelector: partialFilterSelector)
        }
    }

    /// The Mango indexes, after the special `_all_docs` one.
    public func indexes() throws -> [MangoIndex] {
        let tables = self.tables
        return try writer.read { db in try tables.mangoIndexes(db).map(\.0) }
    }

    /// Drops a Mango index.
    public func deleteIndex(ddoc: String, name: String) throws {
        let tables = self.tables
        try writer.write { db in try tables.deleteIndex(db, ddoc: ddoc, name: name) }
    }
}
