import Foundation
import StrataSQLite

/// A record whose reading, writing, columns and schema are generated at
/// compile time, by the `@Record` macro of the `StrataMacros` product.
///
/// There is no need to conform by hand: write `@Record` on the type.
///
/// ```swift
/// import StrataMacros
///
/// @Record
/// struct Movie {
///     var id: Int64?
///     var title: String
///     var year: Int
/// }
///
/// let recent = try Movie.filter { $0.year > 1990 }.order(\.title).fetchAll(db)
/// ```
///
/// A generated record is read by ``init(row:)`` with each column's index
/// resolved once per statement, and written by binding each stored property
/// straight into the type's cached INSERT: neither goes through `Decoder` nor
/// `Encoder`. It works with every API of ``DatabaseRecord``, beside records
/// written as plain `Codable` types.
public protocol GeneratedRecord: DatabaseRecord {
    /// The typed columns of the table, one per stored property:
    /// `Movie.columns.year` is a `Column<Int>`.
    associatedtype Columns

    /// The typed columns: `Movie.columns.title.like("The %")`.
    static var columns: Columns { get }

    /// The stored columns, in the order ``encodeColumns(into:)`` writes them.
    static var databaseColumns: [RecordColumnDefinition] { get }

    /// Reads a record from a row; ``RecordRow`` knows where each column is.
    init(row: RecordRow) throws

    /// Writes the stored properties, in ``databaseColumns`` order.
    func encodeColumns(into values: inout RecordValues) throws
}

/// A stored column of a ``GeneratedRecord``: its name and how it is stored.
public struct RecordColumnDefinition: Sendable {
    /// The column's name.
    public var name: String
    /// The declared SQL type: INTEGER, REAL, TEXT, BLOB, BOOLEAN, or "".
    public var declaredType: String
    /// Whether the column may be NULL (an optional property).
    public var isOptional: Bool
    /// Whether values are stored as JSON text (a nested `Codable` value).
    public var isJSON: Bool

    /// A column holding values of `type`, stored as a `DatabaseRecord`
    /// property of that type is stored.
    public init(_ name: String, _ type: Any.Type) {
        let storage = columnStorage(of: type)
        self.name = name
        self.declaredType = storage.declaredType
        self.isOptional = isOptionalType(type)
        self.isJSON = storage.isJSON
    }
}

extension GeneratedRecord {
    /// Reads each row with ``init(row:)``, the columns' indexes resolved on
    /// the first row of each statement.
    @inlinable
    public static func makeRowReader() -> (LiveRow) throws -> Self {
        let layout = RecordLayout(databaseColumns.map(\.name))
        return { row in try Self(row: layout.row(row)) }
    }

    /// Reads the rows of one statement: the columns' indexes are resolved on
    /// the first row; the rows after it are read in place right after the
    /// step that made them, so they need no closure call, no staleness check
    /// and no reference counting.
    @inlinable
    public static func _readAll(_ cursor: RowCursor) throws -> [Self] {
        var records: [Self] = []
        guard let first = try cursor.next() else { return records }
        let layout = RecordLayout(databaseColumns.map(\.name))
        records.append(try Self(row: layout.row(first)))
        let live = cursor.statement.liveState
        while try cursor.step() {
            records.append(try Self(row: RecordRow(layout: layout, cursor: cursor, live: live)))
        }
        withExtendedLifetime(layout) {}
        return records
    }

    public static var _generatedColumns: [RecordColumnDefinition]? { databaseColumns }

    @inlinable
    public func _encodeGenerated(to values: inout RecordValues) throws -> Bool {
        try encodeColumns(into: &values)
        return true
    }
}

// MARK: - Typed queries through the generated columns

extension GeneratedRecord {
    /// The records where the predicate on the typed columns is true:
    /// `Movie.filter { $0.year > 1990 }`.
    public static func filter(_ predicate: (Columns) -> SQLExpression<Bool>) -> RecordQuery<Self> {
        all().filter(predicate(columns))
    }

    /// The records where a NULL-able predicate is true (NULL counts as false):
    /// `Movie.filter { $0.rating >= 8 }` when `rating` is optional.
    public static func filter(_ predicate: (Columns) -> SQLExpression<Bool?>) -> RecordQuery<Self> {
        all().filter(predicate(columns))
    }

    /// Every record, sorted by columns: `Movie.order(\.year, \.title)`.
    public static func order(_ columns: PartialKeyPath<Columns>...) -> RecordQuery<Self> {
        RecordQuery(table: table).order(columns)
    }

    /// Every record, sorted by a term of the typed columns:
    /// `Movie.order { $0.year.desc }`.
    public static func order(_ term: (Columns) -> any SQLOrderingTerm) -> RecordQuery<Self> {
        all().order(term(columns))
    }
}

