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
/// writer turns SQLite's truncate optimization off), and through SQLite's
/// authorizer, which tells which tables each statement writes: `WITHOUT
/// ROWID` tables, `DROP TABLE` and `ALTER TABLE` are seen too.
public struct ValueObservation<Value: Sendable & Equatable>: Sendable {
    let fetch: @Sendable (Database) throws -> Value

    /// Observes the value `fetch` computes: raw SQL, a typed query or records.
    public init(_ fetch: @escaping @Sendable (Database) throws -> Value) {
        self.fetch = fetch
    }

    /// The values, read through a ``DatabaseQueue``, or on a
    /// ``DatabasePool``'s readers while writes go on.
    public func values(in writer: some DatabaseWriter) -> AsyncThrowingStream<Value, any Error> {
        do {
            let connection = try writer.singleWriterConnection(for: "observed")
            return makeValues(writer: connection) { body in
                try await writer.read(body)
            }
        } catch {
            return AsyncThrowingStream { $0.finish(throwing: error) }
        }
    }

    private func makeValues(
        writer: SerializedDatabase,
        read: @escaping @Sendable (@escaping @Sendable (Database) throws -> (Value, Set<String>)) async throws -> (Value, Set<String>)
    ) -> AsyncThrowingStream<Value, any Error> {
        let fetch = self.fetch
        let tracked: @Sendable (Database) throws -> (Value, Set<String>) = { db in
            try db.trackingReadTables { try fetch(db) }
        }
        return AsyncThrowingStream { continuation in
            // Register before the first read, so no commit after it is missed.
            let center = writer.changeCenter()
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

extension DatabaseWriter {
    /// The row changes of each committed transaction, for the given tables
    /// (all tables when nil): a lower-level observer than
    /// ``ValueObservation``. Every commit after this call returns is
    /// delivered; iterating ends when the task is cancelled.
    ///
    /// Rows of `WITHOUT ROWID` tables have no rowid and are not reported
    /// one by one (a ``ValueObservation`` of such a table does see its
    /// changes).
    public func observeChanges(in tables: Set<String>? = nil) -> AsyncStream<[DatabaseEvent]> {
        guard let connection = try? singleWriterConnection(for: "observed") else { return AsyncStream { $0.finish() } }
        return connection.changeCenter().register(tables: tables, coalescing: false).1
    }
}
