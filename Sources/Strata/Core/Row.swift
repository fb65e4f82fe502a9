/// A row of a query result, copied out of the statement: it can be kept,
/// compared, hashed and sent to another task or thread.
///
/// Read columns by index or by name (without regard to ASCII case, as in
/// SQLite), typed through a throwing accessor, or untyped as
/// ``DatabaseValue``:
///
/// ```swift
/// for row in try Row.fetchAll(db, sql: "SELECT id, title, year FROM movies") {
///     let id: Int64 = try row["id"]
///     let title = try row.decode(String.self, forColumn: "title")
///     let year = try row[2] as Int?
/// }
/// ```
///
/// A value that does not fit the requested type (NULL for a non-optional,
/// TEXT `"abc"` for an `Int`, 300 for a `UInt8`) throws a
/// ``DatabaseDecodingError`` naming the column, the type and the SQL.
///
/// ``fetchAll(_:sql:arguments:)``, ``fetchOne(_:sql:arguments:)`` and
/// ``LiveRow/copy()`` return rows. A cursor (``fetchCursor(_:sql:arguments:)``)
/// does not copy: it gives a ``LiveRow``, which reads the statement in place
/// and is not `Sendable`.
public struct Row: RowProtocol, Sendable {
    @usableFromInline
    let storage: RowStorage

    init(storage: RowStorage) {
        self.storage = storage
    }

    /// A row with the given columns and values.
    ///
    /// - Precondition: as many names as values.
    public init(columnNames: [String], values: [DatabaseValue]) {
        precondition(columnNames.count == values.count, "a row needs as many column names as values")
        self.init(storage: RowStorage(values: values, columnNames: columnNames, sql: ""))
    }

    /// The current row of a statement, copied.
    static func copied(from statement: Statement) -> Row {
        Row(storage: RowStorage(values: statement.copyValues(), columnNames: statement.columnNames, sql: statement.sql))
    }

    /// The copy of a cursor's row taken after the cursor moved on: every
    /// read throws.
    static func stale(sql: String) -> Row {
        Row(storage: RowStorage(values: [], columnNames: [], sql: sql, isStale: true))
    }

    /// The number of columns.
    public var count: Int { storage.values.count }

    /// The column names, in order.
    public var columnNames: [String] { storage.columnNames }

    /// The SQL that produced the row ("" for a row made by hand).
    public var sql: String { storage.sql }

    /// All stored values, in column order.
    public var databaseValues: [DatabaseValue] { storage.values }

    /// The 0-based index of the column named `name` (ASCII case-insensitive);
    /// nil when there is none.
    public func index(ofColumn name: String) -> Int? {
        columnIndex(named: name, in: storage.columnNames)
    }

    /// The row itself: a row is already a copy.
    public func copy() -> Row { self }

    /// The value at `index` (0-based) as `T`.
    ///
    /// - Throws: ``DatabaseDecodingError`` when the index is out of range or
    ///   the value does not fit `T`.
    @inlinable
    public func decode<T: DatabaseValueConvertible>(_ type: T.Type = T.self, at index: Int) throws -> T {
        let storage = self.storage
        if index >= 0 && index < storage.values.count, let value = T.fromDatabaseValue(storage.values[index]) {
            return value
        }
        throw failure(T.self, at: index)
    }

    /// The value of the column named `name` (ASCII case-insensitive) as `T`.
    ///
    /// - Throws: ``DatabaseDecodingError`` when there is no such column or the
    ///   value does not fit `T`.
    @inlinable
    public func decode<T: DatabaseValueConvertible>(_ type: T.Type = T.self, forColumn name: String) throws -> T {
        guard let index = indexForDecoding(name) else { throw missingColumn(name, type: T.self) }
        return try decode(T.self, at: index)
    }

    /// The index of a column for a typed read; a stale row reports itself
    /// with an index no read accepts.
    @usableFromInline
    func indexForDecoding(_ name: String) -> Int? {
        storage.isStale ? -1 : index(ofColumn: name)
    }

    @usableFromInline
    func missingColumn(_ name: String, type: Any.Type) -> DatabaseDecodingError {
        DatabaseDecodingError(reason: .columnNotFound, column: name, columnIndex: nil, type: type, sql: sql)
    }