extension RecordQuery where Record: GeneratedRecord {
    /// Records where the predicate on the typed columns is true; several
    /// filters are joined by AND.
    public func filter(_ predicate: (Record.Columns) -> SQLExpression<Bool>) -> RecordQuery {
        filter(predicate(Record.columns))
    }

    /// Records where a NULL-able predicate on the typed columns is true.
    public func filter(_ predicate: (Record.Columns) -> SQLExpression<Bool?>) -> RecordQuery {
        filter(predicate(Record.columns))
    }

    /// Sorts by columns, in order: `.order(\.year, \.title)`; replaces an
    /// earlier order.
    public func order(_ columns: PartialKeyPath<Record.Columns>...) -> RecordQuery {
        order(columns)
    }

    /// Sorts by a term of the typed columns: `.order { $0.year.desc }`.
    public func order(_ term: (Record.Columns) -> any SQLOrderingTerm) -> RecordQuery {
        order(term(Record.columns))
    }

    func order(_ keyPaths: [PartialKeyPath<Record.Columns>]) -> RecordQuery {
        let columns = Record.columns
        let terms = keyPaths.map { keyPath -> any SQLOrderingTerm in
            guard let term = columns[keyPath: keyPath] as? any SQLOrderingTerm else {
                preconditionFailure("\(keyPath) is not a column of \(Record.self)")
            }
            return term
        }
        return RecordQuery(table: table.order(terms))
    }
}

// MARK: - Reading

/// Where each column of a generated record is in the rows of one statement:
/// resolved by name on the first row, then reused for every row.
///
/// Strata makes one for each fetch of a ``GeneratedRecord`` type.
@usableFromInline
final class RecordLayout {
    @usableFromInline let names: [String]
    @usableFromInline let indexes: UnsafeMutablePointer<Int32>
    /// The statement the indexes were resolved for; nil before the first row
    /// and for detached rows. A layout is used by one fetch at a time.
    @usableFromInline @exclusivity(unchecked) var statement: OpaquePointer?

    /// A layout of the columns, in the order the record reads them.
    @usableFromInline
    init(_ names: [String]) {
        self.names = names
        self.indexes = .allocate(capacity: max(names.count, 1))
        self.indexes.initialize(repeating: -1, count: max(names.count, 1))
    }

    deinit {
        indexes.deallocate()
    }

    /// The row, for ``GeneratedRecord/init(row:)``; valid while `row` and
    /// the layout are.
    ///
    /// - Throws: ``SQLiteError`` (`.misuse`) for a row read after its cursor
    ///   moved on.
    @inlinable @inline(__always)
    func row(_ row: LiveRow) throws -> RecordRow {
        if let live = row.live {
            // Checked once per row: the generated reads then go straight to
            // the statement.
            guard live.pointee.generation == row.generation else {
                throw LiveRow.staleRowError(sql: row.sql)
            }
            let sqliteStatement = live.pointee.sqliteStatement
            if sqliteStatement != statement {
                resolve(live.pointee.columnNames)
                statement = sqliteStatement
            }
            return RecordRow(statement: sqliteStatement, layout: self, row: row)
        }
        statement = nil
        resolve(row.columnNames)
        return RecordRow(statement: nil, layout: self, row: row)
    }

    @usableFromInline
    func resolve(_ columnNames: [String]) {
        for (position, name) in names.enumerated() {
            indexes[position] = columnIndex(named: name, in: columnNames).map { Int32(truncatingIfNeeded: $0) } ?? -1
        }
    }
}

/// A row as a generated record reads it: each column by its position in the
/// record, at the index resolved for the statement.
///
/// Strata passes one to ``GeneratedRecord/init(row:)``; it is valid only
/// during that call, and holds no reference, so reading a row costs no
/// reference counting. Code that `@Record` generates uses it; there is no
/// need to use it directly.
public struct RecordRow {
    @usableFromInline let statement: OpaquePointer?
    @usableFromInline let indexes: UnsafeMutablePointer<Int32>
    @usableFromInline unowned(unsafe) let layout: RecordLayout
    // The parts of the `LiveRow`, unretained: Strata keeps the row alive
    // while `init(row:)` runs.
    @usableFromInline unowned(unsafe) let cursor: RowCursor?
    @usableFromInline unowned(unsafe) let detached: RowStorage?
    @usableFromInline let generation: UInt
    @usableFromInline let live: UnsafeMutablePointer<LiveStatementState>?
    /// Whether numbers are read in place (see ``SQLiteValueLayout``).
    @usableFromInline let readsInPlace: Bool

