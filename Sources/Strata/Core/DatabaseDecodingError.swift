/// A value could not be read as the requested Swift type.
///
/// Thrown instead of a silent default or a crash when a column holds NULL
/// for a non-optional type, TEXT `"abc"` for an `Int`, an INTEGER that does not
/// fit an `UInt8`, or when a column is missing. The error names the column,
/// the Swift type and the SQL. The offending value is kept in ``value`` but
/// left out of ``description``, like statement arguments, because it may be
/// private data.
public struct DatabaseDecodingError: Error, Sendable {
    /// What went wrong.
    public struct Reason: Hashable, Sendable, CustomStringConvertible {
        let text: String
        /// A short phrase: `unexpected NULL`, `column not found`, …
        public var description: String { text }

        /// The column holds a value the type cannot represent.
        public static let valueMismatch = Reason(text: "value mismatch")
        /// The column holds NULL and the type is not optional.
        public static let unexpectedNull = Reason(text: "unexpected NULL")
        /// No column has the requested name.
        public static let columnNotFound = Reason(text: "column not found")
        /// The requested index is outside the row.
        public static let indexOutOfRange = Reason(text: "index out of range")
        /// The column holds text that is not valid JSON for the type.
        public static let invalidJSON = Reason(text: "invalid JSON")
    }

    /// What went wrong.
    public var reason: Reason
    /// The column's name, or the requested name when it was not found.
    public var column: String?
    /// The column's 0-based index, when known.
    public var columnIndex: Int?
    /// The Swift type that was requested, as `String(describing:)` prints it.
    public var typeName: String
    /// The stored value that did not fit. Not part of ``description``.
    public var value: DatabaseValue?
    /// The SQL of the statement that produced the row.
    public var sql: String?
    /// More about the problem, such as the JSON decoder's message.
    public var detail: String?

    init(
        reason: Reason, column: String?, columnIndex: Int?, type: Any.Type,
        value: DatabaseValue? = nil, sql: String?
    ) {
        self.reason = reason
        self.column = column
        self.columnIndex = columnIndex
        self.typeName = String(describing: type)
        self.value = value
        self.sql = sql
    }

    /// Describes a value that did not fit `type`.
    static func mismatch(
        _ value: DatabaseValue, type: Any.Type, column: String?, columnIndex: Int, sql: String?
    ) -> DatabaseDecodingError {
        DatabaseDecodingError(
            reason: value.isNull ? .unexpectedNull : .valueMismatch, column: column,
            columnIndex: columnIndex, type: type, value: value, sql: sql)
    }
}

extension DatabaseDecodingError: CustomStringConvertible {
    /// `cannot read TEXT as Int (value mismatch) in column "age" (index 1) of: SELECT …`
    public var description: String {
        var text: String
        switch reason {
        case .columnNotFound:
            text = "cannot read \(typeName): no column named \"\(column ?? "")\""
        case .indexOutOfRange:
            text = "cannot read \(typeName): no column at index \(columnIndex ?? -1)"
        case .unexpectedNull:
            text = "cannot read NULL as non-optional \(typeName)"
        case .invalidJSON:
            text = "cannot read \(typeName) from invalid JSON"
        default:
            let storage = value?.storageClassName ?? "value"
            var detail = ""
            if case .integer? = value, typeName.contains("Int") {
                detail = " (out of range)"
            } else if case .real? = value, typeName.contains("Int") {
                detail = " (not a whole number in range)"
            }
            text = "cannot read \(storage) as \(typeName)\(detail)"
        }
        if reason != .columnNotFound && reason != .indexOutOfRange, let column {
            text += " in column \"\(column)\""
            if let columnIndex { text += " (index \(columnIndex))" }
        }
        if let sql, !sql.isEmpty {
            text += " of: \(sql)"
        }
        if let detail {
            text += " (\(detail))"
        }
        return text
    }
}
