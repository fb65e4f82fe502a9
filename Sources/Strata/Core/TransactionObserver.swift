import StrataSQLite

/// Told of each transaction a connection commits or rolls back: what
/// Strata's observation is built on, and what an app implements to follow
/// writes itself (a search index, a queue of changes to sync).
///
/// ```swift
/// final class ChangeLog: TransactionObserver {
///     var committed: [TransactionChanges] = []
///     func databaseDidCommit(_ db: Database, changes: TransactionChanges) {
///         committed.append(changes)
///     }
///     func databaseDidRollback(_ db: Database) {}
/// }
///
/// let log = ChangeLog()
/// try db.add(transactionObserver: log)
/// ```
///
/// The connection holds its observers weakly: keep a reference to yours
/// for as long as it should observe. Methods are called on the connection's
/// thread, after the COMMIT or ROLLBACK statement is done, outside any
/// transaction: they may use the database.
public protocol TransactionObserver: AnyObject {
    /// A transaction committed, with what it changed.
    func databaseDidCommit(_ db: Database, changes: TransactionChanges)

    /// A transaction rolled back: nothing it did was kept.
    func databaseDidRollback(_ db: Database)

    /// The connection is closing: no transaction will follow. The default
    /// does nothing.
    func databaseWillClose(_ db: Database)
}

extension TransactionObserver {
    public func databaseWillClose(_ db: Database) {}
}

/// What a committed transaction changed.
public struct TransactionChanges: Hashable, Sendable {
    /// The rows inserted, updated and deleted in rowid tables, in order.
    /// Changes undone by `ROLLBACK TO` a savepoint are left out. Rows of
    /// `WITHOUT ROWID` tables have no rowid and are not listed.
    public var events: [DatabaseEvent]

    /// Every table the transaction wrote, lower-cased: rowid and `WITHOUT
    /// ROWID` tables, and tables dropped or altered. A table may be listed
    /// although a `ROLLBACK TO` undid its changes.
    public var modifiedTables: Set<String>

    /// Makes a set of changes.
    public init(events: [DatabaseEvent], modifiedTables: Set<String>) {
        self.events = events
        self.modifiedTables = modifiedTables
    }
}

extension Database {
    /// Adds a transaction observer, held weakly, told of every transaction
    /// that commits or rolls back on this connection from now on.
    ///
    /// While a connection has observers, SQLite's update, commit and
    /// rollback hooks and its authorizer are in use, and `DELETE` without
    /// `WHERE` visits each row (so that each deleted row is reported).
    ///
    /// - Throws: ``SQLiteError`` (`.misuse`) when the connection is closed.
    public func add(transactionObserver: any TransactionObserver) throws {
        _ = try checkedConnection()
        let tracker: TransactionTracker
        if let existing = state.transactionTracker {
            tracker = existing
        } else {
            tracker = TransactionTracker()
            state.transactionTracker = tracker
            try installHooks()
            // Statements are prepared afresh under the authorizer, so each
            // knows which tables it writes.
            try disableTruncateOptimization()
        }
        tracker.add(transactionObserver)
    }

    /// Removes a transaction observer.
    public func remove(transactionObserver: any TransactionObserver) {
        state.transactionTracker?.remove(transactionObserver)
    }
}

/// Follows one connection's transactions for its observers: the row events
/// and written tables of the transaction in progress (dropping what a
/// `ROLLBACK TO` undoes), and the commits and rollbacks not yet told.
final class TransactionTracker {
    private struct WeakObserver {
        weak var observer: (any TransactionObserver)?
    }

    private var observers: [WeakObserver] = []
    private var events: [DatabaseEvent] = []
    private var tables: Set<String> = []
    /// Open savepoints, each with the number of events made before it.
    private var savepoints: [(name: String, mark: Int)] = []
    /// Commits and rollbacks that happened inside a statement, told once the
    /// statement is done (SQLite's hooks may not use the connection).
    private var untold: [TransactionChanges?] = []
    /// While a statement is prepared, the tables it writes (noted by the
    /// authorizer).
    var preparedWrites: Set<String> = []

    var isEmpty: Bool { observers.allSatisfy { $0.observer == nil } }

    func add(_ observer: any TransactionObserver) {
        observers.removeAll { $0.observer == nil }
        observers.append(WeakObserver(observer: observer))
    }

    func remove(_ observer: any TransactionObserver) {
        observers.removeAll { $0.observer == nil || $0.observer === observer }
    }

    // MARK: - From SQLite's hooks

    func record(_ event: DatabaseEvent) { events.append(event) }

    func recordWrites(_ written: Set<String>) { tables.formUnion(written) }

    /// Adds tables to the commit not yet told, made by the statement that
    /// wrote them.
    func addWritesToLastCommit(_ written: Set<String>) {
        guard let last = untold.indices.last, untold[last] != nil else { return }
        untold[last]!.modifiedTables.formUnion(written)
    }

    func willCommit() {
        untold.append(TransactionChanges(events: events, modifiedTables: tables))
        events = []
        tables = []
        savepoints = []
    }

    func didRollback() {
        untold.append(nil)
        events = []
        tables = []
        savepoints = []
    }

    /// Follows SAVEPOINT, RELEASE and ROLLBACK TO, which SQLite reports to
    /// no hook.
    func didRun(_ statement: SavepointStatement) {
        let name = statement.name.lowercased()
        switch statement.kind {
        case .begin:
            savepoints.append((name, events.count))
        case .release:
            if let index = savepoints.lastIndex(where: { $0.name == name }) {
                savepoints.removeSubrange(index...)
            }
        case .rollbackTo:
            // The savepoint stays open after ROLLBACK TO.
            if let index = savepoints.lastIndex(where: { $0.name == name }) {
                events.removeSubrange(min(savepoints[index].mark, events.count)...)
                savepoints.removeSubrange((index + 1)...)
            }
        }
    }

    // MARK: - Telling the observers

    /// Tells the observers that the connection is closing.
    func tellClosing(_ db: Database) {
        for observer in observers.compactMap(\.observer) {
            observer.databaseWillClose(db)
        }
    }

    /// Whether a commit or rollback waits to be told.
    var hasUntold: Bool { !untold.isEmpty }

    /// Tells the observers of the commits and rollbacks that happened, in
    /// order.
    func tell(_ db: Database) {
        while !untold.isEmpty {
            let outcome = untold.removeFirst()
            let current = observers.compactMap(\.observer)
            for observer in current {
                if let changes = outcome {
                    observer.databaseDidCommit(db, changes: changes)
                } else {
                    observer.databaseDidRollback(db)
                }
            }
        }
    }
}
