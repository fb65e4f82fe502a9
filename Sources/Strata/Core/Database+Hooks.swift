import StrataSQLite

/// A row change reported by the update hook.
///
/// See <https://www.sqlite.org/c3ref/update_hook.html>.
public struct DatabaseEvent: Hashable, Sendable {
    /// The kind of change.
    public enum Kind: Hashable, Sendable {
        /// A row was inserted.
        case insert
        /// A row was updated.
        case update
        /// A row was deleted.
        case delete
    }

    /// The kind of change.
    public var kind: Kind
    /// The schema name: `main`, `temp`, or an attached database's name.
    public var databaseName: String
    /// The changed table.
    public var tableName: String
    /// The rowid of the changed row.
    public var rowID: Int64

    /// Makes an event.
    public init(kind: Kind, databaseName: String, tableName: String, rowID: Int64) {
        self.kind = kind
        self.databaseName = databaseName
        self.tableName = tableName
        self.rowID = rowID
    }
}

extension Database {
    /// Calls `hook` for every row inserted, updated or deleted in a rowid
    /// table; nil removes the hook. Setting a hook replaces the previous one.
    ///
    /// The hook runs inside the statement that made the change: it must not
    /// use the database.
    ///
    /// See <https://www.sqlite.org/c3ref/update_hook.html>.
    public func setUpdateHook(_ hook: ((DatabaseEvent) -> Void)?) throws {
        _ = try checkedConnection()
        updateHook = hook
        try installHooks()
    }

    /// Calls `hook` when a transaction is about to commit; nil removes it.
    ///
    /// Return `true` to let the commit proceed; `false` turns it into a
    /// rollback, and the COMMIT fails with `.constraintCommitHook`. The hook
    /// must not use the database.
    ///
    /// See <https://www.sqlite.org/c3ref/commit_hook.html>.
    public func setCommitHook(_ hook: (() -> Bool)?) throws {
        _ = try checkedConnection()
        commitHook = hook
        try installHooks()
    }

    /// Calls `hook` when a transaction rolls back; nil removes it. The hook
    /// must not use the database.
    ///
    /// See <https://www.sqlite.org/c3ref/commit_hook.html>.
    public func setRollbackHook(_ hook: (() -> Void)?) throws {
        _ = try checkedConnection()
        rollbackHook = hook
        try installHooks()
    }

    /// Installs SQLite's hooks when the user or the observation layer needs
    /// them, and removes them otherwise.
    func installHooks() throws {
        let handle = try checkedConnection()
        let context = Unmanaged.passUnretained(self).toOpaque()
        let observing = state.transactionTracker != nil
        if updateHook != nil || observing {
            sqlite3_update_hook(handle, { context, operation, databaseName, tableName, rowID in
                guard let context else { return }
                let db = Unmanaged<Database>.fromOpaque(context).takeUnretainedValue()
                let kind: DatabaseEvent.Kind
                switch operation {
                case SQLITE_INSERT: kind = .insert
                case SQLITE_DELETE: kind = .delete
                default: kind = .update
                }
                let event = DatabaseEvent(
                    kind: kind,
                    databaseName: databaseName.map { String(cString: $0) } ?? "main",
                    tableName: tableName.map { String(cString: $0) } ?? "",
                    rowID: rowID)
                db.updateHook?(event)
                db.state.transactionTracker?.record(event)
            }, context)
        } else {
            sqlite3_update_hook(handle, nil, nil)
        }
        if commitHook != nil || observing {
            sqlite3_commit_hook(handle, { context in
                guard let context else { return 0 }
                let db = Unmanaged<Database>.fromOpaque(context).takeUnretainedValue()
                let allowed = db.commitHook?() ?? true
                if allowed { db.state.transactionTracker?.willCommit() }
                return allowed ? 0 : 1
            }, context)
        } else {
            sqlite3_commit_hook(handle, nil, nil)
        }
        if rollbackHook != nil || observing {
            sqlite3_rollback_hook(handle, { context in
                guard let context else { return }
                let db = Unmanaged<Database>.fromOpaque(context).takeUnretainedValue()
                db.rollbackHook?()
                db.state.transactionTracker?.didRollback()
            }, context)
        } else {
            sqlite3_rollback_hook(handle, nil, nil)
        }
    }

    /// Runs `body`, returning the tables it read (through SQLite's
    /// authorizer), for query observation.
    func trackingReadTables<T>(_ body: () throws -> T) throws -> (T, Set<String>) {
        _ = try checkedConnection()
        let tables = ReadTables()
        authorizer.readTables = tables
        try installAuthorizer()
        defer {
            authorizer.readTables = nil
            try? installAuthorizer()
        }
        // Cached statements were authorized when prepared: prepare afresh.
        statementCache.removeAll()
        let result = try body()
        statementCache.removeAll()
        return (result, tables.names)
    }

    /// Makes every DELETE visit its rows, so the update hook reports them:
    /// without it, `DELETE FROM t` empties the table at once (SQLite's
    /// truncate optimization) and reports nothing.
    func disableTruncateOptimization() throws {
        authorizer.disablesTruncate = true
        try installAuthorizer()
        statementCache.removeAll()
    }

    /// Installs the authorizer callback when observation needs it.
    private func installAuthorizer() throws {
        let handle = try checkedConnection()
        guard authorizer.readTables != nil || authorizer.disablesTruncate else {
            sqlite3_set_authorizer(handle, nil, nil)
            return
        }
        sqlite3_set_authorizer(handle, { context, action, first, second, _, _ in
            guard let context else { return SQLITE_OK }
            let state = Unmanaged<AuthorizerState>.fromOpaque(context).takeUnretainedValue()
            if action == SQLITE_READ, let first, let tables = state.readTables {
                tables.names.insert(String(cString: first).lowercased())
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

/// What the authorizer callback does for observation.
final class AuthorizerState {
    var readTables: ReadTables?
    var disablesTruncate = false
    /// Where the tables a statement writes are noted while it is prepared.
    var connection: ConnectionState?
    /// The table a DROP TABLE being prepared drops.
    var droppedTable: String?
}

/// The tables a statement read, noted by the authorizer.
final class ReadTables {
    var names: Set<String> = []
}
