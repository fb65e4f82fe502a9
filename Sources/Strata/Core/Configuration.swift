import StrataSQLite

/// Where a database lives.
public enum DatabaseLocation: Hashable, Sendable {
    /// A file at this path (created when missing, unless the configuration
    /// says otherwise).
    case path(String)
    /// A private in-memory database, gone when the connection closes.
    case inMemory
    /// A private on-disk database in a temporary file, deleted when the
    /// connection closes. Unlike ``inMemory`` it can grow beyond memory.
    case temporary

    /// The file name given to `sqlite3_open_v2`.
    var sqlitePath: String {
        switch self {
        case .path(let path): path
        case .inMemory: ":memory:"
        case .temporary: ""
        }
    }
}

/// How a connection is opened and set up.
///
/// ```swift
/// var configuration = Configuration()
/// configuration.busyTimeout = .seconds(10)
/// configuration.journalMode = .wal
/// configuration.prepareDatabase = { db in
///     try db.execute(sql: "PRAGMA cache_size = -20000")
/// }
/// let queue = try DatabaseQueue(path: "app.sqlite", configuration: configuration)
/// ```
public struct Configuration: Sendable {
    /// Open the database for reading only. Default false.
    public var isReadOnly = false

    /// Create the file when it does not exist. Default true; ignored when
    /// ``isReadOnly``.
    public var createsMissingFile = true

    /// How long a statement waits for another connection's lock before failing
    /// with `SQLITE_BUSY`. Default 5 seconds.
    ///
    /// See <https://www.sqlite.org/c3ref/busy_timeout.html>.
    public var busyTimeout: Duration = .seconds(5)

    /// Whether SQLite enforces foreign keys. Default true (SQLite's own
    /// default is false).
    ///
    /// See <https://www.sqlite.org/foreignkeys.html>.
    public var foreignKeysEnabled = true

    /// The journal mode to set when opening; nil keeps SQLite's default
    /// (`delete` for files).
    ///
    /// See <https://www.sqlite.org/pragma.html#pragma_journal_mode>.
    public var journalMode: JournalMode?

    /// How many prepared statements each connection keeps for reuse by the
    /// convenience methods (`execute(sql:)`, `fetchAll(_:sql:)`, …). Default 64;
    /// 0 disables the cache.
    public var statementCacheCapacity = 64

    /// A name for the connection, used in the label of a ``DatabaseQueue``'s
    /// dispatch queue.
    public var label: String?

    /// Run on every new connection, after Strata's own setup: register
    /// functions and collations, set pragmas, attach databases.
    public var prepareDatabase: (@Sendable (Database) throws -> Void)?

    /// The default configuration.
    public init() {}
}

/// A SQLite journal mode.
///
/// See <https://www.sqlite.org/pragma.html#pragma_journal_mode>.
public struct JournalMode: RawRepresentable, Hashable, Sendable {
    /// The mode's name, as `PRAGMA journal_mode` spells it.
    public let rawValue: String

    /// Makes a mode from its name.
    public init(rawValue: String) {
        self.rawValue = rawValue.lowercased()
    }

    /// The rollback journal is deleted at the end of each transaction.
    public static let delete = JournalMode(rawValue: "delete")
    /// The rollback journal is truncated to zero length.
    public static let truncate = JournalMode(rawValue: "truncate")
    /// The rollback journal's header is zeroed.
    public static let persist = JournalMode(rawValue: "persist")
    /// The rollback journal is kept in memory.
    public static let memory = JournalMode(rawValue: "memory")
    /// Write-ahead logging: readers do not block the writer.
    public static let wal = JournalMode(rawValue: "wal")
    /// No rollback journal: a crash can corrupt the database.
    public static let off = JournalMode(rawValue: "off")
}

/// How a transaction takes its locks.
///
/// See <https://www.sqlite.org/lang_transaction.html>.
public enum TransactionKind: String, Sendable {
    /// Locks are taken when first needed.
    case deferred = "DEFERRED"
    /// The write lock is taken at once: other writers wait, readers go on.
    case immediate = "IMMEDIATE"
    /// The write lock is taken at once and, outside WAL mode, readers wait too.
    case exclusive = "EXCLUSIVE"
}
