import Dispatch

/// One connection and the serial dispatch queue it lives on: the building
/// block of ``DatabaseQueue`` and ``DatabasePool``.
///
/// Work runs on the dispatch queue, never on Swift's cooperative thread
/// pool; a call made from inside that work throws instead of deadlocking.
// @unchecked: `database` is only touched on `dispatchQueue`, a serial queue.
final class SerializedDatabase: @unchecked Sendable {
    let database: Database
    let dispatchQueue: DispatchQueue
    private let onQueueKey = DispatchSpecificKey<Void>()
    let interruptHandle: DatabaseInterruptHandle

    init(location: DatabaseLocation, configuration: Configuration, label: String) throws {
        let dispatchQueue = DispatchQueue(label: label)
        self.dispatchQueue = dispatchQueue
        dispatchQueue.setSpecific(key: onQueueKey, value: ())
        database = try dispatchQueue.sync { try Database(location: location, configuration: configuration) }
        interruptHandle = database.interruptHandle
    }

    deinit {
        // The last reference is going away, so no work can be running or
        // queued (each holds this object strongly).
        try? database.close()
    }

    var isOnQueue: Bool { DispatchQueue.getSpecific(key: onQueueKey) != nil }

    /// Runs `body` synchronously on the queue.
    func sync<T>(method: String, _ body: (Database) throws -> T) throws -> T {
        if isOnQueue {
            throw SQLiteError.misuse(
                "\(method) was called from inside another access to the same connection, "
                    + "which would deadlock; use the Database passed to the enclosing closure")
        }
        return try dispatchQueue.sync {
            return try body(database)
        }
    }

    /// Runs `body` on the queue from async code, suspending the task meanwhile.
    func async<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try Task.checkCancellation()
        return try await withCheckedThrowingContinuation { continuation in
            dispatchQueue.async {
                continuation.resume(with: Result { try body(self.database) })
            }
        }
    }

    /// Runs `body` on the queue and waits for it, from any thread, the
    /// queue's own included (then at once): after the work already queued.
    func syncAnywhere<T>(_ body: (Database) -> T) -> T {
        if isOnQueue { return body(database) }
        return dispatchQueue.sync { body(database) }
    }

    /// A read-only transaction around `body`: BEGIN, `PRAGMA query_only`,
    /// then a rollback.
    static func runRead<T>(_ db: Database, _ body: (Database) throws -> T) throws -> T {
        if db.isClosed { throw SQLiteError.misuse("the database connection is closed") }
        try db.execute(sql: "BEGIN DEFERRED TRANSACTION")
        // Set up so that the connection is put back whatever fails, an
        // interrupt landing on these statements included.
        defer {
            try? db.executeDespiteInterrupts(sql: "PRAGMA query_only = 0")
            db.rollbackQuietly()
        }
        try db.execute(sql: "PRAGMA query_only = 1")
        return try body(db)
    }
}
