import Foundation
import StrataSQLite

extension RowProtocol {
    /// The value at `index` as text, whatever its storage class, as
    /// `sqlite3_column_text` (and FMDB's `string(forColumn:)`) gives it:
    /// `42` for an INTEGER, `2.5` for a REAL (15 significant digits), a
    /// BLOB's bytes read as UTF-8; nil for NULL. For printing and logging
    /// rows; the typed reads (`try row["id"] as Int`) stay strict.
    ///
    /// ```swift
    /// let row = try Row.fetchOne(db, sql: "SELECT 1 AS n, 2.5 AS r, NULL AS z")!
    /// print(try row.text(at: 0) ?? "NULL", try row.text(forColumn: "r") ?? "NULL")  // 1 2.5
    /// ```
    ///
    /// - Throws: ``DatabaseDecodingError`` when the index is out of range.
    public func text(at index: Int) throws -> String? {
        try databaseValue(at: index).text
    }

    /// The value of the column named `name` as text, whatever its storage
    /// class; nil for NULL. See ``text(at:)``.
    ///
    /// - Throws: ``DatabaseDecodingError`` when there is no such column.
    public func text(forColumn name: String) throws -> String? {
        try databaseValue(forColumn: name).text
    }
}

extension DatabaseValue {
    /// The value as SQLite converts it to TEXT (`CAST(x AS TEXT)`): an
    /// INTEGER's digits, a REAL with up to 15 significant digits (`2.5`,
    /// `1.0e+20`), a BLOB's bytes as UTF-8; nil for NULL.
    public var text: String? {
        switch self {
        case .null: return nil
        case .integer(let value): return String(value)
        case .real(let value): return sqliteText(of: value)
        case .text(let value): return value
        case .blob(let bytes): return String(decoding: bytes, as: UTF8.self)
        }
    }
}

/// A REAL as SQLite writes it as text (`%!.15g`, see printf.html).
private func sqliteText(of value: Double) -> String {
    var buffer = [CChar](repeating: 0, count: 64)
    let count = Int32(buffer.count)
    _ = buffer.withUnsafeMutableBufferPointer { pointer in
        withVaList([value]) { arguments in
            sqlite3_vsnprintf(count, pointer.baseAddress, "%!.15g", arguments)
        }
    }
    let length = buffer.firstIndex(of: 0) ?? buffer.count
    return String(decoding: buffer[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
