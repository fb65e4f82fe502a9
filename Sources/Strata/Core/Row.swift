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
    enum Storage {
        /// A cursor's current row. Holding the cursor keeps its statement
        /// from being reset while the row is in use.
        case live(RowCursor, generation: UInt)
        case copied(values: [DatabaseValue], columnNames: [String], sql: String)
        /// A copy of a live row taken after its cursor moved on.
        case stale(String)
    }

    static func staleRowError(sql: String) -> SQLiteError {
        SQLiteError.misuse(
            "a row from a cursor was read after the cursor moved on; call copy() to keep a row", sql: sql)
    }

    let storage: Storage

    init(cursor: RowCursor) {
        storage = .live(cursor, generation: cursor.statement.generation)
    }

    /// A detached row with the given columns and values.
    ///
    /// - Precondition: as many names as values.
    public init(columnNames: [String], values: [DatabaseValue]) {
        precondition(columnNames.count == values.count, "a row needs as many column names as values")
        storage = .copied(values: values, columnNames: columnNames, sql: "")
    }

    /// The number of columns.
    public var count: Int {
        switch storage {
        case .live(let cursor, _): cursor.statement.columnCount
        case .copied(let values, _, _): values.count
        case .stale: 0
        }
    }

    /// The column names, in order.
    public var columnNames: [String] {
        switch storage {
        case .live(let cursor, _): cursor.statement.columnNames
        case .copied(_, let names, _): names
        case .stale: []
        }
    }

    /// The SQL that produced the row ("" for a row made by hand).
    public var sql: String {
        switch storage {
        case .live(let cursor, _): cursor.statement.sql
        case .copied(_, _, let sql): sql
        case .stale(let sql): sql
        }
    }

    /// The 0-based index of the column named `name` (ASCII case-insensitive);
    /// nil when there is none.
    public func index(ofColumn name: String) -> Int? {
        switch storage {
        case .live(let cursor, _): cursor.statement.index(ofColumn: name)
        case .copied(_, let names, _): columnIndex(named: name, in: names)
        case .stale: nil
        }
    }

    /// Whether the row has a column named `name` (ASCII case-insensitive).
    public func hasColumn(_ name: String) -> Bool {
        index(ofColumn: name) != nil
    }

    /// A copy that stays valid after the cursor it came from moves on.
    public func copy() -> Row {
        switch storage {
        case .live(let cursor, let generation):
            let statement = cursor.statement
            guard statement.generation == generation else { return Row(storage: .stale(statement.sql)) }
            return Row(storage: .copied(
                values: statement.copyValues(), columnNames: statement.columnNames, sql: statement.sql))
        case .copied, .stale:
            return self
        }
    }

    private init(storage: Storage) {
        self.storage = storage
    }

    static func copied(from statement: Statement) -> Row {
        Row(storage: .copied(
            values: statement.copyValues(), columnNames: statement.columnNames, sql: statement.sql))
    }

    // MARK: - Typed access

    /// The value at `index` (0-based) as `T`.
    ///
    /// - Throws: ``DatabaseDecodingError`` when the index is out of range or
    ///   the value does not fit `T`.
    public func decode<T: DatabaseValueConvertible>(_ type: T.Type = T.self, at index: Int) throws -> T {
        switch storage {
        case .live(let cursor, let generation):
            let statement = cursor.statement
            guard statement.generation == generation else { throw Self.staleRowError(sql: statement.sql) }
            return try statement.decodeColumn(T.self, at: index)
        case .stale(let sql):
            throw Self.staleRowError(sql: sql)
        case .copied(let values, let names, let sql):
            guard index >= 0 && index < values.count else {
                throw DatabaseDecodingError(
                    reason: .indexOutOfRange, column: nil, columnIndex: index, type: T.self, sql: sql)
            }
            if let value = T.fromDatabaseValue(values[index]) {
                return value
            }
            throw DatabaseDecodingError.mismatch(
                values[index], type: T.self, column: names[index], columnIndex: index, sql: sql)
        }
    }

    /// The value of the column named `name` (ASCII case-insensitive) as `T`.
    ///
    /// - Throws: ``DatabaseDecodingError`` when there is no such column or the
    ///   value does not fit `T`.
    public func decode<T: DatabaseValueConvertible>(_ type: T.Type = T.self, forColumn name: String) throws -> T {
        if case .stale(let sql) = storage { throw Self.staleRowError(sql: sql) }
        guard let index = index(ofColumn: name) else {
            throw DatabaseDecodingError(
                reason: .columnNotFound, column: name, columnIndex: nil, type: T.self, sql: sql)
        }
        return try decode(T.self, at: index)
    }

    /// The value at `index` (0-based) as `T`: `let id: Int = try row[0]`.
    public subscript<T: DatabaseValueConvertible>(_ index: Int) -> T {
        get throws { try decode(T.self, at: index) }
    }

    /// The value of the column named `name` as `T`: `let title: String = try row["title"]`.
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
        switch storage {
        case .live(let cursor, let generation):
            cursor.statement.generation == generation ? cursor.statement.copyValues() : []
        case .copied(let values, _, _): values
        case .stale: []
        }
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
