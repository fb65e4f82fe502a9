// Raw SQL with safe interpolation: `literal:` entry points beside the `sql:`
// ones of the core.

extension Database {
    /// Runs SQL built by interpolation, every interpolated value bound.
    ///
    /// ```swift
    /// try db.execute(literal: "UPDATE movies SET likes = \(likes) WHERE id = \(id)")
    /// ```
    ///
    /// - Throws: ``SQLiteError``.
    public func execute(literal: SQLLiteral) throws {
        try execute(sql: literal.sql, arguments: literal.statementArguments)
    }

    /// Runs a statement of the typed query API (an insert, update, delete,
    /// schema change, …) and returns the number of rows it changed.
    ///
    /// - Throws: ``SQLiteError``.
    @discardableResult
    public func run(_ statement: some SQLLiteralConvertible) throws -> Int {
        let literal = statement.sqlLiteral
        try execute(sql: literal.sql, arguments: literal.statementArguments)
        return changesCount
    }
}

extension Row {
    /// All rows of SQL built by interpolation.
    public static func fetchAll(_ db: Database, literal: SQLLiteral) throws -> [Row] {
        try fetchAll(db, sql: literal.sql, arguments: literal.statementArguments)
    }

    /// The first row of SQL built by interpolation.
    public static func fetchOne(_ db: Database, literal: SQLLiteral) throws -> Row? {
        try fetchOne(db, sql: literal.sql, arguments: literal.statementArguments)
    }

    /// A cursor over the rows of SQL built by interpolation.
    public static func fetchCursor(_ db: Database, literal: SQLLiteral) throws -> RowCursor {
        try fetchCursor(db, sql: literal.sql, arguments: literal.statementArguments)
    }

    /// All rows of a typed query (``SQLTable``) or a statement with
    /// `RETURNING`.
    public static func fetchAll(_ db: Database, _ request: some SQLLiteralConvertible) throws -> [Row] {
        try fetchAll(db, literal: request.sqlLiteral)
    }

    /// The first row of a typed query.
    public static func fetchOne(_ db: Database, _ request: some SQLLiteralConvertible) throws -> Row? {
        try fetchOne(db, literal: request.sqlLiteral)
    }

    /// A cursor over the rows of a typed query.
    public static func fetchCursor(_ db: Database, _ request: some SQLLiteralConvertible) throws -> RowCursor {
        try fetchCursor(db, literal: request.sqlLiteral)
    }
}

extension DatabaseValueConvertible {
    /// The first column of every row of SQL built by interpolation.
    public static func fetchAll(_ db: Database, literal: SQLLiteral) throws -> [Self] {
        try fetchAll(db, sql: literal.sql, arguments: literal.statementArguments)
    }

    /// The first column of the first row of SQL built by interpolation; nil
    /// when there is no row or the value is NULL.
    public static func fetchOne(_ db: Database, literal: SQLLiteral) throws -> Self? {
        try fetchOne(db, sql: literal.sql, arguments: literal.statementArguments)
    }

    /// The first column of every row of a typed query.
    ///
    /// ```swift
    /// let titles = try String.fetchAll(db, movies.select(title).order(year))
    /// ```
    public static func fetchAll(_ db: Database, _ request: some SQLLiteralConvertible) throws -> [Self] {
        try fetchAll(db, literal: request.sqlLiteral)
    }

    /// The first column of the first row of a typed query; nil when there is
    /// no row or the value is NULL.
    public static func fetchOne(_ db: Database, _ request: some SQLLiteralConvertible) throws -> Self? {
        try fetchOne(db, literal: request.sqlLiteral)
    }

    /// A cursor over the first column of a typed query.
    public static func fetchCursor(_ db: Database, _ request: some SQLLiteralConvertible) throws -> ValueCursor<Self> {
        try fetchCursor(db, sql: request.sqlLiteral.sql, arguments: request.sqlLiteral.statementArguments)
    }
}

extension DatabaseValueConvertible where Self: Hashable {
    /// The distinct values of the first column of a typed query.
    public static func fetchSet(_ db: Database, _ request: some SQLLiteralConvertible) throws -> Set<Self> {
        let literal = request.sqlLiteral
        return try fetchSet(db, sql: literal.sql, arguments: literal.statementArguments)
    }
}
