/// The fresh result of a query after each change that could affect it, as
/// an `AsyncSequence` — what Core Data's fetched-results controller does for
/// a list on screen.
///
/// ```swift
/// let notes = ValueObservation { db in
///     try Note.fetchAll(db, Note.table.order(Column<Date>("modificationDate").desc))
/// }
/// for try await list in notes.values(in: queue) {
///     show(list)   // at once, then after each commit that touched `notes`
/// }
/// ```
///
/// The first value comes at once. After each committed transaction that
/// changed a table the query read (found by SQLite's authorizer while the
/// query runs), the query runs again, and its result is delivered unless it
/// equals the previous one. Transactions that touched none of those tables
/// cause no work at all. Cancelling the task that iterates stops the
/// tracking.
///
/// Changes are seen through SQLite's update hook, which reports rows of
/// rowid tables (a `DELETE` without `WHERE` included: while observed, the
/// writer turns SQLite's truncate optimization off). Changes to
/// `WITHOUT ROWID` tables are not reported.
public struct ValueObservation<Value: Sendable & Equatable>: Sendable {
    let fetch: @Sendable (Database) throws -> Value

    /// Observes the value `fetch` computes: raw SQL, a typed query or records.
    public init(_ fetch: @escaping @Sendable (Database) throws -> Value) {
        self.fetch = fetch
    }

    /// The values, read through a ``DatabaseQueue``.
    public func values(in queue: DatabaseQueue) -> AsyncThrowingStream<Value, any Error> {
        makeValues(writer: queue.serialized, center: queue.changeCenter) { body in try await queue.read(body) }
    }

    /// The values, read on the pool's readers while writes go on.
    public func values(in pool: DatabasePool) -> AsyncThrowingStream<Value, any Error> {
        makeValues(writer: pool.writer, center: pool.changeCenter) { body in try await pool.read(body) }
    }

    private func makeValues(
        writer: SerializedDatabase, center: ChangeCenter,
        read: @escaping @Sendable (@escaping @Sendable (Database) throws -> (Value, Set<String>)) async throws -> (Value, Set<String>)
    ) -> AsyncThrowingStream<Value, any Error> {
        let fetch = self.fetch
        let tracked: @Sendable (Database) throws -> (Value, Set<String>) = { db in
            try db.trackingReadTables { try fetch(db) }
        }
        return AsyncThrowingStream { continuation in
            // Register before the first read, so no commit after it is missed.
            writer.startRecordingChanges(into: center)
            let (id, changes) = center.register(tables: nil, coalescing: true)
            let task = Task {
                do {
                    // Let the writer install its recorder and finish the work
                    // queued before this observation started.
                    try await writer.async { _ in () }
                    var (value, tables) = try await read(tracked)
                    center.setTables(tables, for: id)
                    continuation.yield(value)
                    var last = value
                    for await _ in changes {
                        (value, tables) = try await read(tracked)
                        center.setTables(tables, for: id)
                        if value != last {
                            continuation.yield(value)
                            last = value
                        }
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in
                task.cancel()
                center.unregister(id)
            }
        }
    }
}

extension DatabaseQueue {
    /// The row changes of each committed transaction, for the given tables
    /// (all tables when nil): a lower-level observer than
    /// ``ValueObservation``. Iterating ends when the task is cancelled.
    public func observeChanges(in tables: Set<String>? = nil) -> AsyncStream<[DatabaseEvent]> {
        serialized.startRecordingChanges(into: changeCenter)
        return changeCenter.register(tables: tables, coalescing: false).1
    }
}

extension DatabasePool {
    /// The row changes of each committed transaction, for the given tables
    /// (all tables when nil). See ``DatabaseQueue/observeChanges(in:)``.
    public func observeChanges(in tables: Set<String>? = nil) -> AsyncStream<[DatabaseEvent]> {
        writer.startRecordingChanges(into: changeCenter)
        return changeCenter.register(tables: tables, coalescing: false).1
    }
}
