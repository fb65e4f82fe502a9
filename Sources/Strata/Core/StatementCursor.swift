import Foundation
import StrataSQLite

/// The statements of a SQL script, prepared one at a time as the cursor
/// advances, so a statement may use a table an earlier one created.
///
/// ```swift
/// let statements = try db.allStatements(sql: "CREATE TABLE t(a); INSERT INTO t VALUES (1); SELECT a FROM t")
/// var lastRows: [Row] = []
/// while let statement = try statements.next() {
///     lastRows = try Row.fetchAll(statement)   // runs each; keeps the last query's rows
/// }
/// ```
///
/// A statement that fails to compile throws from ``next()``, with the failing
/// statement's text as the error's ``SQLiteError/sql``.
public final class StatementCursor: Cursor {
    private let database: Database
    private let text: ContiguousArray<CChar>
    private var offset = 0

    init(database: Database, sql: String) {
        self.database = database
        self.text = sql.utf8CString
    }

    /// Prepares and returns the next statement; nil when only spaces,
    /// semicolons and comments remain.
    ///
    /// - Throws: ``SQLiteError`` when the next statement does not compile.
    public func next() throws -> Statement? {
        let handle = try database.checkedConnection()
        return try text.withUnsafeBufferPointer { buffer -> Statement? in
            guard let base = buffer.baseAddress, offset < buffer.count - 1 else { return nil }
            let start = base + offset
            var sqliteStatement: OpaquePointer?
            var tail: UnsafePointer<CChar>?
            let code = sqlite3_prepare_v3(handle, start, -1, 0, &sqliteStatement, &tail)
            guard code == SQLITE_OK else {
                let failing = String(cString: start).trimmingCharacters(in: .whitespacesAndNewlines)
                offset = buffer.count - 1
                throw SQLiteError.fromConnection(handle, code: code, sql: failing)
            }
            offset = tail.map { $0 - base } ?? buffer.count - 1
            guard let sqliteStatement else { return nil }
            return Statement(sqliteStatement: sqliteStatement, sql: nil, connectionState: database.state)
        }
    }


    /// Whether no statement remains after the one last returned: the next
    /// call to ``next()`` would return nil (or fail to compile the rest).
    public var isAtEnd: Bool {
        get throws { try checkIsAtEnd() }
    }

    func checkIsAtEnd() throws -> Bool {
        let handle = try database.checkedConnection()
        return text.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress, offset < buffer.count - 1 else { return true }
            return holdsNoStatement(base + offset, handle: handle)
        }
    }
}

/// Whether some SQL text holds no statement: only spaces, semicolons and
/// comments.
func holdsNoStatement(_ text: UnsafePointer<CChar>, handle: OpaquePointer) -> Bool {
    var pointer = text
    while pointer.pointee != 0 {
        switch UInt8(bitPattern: pointer.pointee) {
        case 32, 9, 10, 13, 59:  // space, tab, newline, carriage return, ";"
            pointer += 1
        default:
            // A comment or a statement: let SQLite tell. A statement that does
            // not compile yet (its table is made by an earlier one) is still a
            // statement.
            var statement: OpaquePointer?
            let code = sqlite3_prepare_v2(handle, pointer, -1, &statement, nil)
            defer { sqlite3_finalize(statement) }
            return code == SQLITE_OK && statement == nil
        }
    }
    return true
}

extension Database {
    /// The statements of a script, prepared one at a time. See
    /// ``StatementCursor``.
    public func allStatements(sql: String) throws -> StatementCursor {
        _ = try checkedConnection()
        try checkNoNUL(in: sql)
        return StatementCursor(database: self, sql: sql)
    }

    /// Whether `sql` ends with a complete statement: its last statement is
    /// closed by a semicolon outside any string, identifier, comment or
    /// trigger body. A shell reads lines until this is true, then runs them.
    ///
    /// ```swift
    /// Database.isComplete(sql: "SELECT 'a;")      // false: the string is open
    /// Database.isComplete(sql: "SELECT 'a;';")    // true
    /// ```
    ///
    /// Only the text is looked at, not whether the statement is valid: a
    /// misspelled statement ending in `;` is complete, and then fails to
    /// compile when run. Text with only spaces and comments is not complete.
    ///
    /// See <https://www.sqlite.org/c3ref/complete.html>.
    public static func isComplete(sql: String) -> Bool {
        sqlite3_complete(sql) != 0
    }
}
