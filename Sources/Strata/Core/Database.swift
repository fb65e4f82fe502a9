import Foundation
import StrataSQLite

/// One connection to a SQLite database.
///
/// ```swift
/// let db = try Database(path: "movies.sqlite")
/// try db.execute(sql: """
///     CREATE TABLE IF NOT EXISTS movies(id INTEGER PRIMARY KEY, title TEXT NOT NULL, year INT);
///     INSERT INTO movies(title, year) VALUES ('Heat', 1995);
///     """)
/// let titles = try String.fetchAll(db, sql: "SELECT title FROM movies WHERE year > ?", arguments: [1990])
/// ```
///
/// A `Database` is not `Sendable`: it lives on one thread or serial executor.
/// To use a database from several tasks, open a ``DatabaseQueue``, which owns
/// a connection and hands it to your closures one at a time.
///
/// The connection closes when the value is released, or earlier with
/// ``close()``.
///
/// ## SQLite's settings for the process
///
/// Before the first connection opens, Strata sets two of SQLite's
/// process-wide options, which `sqlite3_config` can change only before
/// SQLite is initialized:
///
/// - Statement journals stay in memory up to 4 MiB instead of 64 KiB, so a
///   statement firing triggers inside a long transaction does not write its
///   undo copies to a temporary file.
/// - SQLite does not count the memory it allocates
///   (`SQLITE_CONFIG_MEMSTATUS` off, one of SQLite's recommended options):
///   the count costs a mutex on every allocation, about 15% of a bulk
///   insert's time. `sqlite3_memory_used()`, `sqlite3_memory_highwater()`,
///   `sqlite3_status64()`'s memory figures and the soft and hard heap
///   limits do nothing while it is off.
///
/// A program that wants SQLite's defaults, or sets its own, calls
/// `sqlite3_config` and then `sqlite3_initialize()` before it opens its
/// first ``Database``; Strata then leaves SQLite's settings as they are.
///
/// See <https://www.sqlite.org/c3ref/sqlite3.html>.
public final class Database {
    /// The configuration the connection was opened with.
    public let configuration: Configuration

    /// Where the database lives.
    public let location: DatabaseLocation

    let state: ConnectionState
    /// Prepared statements by their SQL, compared byte for byte.
    var statementCache: [ExactString: Statement] = [:]
    /// What the layers above Core keep on a connection (prepared statements
    /// with what they need to reuse them), each under a key the layer owns
    /// and Core does not interpret. Emptied when the connection closes.
    let layerCache = LayerCache()
    /// The prepared INSERTs of typed queries (`db.run(table.insert(…))`),
    /// kept apart from `layerCache` because a loop of inserts reads it for
    /// every row. Emptied when the connection closes.
    let typedInsertStatements = TypedInsertStatements()
    var savepointDepth = 0

    /// A handle that can interrupt this connection's running statement from
    /// any thread.
    public let interruptHandle: DatabaseInterruptHandle

    // Hooks, called by SQLite through trampolines (see Database+Hooks.swift).
    var updateHook: ((DatabaseEvent) -> Void)?
    var commitHook: (() -> Bool)?
    var rollbackHook: (() -> Void)?
    /// What the authorizer does while it is installed (see
    /// Database+Authorizer.swift).
    let authorizer = AuthorizerState()
    /// The progress callback's deadline and handler (see
    /// Database+Progress.swift).
    let progress = ProgressState()

    /// Opens a database file.
    ///
    /// - Parameters:
    ///   - path: the file's path.
    ///   - configuration: how to open it; by default the file is created when
    ///     missing and foreign keys are enforced.
    /// - Throws: ``SQLiteError``: `.cantOpen` for a missing file that may not
    ///   be created or an unreachable path, `.notADatabase` for a file that is
    ///   not a SQLite database.
    public convenience init(path: String, configuration: Configuration = Configuration()) throws {
        try self.init(location: .path(path), configuration: configuration)
    }

    /// Opens a private in-memory database.
    public convenience init(configuration: Configuration = Configuration()) throws {
        try self.init(location: .inMemory, configuration: configuration)
    }

