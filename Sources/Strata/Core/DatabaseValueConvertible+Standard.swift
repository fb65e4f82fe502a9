import Foundation
import StrataSQLite

// MARK: - Integers

/// Integers are stored as SQLite's 64-bit INTEGER. Reading checks the range:
/// 300 read as `UInt8` fails instead of wrapping, and a REAL is accepted only
/// when it is a whole number that fits.
extension DatabaseValueConvertible where Self: FixedWidthInteger {
    @inlinable
    public var databaseValue: DatabaseValue {
        // Values above Int64.max cannot be stored; `bind` throws for them.
        Int64(exactly: self).map(DatabaseValue.integer) ?? .real(Double(self))
    }

    public static func fromDatabaseValue(_ value: DatabaseValue) -> Self? {
        switch value {
        case .integer(let int64):
            return Self(exactly: int64)
        case .real(let double):
            return Self(exactly: double)
        default:
            return nil
        }
    }

    @inlinable
    public func bind(to sqliteStatement: OpaquePointer, at index: Int32) throws {
        guard let int64 = Int64(exactly: self) else {
            throw SQLiteError(
                code: .mismatch,
                message: "\(Self.self) value \(self) does not fit SQLite's 64-bit signed INTEGER",
                sql: sqlText(of: sqliteStatement))
        }
        try checkBind(sqlite3_bind_int64(sqliteStatement, index, int64), sqliteStatement)
    }

    @inlinable @inline(__always)
    public static func decode(from sqliteStatement: OpaquePointer, at index: Int32) -> Self? {
        // One sqlite3_column_value call, then cheap reads of the value:
        // sqlite3_column_type + sqlite3_column_int64 would look the column
        // up twice.
        guard let value = sqlite3_column_value(sqliteStatement, index) else { return nil }
        switch sqlite3_value_type(value) {
        case SQLITE_INTEGER:
            return Self(exactly: sqlite3_value_int64(value))
        case SQLITE_FLOAT:
            return Self(exactly: sqlite3_value_double(value))
        default:
            return nil
        }
    }
}

extension Int: DatabaseValueConvertible {}
extension Int8: DatabaseValueConvertible {}
extension Int16: DatabaseValueConvertible {}
extension Int32: DatabaseValueConvertible {}
extension Int64: DatabaseValueConvertible {}
extension UInt: DatabaseValueConvertible {}
extension UInt8: DatabaseValueConvertible {}
extension UInt16: DatabaseValueConvertible {}
extension UInt32: DatabaseValueConvertible {}
extension UInt64: DatabaseValueConvertible {}

// MARK: - Bool

/// Stored as the INTEGER 0 or 1, as SQLite's own `TRUE` and `FALSE`. Any
/// non-zero INTEGER reads as `true`.
extension Bool: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { .integer(self ? 1 : 0) }

    public static func fromDatabaseValue(_ value: DatabaseValue) -> Bool? {
        Int64.fromDatabaseValue(value).map { $0 != 0 }
    }

    public func bind(to sqliteStatement: OpaquePointer, at index: Int32) throws {
        try checkBind(sqlite3_bind_int64(sqliteStatement, index, self ? 1 : 0), sqliteStatement)
    }

    public static func decode(from sqliteStatement: OpaquePointer, at index: Int32) -> Bool? {
        Int64.decode(from: sqliteStatement, at: index).map { $0 != 0 }
    }
}

// MARK: - Floating point

/// Stored as REAL; an INTEGER reads as the nearest `Double`.
extension Double: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { .real(self) }

    public static func fromDatabaseValue(_ value: DatabaseValue) -> Double? {
        switch value {
        case .integer(let int64): Double(int64)
        case .real(let double): double
        default: nil
        }
    }

    @inlinable
    public func bind(to sqliteStatement: OpaquePointer, at index: Int32) throws {
        try checkBind(sqlite3_bind_double(sqliteStatement, index, self), sqliteStatement)
    }

    @inlinable
    public static func decode(from sqliteStatement: OpaquePointer, at index: Int32) -> Double? {
        guard let value = sqlite3_column_value(sqliteStatement, index) else { return nil }
        switch sqlite3_value_type(value) {
        case SQLITE_INTEGER, SQLITE_FLOAT: return sqlite3_value_double(value)
        default: return nil
        }
    }
}

/// Stored as REAL (a `Double`); reading rounds to the nearest `Float`.
extension Float: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { .real(Double(self)) }

    public static func fromDatabaseValue(_ value: DatabaseValue) -> Float? {
        Double.fromDatabaseValue(value).map(Float.init)
    }

    public func bind(to sqliteStatement: OpaquePointer, at index: Int32) throws {
        try checkBind(sqlite3_bind_double(sqliteStatement, index, Double(self)), sqliteStatement)
    }

    public static func decode(from sqliteStatement: OpaquePointer, at index: Int32) -> Float? {
        Double.decode(from: sqliteStatement, at: index).map(Float.init)
    }
}

// MARK: - Text

/// Stored as UTF-8 TEXT. Only TEXT reads as a `String`: a number is not
/// silently turned into text.
extension String: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { .text(self) }

    public static func fromDatabaseValue(_ value: DatabaseValue) -> String? {
        if case .text(let string) = value { return string }
        return nil
    }

    public func bind(to sqliteStatement: OpaquePointer, at index: Int32) throws {
        try bindText(self, to: sqliteStatement, at: index)
    }

    public static func decode(from sqliteStatement: OpaquePointer, at index: Int32) -> String? {
        guard sqlite3_column_type(sqliteStatement, index) == SQLITE_TEXT else { return nil }
        return readText(from: sqliteStatement, at: index)
    }
}

// MARK: - Bytes

/// Stored as a BLOB. TEXT reads as its UTF-8 bytes.
extension Data: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { .blob(self) }

    public static func fromDatabaseValue(_ value: DatabaseValue) -> Data? {
        switch value {
        case .blob(let data): data
        case .text(let string): Data(string.utf8)
        default: nil
        }
    }

    public func bind(to sqliteStatement: OpaquePointer, at index: Int32) throws {
        try withUnsafeBytes { try bindBlob($0, to: sqliteStatement, at: index) }
    }

    public static func decode(from sqliteStatement: OpaquePointer, at index: Int32) -> Data? {
        switch sqlite3_column_type(sqliteStatement, index) {
        case SQLITE_BLOB, SQLITE_TEXT: readBlob(from: sqliteStatement, at: index)
        default: nil
        }
    }
}

/// `[UInt8]` is stored as a BLOB, like `Data`.
extension Array: DatabaseValueConvertible where Element == UInt8 {
    public var databaseValue: DatabaseValue { .blob(Data(self)) }

    public static func fromDatabaseValue(_ value: DatabaseValue) -> [UInt8]? {
        Data.fromDatabaseValue(value).map { [UInt8]($0) }
    }

    public func bind(to sqliteStatement: OpaquePointer, at index: Int32) throws {
        try withUnsafeBytes { try bindBlob($0, to: sqliteStatement, at: index) }
    }

    public static func decode(from sqliteStatement: OpaquePointer, at index: Int32) -> [UInt8]? {
        switch sqlite3_column_type(sqliteStatement, index) {
        case SQLITE_BLOB, SQLITE_TEXT:
            guard let bytes = sqlite3_column_blob(sqliteStatement, index) else { return [] }
            let count = Int(sqlite3_column_bytes(sqliteStatement, index))
            return [UInt8](UnsafeRawBufferPointer(start: bytes, count: count))
        default:
            return nil
        }
    }
}
