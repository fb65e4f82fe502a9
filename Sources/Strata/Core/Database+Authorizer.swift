import StrataSQLite

// SQLite's authorizer (https://www.sqlite.org/c3ref/set_authorizer.html),
// installed only while something needs it. It runs while a statement is
// prepared, not while it runs: whoever needs it empties the statement cache
// so the statements it cares about are prepared afresh.

extension Database {
    /// Runs `body` with `handler` called for the table of every column read
    /// by the statements prepared meanwhile; the statement cache is emptied
    /// before and after, so cached statements are prepared (and reported)
    /// afresh and none prepared under the handler outlives it. Nested calls
    /// report to both handlers.
    func reportingTableReads<T>(to handler: @escaping (UnsafePointer<CChar>) -> Void, _ body: () throws -> T) throws -> T {
        let outer = authorizer.tableReadHandler
        return try withAuthorizer({ $0.tableReadHandler = outer.map { outer in { table in outer(table); handler(table) } } ?? handler },
                                  restoring: { $0.tableReadHandler = outer }, body)
    }

    /// Runs `body` with the authorizer's state changed by `change`, put back
    /// by `restore` after; the statement cache is emptied before and after,
    /// since the authorizer only sees statements as they are prepared.
    private func withAuthorizer<T>(_ change: (AuthorizerState) -> Void, restoring restore: (AuthorizerState) -> Void,
                                   _ body: () throws -> T) throws -> T {
        _ = try checkedConnection()
        change(authorizer)
        defer {
            restore(authorizer)
            try? installAuthorizer()
        }
        try installAuthorizer()
        statementCache.removeAll()
        defer { statementCache.removeAll() }
        return try body()
    }

    /// Makes every DELETE visit its rows, so the update hook reports them:
    /// without it, `DELETE FROM t` empties the table at once (SQLite's
    /// truncate optimization) and reports nothing.
    func disableTruncateOptimization() throws {
        authorizer.disablesTruncate = true
        try installAuthorizer()
        statementCache.removeAll()
    }

    /// Runs `body` with SQLite's authorizer refusing, while each statement
    /// is prepared, what `restriction` does not allow: such a statement
    /// throws ``SQLiteError`` with code ``ResultCode/authorization`` and SQLite's "not
    /// authorized" before anything runs.
    ///
    /// ```swift
    /// try db.restricting(to: .reads) {
    ///     try Row.fetchAll(db, sql: userTypedSQL)   // VACUUM INTO, ATTACH, INSERT… throw
    /// }
    /// ```
    ///
    /// The check is SQLite's own (https://www.sqlite.org/c3ref/set_authorizer.html),
    /// not a reading of the SQL text, so no spelling gets around it. The
    /// statement cache is emptied before and after, so no statement prepared
    /// outside the restriction runs inside it, and none prepared inside it
    /// outlives it. Nested calls apply the stricter restriction.
    ///
    /// - Throws: ``SQLiteError`` when the connection is closed, and whatever
    ///   `body` throws.
    public func restricting<T>(to restriction: StatementRestriction, _ body: () throws -> T) throws -> T {
        let outer = authorizer.restriction
        return try withAuthorizer({ $0.restriction = outer.map { $0.intersection(restriction) } ?? restriction },
                                  restoring: { $0.restriction = outer }, body)
    }

    /// Installs the authorizer callback when a read handler or a
    /// transaction observer needs it, and removes it otherwise.
    func installAuthorizer() throws {
        let handle = try checkedConnection()
        guard authorizer.tableReadHandler != nil || authorizer.disablesTruncate || authorizer.restriction != nil else {
            sqlite3_set_authorizer(handle, nil, nil)
            return
        }
        sqlite3_set_authorizer(handle, { context, action, first, second, _, _ in
            guard let context else { return SQLITE_OK }
            let state = Unmanaged<AuthorizerState>.fromOpaque(context).takeUnretainedValue()
            if let restriction = state.restriction, !restriction.allows(action, first, second) {
                return SQLITE_DENY
            }
            if action == SQLITE_READ, let first, let handler = state.tableReadHandler {
                handler(first)
            }
            if let tracker = state.connection?.transactionTracker {
                // The written table is the first argument, but for ALTER
                // TABLE (database, then table).
                let table: UnsafePointer<CChar>?
                switch action {
                case SQLITE_INSERT, SQLITE_UPDATE, SQLITE_DELETE, SQLITE_DROP_TABLE, SQLITE_DROP_TEMP_TABLE:
                    table = first
                case SQLITE_ALTER_TABLE:
                    table = second
                default:
                    table = nil
                }
                if let table {
                    tracker.preparedWrites.insert(String(cString: table).lowercased())
                }
            }
            if state.disablesTruncate {
                // IGNORE on a DELETE keeps the delete but bypasses the
                // truncate optimization (see lang_delete.html). Not for a
                // DROP TABLE, which authorizes a DELETE from sqlite_schema,
                // then the drop, then a DELETE of the table: IGNORE on
                // either DELETE silently cancels the drop.
                if action == SQLITE_DROP_TABLE || action == SQLITE_DROP_TEMP_TABLE {
                    state.droppedTable = first.map { String(cString: $0) }
                } else if action == SQLITE_DELETE, let first {
                    let table = String(cString: first)
                    let isDropping = state.droppedTable.map { identifiersMatch($0, table) } ?? false
                    state.droppedTable = nil
                    if !isDropping && sqlite3_strnicmp(first, "sqlite_", 7) != 0 {
                        return SQLITE_IGNORE
                    }
                } else {
                    state.droppedTable = nil
                }
            }
            return SQLITE_OK
        }, Unmanaged.passUnretained(authorizer).toOpaque())
    }
}