    /// Opens a database at a location: a file, in memory, or a temporary file.
    ///
    /// - Throws: ``SQLiteError`` when the database cannot be opened or set up.
    public init(location: DatabaseLocation, configuration: Configuration = Configuration()) throws {
        self.location = location
        self.configuration = configuration
        let handle = try Database.openConnection(location: location, configuration: configuration)
        self.state = ConnectionState(handle)
        self.interruptHandle = DatabaseInterruptHandle(handle)
        authorizer.connection = state
        state.database = self
        do {
            try configuration.prepareDatabase?(self)
        } catch {
            try? close()
            throw error
        }
    }

    deinit {
        try? close()
    }

    /// SQLite's process-wide settings, made once before SQLite is first
    /// used (see "SQLite's settings for the process" in the type's
    /// documentation). When something else initialized SQLite before,
    /// its settings stay: `sqlite3_config` then answers SQLITE_MISUSE and
    /// changes nothing.
    ///
    /// - Statement journals are kept in memory up to 4 MiB (SQLite's
    ///   default spills them to a temporary file past 64 KiB). Inside a
    ///   transaction, SQLite copies each page a statement with triggers or
    ///   several writes changes into that journal, so that the statement
    ///   alone can be undone: an insert firing triggers on a few tables and
    ///   indexes copies ten to twenty pages, and a replication of 100,000
    ///   documents wrote gigabytes to a temporary file through the kernel.
    /// - SQLite does not count the memory it allocates. Counting takes a
    ///   process-wide mutex around every allocation and free, and SQLite
    ///   allocates several times per row written: without it, a 50,000-row
    ///   insert costs 9% fewer instructions and about 15% less time.
    ///   SQLite's own list of recommended options has it
    ///   (`SQLITE_DEFAULT_MEMSTATUS=0`); Debian's build does not.
    static let processSettings: Void = {
        _ = strata_sqlite3_config_statement_journal_spill(4 << 20)
        _ = strata_sqlite3_config_memory_statistics(0)
    }()

    private static func openConnection(location: DatabaseLocation, configuration: Configuration) throws -> OpaquePointer {
        _ = processSettings
        var flags = SQLITE_OPEN_NOMUTEX
        if configuration.isReadOnly {
            flags |= SQLITE_OPEN_READONLY
        } else {
            flags |= SQLITE_OPEN_READWRITE
            if configuration.createsMissingFile { flags |= SQLITE_OPEN_CREATE }
        }
        var handle: OpaquePointer?
        let code = sqlite3_open_v2(location.sqlitePath, &handle, flags, nil)
        guard let handle else {
            throw SQLiteError(code: .noMemory, message: "sqlite3_open_v2 could not allocate a connection")
        }
        do {
            guard code == SQLITE_OK else {
                var error = SQLiteError.fromConnection(handle, code: code)
                if case .path(let path) = location {
                    error.message = (error.message ?? "cannot open") + " (path: \(path))"
                }
                throw error
            }
            sqlite3_extended_result_codes(handle, 1)
            EveryConnectionCollations.install(on: handle)
            let milliseconds = configuration.busyTimeout.components.seconds * 1000
                + configuration.busyTimeout.components.attoseconds / 1_000_000_000_000_000
            sqlite3_busy_timeout(handle, Int32(clamping: milliseconds))
            // Reading the schema now turns "file is not a database" into an
            // error at open time rather than at the first query.
            // A lock held by another connection is no reason to refuse to
            // open: the busy timeout applies to the queries that follow.
            do {
                try exec(handle, "SELECT count(*) FROM sqlite_master", location: location)
            } catch let error as SQLiteError where error.code ~= .busy || error.code ~= .locked {
            }
            if !configuration.isReadOnly || configuration.foreignKeysEnabled {
                try exec(handle, "PRAGMA foreign_keys = \(configuration.foreignKeysEnabled ? "ON" : "OFF")", location: location)
            }
            if let journalMode = configuration.journalMode {
                try setJournalMode(journalMode, on: handle, location: location)
            }
            return handle
        } catch {
            sqlite3_close_v2(handle)
            throw error
        }
    }

