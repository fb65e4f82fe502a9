/// What reads a database from any task or thread: ``DatabaseQueue`` and
/// ``DatabasePool``. Helpers that only read take `some DatabaseReader`, so
/// they work with either.
///
/// Each method has a synchronous form and an `async` form of the same name.
public protocol DatabaseReader: AnyObject, Sendable {
    /// The configuration the connections were opened with.
    var configuration: Configuration { get }

    /// Runs `body` in a read-only transaction and returns its result.
    ///
    /// - Throws: what `body` throws; ``SQLiteError`` (`.readOnly`) when it
    ///   tries to write; ``SQLiteError`` (`.misuse`) when called from inside
    ///   another access that it would wait for forever.
    func read<T>(_ body: (Database) throws -> T) throws -> T

    /// Runs `body` in a read-only transaction from async code, off Swift's
    /// cooperative thread pool.
    func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T

    /// Interrupts the statements running on the connections, from any
    /// thread; they fail with ``SQLiteError`` code `.interrupt`.
    func interrupt()

    /// Closes the connections once the work in flight is done.
    func close() throws
}

/// What writes a database from any task or thread: ``DatabaseQueue`` and
/// ``DatabasePool``. ``Migrator``, ``ValueObservation`` and the import and
/// export helpers take `some DatabaseWriter`, so they work with either.
///
/// ```swift
/// func addNote(_ title: String, to writer: some DatabaseWriter) throws {
///     try writer.write { db in
///         try db.execute(sql: "INSERT INTO notes(title) VALUES (?)", arguments: [title])
///     }
/// }
/// ```
public protocol DatabaseWriter: DatabaseReader {
    /// Runs `body` in an immediate transaction: committed when it returns,
    /// rolled back when it throws.
    @discardableResult
    func write<T>(_ body: (Database) throws -> T) throws -> T

    /// Runs `body` in an immediate transaction from async code.
    @discardableResult
    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T

    /// Runs `body` on the writer connection outside any transaction.
    @discardableResult
    func writeWithoutTransaction<T>(_ body: (Database) throws -> T) throws -> T

    /// Runs `body` on the writer connection outside any transaction, from
    /// async code.
    @discardableResult
    func writeWithoutTransaction<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T
}

extension DatabaseReader {
    /// Runs `body` in a read-only transaction; a statement still running
    /// once `limit` has passed since `body` started is stopped and fails
    /// with ``SQLiteError`` code `.interrupt`. See
    /// ``Database/withTimeLimit(_:_:)``.
    public func read<T>(timeLimit limit: Duration, _ body: (Database) throws -> T) throws -> T {
        try read { db in try db.withTimeLimit(limit) { try body(db) } }
    }

    /// Runs `body` in a read-only transaction from async code, with a time
    /// limit on its statements. See ``Database/withTimeLimit(_:_:)``.
    public func read<T: Sendable>(
        timeLimit limit: Duration, _ body: @escaping @Sendable (Database) throws -> T
    ) async throws -> T {
        try await read { db in try db.withTimeLimit(limit) { try body(db) } }
    }
}

extension DatabaseWriter {
    /// Runs `body` in an immediate transaction, with a time limit on its
    /// statements: a statement stopped by the limit fails with
    /// ``SQLiteError`` code `.interrupt`, and the transaction rolls back.
    /// See ``Database/withTimeLimit(_:_:)``.
    @discardableResult
    public func write<T>(timeLimit limit: Duration, _ body: (Database) throws -> T) throws -> T {
        try write { db in try db.withTimeLimit(limit) { try body(db) } }
    }

    /// Runs `body` in an immediate transaction from async code, with a time
    /// limit on its statements. See ``Database/withTimeLimit(_:_:)``.
    @discardableResult
    public func write<T: Sendable>(
        timeLimit limit: Duration, _ body: @escaping @Sendable (Database) throws -> T
    ) async throws -> T {
        try await write { db in try db.withTimeLimit(limit) { try body(db) } }
    }
}

/// A writer whose writes all go through one serialized connection:
/// Strata's own. Layers that follow every commit (observation) attach to
/// that connection.
protocol SingleConnectionWriter: DatabaseWriter {
    /// The connection that writes.
    var writerConnection: SerializedDatabase { get }
}

extension DatabaseWriter {
    /// The connection every write of this writer goes through, or an error
    /// saying why there is none to follow.
    func singleWriterConnection(for purpose: String) throws -> SerializedDatabase {
        guard let writer = self as? any SingleConnectionWriter else {
            throw SQLiteError.misuse("\(Self.self) cannot be \(purpose): it follows the commits of a DatabaseQueue or a DatabasePool")
        }
        return writer.writerConnection
    }
}

extension DatabaseQueue: SingleConnectionWriter {
    var writerConnection: SerializedDatabase { serialized }
}

extension DatabasePool: SingleConnectionWriter {
    var writerConnection: SerializedDatabase { writer }
}
