/// A problem with a record of an imported file: where it is and what is
/// wrong.
///
/// `books.csv:12:3: unterminated quoted field`
public struct ImportError: Error, CustomStringConvertible, Sendable {
    /// The file's path.
    public var file: String
    /// The 1-based line where the record starts (0 when the problem is not
    /// in a record, such as a missing file).
    public var line: Int
    /// The 1-based field of a CSV or TSV record, when known; nil for JSON,
    /// whose keys have no fixed position.
    public var column: Int?
    /// The column's name, when known.
    public var columnName: String?
    /// What is wrong.
    public var message: String
    /// The SQLite error behind the problem, when SQLite rejected the value.
    public var underlyingError: SQLiteError?

    /// Makes an error.
    public init(file: String, line: Int, column: Int?, columnName: String? = nil, message: String, underlyingError: SQLiteError? = nil) {
        self.file = file
        self.line = line
        self.column = column
        self.columnName = columnName
        self.message = message
        self.underlyingError = underlyingError
    }

    /// `file:line:column: message`, as compilers print them. Control
    /// characters from the file (a NUL, a tab, an escape) are shown as
    /// `\u{0}`, never raw.
    public var description: String {
        var location = file
        if line > 0 { location += ":\(line)" }
        if let column { location += ":\(column)" }
        var text = location + ": " + message
        if let columnName { text += " (column \"\(columnName)\")" }
        return printable(text)
    }
}
