import Foundation
import Strata

/// How Mango fields become SQL over the winning body of each document.
enum MangoSQL {
    struct Field {
        let path: [String]
        init?(_ path: [String]) {
            // Quotes looked for as scalars: a quote followed by a combining
            // mark is one Character, which `contains("'")` does not find, and
            // the path is written into SQL between quotes. Such a field is
            // matched in Swift, as any field SQL cannot name.
            guard !path.isEmpty, path.allSatisfy({ !$0.isEmpty && !$0.unicodeScalars.contains { $0 == "\"" || $0 == "'" } }) else { return nil }
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

    /// `sql` with each `?` parameter replaced by the next argument as a
    /// literal. A `?` inside a quoted literal or identifier is text, not a
    /// parameter: replacing the first `?` of the text put a value with a
    /// `?` inside the next value's literal, and the selector's values come
    /// from a request.
    static func inlining(_ arguments: [(any DatabaseValueConvertible)?], into sql: String) -> String {
        var result = ""
        var remaining = arguments.makeIterator()
        var quote: Unicode.Scalar?
        for scalar in sql.unicodeScalars {
            if let open = quote {
                // A doubled quote closes and opens again: the same text.
                if scalar == open { quote = nil }
            } else if scalar == "'" || scalar == "\"" {
                quote = scalar
            } else if scalar == "?", let argument = remaining.next() {
                result += literal(argument)
                continue
            }
            result.unicodeScalars.append(scalar)
        }
        return result
    }

    static func literal(_ v: (any DatabaseValueConvertible)?) -> String {
        switch v {
        case nil: return "NULL"
        case let i as Int: return String(i)
        case let d as Double: return "\(d)"
        case let s as String: return quoteStringLiteral(s)
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
        let whereText = "deleted = 0" + DocumentTables.inlining(arguments, into: partial)
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
        // CouchDB's warnings, in its order, one a line: a use_index that
        // was not used, no index at all, then many documents examined for
        // few results.
        var warnings: [String] = []
        let all = try mangoIndexes(db)
        if let wanted = query.useIndex {
            chosen = all.first { wanted == $0.0.name || wanted == $0.0.ddoc || wanted == "\($0.0.ddoc)/\($0.0.name)" || DocumentTables.designPrefix + wanted == $0.0.ddoc || DocumentTables.designPrefix + wanted == "\($0.0.ddoc)/\($0.0.name)" }
            if chosen == nil { warnings.append("\(wanted) was not used because it does not contain a valid index for this query.") }
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
        if chosen == nil {
            warnings.append("No matching index found, create an index to optimize query time.")
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
        // Without an index, CouchDB reads every document in `_id` order
        // until the limit: those are what it examined, though SQLite
        // filters them here before they are read.
        if chosen == nil, !explainOnly, query.limit > 0 {
            let lastID = docsOut.count >= query.limit ? docsOut.last?["_id"]?.stringValue : nil
            examined = try Int.fetchOne(db, sql: "SELECT count(*) FROM \(docs) WHERE deleted = 0 AND id NOT LIKE '\\_design/%' ESCAPE '\\'"
                                        + (lastID == nil ? "" : ascending ? " AND id <= ?" : " AND id >= ?"), arguments: StatementArguments(lastID.map { [$0] } ?? [])) ?? examined
        }
        // `mango_cursor:index_scan_warning`, its threshold 10.
        if !explainOnly, Double(examined) / Double(max(docsOut.count, 1)) > 10 {
            warnings.append("The number of documents examined is high in proportion to the number of results returned. Consider adding a more specific index to improve this.")
        }
        // No result: the bookmark given back, or CouchDB's "nil".
        let bookmark = docsOut.isEmpty ? (query.bookmark ?? "nil")
            : Data(JSON.object(["skip": .int(skip + docsOut.count)]).text.utf8).base64EncodedString()
        let warning = warnings.isEmpty ? nil : warnings.joined(separator: "\n")
        let stats: JSON? = query.executionStats ? .object([
            "total_keys_examined": .int(chosen == nil ? 0 : examined),
            "total_docs_examined": .int(examined),
            "total_quorum_docs_examined": .int(0),
            "results_returned": .int(docsOut.count),
            "execution_time_ms": .number(String(format: "%.3f", Date().timeIntervalSince(started) * 1000)),
        ]) : nil
        return FindResult(docs: docsOut, bookmark: bookmark, warning: warning,
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
