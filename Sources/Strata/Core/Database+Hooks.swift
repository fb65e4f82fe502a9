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

    /// Installs SQLite's hooks when the user or a transaction observer needs
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
}
