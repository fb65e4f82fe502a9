import Foundation

/// A database in WAL mode shared by one writer and several concurrent
/// readers.
///
/// ```swift
/// let pool = try DatabasePool(path: "notes.sqlite")
/// try await pool.write { db in
///     try db.execute(sql: "INSERT INTO notes(title) VALUES (?)", arguments: ["Groceries"])
/// }
/// let count = try await pool.read { db in
///     try Int.fetchOne(db, sql: "SELECT count(*) FROM notes") ?? 0
/// }
/// ```
///
/// Reads run concurrently with each other and with the write in progress,
/// each inside a transaction that sees one consistent snapshot of the
/// database. Writes are serialized on the writer connection and use
/// immediate transactions, so that writers in other processes wait for the
/// lock (up to the busy timeout) instead of failing. Every method exists in a
/// synchronous and an `async` form; blocking work never runs on Swift's
/// cooperative thread pool.
///
/// See <https://www.sqlite.org/wal.html>.
public final class DatabasePool: DatabaseWriter {
    /// The configuration the connections were opened with.
    public let configuration: Configuration
    /// The database file's path.
    public let path: String
    /// The most readers open at once.
    public let maximumReaderCount: Int

    let writer: SerializedDatabase
    private let readers: ReaderPool
    /// Set on the dispatch queues of this pool's readers: a read started
    /// from inside a read could wait forever for a free reader.
    private let readerQueueKey: DispatchSpecificKey<Void>

    /// Opens a database file in WAL mode.
    ///
    /// - Parameters:
    ///   - path: the file (created when missing).
    ///   - configuration: how connections are opened; the journal mode is
    ///     always WAL.
    ///   - maximumReaderCount: how many reads may run at once. Default 5.
    /// - Throws: ``SQLiteError`` when the file cannot be opened or put in WAL
    ///   mode.
    public init(path: String, configuration: Configuration = Configuration(), maximumReaderCount: Int = 5) throws {
        var writerConfiguration = configuration
        writerConfiguration.journalMode = .wal
        self.configuration = writerConfiguration
        self.path = path
        self.maximumReaderCount = max(1, maximumReaderCount)
        writer = try SerializedDatabase(
            location: .path(path), configuration: writerConfiguration,
            label: (configuration.label ?? "Strata.DatabasePool") + ".writer")
        var readerConfiguration = configuration
        readerConfiguration.journalMode = nil  // set by the writer, kept in the file
        readerConfiguration.createsMissingFile = false
        let label = (configuration.label ?? "Strata.DatabasePool") + ".reader"
        let readerSettings = readerConfiguration
        let readerQueueKey = DispatchSpecificKey<Void>()
        self.readerQueueKey = readerQueueKey
        let key = readerQueueKey
        readers = ReaderPool(capacity: self.maximumReaderCount) {
            let reader = try SerializedDatabase(location: .path(path), configuration: readerSettings, label: label)
            reader.dispatchQueue.setSpecific(key: key, value: ())
            return reader
        }
    }

    /// Throws instead of waiting forever: inside one of this pool's reads,
    /// another read may find no free reader, and a barrier waits for the
    /// enclosing read to end.
    private func checkNotInsideRead(_ method: String) throws {
        if DispatchQueue.getSpecific(key: readerQueueKey) != nil {
            throw SQLiteError.misuse(
                "\(method) was called from inside a read of the same pool, which could wait forever; "
                    + "use the Database passed to the enclosing closure")
        }
    }

    // MARK: - Reading

    /// Runs `body` in a read-only transaction on a reader connection,
    /// concurrently with other reads and with writes, on a consistent
    /// snapshot.
    ///
    /// - Throws: what `body` throws, or ``SQLiteError``.
    public func read<T>(_ body: (Database) throws -> T) throws -> T {
        try checkNotInsideRead("DatabasePool.read")
        let reader = try readers.acquire()
        defer { readers.release(reader) }
        return try reader.sync(method: "DatabasePool.read") { db in try SerializedDatabase.runRead(db, body) }
    }

