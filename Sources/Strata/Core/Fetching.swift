import StrataSQLite

// Fetching rows and values: a cursor over the live statement, and
// `fetchAll` / `fetchOne` / `fetchSet` built on it.

// MARK: - Rows

extension Row {
    /// A cursor over the rows of a query; each row is valid until the next.
    ///
    /// - Throws: ``SQLiteError`` for invalid SQL or arguments.
    public static func fetchCursor(_ db: Database, sql: String, arguments: StatementArguments = []) throws -> RowCursor {
        try RowCursor(statement: db.cachedStatement(sql: sql), arguments: arguments)
    }

    /// A cursor over the rows of a prepared statement.
    public static func fetchCursor(_ statement: Statement, arguments: StatementArguments = []) throws -> RowCursor {
        try RowCursor(statement: statement, arguments: arguments)
    }

    /// All rows of a query, copied.
    ///
    /// ```swift
    /// let rows = try Row.fetchAll(db, sql: "SELECT * FROM movies WHERE year = ?", arguments: [1995])
    /// ```
    public static func fetchAll(_ db: Database, sql: String, arguments: StatementArguments = []) throws -> [Row] {
        try fetchAll(db.cachedStatement(sql: sql), arguments: arguments)
    }

    /// All rows of a prepared statement, copied.
    public static func fetchAll(_ statement: Statement, arguments: StatementArguments = []) throws -> [Row] {
        try statement.setArguments(arguments)
        var rows: [Row] = []
        while try statement.step() {
            rows.append(Row.copied(from: statement))
        }
        statement.resetQuietly()
        return rows
    }

    /// The first row of a query, copied; nil when there is none.
    public static func fetchOne(_ db: Database, sql: String, arguments: StatementArguments = []) throws -> Row? {
        try fetchOne(db.cachedStatement(sql: sql), arguments: arguments)
    }

    /// The first row of a prepared statement, copied; nil when there is none.
    public static func fetchOne(_ statement: Statement, arguments: StatementArguments = []) throws -> Row? {
        try statement.setArguments(arguments)
        defer { statement.resetQuietly() }
        return try statement.step() ? Row.copied(from: statement) : nil
    }

    /// The distinct rows of a query, copied.
    public static func fetchSet(_ db: Database, sql: String, arguments: StatementArguments = []) throws -> Set<Row> {
        try Set(fetchAll(db, sql: sql, arguments: arguments))
    }
}

// MARK: - Values

extension DatabaseValueConvertible {
    /// A cursor over the first column of a query.
    ///
    /// - Throws: ``SQLiteError`` for invalid SQL or arguments; the cursor's
    ///   `next()` throws ``DatabaseDecodingError`` for a value that does not
    ///   fit.
    public static func fetchCursor(_ db: Database, sql: String, arguments: StatementArguments = []) throws -> ValueCursor<Self> {
        try ValueCursor(statement: db.cachedStatement(sql: sql), arguments: arguments)
    }

    /// A cursor over the first column of a prepared statement.
    public static func fetchCursor(_ statement: Statement, arguments: StatementArguments = []) throws -> ValueCursor<Self> {
        try ValueCursor(statement: statement, arguments: arguments)
    }

    /// The first column of every row.
    ///
    /// ```swift
    /// let titles = try String.fetchAll(db, sql: "SELECT title FROM movies ORDER BY year")
    /// let urls = try String?.fetchAll(db, sql: "SELECT url FROM movies")   // NULL allowed
    /// ```
    ///
    /// - Throws: ``DatabaseDecodingError`` when a value does not fit, such as
    ///   NULL for a non-optional type.
    public static func fetchAll(_ db: Database, sql: String, arguments: StatementArguments = []) throws -> [Self] {
        try fetchAll(db.cachedStatement(sql: sql), arguments: arguments)
    }

    /// The first column of every row of a prepared statement.
    public static func fetchAll(_ statement: Statement, arguments: StatementArguments = []) throws -> [Self] {
        try Array(ValueCursor<Self>(statement: statement, arguments: arguments))
    }

    /// The first column of the first row; nil when there is no row or the
    /// value is NULL.
    ///
    /// ```swift
    /// let count = try Int.fetchOne(db, sql: "SELECT count(*) FROM movies")!
    /// ```
    ///
    /// - Throws: ``DatabaseDecodingError`` when a non-NULL value does not fit.
    public static func fetchOne(_ db: Database, sql: String, arguments: StatementArguments = []) throws -> Self? {
        try fetchOne(db.cachedStatement(sql: sql), arguments: arguments)
    }

    /// The first column of the first row of a prepared statement; nil when
    /// there is no row or the value is NULL.
    public static func fetchOne(_ statement: Statement, arguments: StatementArguments = []) throws -> Self? {
        guard statement.columnCount > 0 else {
            throw SQLiteError.misuse("the statement returns no column to read as \(Self.self)", sql: statement.sql)
        }
        try statement.setArguments(arguments)
        defer { statement.resetQuietly() }
        guard try statement.step(), sqlite3_column_type(statement.sqliteStatement, 0) != SQLITE_NULL else {
            return nil
        }
        return try statement.decodeColumn(Self.self, at: 0)
    }
}

extension DatabaseValueConvertible where Self: Hashable {
    /// The distinct values of the first column.
    public static func fetchSet(_ db: Database, sql: String, arguments: StatementArguments = []) throws -> Set<Self> {
        try Set(ValueCursor<Self>(statement: db.cachedStatement(sql: sql), arguments: arguments))
    }

    /// The distinct values of the first column of a prepared statement.
    public static func fetchSet(_ statement: Statement, arguments: StatementArguments = []) throws -> Set<Self> {
        try Set(ValueCursor<Self>(statement: statement, arguments: arguments))
    }
}
