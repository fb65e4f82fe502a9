extension SQLTable {
    /// All rows of the query.
    ///
    /// ```swift
    /// for row in try movies.filter(year > 1990).fetchAll(db) {
    ///     print(try row[title])
    /// }
    /// ```
    public func fetchAll(_ db: Database) throws -> [Row] {
        try Row.fetchAll(db, self)
    }

    /// The first row of the query; nil when there is none.
    public func fetchOne(_ db: Database) throws -> Row? {
        try Row.fetchOne(db, self)
    }

    /// The first row of the query, like SQLite.swift's `pluck`; nil when
    /// there is none.
    public func pluck(_ db: Database) throws -> Row? {
        try fetchOne(db)
    }

    /// A cursor over the rows of the query, reading the live statement.
    public func fetchCursor(_ db: Database) throws -> RowCursor {
        try Row.fetchCursor(db, self)
    }

    /// The number of rows the query returns: `SELECT count(*) FROM (query)`.
    public func fetchCount(_ db: Database) throws -> Int {
        var literal = SQLLiteral(sql: "SELECT count(*) FROM (")
        literal.append(sqlLiteral)
        literal.append(sql: ")")
        return try Int.fetchOne(db, literal: literal) ?? 0
    }

    /// Whether the query returns at least one row: `SELECT EXISTS (query)`.
    public func fetchExists(_ db: Database) throws -> Bool {
        try Bool.fetchOne(db, literal: "SELECT \(exists(self))") ?? false
    }
}
