/// A row of a query result.
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
/// Rows from ``fetchAll(_:sql:arguments:)`` and ``fetchOne(_:sql:arguments:)``
/// hold copies of their values. A row from a ``RowCursor`` reads the live
/// statement and is valid only until the cursor moves on: call ``copy()`` to
/// keep it. Reading a live row after that throws ``SQLiteError`` (`.misuse`)
/// rather than returning another row's data.
public struct Row {
    /// The cursor of a live row; nil for a detached one. Holding the cursor
    /// keeps its statement from being reset while the row is in use.
    @usableFromInline
    let cursor: RowCursor?
    /// The values of a detached row (a copy, or a row made by hand).
    @usableFromInline
    let detached: DetachedRow?
    /// The statement's step generation when a live row was made.
    @usableFromInline
    let generation: UInt
    /// The statement's live state (owned by the statement, which `cursor`
    /// keeps alive); nil for a detached row. Column reads go through it
    /// without touching a class reference.
    @usableFromInline
    let live: UnsafeMutablePointer<LiveStatementState>?

    @usableFromInline
    init(cursor: RowCursor) {
        self.cursor = cursor
        self.detached = nil
        self.live = cursor.statement.liveState
        self.generation = cursor.statement.generation
    }

    init(detached: DetachedRow) {
        self.cursor = nil
        self.detached = detached
        self.live = nil
        self.generation = 0
    }

    /// A detached row with the given columns and values.
    ///
    /// - Precondition: as many names as values.
    public init(columnNames: [String], values: [DatabaseValue]) {
        precondition(columnNames.count == values.count, "a row needs as many column names as values")
        self.init(detached: DetachedRow(values: values, columnNames: columnNames, sql: ""))
    }

    static func copied(from statement: Statement) -> Row {
        Row(detached: DetachedRow(values: statement.copyValues(), columnNames: statement.columnNames, sql: statement.sql))
    }

    @usableFromInline
    static func staleRowError(sql: String) -> SQLiteError {
        SQLiteError.misuse(
            "a row from a cursor was read after the cursor moved on; call copy() to keep a row", sql: sql)
    }

    /// The live statement, or nil when the row is detached.
    private var liveStatement: Statement? { cursor?.statement }

    /// Whether a live row is still the cursor's current row.
    private var isCurrent: Bool {
        guard let statement = liveStatement else { return true }
        return statement.generation == generation
    }

    /// The number of columns.
    public var count: Int {
        liveStatement?.columnCount ?? detached!.values.count
    }

    /// The column names, in order.
    public var columnNames: [String] {
        liveStatement?.columnNames ?? detached!.columnNames
    }

    /// The SQL that produced the row ("" for a row made by hand).
    public var sql: String {
        liveStatement?.sql ?? detached!.sql
    }

    /// The 0-based index of the column named `name` (ASCII case-insensitive);
    /// nil when there is none.
    public func index(ofColumn name: String) -> Int? {
        if let statement = liveStatement { return statement.index(ofColumn: name) }
        return columnIndex(named: name, in: detached!.columnNames)
    }

    /// Whether the row has a column named `name` (ASCII case-insensitive).
    public func hasColumn(_ name: String) -> Bool {
        index(ofColumn: name) != nil
    }

    /// A copy that stays valid after the cursor it came from moves on.
    public func copy() -> Row {
        guard let statement = liveStatement else { return self }
        guard isCurrent else {
            return Row(detached: DetachedRow(values: [], columnNames: [], sql: statement.sql, isStale: true))
        }
        return Row.copied(from: statement)
    }

    // MARK: - Typed access

    /// The value at `index` (0-based) as `T`.
    ///
    /// - Throws: ``DatabaseDecodingError`` when the index is out of range or
    ///   the value does not fit `T`.
    @inlinable
    public func decode<T: DatabaseValueConvertible>(_ type: T.Type = T.self, at index: Int) throws -> T {
        if let live {
            // `cursor` owns the statement that owns `live`. Kept alive with a
            // `defer` rather than a closure, which the optimizer may outline
            // from the caller's loop.
            defer { _fixLifetime(cursor) }
            guard let value = LiveStatementState.value(in: live, T.self, at: index, generation: generation) else {
                throw liveFailure(T.self, at: index)
            }
            return value
        }
        return try decodeDetached(T.self, at: index)
    }

