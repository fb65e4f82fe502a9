import Foundation

/// Hands the committed changes of a queue's or pool's writer connection to
/// the observers registered for their tables. One per writer connection,
/// kept in the connection's layer storage (see ``SerializedDatabase/changeCenter()``).
final class ChangeCenter: Sendable {
    private struct Observer {
        /// Lower-cased table names; nil observes every table.
        var tables: Set<String>?
        /// Whether a write without row events is delivered (as no event):
        /// query observers refetch; row observers want rows only.
        let acceptsTableWrites: Bool
        let continuation: AsyncStream<[DatabaseEvent]>.Continuation
    }

    private struct State {
        var observers: [Int: Observer] = [:]
        var nextID = 0
        /// Set when the connection closes: later observers end at once.
        var isFinished = false
    }

    private let state = Locked(State())

    /// Registers an observer; its stream yields the changes of each committed
    /// transaction that touched one of `tables` (or any table when nil).
    /// A query observer (`coalescing`) keeps only the newest pending
    /// notification when it lags, since it refetches anyway, and also hears
    /// of writes without row events; a row observer gets every row event.
    func register(tables: Set<String>?, coalescing: Bool) -> (Int, AsyncStream<[DatabaseEvent]>) {
        let (stream, continuation) = AsyncStream.makeStream(
            of: [DatabaseEvent].self, bufferingPolicy: coalescing ? .bufferingNewest(1) : .unbounded)
        let id: Int? = state.withLock { state in
            if state.isFinished { return nil }
            state.nextID += 1
            state.observers[state.nextID] = Observer(tables: tables?.lowercasedSet, acceptsTableWrites: coalescing, continuation: continuation)
            return state.nextID
        }
        guard let id else {
            continuation.finish()
            return (0, stream)
        }
        continuation.onTermination = { [weak self] _ in self?.unregister(id) }
        return (id, stream)
    }

    func setTables(_ tables: Set<String>?, for id: Int) {
        state.withLock { $0.observers[id]?.tables = tables?.lowercasedSet }
    }

    func unregister(_ id: Int) {
        let observer = state.withLock { $0.observers.removeValue(forKey: id) }
        observer?.continuation.finish()
    }

    /// Ends every observer's stream, and those registered later.
    func finishAll() {
        let all = state.withLock { state in
            state.isFinished = true
            defer { state.observers = [:] }
            return Array(state.observers.values)
        }
        all.forEach { $0.continuation.finish() }
    }

    /// Delivers committed transactions, in commit order. An observer hears
    /// of a transaction that changed rows of its tables, or wrote one of
    /// them without row events (a WITHOUT ROWID table, a DROP TABLE): then
    /// with no event, which a query observer takes as "fetch again".
    func deliver(_ transactions: [TransactionChanges]) {
        guard !transactions.isEmpty else { return }
        let current = state.withLock { Array($0.observers.values) }
        for transaction in transactions {
            for observer in current {
                let events: [DatabaseEvent]
                let wroteTable: Bool
                if let tables = observer.tables {
                    events = transaction.events.filter { tables.contains($0.tableName.lowercased()) }
                    wroteTable = !tables.isDisjoint(with: transaction.modifiedTables)
                } else {
                    events = transaction.events
                    wroteTable = !transaction.modifiedTables.isEmpty
                }
                if !events.isEmpty || (wroteTable && observer.acceptsTableWrites) {
                    observer.continuation.yield(events)
                }
            }
        }
    }
}

// The writer connection tells the center of each commit; it hands the
// changes to the observers' streams.
extension ChangeCenter: TransactionObserver {
    func databaseDidCommit(_ db: Database, changes: TransactionChanges) {
        deliver([changes])
    }

    func databaseDidRollback(_ db: Database) {}

    func databaseWillClose(_ db: Database) {
        finishAll()
    }
}

extension SerializedDatabase {
    /// The change center of this (writer) connection, made and registered
    /// as its transaction observer on first use. Returns once it is in
    /// place: every commit after the call reaches it (the work already
    /// queued runs first). A closed connection's center is finished.
    func changeCenter() -> ChangeCenter {
        syncAnywhere { db in
            let key = ObjectIdentifier(ChangeCenter.self)
            if let center = db.layerCache[key] as? ChangeCenter { return center }
            let center = ChangeCenter()
            do {
                try db.add(transactionObserver: center)
                db.layerCache[key] = center
            } catch {
                // Closed: nothing will be committed.
                center.finishAll()
            }
            return center
        }
    }
}

extension Set<String> {
    fileprivate var lowercasedSet: Set<String> { Set(map { $0.lowercased() }) }
}
