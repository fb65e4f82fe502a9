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