    private static func exec(_ handle: OpaquePointer, _ sql: String, location: DatabaseLocation) throws {
        let code = sqlite3_exec(handle, sql, nil, nil, nil)
        guard code == SQLITE_OK else {
            var error = SQLiteError.fromConnection(handle, code: code, sql: sql)
            if case .path(let path) = location {
                error.message = (error.message ?? "") + " (path: \(path))"
            }
            throw error
        }
    }

    private static func setJournalMode(_ mode: JournalMode, on handle: OpaquePointer, location: DatabaseLocation) throws {
        let sql = "PRAGMA journal_mode = \(mode.rawValue)"
        var statement: OpaquePointer?
        var code = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        defer { sqlite3_finalize(statement) }
        guard code == SQLITE_OK, let statement else {
            throw SQLiteError.fromConnection(handle, code: code, sql: sql)
        }
        code = sqlite3_step(statement)
        guard code == SQLITE_ROW else {
            throw SQLiteError.fromConnection(handle, code: code, sql: sql)
        }
        let actual = readText(from: statement, at: 0).lowercased()
        // An in-memory or temporary database only knows `memory` (or `off`).
        if case .path = location, actual != mode.rawValue {
            throw SQLiteError(
                code: .error, message: "journal mode \(mode.rawValue) could not be set; SQLite kept \(actual)",
                sql: sql)
        }
    }

    // MARK: - Closing

    /// Whether ``close()`` was called.
    public var isClosed: Bool { state.sqliteConnection == nil }

    /// The raw `sqlite3` connection handle, for calls Strata does not wrap;
    /// nil once closed.
    ///
    /// `import Strata` does not bring SQLite's C API into scope: import it
    /// where you use the handle, `SQLite3` on Apple platforms and `CSQLite`
    /// (Strata's module for the system's libsqlite3) elsewhere.
    ///
    /// ```swift
    /// #if canImport(SQLite3)
    /// import SQLite3
    /// #else
    /// import CSQLite
    /// #endif
    ///
    /// let changes = sqlite3_total_changes64(db.sqliteConnection)
    /// ```
    public var sqliteConnection: OpaquePointer? { state.sqliteConnection }

    /// Closes the connection. Further use throws ``SQLiteError`` (`.misuse`).
    ///
    /// Statements you still hold are not a problem: they fail with a clear
    /// error when used, and the connection's resources are released when the
    /// last of them is. A transaction still open is rolled back. Closing twice
    /// does nothing.
    ///
    /// See <https://www.sqlite.org/c3ref/close.html>.
    public func close() throws {
        guard let handle = state.sqliteConnection else { return }
        state.transactionTracker?.tellClosing(self)
        statementCache.removeAll()
        layerCache.removeAll()
        typedInsertStatements.removeAll()
        interruptHandle.invalidate()
        sqlite3_update_hook(handle, nil, nil)
        sqlite3_commit_hook(handle, nil, nil)
        sqlite3_rollback_hook(handle, nil, nil)
        updateHook = nil
        commitHook = nil
        rollbackHook = nil
        state.transactionTracker = nil
        state.sqliteConnection = nil
        let code = sqlite3_close_v2(handle)
        guard code == SQLITE_OK else {
            throw SQLiteError.fromConnection(nil, code: code)
        }
    }

    func checkedConnection() throws -> OpaquePointer {
        guard let handle = state.sqliteConnection else {
            throw SQLiteError.misuse("the database connection is closed")
        }
        return handle
    }

    // MARK: - Information

    /// The version of the SQLite library in use, such as `"3.40.1"`.
    ///
    /// See <https://www.sqlite.org/c3ref/libversion.html>.
    public static var sqliteVersion: String { String(cString: sqlite3_libversion()) }

    /// The version of the SQLite library as a number: 3040001 for 3.40.1.
    public static var sqliteVersionNumber: Int { Int(sqlite3_libversion_number()) }