    @inlinable @inline(__always)
    init(statement: OpaquePointer?, layout: RecordLayout, row: LiveRow) {
        self.statement = statement
        self.indexes = layout.indexes
        self.layout = layout
        self.cursor = row.cursor
        self.detached = row.detached
        self.generation = row.generation
        self.live = row.live
        self.readsInPlace = row.live?.pointee.readsInPlace ?? false
    }

    /// A row of a cursor that was just stepped, read in place.
    @inlinable @inline(__always)
    init(layout: RecordLayout, cursor: RowCursor, live: UnsafeMutablePointer<LiveStatementState>) {
        self.statement = live.pointee.sqliteStatement
        self.indexes = layout.indexes
        self.layout = layout
        self.cursor = cursor
        self.detached = nil
        self.generation = live.pointee.generation
        self.live = live
        self.readsInPlace = live.pointee.readsInPlace
    }

    /// The row itself, for errors and columns read by name.
    public var row: LiveRow {
        LiveRow(cursor: cursor, detached: detached, generation: generation, live: live)
    }

    /// The value of the record's column at `position`.
    @inlinable @inline(__always)
    public func decode<T: DatabaseValueConvertible>(_ type: T.Type, _ position: Int) throws -> T {
        let index = indexes[position]
        if index >= 0, let statement, let value = readColumn(T.self, from: statement, at: index, inPlace: readsInPlace) {
            return value
        }
        return try decodeSlowly(T.self, position)
    }

    /// The value of an optional column: nil for NULL, and nil when the
    /// query did not select the column.
    @inlinable @inline(__always)
    public func decode<T: DatabaseValueConvertible>(_ type: T?.Type, _ position: Int) throws -> T? {
        let index = indexes[position]
        if index >= 0, let statement {
            if sqlite3_column_type(statement, index) == SQLITE_NULL { return nil }
            if let value = T.decode(from: statement, at: index) { return value }
        }
        return try decodeSlowly(T?.self, position)
    }

    /// A `RawRepresentable` value (an enum) stored as its raw value.
    @_disfavoredOverload @inlinable
    public func decode<T: RawRepresentable & Decodable>(_ type: T.Type, _ position: Int) throws -> T
    where T.RawValue: DatabaseValueConvertible {
        let raw = try decode(T.RawValue.self, position)
        guard let value = T(rawValue: raw) else { throw mismatch(T.self, position) }
        return value
    }

    /// An optional `RawRepresentable` value stored as its raw value.
    @_disfavoredOverload @inlinable
    public func decode<T: RawRepresentable & Decodable>(_ type: T?.Type, _ position: Int) throws -> T?
    where T.RawValue: DatabaseValueConvertible {
        guard let raw = try decode(T.RawValue?.self, position) else { return nil }
        guard let value = T(rawValue: raw) else { throw mismatch(T.self, position) }
        return value
    }

    /// Any other `Decodable` value, stored as a `DatabaseRecord` stores it:
    /// its single value, or JSON text.
    @_disfavoredOverload
    public func decode<T: Decodable>(_ type: T.Type, _ position: Int) throws -> T {
        let stored = try storedValue(position, type: T.self)
        return try decodeStored(T.self, stored, position)
    }

    /// An optional `Decodable` value: nil for NULL or a missing column.
    @_disfavoredOverload
    public func decode<T: Decodable>(_ type: T?.Type, _ position: Int) throws -> T? {
        if indexes[position] < 0 { return nil }
        let stored = try storedValue(position, type: T?.self)
        if stored.isNull { return nil }
        return try decodeStored(T.self, stored, position)
    }

    private func storedValue(_ position: Int, type: Any.Type) throws -> DatabaseValue {
        let index = Int(indexes[position])
        guard index >= 0 else { throw missing(type, position) }
        return try row.databaseValue(at: index)
    }

    private func decodeStored<T: Decodable>(_ type: T.Type, _ stored: DatabaseValue, _ position: Int) throws -> T {
        try decodeStoredColumn(
            T.self, from: stored, column: layout.names[position], columnIndex: Int(indexes[position]), sql: row.sql)
    }

    /// A detached row, a missing column, or a value that does not fit.
    @usableFromInline
    func decodeSlowly<T: DatabaseValueConvertible>(_ type: T.Type, _ position: Int) throws -> T {
        let index = Int(indexes[position])
        guard index >= 0 else {
            // A column the query did not select reads as nil when optional.
            if let null = T.fromDatabaseValue(.null) { return null }
            throw missing(T.self, position)
        }
        return try row.decode(T.self, at: index)
    }

    @usableFromInline
    func mismatch(_ type: Any.Type, _ position: Int) -> DatabaseDecodingError {
        let index = Int(indexes[position])
        return DatabaseDecodingError(
            reason: .valueMismatch, column: layout.names[position], columnIndex: index, type: type,
            value: try? row.databaseValue(at: index), sql: row.sql)
    }

