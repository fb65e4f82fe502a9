import StrataSQLite

extension Database {
    /// Runs `body` in a transaction: commits when it returns, rolls back when
    /// it throws.
    ///
    /// ```swift
    /// try db.transaction {
    ///     try db.execute(sql: "UPDATE accounts SET balance = balance - 10 WHERE id = 1")
    ///     try db.execute(sql: "UPDATE accounts SET balance = balance + 10 WHERE id = 2")
    /// }
    /// ```
    ///
    /// Called inside another transaction, it runs as a savepoint instead
    /// (see ``savepoint(_:)``), so transactions nest.
    ///
    /// - Parameters:
    ///   - kind: how locks are taken; `.deferred` by default, as in SQLite.
    ///   - body: the work to do.
    /// - Returns: what `body` returns.
    /// - Throws: what `body` throws (after the rollback), or ``SQLiteError``
    ///   when beginning or committing fails — a failed commit is rolled back.
    ///
    /// See <https://www.sqlite.org/lang_transaction.html>.
    @discardableResult
    public func transaction<T>(_ kind: TransactionKind = .deferred, _ body: () throws -> T) throws -> T {
        if isInsideTransaction {
            return try savepoint(body)
        }
        try beginTransaction(kind)
        let result: T
        do {
            result = try body()
        } catch {
            rollbackQuietly()
            throw error
        }
        do {
            try commit()
        } catch {
            rollbackQuietly()
            throw error
        }
        return result
    }

    /// Runs `body` in a savepoint: releases it when `body` returns, rolls back
    /// to it when `body` throws. Savepoints nest, inside or outside a
    /// transaction.
    ///
    /// ```swift
    /// try db.transaction {
    ///     try db.execute(sql: "INSERT INTO log(message) VALUES ('start')")
    ///     try? db.savepoint {
    ///         try db.execute(sql: "INSERT INTO items(id) VALUES (1)")   // may fail
    ///     }
    ///     // the log row stays either way
    /// }
    /// ```
    ///
    /// See <https://www.sqlite.org/lang_savepoint.html>.
    @discardableResult
    public func savepoint<T>(_ body: () throws -> T) throws -> T {
        // Named by nesting depth, not by a running count: the few SAVEPOINT /
        // RELEASE texts stay in the statement cache instead of each call
        // preparing (and evicting) new ones.
        savepointDepth += 1
        defer { savepointDepth -= 1 }
        let name = "strata_savepoint_\(savepointDepth)"
        try execute(sql: "SAVEPOINT \(name)")
        let result: T
        do {
            result = try body()
        } catch {
            if isInsideTransaction {
                try? execute(sql: "ROLLBACK TO SAVEPOINT \(name)")
                try? execute(sql: "RELEASE SAVEPOINT \(name)")
            }
            throw error
        }
        try execute(sql: "RELEASE SAVEPOINT \(name)")
        return result
    }

    /// Begins a transaction. Prefer ``transaction(_:_:)``, which cannot leave
    /// one open.
    ///
    /// - Throws: ``SQLiteError`` when a transaction is already open.
    public func beginTransaction(_ kind: TransactionKind = .deferred) throws {
        try execute(sql: "BEGIN \(kind.rawValue) TRANSACTION")
    }

    /// Commits the open transaction.
    public func commit() throws {
        try execute(sql: "COMMIT TRANSACTION")
    }

    /// Rolls back the open transaction.
    public func rollback() throws {
        try execute(sql: "ROLLBACK TRANSACTION")
    }

    /// Rolls back when a transaction is still open. SQLite may already have
    /// rolled back by itself (after SQLITE_FULL, SQLITE_IOERR, an interrupt…),
    /// and the caller is already throwing the error that matters.
    ///
    /// An interrupt (``interrupt()`` from another thread) that lands while
    /// the ROLLBACK itself runs would leave the transaction open, and the
    /// connection unusable for the next one: the ROLLBACK is tried again.
    func rollbackQuietly() {
        guard isInsideTransaction else { return }
        try? executeDespiteInterrupts(sql: "ROLLBACK TRANSACTION")
    }

    /// Runs `sql`, tried again when an interrupt meant for an earlier
    /// statement lands on it: for the statements that put a connection back
    /// in order after an access.
    func executeDespiteInterrupts(sql: String) throws {
        var attempts = 0
        while true {
            attempts += 1
            do {
                return try execute(sql: sql)
            } catch let error as SQLiteError where error.code == .interrupt && attempts < 100 {
                continue
            }
        }
    }
}
