extension DatabaseRecord {
    /// Every record of the table.
    @inlinable
    public static func fetchAll(_ db: Database) throws -> [Self] {
        try fetchAll(db, table)
    }

    /// The records a typed query selects:
    /// `Note.fetchAll(db, Note.table.filter(title.like("%x%")).order(title))`.
    @inlinable
    public static func fetchAll(_ db: Database, _ query: some SQLLiteralConvertible) throws -> [Self] {
        let literal = query.sqlLiteral
        return try creatingTableOnFirstUse(db) {
            try fetchAll(db, sql: literal.sql, arguments: literal.statementArguments)
        }
    }

    /// The records of raw SQL.
    ///
    /// - Throws: ``DatabaseDecodingError`` when a row does not fit the type.
    @inlinable
    public static func fetchAll(_ db: Database, sql: String, arguments: StatementArguments = []) throws -> [Self] {
        try _readAll(Row.fetchCursor(db, sql: sql, arguments: arguments))
    }

    /// The first record a typed query selects; nil when none.
    public static func fetchOne(_ db: Database, _ query: some SQLLiteralConvertible) throws -> Self? {
        let literal = query.sqlLiteral
        return try creatingTableOnFirstUse(db) {
            try fetchOne(db, sql: literal.sql, arguments: literal.statementArguments)
        }
    }

    /// The first record of raw SQL; nil when none.
    public static func fetchOne(_ db: Database, sql: String, arguments: StatementArguments = []) throws -> Self? {
        let cursor = try Row.fetchCursor(db, sql: sql, arguments: arguments)
        guard let row = try cursor.next() else { return nil }
        return try makeRowReader()(row)
    }

    /// The record with a primary key value; nil when there is none.
    ///
    /// ```swift
    /// let note = try Note.fetchOne(db, key: 42)
    /// ```
    public static func fetchOne(_ db: Database, key: some DatabaseValueConvertible) throws -> Self? {
        let primaryKey = databasePrimaryKey
        guard primaryKey.count == 1 else {
            throw RecordError(
                kind: .missingPrimaryKey, tableName: databaseTableName,
                message: "fetchOne(key:) needs a single-column primary key; use fetchOne(_:keys:)")
        }
        return try fetchOne(db, keys: [primaryKey[0]: key])
    }

    /// The record with the given values of its key columns (or of any
    /// unique columns); nil when there is none.
    public static func fetchOne(_ db: Database, keys: [String: (any DatabaseValueConvertible)?]) throws -> Self? {
        let columns = keys.keys.sorted()
        let predicate = columns.map { quoteIdentifier($0) + " = ?" }.joined(separator: " AND ")
        return try creatingTableOnFirstUse(db) {
            try fetchOne(
                db, sql: "SELECT * FROM \(quoteIdentifier(databaseTableName)) WHERE \(predicate)",
                arguments: StatementArguments(columns.map { keys[$0] ?? nil }))
        }
    }

    /// A cursor over records, decoded one at a time from the live statement.
    public static func fetchCursor(_ db: Database, _ query: some SQLLiteralConvertible) throws -> RecordCursor<Self> {
        let literal = query.sqlLiteral
        let rows = try creatingTableOnFirstUse(db) {
            try Row.fetchCursor(db, sql: literal.sql, arguments: literal.statementArguments)
        }
        return RecordCursor(rows: rows, read: makeRowReader())
    }

    /// The number of rows in the table.
    public static func fetchCount(_ db: Database) throws -> Int {
        try creatingTableOnFirstUse(db) { try table.fetchCount(db) }
    }
}

/// A cursor over records; see ``DatabaseRecord/fetchCursor(_:_:)``.
public final class RecordCursor<Record: DatabaseRecord>: Cursor {
    private let rows: RowCursor
    private let read: (LiveRow) throws -> Record

    init(rows: RowCursor, read: @escaping (LiveRow) throws -> Record) {
        self.rows = rows
        self.read = read
    }

    /// The next record, or nil at the end.
    public func next() throws -> Record? {
        guard let row = try rows.next() else { return nil }
        return try read(row)
    }
}