    func missing(_ type: Any.Type, _ position: Int) -> DatabaseDecodingError {
        DatabaseDecodingError(reason: .columnNotFound, column: layout.names[position], columnIndex: nil, type: type, sql: row.sql)
    }
}

// MARK: - Writing

/// Where a generated record writes its stored properties: straight into the
/// parameters of a prepared statement, or into a list of values.
///
/// Code that `@Record` generates uses it; there is no need to use it directly.
public struct RecordValues {
    @usableFromInline let statement: OpaquePointer?
    @usableFromInline var parameter: Int32 = 0
    @usableFromInline var collected: [(any DatabaseValueConvertible)?] = []
    /// Whether the single-column primary key was written as nil, so that
    /// SQLite assigns it.
    public var primaryKeyIsNull = false

    @usableFromInline
    init(statement: OpaquePointer) {
        self.statement = statement
    }

    init(collectingCapacity capacity: Int) {
        self.statement = nil
        collected.reserveCapacity(capacity)
    }

    /// The values collected, in column order.
    var values: [(any DatabaseValueConvertible)?] { collected }

    /// Writes the next column's value.
    @inlinable
    public mutating func encode<T: DatabaseValueConvertible>(_ value: T) throws {
        parameter &+= 1
        if let statement {
            try value.bind(to: statement, at: parameter)
        } else {
            collected.append(value)
        }
    }

    /// Writes the next column's value; nil is NULL.
    @inlinable
    public mutating func encode<T: DatabaseValueConvertible>(_ value: T?) throws {
        if let value {
            try encode(value)
        } else {
            try encodeNull()
        }
    }

    /// Writes the single-column primary key; nil is NULL, and SQLite assigns
    /// the key.
    @inlinable
    public mutating func encodePrimaryKey<T: DatabaseValueConvertible>(_ value: T?) throws {
        if value == nil { primaryKeyIsNull = true }
        try encode(value)
    }

    /// Writes the single-column primary key.
    @_disfavoredOverload @inlinable
    public mutating func encodePrimaryKey<T: DatabaseValueConvertible>(_ value: T) throws {
        try encode(value)
    }

    /// Writes a single-column primary key stored as a `DatabaseRecord`
    /// stores any other `Encodable` value.
    @_disfavoredOverload
    public mutating func encodePrimaryKey<T: Encodable>(_ value: T) throws {
        try encode(value)
    }

    /// Writes a `RawRepresentable` value (an enum) as its raw value.
    @_disfavoredOverload @inlinable
    public mutating func encode<T: RawRepresentable & Encodable>(_ value: T) throws where T.RawValue: DatabaseValueConvertible {
        try encode(value.rawValue)
    }

    /// Writes an optional `RawRepresentable` value as its raw value or NULL.
    @_disfavoredOverload @inlinable
    public mutating func encode<T: RawRepresentable & Encodable>(_ value: T?) throws where T.RawValue: DatabaseValueConvertible {
        try encode(value?.rawValue)
    }

    /// Writes any other `Encodable` value as a `DatabaseRecord` stores it:
    /// its single value, or JSON text.
    @_disfavoredOverload
    public mutating func encode<T: Encodable>(_ value: T) throws {
        if let optional = value as? any OptionalValue, optional.isNone {
            try encodeNull()
            return
        }
        try encode(columnValue(of: value))
    }

    /// Writes NULL.
    @usableFromInline
    mutating func encodeNull() throws {
        parameter &+= 1
        if let statement {
            try checkBind(sqlite3_bind_null(statement, parameter), statement)
        } else {
            collected.append(nil)
        }
    }
}

/// Assigns a new rowid to a record's primary key property, in code that
/// `@Record` generates.
///
/// - Throws: ``RecordError`` when the property's type cannot hold the rowid.
public func assignRowID<T: DatabaseValueConvertible>(_ rowID: Int64, to property: inout T, tableName: String, column: String) throws {
    guard let value = T.fromDatabaseValue(.integer(rowID)) else {
        throw rowIDDoesNotFit(rowID, T.self, tableName: tableName, column: column)
    }
    property = value
}

/// The fallback for a primary key whose type is not a
/// ``DatabaseValueConvertible``: SQLite's rowid cannot be written into it.
@_disfavoredOverload
public func assignRowID<T>(_ rowID: Int64, to property: inout T, tableName: String, column: String) throws {
    throw rowIDDoesNotFit(rowID, T.self, tableName: tableName, column: column)
}

private func rowIDDoesNotFit(_ rowID: Int64, _ type: Any.Type, tableName: String, column: String) -> RecordError {
    RecordError(
        kind: .missingPrimaryKey, tableName: tableName,
        message: "the row was inserted with rowid \(rowID), which \(type) (the type of \"\(column)\") cannot hold")
}
