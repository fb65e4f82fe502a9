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
///     init(row: LiveRow) throws {
///         id = try row["id"]
///         name = try row["name"]
///         score = try row["score"]
///     }
/// }
///
/// let best = try Player.fetchAll(db, Player.table.order(Column<Int>("score").desc))
/// ```
///
/// Every fetch of the type then uses `init(row:)`: `fetchAll`, `fetchOne`
/// (also by key), cursors and associations. Writes still encode with
/// `Encodable`. Declare the conformance in the module that declares the
/// `DatabaseRecord` conformance, which is where Strata chooses how records
/// of the type are read.
public protocol RowDecodable {
    /// Reads the value from a row of a query.
    ///
    /// - Throws: ``DatabaseDecodingError`` when the row does not fit.
    init(row: LiveRow) throws
}

extension DatabaseRecord where Self: RowDecodable {
    /// Reads each row with `init(row:)`.
    @inlinable
    public static func makeRowReader() -> (LiveRow) throws -> Self {
        Self.init(row:)
    }
}
