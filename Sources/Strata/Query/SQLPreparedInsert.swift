import StrataSQLite

/// An INSERT into given columns, prepared once and run with a row of values
/// each time: the typed query API's fastest way to insert many rows.
///
/// ```swift
/// let insertMovie = try db.prepareInsert(into: movies, title, year)
/// try db.transaction {
///     for (name, released) in [("Heat", 1995), ("Ronin", 1998)] {
///         try insertMovie.run(name, released)
///     }
/// }
/// ```
///
/// The values' types are the columns' own, checked when you compile: a
/// `Column<Int>` takes an `Int`. Unlike `db.run(movies.insert(title <- …))`,
/// a run builds no setters and no ``SQLInsert`` and finds no statement by
/// table name; it binds each value and steps. Like a ``Statement``, it
/// belongs to the connection that prepared it.
public struct SQLPreparedInsert<each Value: DatabaseValueConvertible> {
    /// The prepared statement.
    public let statement: Statement

    init(statement: Statement) {
        self.statement = statement
    }

    /// Inserts one row and returns its rowid.
    ///
    /// - Throws: ``SQLiteError``, such as a constraint error naming the values.
    @inlinable @inline(__always)
    @discardableResult
    public func run(_ values: repeat each Value) throws -> Int64 {
        try statement.execute(binding: repeat each values)
        return statement.lastInsertedRowID
    }
}

@available(*, unavailable)
extension SQLPreparedInsert: Sendable {}

extension Database {
    /// Prepares `INSERT INTO table (columns) VALUES (?, …)` for rows of
    /// values typed by the columns; run it with ``SQLPreparedInsert/run(_:)``.
    ///
    /// ```swift
    /// let insertMovie = try db.prepareInsert(into: movies, title, year)
    /// let rowID = try insertMovie.run("Heat", 1995)
    /// ```
    ///
    /// - Parameters:
    ///   - table: the table to insert into.
    ///   - resolution: `INSERT OR …`, when given.
    ///   - columns: the columns each run fills, in the order of its values.
    /// - Throws: ``SQLiteError`` (`.misuse`) when an expression is not a
    ///   column, or when SQLite refuses the statement (an unknown table or
    ///   column).
    public func prepareInsert<each Value: DatabaseValueConvertible>(
        into table: SQLTable, or resolution: SQLConflictResolution? = nil, _ columns: repeat SQLExpression<each Value>
    ) throws -> SQLPreparedInsert<repeat each Value> {
        var names: [String] = []
        for column in repeat each columns {
            guard let name = column.columnName, column.sqlLiteral.sql == quoteIdentifier(name) else {
                throw SQLiteError.misuse("prepareInsert takes columns, not the expression \(column.sqlLiteral.sql)")
            }
            names.append(name)
        }
        let sql = parameterizedInsert(into: table.name, columns: names, conflictResolution: resolution?.rawValue)
        return SQLPreparedInsert(statement: try makeStatement(sql: sql))
    }
}
