import Foundation
import StrataSQLite

/// A value as SQLite stores it: one of its five storage classes.
///
/// Use it for untyped access to a row (``Row/databaseValue(at:)``) and to
/// write conversions for your own types (``DatabaseValueConvertible``).
/// Typed access (`try row["id"] as Int`) does not go through this enum.
///
/// See <https://www.sqlite.org/datatype3.html>.
public enum DatabaseValue: Hashable, Sendable {
    /// SQL NULL.
    case null
    /// A 64-bit signed INTEGER.
    case integer(Int64)
    /// A REAL (IEEE double).
    case real(Double)
    /// TEXT, decoded as UTF-8.
    case text(String)
    /// A BLOB.
    case blob(Data)

    /// Whether the value is NULL.
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The name of the storage class: `NULL`, `INTEGER`, `REAL`, `TEXT` or `BLOB`.
    public var storageClassName: String {
        switch self {
        case .null: "NULL"
        case .integer: "INTEGER"
        case .real: "REAL"
        case .text: "TEXT"
        case .blob: "BLOB"
        }
    }

    /// Reads column `index` of the statement's current row.
    static func read(from statement: OpaquePointer, at index: Int32) -> DatabaseValue {
        switch sqlite3_column_type(statement, index) {
        case SQLITE_INTEGER:
            return .integer(sqlite3_column_int64(statement, index))
        case SQLITE_FLOAT:
            return .real(sqlite3_column_double(statement, index))
        case SQLITE_TEXT:
            return .text(readText(from: statement, at: index))
        case SQLITE_BLOB:
            return .blob(readBlob(from: statement, at: index))
        default:
            return .null
        }
    }

    /// Reads a `sqlite3_value` (a function argument).
    static func read(from value: OpaquePointer) -> DatabaseValue {
        switch sqlite3_value_type(value) {
        case SQLITE_INTEGER:
            return .integer(sqlite3_value_int64(value))
        case SQLITE_FLOAT:
            return .real(sqlite3_value_double(value))
        case SQLITE_TEXT:
            guard let bytes = sqlite3_value_text(value) else { return .text("") }
            let count = Int(sqlite3_value_bytes(value))
            return .text(String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self))
        case SQLITE_BLOB:
            guard let bytes = sqlite3_value_blob(value) else { return .blob(Data()) }
            return .blob(Data(bytes: bytes, count: Int(sqlite3_value_bytes(value))))
        default:
            return .null
        }
    }
}

/// Reads column `index` as UTF-8 text, whatever its storage class.
func readText(from statement: OpaquePointer, at index: Int32) -> String {
    // sqlite3_column_text before sqlite3_column_bytes, as SQLite's docs ask.
    guard let bytes = sqlite3_column_text(statement, index) else { return "" }
    let count = Int(sqlite3_column_bytes(statement, index))
    return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
}

/// Reads column `index` as bytes, whatever its storage class.
func readBlob(from statement: OpaquePointer, at index: Int32) -> Data {
    guard let bytes = sqlite3_column_blob(statement, index) else { return Data() }
    return Data(bytes: bytes, count: Int(sqlite3_column_bytes(statement, index)))
}

// MARK: - Literals

extension DatabaseValue: ExpressibleByNilLiteral {
    /// `nil` is NULL.
    public init(nilLiteral: ()) { self = .null }
}

extension DatabaseValue: ExpressibleByIntegerLiteral {
    /// An integer literal is an INTEGER.
    public init(integerLiteral value: Int64) { self = .integer(value) }
}

extension DatabaseValue: ExpressibleByFloatLiteral {
    /// A floating-point literal is a REAL.
    public init(floatLiteral value: Double) { self = .real(value) }
}

extension DatabaseValue: ExpressibleByStringLiteral {
    /// A string literal is TEXT.
    public init(stringLiteral value: String) { self = .text(value) }
}

extension DatabaseValue: ExpressibleByBooleanLiteral {
    /// `true` is the INTEGER 1, `false` the INTEGER 0, as in SQLite.
    public init(booleanLiteral value: Bool) { self = .integer(value ? 1 : 0) }
}

// MARK: - Description

extension DatabaseValue: CustomStringConvertible {
    /// The value as SQL would spell it: `NULL`, `42`, `3.5`, `'text'`, `X'00FF'`.
    public var description: String {
        switch self {
        case .null:
            return "NULL"
        case .integer(let value):
            return String(value)
        case .real(let value):
            return String(value)
        case .text(let value):
            return "'" + doubling("'", in: value) + "'"
        case .blob(let value):
            return "X'" + value.map { byte in
                let hex = String(byte, radix: 16, uppercase: true)
                return byte < 16 ? "0" + hex : hex
            }.joined() + "'"
        }
    }
}