    /// The database file's path, "" for an in-memory or temporary database.
    public var path: String {
        guard let handle = state.sqliteConnection, let name = sqlite3_db_filename(handle, "main") else { return "" }
        return String(cString: name)
    }

    /// The rowid of the latest successful INSERT on this connection.
    ///
    /// See <https://www.sqlite.org/c3ref/last_insert_rowid.html>.
    public var lastInsertedRowID: Int64 {
        state.sqliteConnection.map { sqlite3_last_insert_rowid($0) } ?? 0
    }

    /// The number of rows changed by the latest INSERT, UPDATE or DELETE.
    ///
    /// See <https://www.sqlite.org/c3ref/changes.html>.
    public var changesCount: Int {
        state.sqliteConnection.map { Int(sqlite3_changes64($0)) } ?? 0
    }

    /// The number of rows changed since the connection opened.
    ///
    /// See <https://www.sqlite.org/c3ref/total_changes.html>.
    public var totalChangesCount: Int {
        state.sqliteConnection.map { Int(sqlite3_total_changes64($0)) } ?? 0
    }

    /// Whether a transaction is open (the connection is not in autocommit
    /// mode).
    ///
    /// See <https://www.sqlite.org/c3ref/get_autocommit.html>.
    public var isInsideTransaction: Bool {
        state.sqliteConnection.map { sqlite3_get_autocommit($0) == 0 } ?? false
    }

    // MARK: - Statements

    /// Prepares one statement for repeated use.
    ///
    /// - Parameter sql: exactly one SQL statement (a trailing `;` and comments
    ///   are fine).
    /// - Returns: a statement to run with ``Statement/execute(arguments:)`` or
    ///   to fetch from.
    /// - Throws: ``SQLiteError`` for invalid SQL, for SQL with no statement or
    ///   more than one, or when the database is closed.
    ///
    /// See <https://www.sqlite.org/c3ref/prepare.html>.
    public func makeStatement(sql: String) throws -> Statement {
        try makeStatement(sql: sql, persistent: false)
    }

    func makeStatement(sql: String, persistent: Bool) throws -> Statement {
        let handle = try checkedConnection()
        try checkNoNUL(in: sql)
        let flags = persistent ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0
        return try sql.withCString { start in
            var statement: OpaquePointer?
            var tail: UnsafePointer<CChar>?
            let code = sqlite3_prepare_v3(handle, start, -1, flags, &statement, &tail)
            guard code == SQLITE_OK else {
                throw SQLiteError.fromConnection(handle, code: code, sql: sql)
            }
            guard let statement else {
                throw SQLiteError.misuse("the SQL holds no statement", sql: sql)
            }
            let result = Statement(sqliteStatement: statement, sql: sql, connectionState: state)
            if let tail, !holdsNoStatement(tail, handle: handle) {
                throw SQLiteError.misuse(
                    "makeStatement(sql:) takes a single statement; run scripts with execute(sql:)", sql: sql)
            }
            return result
        }
    }

    /// A statement from the connection's cache, prepared on first use.
    ///
    /// A cached statement still being stepped by a cursor is not handed out
    /// again: a fresh statement is prepared instead.
    func cachedStatement(sql: String) throws -> Statement {
        if let statement = statementCache[ExactString(sql)] {
            if sqlite3_stmt_busy(statement.sqliteStatement) == 0 {
                return statement
            }
            return try makeStatement(sql: sql, persistent: false)
        }
        let statement = try makeStatement(sql: sql, persistent: true)
        cache(statement, for: sql)
        return statement
    }

    func cache(_ statement: Statement, for sql: String) {
        let capacity = configuration.statementCacheCapacity
        guard capacity > 0 else { return }
        if statementCache.count >= capacity,
            let victim = statementCache.first(where: { sqlite3_stmt_busy($0.value.sqliteStatement) == 0 })?.key
        {
            statementCache.removeValue(forKey: victim)
        }
        statementCache[ExactString(sql)] = statement
    }

    // MARK: - Executing

