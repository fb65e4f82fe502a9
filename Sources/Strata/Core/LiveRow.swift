/// The current row of a ``RowCursor``, read in place from the statement:
/// no value is copied until you read it.
///
/// ```swift
/// let rows = try Row.fetchCursor(db, sql: "SELECT start, end, country FROM ips")
/// while let row = try rows.next() {
///     let country: String = try row["country"]
/// }
/// ```
///
/// A live row is valid only until its cursor moves on; reading it after that
/// throws ``SQLiteError`` (`.misuse`) rather than returning another row's
/// data. Call ``copy()`` to keep it as a ``Row``. A live row reads its
/// connection's statement, so it is not `Sendable`: it stays on the task that
/// iterates the cursor. ``RowDecodable/init(row:)`` receives live rows;
/// `LiveRow(row)` wraps a copied ``Row`` for the same code.
///
/// A live row reads columns as a ``Row`` does: by index or by name, typed
/// (`try row["id"] as Int64`) or untyped (``databaseValue(at:)``).
public struct LiveRow: RowProtocol {
    /// The cursor of a live row; nil for a detached one. Holding the cursor
    /// keeps its statement from being reset while the row is in use.
    @usableFromInline
    let cursor: RowCursor?
    /// The values of a detached row (a wrapped copy).
    @usableFromInline
    let detached: RowStorage?
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

    @usableFromInline
    init(cursor: RowCursor?, detached: RowStorage?, generation: UInt, live: UnsafeMutablePointer<LiveStatementState>?) {
        self.cursor = cursor
        self.detached = detached
        self.generation = generation
        self.live = live
    }

    /// A live row that reads a copied row: for calling code written for
    /// cursors (such as ``RowDecodable/init(row:)``) with a ``Row``.
    public init(_ row: Row) {
        self.cursor = nil
        self.detached = row.storage
        self.live = nil
        self.generation = 0
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

    /// A copy that stays valid after the cursor it came from moves on, and
    /// can be sent to another task.
    public func copy() -> Row {
        guard let statement = liveStatement else { return Row(storage: detached!) }
        guard isCurrent else { return Row.stale(sql: statement.sql) }
        return Row.copied(from: statement)
    }

    // MARK: - Typed access

    /// The value at `index` (0-based) as `T`.
    ///
    /// - Throws: ``DatabaseDecodingError`` when the index is out of range or
    ///   the value does not fit `T`.
    @inlinable @inline(__always)
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
        try Row(storage: detached!).decode(T.self, at: index)
    }

    /// The value of the column named `name` (ASCII case-insensitive) as `T`.
    ///
    /// - Throws: ``DatabaseDecodingError`` when there is no such column or the
    ///   value does not fit `T`.
    @inlinable @inline(__always)
    public func decode<T: DatabaseValueConvertible>(_ type: T.Type = T.self, forColumn name: String) throws -> T {
        if let live {
            // `cursor` owns the statement that owns `live`.
            defer { _fixLifetime(cursor) }
            if live.pointee.generation == generation,
                let index = live.pointee.index(ofColumn: name),
                let value = readColumn(T.self, from: live.pointee.sqliteStatement, at: Int32(truncatingIfNeeded: index),
                                       inPlace: live.pointee.readsInPlace)
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

    // The subscripts repeat RowProtocol's as concrete members: a cursor's
    // row is read in every hot loop, and these inline without depending on
    // the optimizer specializing a protocol extension.

    /// The value at `index` (0-based) as `T`: `let id: Int = try row[0]`.
    @inlinable
    public subscript<T: DatabaseValueConvertible>(_ index: Int) -> T {
        @inline(__always) get throws { try decode(T.self, at: index) }
    }

    /// The value of the column named `name` as `T`: `let title: String = try row["title"]`.
    @inlinable
    public subscript<T: DatabaseValueConvertible>(_ name: String) -> T {
        @inline(__always) get throws { try decode(T.self, forColumn: name) }
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

// Not Sendable: a live row reads a statement of a connection opened with
// SQLITE_OPEN_NOMUTEX, which only the cursor's thread may touch.
@available(*, unavailable, message: "a LiveRow reads its cursor's statement in place; send row.copy(), a Row")
extension LiveRow: Sendable {}
