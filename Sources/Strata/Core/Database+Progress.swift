import Foundation
import StrataSQLite

// Bounding a statement's time: SQLite's progress handler
// (https://www.sqlite.org/c3ref/progress_handler.html), called every so many
// virtual-machine instructions of a running statement, stops it when it
// returns non-zero; the statement then fails with SQLITE_INTERRUPT.

extension Database {
    /// Runs `body`; a statement still running once `limit` has passed since
    /// the call is stopped, and fails with ``SQLiteError`` code `.interrupt`
    /// and a message naming the limit. For SQL a user typed, in a server or
    /// a UI:
    ///
    /// ```swift
    /// let rows = try db.withTimeLimit(.seconds(2)) {
    ///     try Row.fetchAll(db, sql: "SELECT count(*) FROM books, books, books")
    /// }
    /// ```
    ///
    /// An interrupted statement inside a transaction may have rolled the
    /// transaction back; a statement outside one leaves no change.
    /// Statements are checked every thousand or so SQLite instructions, so
    /// one instruction that runs long by itself is not stopped until it
    /// ends: a `printf('%*.*c', …)` with a huge width, a `zeroblob()` of a
    /// gigabyte, a function of yours that loops. Limits nest: the earliest
    /// deadline applies.
    ///
    /// - Throws: what `body` throws; ``SQLiteError`` (`.interrupt`) for a
    ///   statement stopped by the limit.
    public func withTimeLimit<T>(_ limit: Duration, _ body: () throws -> T) throws -> T {
        _ = try checkedConnection()
        let deadline = ContinuousClock.now.advanced(by: limit)
        let outer = progress.deadline
        // A stop that body caught and swallowed must not name this limit.
        if outer == nil { progress.firedLimit = nil }
        if outer.map({ deadline < $0.instant }) ?? true { progress.deadline = (deadline, limit) }
        try installProgressHandler()
        defer {
            progress.deadline = outer
            try? installProgressHandler()
        }
        do {
            return try body()
        } catch var error as SQLiteError where error.code == .interrupt {
            // Name the limit that stopped the statement, once (an enclosing
            // limit sees the error already explained).
            if let fired = progress.firedLimit {
                progress.firedLimit = nil
                error.message = "the statement ran past its time limit of \(fired) and was stopped"
            }
            throw error
        }
    }

    /// Calls `handler` about every `instructions` virtual-machine
    /// instructions of a running statement; returning `true` stops the
    /// statement, which fails with ``SQLiteError`` code `.interrupt`. nil
    /// removes the handler. For a progress indicator or a Cancel button of
    /// your own; ``withTimeLimit(_:_:)`` covers the common case of a
    /// deadline.
    ///
    /// The handler runs inside the statement: it must not use the database.
    ///
    /// - Throws: ``SQLiteError`` (`.misuse`) when the connection is closed.
    public func setProgressHandler(every instructions: Int = 1000, _ handler: (() -> Bool)?) throws {
        _ = try checkedConnection()
        progress.handler = handler
        progress.handlerInterval = Int32(clamping: max(instructions, 1))
        try installProgressHandler()
    }

    /// Installs the progress callback while a handler or a deadline needs
    /// it, removes it otherwise.
    private func installProgressHandler() throws {
        let handle = try checkedConnection()
        guard progress.handler != nil || progress.deadline != nil else {
            sqlite3_progress_handler(handle, 0, nil, nil)
            return
        }
        var interval = progress.handler == nil ? ProgressState.deadlineInterval : progress.handlerInterval
        if progress.deadline != nil { interval = min(interval, ProgressState.deadlineInterval) }
        sqlite3_progress_handler(handle, interval, { context in
            guard let context else { return 0 }
            let state = Unmanaged<ProgressState>.fromOpaque(context).takeUnretainedValue()
            return state.shouldStop() ? 1 : 0
        }, Unmanaged.passUnretained(progress).toOpaque())
    }
}

/// What the progress callback checks: a deadline, a user's handler.
final class ProgressState {
    /// How often a deadline is checked, in SQLite instructions: reading the
    /// clock every thousand instructions costs nothing measurable, and
    /// SQLite runs millions of them per second.
    static let deadlineInterval: Int32 = 1000

    /// The earliest deadline of the time limits in force, with its limit.
    var deadline: (instant: ContinuousClock.Instant, limit: Duration)?
    var handler: (() -> Bool)?
    var handlerInterval: Int32 = 1000
    /// The limit whose deadline stopped a statement (rather than the
    /// handler or `interrupt()`), to name it in the error.
    var firedLimit: Duration?

    func shouldStop() -> Bool {
        if let deadline, ContinuousClock.now >= deadline.instant {
            firedLimit = deadline.limit
            return true
        }
        return handler?() ?? false
    }
}
