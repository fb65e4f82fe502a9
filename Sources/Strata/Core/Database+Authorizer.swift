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
        _ = try checkedConnection()
        let outer = authorizer.tableReadHandler
        authorizer.tableReadHandler = outer.map { outer in { table in outer(table); handler(table) } } ?? handler
        try installAuthorizer()
        defer {
            authorizer.tableReadHandler = outer
            try? installAuthorizer()
        }
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

    /// Installs the authorizer callback when a read handler or a
    /// transaction observer needs it, and removes it otherwise.
    func installAuthorizer() throws {
        let handle = try checkedConnection()
        guard authorizer.tableReadHandler != nil || authorizer.disablesTruncate else {
            sqlite3_set_authorizer(handle, nil, nil)
            return
        }
        sqlite3_set_authorizer(handle, { context, action, first, second, _, _ in
            guard let context else { return SQLITE_OK }
            let state = Unmanaged<AuthorizerState>.fromOpaque(context).takeUnretainedValue()
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
}
