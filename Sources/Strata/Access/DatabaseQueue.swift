import Dispatch

/// A database connection that any thread or task can use, one access at a
/// time.
///
/// ```swift
/// let queue = try DatabaseQueue(path: "notes.sqlite")
/// try queue.write { db in
///     try db.execute(sql: "INSERT INTO notes(title) VALUES (?)", arguments: ["Groceries"])
/// }
/// let count = try await queue.read { db in
///     try Int.fetchOne(db, sql: "SELECT count(*) FROM notes") ?? 0
/// }
/// ```
///
/// The queue owns one ``Database`` and runs your closures on a serial dispatch
/// queue, never on Swift's cooperative thread pool: blocking SQLite work does
/// not starve other tasks. Each method exists in a synchronous form and an
/// `async` form with the same name.
///
/// - ``read(_:)`` runs in a transaction that refuses writes, so several
///   statements see one consistent state.
/// - ``write(_:)`` runs in an immediate transaction: committed when the closure
///   returns, rolled back when it throws.
/// - ``writeWithoutTransaction(_:)`` hands over the connection as it is.
///
/// Calling the queue from inside one of its own closures would deadlock; it
/// throws ``SQLiteError`` (`.misuse`) instead. Use the `db` you were given.
// @unchecked: `database` is touched only on `dispatchQueue`, a serial queue;
// the other stored properties are immutable.
public final class DatabaseQueue: @unchecked Sendable {
    /// The configuration the connection was opened with.
    public let configuration: Configuration

    /// Where the database lives.
    public let location: DatabaseLocation

    private let database: Database
    private let dispatchQueue: DispatchQueue
    private let onQueueKey = DispatchSpecificKey<Void>()
    private let interruptHandle: DatabaseInterruptHandle

    /// Opens a database file.
    ///
    /// - Throws: ``SQLiteError`` when it cannot be opened.
    public convenience init(path: String, configuration: Configuration = Configuration()) throws {
        try self.init(location: .path(path), configuration: configuration)
    }

    /// Opens a private in-memory database.
    public convenience init(configuration: Configuration = Configuration()) throws {
        try self.init(location: .inMemory, configuration: configuration)
    }

    /// Opens a database at a location: a file, in memory, or a temporary file.
    ///
    /// - Throws: ``SQLiteError`` when it cannot be opened.
    public init(location: DatabaseLocation, configuration: Configuration = Configuration()) throws {
        self.configuration = configuration
        self.location = location
        self.dispatchQueue = DispatchQueue(label: configuration.label ?? "Strata.DatabaseQueue")
        self.dispatchQueue.setSpecific(key: onQueueKey, value: ())
        let database = try dispatchQueue.sync {
            try Database(location: location, configuration: configuration)
        }
        self.database = database
        self.interruptHandle = database.interruptHandle
    }

    deinit {
        // The last reference is going away, so no closure can be running or
        // queued (each holds the queue strongly).
        try? database.close()
    }

    // MARK: - Synchronous access

    /// Runs `body` in a read-only transaction and returns its result.
    ///
    /// - Throws: what `body` throws; ``SQLiteError`` (`.readOnly`) when `body`
    ///   tries to write; ``SQLiteError`` (`.misuse`) when called from inside
    ///   another access of this queue.
    public func read<T>(_ body: (Database) throws -> T) throws -> T {
        try onQueue(method: "read") { db in try Self.runRead(db, body) }
    }

    /// Runs `body` in an immediate transaction: commits when it returns, rolls
    /// back when it throws.
    ///
    /// - Throws: what `body` throws, or ``SQLiteError`` when the transaction
    ///   cannot begin or commit, or when called from inside another access of
    ///   this queue.
    @discardableResult
    public func write<T>(_ body: (Database) throws -> T) throws -> T {
        try onQueue(method: "write") { db in try db.transaction(.immediate) { try body(db) } }
    }

    /// Runs `body` with the connection outside any transaction: each statement
    /// commits on its own, or `body` manages transactions itself.
    @discardableResult
    public func writeWithoutTransaction<T>(_ body: (Database) throws -> T) throws -> T {
        try onQueue(method: "writeWithoutTransaction", body)
    }

    // MARK: - Asynchronous access

    /// Runs `body` in a read-only transaction, on the queue's own thread, and
    /// returns its result. See the synchronous ``read(_:)``.
    public func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await asyncOnQueue { db in try Self.runRead(db, body) }
    }

    /// Runs `body` in an immediate transaction, on the queue's own thread.
    /// See the synchronous ``write(_:)``.
    @discardableResult
    public func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await asyncOnQueue { db in try db.transaction(.immediate) { try body(db) } }
    }

    /// Runs `body` outside any transaction, on the queue's own thread. See the
    /// synchronous ``writeWithoutTransaction(_:)``.
    @discardableResult
    public func writeWithoutTransaction<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await asyncOnQueue(body)
    }

    // MARK: - Other

    /// Interrupts the statement running on the queue, from any thread; it
    /// fails with ``SQLiteError`` code `.interrupt`.
    public func interrupt() {
        interruptHandle.interrupt()
    }

    /// Closes the connection once the work in flight is done. Further
    /// accesses throw ``SQLiteError`` (`.misuse`).
    public func close() throws {
        try onQueue(method: "close") { db in try db.close() }
    }

    // MARK: - Internals

    private static func runRead<T>(_ db: Database, _ body: (Database) throws -> T) throws -> T {
        if db.isClosed { throw SQLiteError.misuse("the database connection is closed") }
        try db.execute(sql: "BEGIN DEFERRED TRANSACTION")
        try db.execute(sql: "PRAGMA query_only = 1")
        defer {
            try? db.execute(sql: "PRAGMA query_only = 0")
            db.rollbackQuietly()
        }
        return try body(db)
    }

    private func onQueue<T>(method: String, _ body: (Database) throws -> T) throws -> T {
        if DispatchQueue.getSpecific(key: onQueueKey) != nil {
            throw SQLiteError.misuse(
                "DatabaseQueue.\(method) was called from inside another access to the same queue, "
                    + "which would deadlock; use the Database passed to the enclosing closure")
        }
        return try dispatchQueue.sync {
            try body(database)
        }
    }

    private func asyncOnQueue<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try Task.checkCancellation()
        return try await withCheckedThrowingContinuation { continuation in
            dispatchQueue.async {
                continuation.resume(with: Result { try body(self.database) })
            }
        }
    }
}
