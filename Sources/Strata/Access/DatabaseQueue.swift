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
/// - ``read(_:)-9767t`` runs in a transaction that refuses writes, so several
///   statements see one consistent state.
/// - ``write(_:)-67vij`` runs in an immediate transaction: committed when the closure
///   returns, rolled back when it throws.
/// - ``writeWithoutTransaction(_:)-46us0`` hands over the connection as it is.
///
/// Calling the queue from inside one of its own closures would deadlock; it
/// throws ``SQLiteError`` (`.misuse`) instead. Use the `db` you were given.
public final class DatabaseQueue: DatabaseWriter {
    /// The configuration the connection was opened with.
    public let configuration: Configuration

    /// Where the database lives.
    public let location: DatabaseLocation

    let serialized: SerializedDatabase

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
        serialized = try SerializedDatabase(
            location: location, configuration: configuration, label: configuration.label ?? "Strata.DatabaseQueue")
    }

    // MARK: - Synchronous access

    /// Runs `body` in a read-only transaction and returns its result.
    ///
    /// - Throws: what `body` throws; ``SQLiteError`` (`.readOnly`) when `body`
    ///   tries to write; ``SQLiteError`` (`.misuse`) when called from inside
    ///   another access of this queue.
    public func read<T>(_ body: (Database) throws -> T) throws -> T {
        try serialized.sync(method: "DatabaseQueue.read") { db in try SerializedDatabase.runRead(db, body) }
    }

    /// Runs `body` in an immediate transaction: commits when it returns, rolls
    /// back when it throws.
    ///
    /// - Throws: what `body` throws, or ``SQLiteError`` when the transaction
    ///   cannot begin or commit, or when called from inside another access of
    ///   this queue.
    @discardableResult
    public func write<T>(_ body: (Database) throws -> T) throws -> T {
        try serialized.sync(method: "DatabaseQueue.write") { db in try db.transaction(.immediate) { try body(db) } }
    }

    /// Runs `body` with the connection outside any transaction: each statement
    /// commits on its own, or `body` manages transactions itself.
    @discardableResult
    public func writeWithoutTransaction<T>(_ body: (Database) throws -> T) throws -> T {
        try serialized.sync(method: "DatabaseQueue.writeWithoutTransaction", body)
    }

    // MARK: - Asynchronous access

    /// Runs `body` in a read-only transaction, on the queue's own thread, and
    /// returns its result. See the synchronous ``read(_:)``.
    public func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await serialized.async { db in try SerializedDatabase.runRead(db, body) }
    }

    /// Runs `body` in an immediate transaction, on the queue's own thread.
    /// See the synchronous ``write(_:)``.
    @discardableResult
    public func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await serialized.async { db in try db.transaction(.immediate) { try body(db) } }
    }

    /// Runs `body` outside any transaction, on the queue's own thread. See the
    /// synchronous ``writeWithoutTransaction(_:)``.
    @discardableResult
    public func writeWithoutTransaction<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await serialized.async(body)
    }

    // MARK: - Other

    /// Interrupts the statement running on the queue, from any thread; it
    /// fails with ``SQLiteError`` code `.interrupt`.
    public func interrupt() {
        serialized.interruptHandle.interrupt()
    }

    /// Closes the connection once the work in flight is done. Further
    /// accesses throw ``SQLiteError`` (`.misuse`).
    public func close() throws {
        try serialized.sync(method: "DatabaseQueue.close") { db in try db.close() }
    }

}