/// What the authorizer callback does: report the tables statements read,
/// note the tables they write for transaction observers, and keep DELETE
/// from truncating unseen.
final class AuthorizerState {
    /// Called with the table of each column a statement being prepared
    /// reads (several times per table).
    var tableReadHandler: ((UnsafePointer<CChar>) -> Void)?
    var disablesTruncate = false
    /// Where the tables a statement writes are noted while it is prepared.
    var connection: ConnectionState?
    /// The table a DROP TABLE being prepared drops.
    var droppedTable: String?
    /// What statements may do, when restricted.
    var restriction: StatementRestriction?
}

/// What statements prepared under ``Database/restricting(to:_:)`` may do,
/// checked by SQLite's authorizer.
public struct StatementRestriction: Sendable, Equatable {
    /// Whether writes to the main database's content and schema are allowed.
    var allowsWrites: Bool

    /// Reads only: `SELECT`, `WITH`, `EXPLAIN`, and the pragmas that report
    /// (`table_info`, `index_list`, `user_version`…) without changing
    /// anything. No write, no `VACUUM`, no `ATTACH`, no pragma that sets.
    public static let reads = StatementRestriction(allowsWrites: false)

    /// Reads and writes of this database's file, but nothing that reaches
    /// another file: no `ATTACH`/`DETACH`, so no `VACUUM` (nor `VACUUM
    /// INTO`, which attaches its target), and no pragma that sets a value.
    public static let thisFile = StatementRestriction(allowsWrites: true)

    func intersection(_ other: StatementRestriction) -> StatementRestriction {
        StatementRestriction(allowsWrites: allowsWrites && other.allowsWrites)
    }

    /// Pragmas that only report, even with an argument (a table or index
    /// name, a limit); any other pragma is allowed only without one.
    static let reportingPragmas: Set<String> = [
        "table_info", "table_xinfo", "table_list", "index_list", "index_info", "index_xinfo",
        "foreign_key_list", "foreign_key_check", "integrity_check", "quick_check",
    ]
    /// Pragmas refused even without an argument: they write or reach files.
    static let actingPragmas: Set<String> = [
        "optimize", "incremental_vacuum", "wal_checkpoint", "shrink_memory",
        "temp_store_directory", "data_store_directory", "writable_schema",
    ]

    func allows(_ action: Int32, _ first: UnsafePointer<CChar>?, _ second: UnsafePointer<CChar>?) -> Bool {
        switch action {
        case SQLITE_SELECT, SQLITE_READ, SQLITE_FUNCTION, SQLITE_RECURSIVE:
            return true
        case SQLITE_PRAGMA:
            // `first` is the pragma's name, `second` its argument or value.
            guard let first else { return false }
            let name = String(cString: first).lowercased()
            if Self.actingPragmas.contains(name) { return false }
            if second == nil || Self.reportingPragmas.contains(name) { return true }
            return allowsWrites
        case SQLITE_ATTACH, SQLITE_DETACH:
            return false
        case SQLITE_UPDATE:
            // SQLite asks for an UPDATE of the schema table while it loads
            // the schema (`pragma_table_info` does); SQLite itself refuses a
            // statement's writes there unless `writable_schema`, refused above.
            if let first, sqlite3_strnicmp(first, "sqlite_", 7) == 0 {
                let table = String(cString: first).lowercased()
                if ["sqlite_master", "sqlite_schema", "sqlite_temp_master", "sqlite_temp_schema"].contains(table) { return true }
            }
            return allowsWrites
        case SQLITE_TRANSACTION, SQLITE_SAVEPOINT:
            return true
        default:
            return allowsWrites
        }
    }
}