    /// The error of a failed read: stale, out of range or a value that does
    /// not fit.
    @usableFromInline
    func failure(_ type: Any.Type, at index: Int) -> Error {
        let storage = self.storage
        if storage.isStale { return LiveRow.staleRowError(sql: storage.sql) }
        guard index >= 0 && index < storage.values.count else {
            return DatabaseDecodingError(
                reason: .indexOutOfRange, column: nil, columnIndex: index, type: type, sql: storage.sql)
        }
        return DatabaseDecodingError.mismatch(
            storage.values[index], type: type, column: storage.columnNames[index], columnIndex: index,
            sql: storage.sql)
    }
}

/// The values of a copied row. Immutable, so rows share it freely.
@usableFromInline
final class RowStorage: Sendable {
    @usableFromInline
    let values: [DatabaseValue]
    let columnNames: [String]
    let sql: String
    /// A copy of a cursor's row taken after the cursor moved on.
    @usableFromInline
    let isStale: Bool

    init(values: [DatabaseValue], columnNames: [String], sql: String, isStale: Bool = false) {
        self.values = values
        self.columnNames = columnNames
        self.sql = sql
        self.isStale = isStale
    }
}

extension Row: Equatable {
    /// Rows are equal when they have the same column names and values.
    public static func == (lhs: Row, rhs: Row) -> Bool {
        lhs.columnNames == rhs.columnNames && lhs.databaseValues == rhs.databaseValues
    }
}

extension Row: Hashable {
    /// Hashes the column names and values.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(columnNames)
        hasher.combine(databaseValues)
    }
}

/// What ``Row`` (a copy) and ``LiveRow`` (a cursor's row, read in place)
/// share: reading columns by index or by name, typed or untyped.
///
/// Write a function over `some RowProtocol` to accept either:
///
/// ```swift
/// func describe(_ row: some RowProtocol) throws -> String {
///     try (0..<row.count).map { try row.text(at: $0) ?? "NULL" }.joined(separator: ", ")
/// }
/// ```
public protocol RowProtocol: CustomStringConvertible {
    /// The number of columns.
    var count: Int { get }
    /// The column names, in order.
    var columnNames: [String] { get }
    /// The SQL that produced the row ("" for a row made by hand).
    var sql: String { get }
    /// All stored values, in column order.
    var databaseValues: [DatabaseValue] { get }
    /// The 0-based index of the column named `name` (ASCII case-insensitive);
    /// nil when there is none.
    func index(ofColumn name: String) -> Int?
    /// The value at `index` (0-based) as `T`.
    func decode<T: DatabaseValueConvertible>(_ type: T.Type, at index: Int) throws -> T
    /// The value of the column named `name` (ASCII case-insensitive) as `T`.
    func decode<T: DatabaseValueConvertible>(_ type: T.Type, forColumn name: String) throws -> T
    /// A copy that can be kept and sent to another task.
    func copy() -> Row
}

extension RowProtocol {
    /// The value at `index` (0-based) as `T`: `let id: Int = try row[0]`.
    @inlinable
    public subscript<T: DatabaseValueConvertible>(_ index: Int) -> T {
        get throws { try decode(T.self, at: index) }
    }

    /// The value of the column named `name` as `T`: `let title: String = try row["title"]`.
    @inlinable
    public subscript<T: DatabaseValueConvertible>(_ name: String) -> T {
        get throws { try decode(T.self, forColumn: name) }
    }

    /// Whether the row has a column named `name` (ASCII case-insensitive).
    public func hasColumn(_ name: String) -> Bool {
        index(ofColumn: name) != nil
    }

    /// The stored value at `index` (0-based).
    ///
    /// - Throws: ``DatabaseDecodingError`` when the index is out of range.
    public func databaseValue(at index: Int) throws -> DatabaseValue {
        try decode(DatabaseValue.self, at: index)
    }

    /// The stored value of the column named `name` (ASCII case-insensitive).
    ///
    /// - Throws: ``DatabaseDecodingError`` when there is no such column.
    public func databaseValue(forColumn name: String) throws -> DatabaseValue {
        try decode(DatabaseValue.self, forColumn: name)
    }

    /// `[id:1 title:'Heat']`
    public var description: String {
        "[" + zip(columnNames, databaseValues).map { "\($0):\($1)" }.joined(separator: " ") + "]"
    }
}