    /// Runs `body` on a reader connection from async code. See the
    /// synchronous ``read(_:)``.
    public func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try Task.checkCancellation()
        // Waiting for a free reader blocks: do it off the cooperative pool.
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                do {
                    let reader = try self.readers.acquire()
                    reader.dispatchQueue.async {
                        defer { self.readers.release(reader) }
                        continuation.resume(with: Result { try SerializedDatabase.runRead(reader.database, body) })
                    }
                } catch {
                    continuation.resume(throwing: error)
                }
            }
        }
    }

    // MARK: - Writing

    /// Runs `body` in an immediate transaction on the writer connection:
    /// commits when it returns, rolls back when it throws.
    @discardableResult
    public func write<T>(_ body: (Database) throws -> T) throws -> T {
        try writer.sync(method: "DatabasePool.write") { db in try db.transaction(.immediate) { try body(db) } }
    }

    /// Runs `body` on the writer connection outside any transaction.
    @discardableResult
    public func writeWithoutTransaction<T>(_ body: (Database) throws -> T) throws -> T {
        try writer.sync(method: "DatabasePool.writeWithoutTransaction", body)
    }

    /// Runs `body` on the writer connection once no read is running, and lets
    /// no read start until it is done: for work that must see no concurrent
    /// reader, such as a checkpoint in `TRUNCATE` mode or a schema rebuild.
    @discardableResult
    public func barrierWriteWithoutTransaction<T>(_ body: (Database) throws -> T) throws -> T {
        try checkNotInsideRead("DatabasePool.barrierWriteWithoutTransaction")
        return try readers.exclusively {
            try writer.sync(method: "DatabasePool.barrierWriteWithoutTransaction", body)
        }
    }

    /// Runs `body` in an immediate transaction on the writer, from async code.
    @discardableResult
    public func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await writer.async { db in try db.transaction(.immediate) { try body(db) } }
    }

    /// Runs `body` on the writer outside any transaction, from async code.
    @discardableResult
    public func writeWithoutTransaction<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try await writer.async(body)
    }

    /// The barrier write, from async code; see
    /// ``barrierWriteWithoutTransaction(_:)``.
    @discardableResult
    public func barrierWriteWithoutTransaction<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        try Task.checkCancellation()
        return try await withCheckedThrowingContinuation { continuation in
            DispatchQueue.global().async {
                continuation.resume(with: Result { try self.barrierWriteWithoutTransaction(body) })
            }
        }
    }

    // MARK: - Maintenance

    /// How thoroughly a checkpoint copies the WAL into the database file.
    ///
    /// See <https://www.sqlite.org/c3ref/wal_checkpoint_v2.html>.
    public enum CheckpointMode: String, Sendable {
        /// Copy what can be copied without waiting.
        case passive = "PASSIVE"
        /// Wait for writers, then copy everything.
        case full = "FULL"
        /// Like full, then wait for readers so the WAL restarts from its start.
        case restart = "RESTART"
        /// Like restart, then truncate the WAL file to zero bytes.
        case truncate = "TRUNCATE"
    }

    /// Runs a checkpoint on the writer. SQLite also checkpoints by itself
    /// when the WAL passes 1,000 pages (`PRAGMA wal_autocheckpoint`, which
    /// ``Configuration/prepareDatabase`` can change).
    public func checkpoint(_ mode: CheckpointMode = .passive) throws {
        try writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(\(mode.rawValue))") }
    }

    /// Interrupts the statements running on the writer and on every
    /// reader; they fail with ``SQLiteError`` code `.interrupt`.
    public func interrupt() {
        writer.interruptHandle.interrupt()
        readers.interruptAll()
    }

    /// Closes every connection, once the reads and writes in flight are done.
    public func close() throws {
        try readers.exclusively {
            try readers.closeAll()
            try writer.sync(method: "DatabasePool.close") { db in try db.close() }
        }
    }
}

/// Reader connections, opened on demand up to a capacity, lent one at a time.
// @unchecked: `idle`, `openCount` and `isClosed` are only touched under
// `condition`'s lock.
final class ReaderPool: @unchecked Sendable {
    private let capacity: Int
    private let makeReader: @Sendable () throws -> SerializedDatabase
    private let condition = NSCondition()
    private var idle: [SerializedDatabase] = []
    private var all: [SerializedDatabase] = []
    private var lentCount = 0
    private var isExclusive = false
    private var isClosed = false

    init(capacity: Int, makeReader: @escaping @Sendable () throws -> SerializedDatabase) {
        self.capacity = capacity
        self.makeReader = makeReader
    }

    /// Interrupts the statement each reader is running.
    func interruptAll() {
        condition.lock()
        let readers = all
        condition.unlock()
        for reader in readers { reader.interruptHandle.interrupt() }
    }

    /// A reader for one read; waits while all are lent or a barrier runs.
    func acquire() throws -> SerializedDatabase {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if isClosed { throw SQLiteError.misuse("the database pool is closed") }
            if !isExclusive {
                if let reader = idle.popLast() {
                    lentCount += 1
                    return reader
                }
                if all.count < capacity {
                    let reader = try makeReader()
                    all.append(reader)
                    lentCount += 1
                    return reader
                }
            }
            condition.wait()
        }
    }

    func release(_ reader: SerializedDatabase) {
        condition.lock()
        idle.append(reader)
        lentCount -= 1
        condition.broadcast()
        condition.unlock()
    }

    /// Runs `body` once no reader is lent, keeping new reads waiting.
    func exclusively<T>(_ body: () throws -> T) throws -> T {
        condition.lock()
        while isExclusive { condition.wait() }
        isExclusive = true
        while lentCount > 0 { condition.wait() }
        condition.unlock()
        defer {
            condition.lock()
            isExclusive = false
            condition.broadcast()
            condition.unlock()
        }
        return try body()
    }

    /// Closes every reader; later acquisitions fail. Call inside `exclusively`.
    func closeAll() throws {
        condition.lock()
        let readers = all
        isClosed = true
        idle = []
        all = []
        condition.unlock()
        for reader in readers {
            try reader.sync(method: "DatabasePool.close") { db in try db.close() }
        }
    }
}