    /// Runs one statement, or a script of several separated by `;` (FMDB's
    /// `executeStatements`).
    ///
    /// ```swift
    /// try db.execute(sql: "UPDATE movies SET likes = ? WHERE id = ?", arguments: [3, 7])
    /// try db.execute(sql: "UPDATE movies SET watched = :watched WHERE id = :id", arguments: ["watched": true, "id": 7])
    /// ```
    ///
    /// In a script, positional arguments are consumed statement after
    /// statement; named arguments are available to every statement. A script
    /// is not wrapped in a transaction: run it in ``transaction(_:_:)`` to make
    /// it all-or-nothing.
    ///
    /// - Parameters:
    ///   - sql: one or more SQL statements.
    ///   - arguments: values for the parameters.
    /// - Throws: ``SQLiteError`` when the SQL is invalid, fails, or the
    ///   arguments do not match its parameters. In a script, the error's
    ///   ``SQLiteError/sql`` is the statement that failed, and the statements
    ///   before it have run.
    public func execute(sql: String, arguments: StatementArguments = []) throws {
        _ = try checkedConnection()
        if let statement = statementCache[ExactString(sql)], sqlite3_stmt_busy(statement.sqliteStatement) == 0 {
            try statement.execute(arguments: arguments)
            return
        }
        // A script, or a statement seen for the first time.
        try checkNoNUL(in: sql)
        let statements = StatementCursor(database: self, sql: sql)
        var consumer = ArgumentConsumer(arguments)
        var isFirst = true
        while let statement = try statements.next() {
            statement.arguments = arguments
            do {
                try consumer.bind(to: statement)
            } catch var error as SQLiteError {
                error.sql = statement.sql
                throw error
            }
            if isFirst, try statements.isAtEnd {
                // A single statement: check the arguments before running it,
                // and keep it for next time.
                try consumer.checkAllUsed(sql: statement.sql)
                if statementCache[ExactString(sql)] == nil, configuration.statementCacheCapacity > 0 {
                    cache(statement, for: sql)
                }
            }
            try statement.run()
            isFirst = false
        }
        try consumer.checkAllUsed(sql: sql)
    }
}

@available(*, unavailable)
extension Database: Sendable {}

/// Interrupts a connection's running statement from any thread.
///
/// The interrupted statement fails with ``SQLiteError`` code `.interrupt`;
/// an open transaction may have been rolled back.
///
/// See <https://www.sqlite.org/c3ref/interrupt.html>.
// The handle is read and cleared only under its lock, and sqlite3_interrupt
// is safe to call from any thread while the connection is open.
public final class DatabaseInterruptHandle: Sendable {
    private let sqliteConnection: Locked<OpaquePointer?>

    init(_ sqliteConnection: OpaquePointer) {
        self.sqliteConnection = Locked(sqliteConnection)
    }

    /// Interrupts the statement running on the connection, if any. Does
    /// nothing once the connection is closed.
    public func interrupt() {
        sqliteConnection.withLock { connection in
            if let connection { sqlite3_interrupt(connection) }
        }
    }

    func invalidate() {
        sqliteConnection.withLock { $0 = nil }
    }
}

/// Objects kept on a connection by the layers above Core, by a key each
/// layer owns. The last key found is remembered: a loop of inserts of one
/// record type finds its statement with one comparison, not a hash.
///
/// `@exclusivity(unchecked)`: a connection is used by one thread at a time.
final class LayerCache {
    @exclusivity(unchecked) private var storage: [ObjectIdentifier: AnyObject] = [:]
    @exclusivity(unchecked) private var lastKey: ObjectIdentifier?
    @exclusivity(unchecked) private var lastValue: AnyObject?

    subscript(key: ObjectIdentifier) -> AnyObject? {
        get {
            if key == lastKey { return lastValue }
            let value = storage[key]
            if value != nil {
                lastKey = key
                lastValue = value
            }
            return value
        }
        set {
            storage[key] = newValue
            lastKey = nil
            lastValue = nil
        }
    }

    func removeAll() {
        storage.removeAll()
        lastKey = nil
        lastValue = nil
    }
}

