// Associations between record types: belongs-to, has-many, and
// has-many-through a join table. Fetching for many records at once takes a
// fixed number of queries (one, or one per 500 keys), never one per record.

extension DatabaseRecord {
    /// This type's rows point at a parent row through `foreignKey`:
    /// `static let author = belongsTo(Author.self, foreignKey: "authorID")`.
    public static func belongsTo<Parent: DatabaseRecord>(_ parent: Parent.Type, foreignKey: String) -> BelongsTo<Self, Parent> {
        BelongsTo(foreignKey: foreignKey)
    }

    /// Child rows point at this type's rows through `foreignKey`:
    /// `static let books = hasMany(Book.self, foreignKey: "authorID")`.
    public static func hasMany<Child: DatabaseRecord>(_ child: Child.Type, foreignKey: String) -> HasMany<Self, Child> {
        HasMany(foreignKey: foreignKey)
    }

    /// Many-to-many through a join table whose rows hold both keys:
    /// `static let authors = hasMany(Author.self, through: BookAuthor.self, parentKey: "bookID", childKey: "authorID")`.
    public static func hasMany<Child: DatabaseRecord, Join: DatabaseRecord>(
        _ child: Child.Type, through join: Join.Type, parentKey: String, childKey: String
    ) -> HasManyThrough<Self, Join, Child> {
        HasManyThrough(parentKey: parentKey, childKey: childKey)
    }

    /// The value of the single-column primary key.
    func primaryKeyValue() throws -> DatabaseValue {
        let key = Self.databasePrimaryKey
        guard key.count == 1 else {
            throw RecordError(
                kind: .missingPrimaryKey, tableName: Self.databaseTableName,
                message: "associations need a single-column primary key")
        }
        return try columnValue(key[0])
    }

    /// The stored value of one column.
    func columnValue(_ column: String) throws -> DatabaseValue {
        guard let value = try EncodedRecord(self).value(of: column) else {
            throw RecordError(kind: .missingPrimaryKey, tableName: Self.databaseTableName, message: "no column \"\(column)\"")
        }
        return value?.databaseValue ?? .null
    }
}

/// Fetches the rows of `table` whose `column` is one of `keys`, a chunk of
/// keys per query so no query exceeds SQLite's parameter limit, and calls
/// `body` with each, read in place.
private func forEachRow(
    _ db: Database, _ table: SQLTable, column: String, in keys: [DatabaseValue], _ body: (LiveRow) throws -> Void
) throws {
    let distinctKeys = Array(Set(keys.filter { !$0.isNull }))
    for start in stride(from: 0, to: distinctKeys.count, by: 500) {
        let chunk = Array(distinctKeys[start..<min(start + 500, distinctKeys.count)])
        let placeholders = repeatElement("?", count: chunk.count).joined(separator: ", ")
        let sql = "SELECT * FROM \(quoteIdentifier(table.name)) WHERE \(column) IN (\(placeholders))"
        try Row.fetchCursor(db, sql: sql, arguments: StatementArguments(chunk)).forEach(body)
    }
}

/// A child record type's link to its parent; see
/// ``DatabaseRecord/belongsTo(_:foreignKey:)``.
public struct BelongsTo<Child: DatabaseRecord, Parent: DatabaseRecord>: Sendable {
    /// The child's column holding the parent's key.
    public let foreignKey: String

    /// The parent of one child; nil when the foreign key is NULL or dangling.
    public func fetchOne(_ db: Database, for child: Child) throws -> Parent? {
        try fetchAll(db, for: [child])[0]
    }

    /// The parent of each child, in the children's order, in one query.
    public func fetchAll(_ db: Database, for children: [Child]) throws -> [Parent?] {
        let keys = try children.map { try $0.columnValue(foreignKey) }
        let parentKey = Parent.databasePrimaryKey.first ?? "rowid"
        let read = Parent.makeRowReader()
        var parents: [DatabaseValue: Parent] = [:]
        try forEachRow(db, Parent.table, column: quoteIdentifier(parentKey), in: keys) { row in
            parents[try row.databaseValue(forColumn: parentKey)] = try read(row)
        }
        return keys.map { parents[$0] }
    }
}

