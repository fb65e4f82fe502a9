/// A record that reads itself from a row, without `Decodable`.
///
/// `Decodable` goes through the standard library's keyed container for each
/// property, which costs several times SQLite's own work on wide rows. A
/// record that also conforms to `RowDecodable` is fetched with its
/// `init(row:)` instead, as fast as reading the columns by hand:
///
/// ```swift
/// struct Player: DatabaseRecord {
///     var id: Int64?
///     var name: String
///     var score: Int
/// }
///
/// extension Player: RowDecodable {
///     init(row: Row) throws {
///         id = try row["id"]
///         name = try row["name"]
///         score = try row["score"]
///     }
/// }
///
/// let best = try Player.fetchAll(db, Player.table.order(Column<Int>("score").desc))
/// ```
///
/// `fetchAll` and `fetchOne` called on the type use `init(row:)`; code that
/// is generic over ``DatabaseRecord`` (associations, `fetchOne(_:key:)`) and
/// cursors still decode with `Decodable`, so both must read the same columns.
/// Writes always encode with `Encodable`.
public protocol RowDecodable {
    /// Reads the value from a row of a query.
    ///
    /// - Throws: ``DatabaseDecodingError`` when the row does not fit.
    init(row: Row) throws
}

extension DatabaseRecord where Self: RowDecodable {
    /// Every record of the table, each read by `init(row:)`.
    @inlinable
    public static func fetchAll(_ db: Database) throws -> [Self] {
        try fetchAll(db, table)
    }

    /// The records a typed query selects, each read by `init(row:)`.
    @inlinable
    public static func fetchAll(_ db: Database, _ query: some SQLLiteralConvertible) throws -> [Self] {
        let literal = query.sqlLiteral
        return try fetchAll(db, sql: literal.sql, arguments: literal.statementArguments)
    }

    /// The records of raw SQL, each read by `init(row:)`.
    @inlinable
    public static func fetchAll(_ db: Database, sql: String, arguments: StatementArguments = []) throws -> [Self] {
        try fetchAll(db, sql: sql, arguments: arguments, record: Self.init(row:))
    }

    /// The first record a typed query selects, read by `init(row:)`; nil
    /// when none.
    @inlinable
    public static func fetchOne(_ db: Database, _ query: some SQLLiteralConvertible) throws -> Self? {
        let literal = query.sqlLiteral
        return try fetchOne(db, sql: literal.sql, arguments: literal.statementArguments)
    }

    /// The first record of raw SQL, read by `init(row:)`; nil when none.
    @inlinable
    public static func fetchOne(_ db: Database, sql: String, arguments: StatementArguments = []) throws -> Self? {
        let cursor = try Row.fetchCursor(db, sql: sql, arguments: arguments)
        guard let row = try cursor.next() else { return nil }
        return try Self(row: row)
    }
}