    /// The error of a failed read of a live row by column name: stale, no
    /// such column or a value that does not fit.
    @usableFromInline
    func liveFailure(_ type: Any.Type, forColumn name: String) -> Error {
        guard let index = columnIndexForDecoding(name) else { return missingColumn(name, type: type) }
        return liveFailure(type, at: index)
    }

    /// The error of a failed read of a live row: stale, out of range or a
    /// value that does not fit.
    @usableFromInline
    func liveFailure(_ type: Any.Type, at index: Int) -> Error {
        let statement = cursor!.statement
        guard isCurrent else { return Self.staleRowError(sql: statement.sql) }
        return statement.decodingFailure(type, at: index)
    }

    @usableFromInline
    func decodeDetached<T: DatabaseValueConvertible>(_ type: T.Type, at index: Int) throws -> T {
        let row = detached!
        if row.isStale { throw Self.staleRowError(sql: row.sql) }
        guard index >= 0 && index < row.values.count else {
            throw DatabaseDecodingError(
                reason: .indexOutOfRange, column: nil, columnIndex: index, type: T.self, sql: row.sql)
        }
        if let value = T.fromDatabaseValue(row.values[index]) {
            return value
        }
        throw DatabaseDecodingError.mismatch(
            row.values[index], type: T.self, column: row.columnNames[index], columnIndex: index, sql: row.sql)
    }

    /// The value of the column named `name` (ASCII case-insensitive) as `T`.
    ///
    /// - Throws: ``DatabaseDecodingError`` when there is no such column or the
    ///   value does not fit `T`.
    @inlinable
    public func decode<T: DatabaseValueConvertible>(_ type: T.Type = T.self, forColumn name: String) throws -> T {
        if let live {
            // `cursor` owns the statement that owns `live`.
            defer { _fixLifetime(cursor) }
            if live.pointee.generation == generation,
                let index = live.pointee.index(ofColumn: name),
                let value = T.decode(from: live.pointee.sqliteStatement, at: Int32(truncatingIfNeeded: index))
            {
                return value
            }
            throw liveFailure(T.self, forColumn: name)
        }
        guard let index = columnIndexForDecoding(name) else {
            throw missingColumn(name, type: T.self)
        }
        return try decode(T.self, at: index)
    }

    /// The index of a column for a typed read; a stale row reports itself.
    @usableFromInline
    func columnIndexForDecoding(_ name: String) -> Int? {
        if let statement = liveStatement { return statement.index(ofColumn: name) }
        if detached!.isStale { return -1 }
        return columnIndex(named: name, in: detached!.columnNames)
    }

    @usableFromInline
    func missingColumn(_ name: String, type: Any.Type) -> DatabaseDecodingError {
        DatabaseDecodingError(reason: .columnNotFound, column: name, columnIndex: nil, type: type, sql: sql)
    }

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

    // MARK: - Untyped access

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

    /// All stored values, in column order; empty for a cursor's row read after
    /// the cursor moved on.
    public var databaseValues: [DatabaseValue] {
        if let statement = liveStatement {
            return isCurrent ? statement.copyValues() : []
        }
        return detached!.values
    }
}

/// The values of a row that no longer reads a statement.
@usableFromInline
final class DetachedRow {
    let values: [DatabaseValue]
    let columnNames: [String]
    let sql: String
    /// A copy of a cursor's row taken after the cursor moved on.
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

extension Row: CustomStringConvertible {
    /// `[id:1 title:'Heat']`
    public var description: String {
        "[" + zip(columnNames, databaseValues).map { "\($0):\($1)" }.joined(separator: " ") + "]"
    }
}

// @unchecked: a copied row holds only immutable `Sendable` values (the common
// case: `fetchAll`, `fetchOne`, `copy()`). A row from a cursor refers to the
// cursor, which belongs to the connection's executor; it checks
// the statement's step generation before every read and throws once the
// cursor has moved on or finished, so a row that escaped its iteration cannot
// read another row's data. Reading such a row while its cursor is still being
// stepped on another thread is a misuse the type system cannot catch here.
extension Row: @unchecked Sendable {}
