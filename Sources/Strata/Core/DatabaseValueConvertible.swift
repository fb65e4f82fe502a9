import Foundation
import StrataSQLite

/// A Swift type that can be stored in a column and read back.
///
/// Strata's own conformances (integers, `Bool`, `Double`, `String`, `Data`,
/// `Date`, `UUID`, …) bind and read straight between the statement and the
/// Swift value. Your own types usually implement just the two conversions to
/// and from ``DatabaseValue``:
///
/// ```swift
/// struct Temperature: DatabaseValueConvertible {
///     var celsius: Double
///     var databaseValue: DatabaseValue { .real(celsius) }
///     static func fromDatabaseValue(_ value: DatabaseValue) -> Temperature? {
///         guard case .real(let celsius) = value else { return nil }
///         return Temperature(celsius: celsius)
///     }
/// }
/// ```
///
/// A `RawRepresentable` enum whose raw value is convertible gets both
/// conversions for free: `enum Mood: String, DatabaseValueConvertible { … }`.
public protocol DatabaseValueConvertible: Sendable {
    /// The value to store.
    var databaseValue: DatabaseValue { get }

    /// The Swift value for a stored value, or nil when it does not fit this
    /// type (wrong storage class, out of range, NULL for a non-optional).
    static func fromDatabaseValue(_ value: DatabaseValue) -> Self?

    /// Binds the value to parameter `index` (1-based) of a prepared statement.
    ///
    /// The default implementation binds ``databaseValue``; Strata's own types
    /// bind directly.
    /// - Throws: ``SQLiteError`` when the value cannot be stored.
    func bind(to sqliteStatement: OpaquePointer, at index: Int32) throws

    /// Reads column `index` (0-based) of the statement's current row, or nil
    /// when it does not fit this type.
    ///
    /// The default implementation goes through ``fromDatabaseValue(_:)``;
    /// Strata's own types read directly.
    static func decode(from sqliteStatement: OpaquePointer, at index: Int32) -> Self?
}

extension DatabaseValueConvertible {
    public func bind(to sqliteStatement: OpaquePointer, at index: Int32) throws {
        try databaseValue.bind(to: sqliteStatement, at: index)
    }

    public static func decode(from sqliteStatement: OpaquePointer, at index: Int32) -> Self? {
        fromDatabaseValue(DatabaseValue.read(from: sqliteStatement, at: index))
    }
}

/// Throws the error of a failed `sqlite3_bind_*` call.
@inlinable @inline(__always)
func checkBind(_ code: Int32, _ statement: OpaquePointer) throws {
    // Inlined, so a successful bind costs a comparison, not a call.
    if code != SQLITE_OK { throw bindFailure(code, statement) }
}

@usableFromInline
func bindFailure(_ code: Int32, _ statement: OpaquePointer) -> SQLiteError {
    SQLiteError.fromConnection(sqlite3_db_handle(statement), code: code, sql: sqlText(of: statement))
}

/// The SQL a statement was prepared with.
@usableFromInline
func sqlText(of statement: OpaquePointer) -> String? {
    sqlite3_sql(statement).map { String(cString: $0) }
}

/// Binds UTF-8 text; an empty string stays an empty string, not NULL.
func bindText(_ string: String, to statement: OpaquePointer, at index: Int32) throws {
    var string = string
    let code = string.withUTF8 { buffer -> Int32 in
        guard let base = buffer.baseAddress, buffer.count > 0 else {
            return sqlite3_bind_text(statement, index, "", 0, sqliteTransient)
        }
        return base.withMemoryRebound(to: CChar.self, capacity: buffer.count) { pointer in
            sqlite3_bind_text(statement, index, pointer, Int32(buffer.count), sqliteTransient)
        }
    }
    try checkBind(code, statement)
}

/// Binds bytes; empty bytes stay an empty BLOB, not NULL.
func bindBlob(_ bytes: UnsafeRawBufferPointer, to statement: OpaquePointer, at index: Int32) throws {
    let code: Int32
    if let base = bytes.baseAddress, bytes.count > 0 {
        code = sqlite3_bind_blob(statement, index, base, Int32(bytes.count), sqliteTransient)
    } else {
        code = sqlite3_bind_zeroblob(statement, index, 0)
    }
    try checkBind(code, statement)
}

// MARK: - DatabaseValue

extension DatabaseValue: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { self }

    public static func fromDatabaseValue(_ value: DatabaseValue) -> DatabaseValue? { value }

    public func bind(to sqliteStatement: OpaquePointer, at index: Int32) throws {
        switch self {
        case .null:
            try checkBind(sqlite3_bind_null(sqliteStatement, index), sqliteStatement)
        case .integer(let value):
            try checkBind(sqlite3_bind_int64(sqliteStatement, index, value), sqliteStatement)
        case .real(let value):
            try checkBind(sqlite3_bind_double(sqliteStatement, index, value), sqliteStatement)
        case .text(let value):
            try bindText(value, to: sqliteStatement, at: index)
        case .blob(let value):
            try value.withUnsafeBytes { try bindBlob($0, to: sqliteStatement, at: index) }
        }
    }

    public static func decode(from sqliteStatement: OpaquePointer, at index: Int32) -> DatabaseValue? {
        read(from: sqliteStatement, at: index)
    }
}

// MARK: - Optional

extension Optional: DatabaseValueConvertible where Wrapped: DatabaseValueConvertible {
    /// NULL for nil, the wrapped value's otherwise.
    public var databaseValue: DatabaseValue {
        self?.databaseValue ?? .null
    }

    /// `.some(nil)` for NULL; nil when a non-NULL value does not fit `Wrapped`.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Wrapped?? {
        if value.isNull { return .some(nil) }
        return Wrapped.fromDatabaseValue(value).map { .some($0) }
    }

    public func bind(to sqliteStatement: OpaquePointer, at index: Int32) throws {
        if let self {
            try self.bind(to: sqliteStatement, at: index)
        } else {
            try checkBind(sqlite3_bind_null(sqliteStatement, index), sqliteStatement)
        }
    }

    public static func decode(from sqliteStatement: OpaquePointer, at index: Int32) -> Wrapped?? {
        if sqlite3_column_type(sqliteStatement, index) == SQLITE_NULL { return .some(nil) }
        return Wrapped.decode(from: sqliteStatement, at: index).map { .some($0) }
    }
}

// MARK: - RawRepresentable

extension DatabaseValueConvertible where Self: RawRepresentable, RawValue: DatabaseValueConvertible {
    /// The raw value's stored value.
    public var databaseValue: DatabaseValue { rawValue.databaseValue }

    /// The case whose raw value is stored; nil for an unknown raw value.
    public static func fromDatabaseValue(_ value: DatabaseValue) -> Self? {
        RawValue.fromDatabaseValue(value).flatMap(Self.init(rawValue:))
    }

    public func bind(to sqliteStatement: OpaquePointer, at index: Int32) throws {
        try rawValue.bind(to: sqliteStatement, at: index)
    }

    public static func decode(from sqliteStatement: OpaquePointer, at index: Int32) -> Self? {
        RawValue.decode(from: sqliteStatement, at: index).flatMap(Self.init(rawValue:))
    }
}
