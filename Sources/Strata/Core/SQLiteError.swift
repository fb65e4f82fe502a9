import StrataSQLite

/// An error reported by SQLite, or by Strata about a misuse of SQLite.
///
/// It carries what a person needs to fix the problem: the extended result
/// code, SQLite's message and the SQL that failed. The statement's arguments
/// are kept in ``arguments`` but left out of ``description``, because they may
/// be private data that must not reach logs.
///
/// ```swift
/// do {
///     try db.execute(sql: "INSERT INTO notes(id, title) VALUES (?, ?)", arguments: [1, "Hi"])
/// } catch let error as SQLiteError where error.code == .constraintPrimaryKey {
///     // a note with this id exists: update instead
/// } catch SQLiteError.constraint {
///     // any other constraint failure
/// }
/// ```
public struct SQLiteError: Error, Sendable {
    /// The extended result code (`SQLITE_CONSTRAINT_UNIQUE` rather than
    /// `SQLITE_CONSTRAINT`).
    public var code: ResultCode

    /// SQLite's message (`sqlite3_errmsg`), or Strata's when Strata detected
    /// the problem (a wrong argument count, a closed database, …).
    public var message: String?

    /// The SQL of the statement that failed. In a script of several
    /// statements, this is the statement that failed, not the whole script.
    public var sql: String?

    /// The arguments bound to the failing statement, when known. Not part of
    /// ``description``.
    public var arguments: StatementArguments?

    /// Makes an error.
    public init(
        code: ResultCode, message: String? = nil, sql: String? = nil,
        arguments: StatementArguments? = nil
    ) {
        self.code = code
        self.message = message
        self.sql = sql
        self.arguments = arguments
    }

    /// The primary result code (`SQLITE_CONSTRAINT` for
    /// `SQLITE_CONSTRAINT_UNIQUE`).
    public var primaryResultCode: ResultCode { code.primaryResultCode }

    /// Builds the error for a failed call from the connection's state.
    static func fromConnection(
        _ connection: OpaquePointer?, code: Int32, sql: String? = nil,
        arguments: StatementArguments? = nil
    ) -> SQLiteError {
        var extended = code
        var message: String?
        if let connection {
            // The connection's extended code is more precise when it belongs
            // to this failure (same family).
            let connectionCode = sqlite3_extended_errcode(connection)
            if connectionCode & 0xFF == code & 0xFF {
                extended = connectionCode
            }
            if let text = sqlite3_errmsg(connection) {
                message = String(cString: text)
            }
        } else {
            message = String(cString: sqlite3_errstr(code))
        }
        return SQLiteError(
            code: ResultCode(rawValue: extended), message: message, sql: sql, arguments: arguments)
    }

    // MARK: - Family patterns

    // These let `catch SQLiteError.constraint` read naturally. A primary code
    // matches its whole family (see `~=(ResultCode, any Error)`).

    /// Matches `SQLITE_ERROR` and its extended codes in a `catch`.
    public static let error = ResultCode.error
    /// Matches `SQLITE_INTERNAL` and its extended codes in a `catch`.
    public static let internalError = ResultCode.internalError
    /// Matches `SQLITE_PERM` and its extended codes in a `catch`.
    public static let permission = ResultCode.permission
    /// Matches `SQLITE_ABORT` and its extended codes in a `catch`.
    public static let abort = ResultCode.abort
    /// Matches `SQLITE_BUSY` and its extended codes in a `catch`.
    public static let busy = ResultCode.busy
    /// Matches `SQLITE_LOCKED` and its extended codes in a `catch`.
    public static let locked = ResultCode.locked
    /// Matches `SQLITE_NOMEM` and its extended codes in a `catch`.
    public static let noMemory = ResultCode.noMemory
    /// Matches `SQLITE_READONLY` and its extended codes in a `catch`.
    public static let readOnly = ResultCode.readOnly
    /// Matches `SQLITE_INTERRUPT` and its extended codes in a `catch`.
    public static let interrupt = ResultCode.interrupt
    /// Matches `SQLITE_IOERR` and its extended codes in a `catch`.
    public static let ioError = ResultCode.ioError
    /// Matches `SQLITE_CORRUPT` and its extended codes in a `catch`.
    public static let corrupt = ResultCode.corrupt
    /// Matches `SQLITE_FULL` and its extended codes in a `catch`.
    public static let full = ResultCode.full
    /// Matches `SQLITE_CANTOPEN` and its extended codes in a `catch`.
    public static let cantOpen = ResultCode.cantOpen
    /// Matches `SQLITE_SCHEMA` and its extended codes in a `catch`.
    public static let schema = ResultCode.schema
    /// Matches `SQLITE_TOOBIG` and its extended codes in a `catch`.
    public static let tooBig = ResultCode.tooBig
    /// Matches `SQLITE_CONSTRAINT` and its extended codes in a `catch`.
    public static let constraint = ResultCode.constraint
    /// Matches `SQLITE_MISMATCH` and its extended codes in a `catch`.
    public static let mismatch = ResultCode.mismatch
    /// Matches `SQLITE_MISUSE` and its extended codes in a `catch`.
    public static let misuse = ResultCode.misuse
    /// Matches `SQLITE_AUTH` and its extended codes in a `catch`.
    public static let authorization = ResultCode.authorization
    /// Matches `SQLITE_RANGE` and its extended codes in a `catch`.
    public static let range = ResultCode.range
    /// Matches `SQLITE_NOTADB` and its extended codes in a `catch`.
    public static let notADatabase = ResultCode.notADatabase
    /// Matches `SQLITE_CONSTRAINT_UNIQUE` in a `catch`.
    public static let constraintUnique = ResultCode.constraintUnique
    /// Matches `SQLITE_CONSTRAINT_PRIMARYKEY` in a `catch`.
    public static let constraintPrimaryKey = ResultCode.constraintPrimaryKey
    /// Matches `SQLITE_CONSTRAINT_NOTNULL` in a `catch`.
    public static let constraintNotNull = ResultCode.constraintNotNull
    /// Matches `SQLITE_CONSTRAINT_FOREIGNKEY` in a `catch`.
    public static let constraintForeignKey = ResultCode.constraintForeignKey
    /// Matches `SQLITE_CONSTRAINT_CHECK` in a `catch`.
    public static let constraintCheck = ResultCode.constraintCheck
}

extension SQLiteError: CustomStringConvertible {
    /// The code, the message and the SQL; never the arguments.
    ///
    /// `SQLite error 1555 (constraint failed): UNIQUE constraint failed: notes.id - while executing: INSERT INTO notes VALUES (1, 'b')`
    public var description: String {
        var text = "SQLite error \(code.rawValue) (\(code.explanation))"
        if let message {
            text += ": \(message)"
        }
        if let sql {
            text += " - while executing: \(sql)"
        }
        return printable(text, keepingLayout: true)
    }
}

extension SQLiteError: CustomDebugStringConvertible {
    /// The ``description`` followed by the arguments, for debugging only.
    public var debugDescription: String {
        guard let arguments, !arguments.isEmpty else { return description }
        return description + " - arguments: \(arguments)"
    }
}

extension SQLiteError {
    /// Strata's own misuse errors (wrong arguments, closed database, …).
    static func misuse(_ message: String, sql: String? = nil, arguments: StatementArguments? = nil) -> SQLiteError {
        SQLiteError(code: .misuse, message: message, sql: sql, arguments: arguments)
    }
}