/// A parent record type's children; see ``DatabaseRecord/hasMany(_:foreignKey:)``.
public struct HasMany<Parent: DatabaseRecord, Child: DatabaseRecord>: Sendable {
    /// The child's column holding the parent's key.
    public let foreignKey: String

    /// The query for one parent's children, to filter or order further.
    public func query(for parent: Parent) throws -> SQLTable {
        Child.table.filter(SQLExpression<Bool>(literal: SQLLiteral(
            sql: quoteIdentifier(Child.databaseTableName) + "." + quoteIdentifier(foreignKey) + " = ?",
            arguments: [try parent.primaryKeyValue()])))
    }

    /// One parent's children.
    public func fetchAll(_ db: Database, for parent: Parent) throws -> [Child] {
        try Child.fetchAll(db, query(for: parent))
    }

    /// Each parent's children, in the parents' order, in one query (eager
    /// loading).
    public func fetchAll(_ db: Database, for parents: [Parent]) throws -> [[Child]] {
        let keys = try parents.map { try $0.primaryKeyValue() }
        let read = Child.makeRowReader()
        var children: [DatabaseValue: [Child]] = [:]
        try forEachRow(db, Child.table, column: quoteIdentifier(foreignKey), in: keys) { row in
            children[try row.databaseValue(forColumn: foreignKey), default: []].append(try read(row))
        }
        return keys.map { children[$0] ?? [] }
    }
}

/// A many-to-many association through a join table; see
/// ``DatabaseRecord/hasMany(_:through:parentKey:childKey:)``.
public struct HasManyThrough<Parent: DatabaseRecord, Join: DatabaseRecord, Child: DatabaseRecord>: Sendable {
    /// The join table's column holding the parent's key.
    public let parentKey: String
    /// The join table's column holding the child's key.
    public let childKey: String

    private var joinTable: String { quoteIdentifier(Join.databaseTableName) }
    private var childTable: String { quoteIdentifier(Child.databaseTableName) }
    private var childPrimaryKey: String { Child.databasePrimaryKey.first ?? "rowid" }

    /// The query for one parent's children, to filter or order further.
    public func query(for parent: Parent) throws -> SQLTable {
        let join = SQLTable(Join.databaseTableName)
        let child = Child.table
        return child.select(child.allColumns)
            .join(join, on: SQLExpression<Bool>(literal: SQLLiteral(sql: "\(joinTable).\(quoteIdentifier(childKey)) = \(childTable).\(quoteIdentifier(childPrimaryKey))")))
            .filter(SQLExpression<Bool>(literal: SQLLiteral(sql: "\(joinTable).\(quoteIdentifier(parentKey)) = ?", arguments: [try parent.primaryKeyValue()])))
    }

    /// One parent's children.
    public func fetchAll(_ db: Database, for parent: Parent) throws -> [Child] {
        try Child.fetchAll(db, query(for: parent))
    }

    /// Each parent's children, in the parents' order, in one query (eager
    /// loading).
    public func fetchAll(_ db: Database, for parents: [Parent]) throws -> [[Child]] {
        let keys = try parents.map { try $0.primaryKeyValue() }
        let distinctKeys = Array(Set(keys.filter { !$0.isNull }))
        let read = Child.makeRowReader()
        var children: [DatabaseValue: [Child]] = [:]
        for start in stride(from: 0, to: distinctKeys.count, by: 500) {
            let chunk = Array(distinctKeys[start..<min(start + 500, distinctKeys.count)])
            let sql = """
                SELECT \(childTable).*, \(joinTable).\(quoteIdentifier(parentKey)) AS "strata_parent_key" \
                FROM \(childTable) JOIN \(joinTable) ON \(joinTable).\(quoteIdentifier(childKey)) = \(childTable).\(quoteIdentifier(childPrimaryKey)) \
                WHERE \(joinTable).\(quoteIdentifier(parentKey)) IN (\(repeatElement("?", count: chunk.count).joined(separator: ", ")))
                """
            try Row.fetchCursor(db, sql: sql, arguments: StatementArguments(chunk)).forEach { row in
                children[try row.databaseValue(forColumn: "strata_parent_key"), default: []].append(try read(row))
            }
        }
        return keys.map { children[$0] ?? [] }
    }
}
