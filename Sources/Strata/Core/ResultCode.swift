import StrataSQLite

/// A SQLite result code, primary or extended.
///
/// Codes are static members rather than enum cases, so a new code in a later
/// SQLite never breaks a user's `switch`. A primary code used as a pattern
/// matches its whole family of extended codes:
///
/// ```swift
/// do {
///     try db.execute(sql: "INSERT INTO t(id) VALUES (1)")
/// } catch ResultCode.constraint {
///     // SQLITE_CONSTRAINT_UNIQUE, SQLITE_CONSTRAINT_PRIMARYKEY, …
/// }
/// ```
///
/// See <https://www.sqlite.org/rescode.html>.
public struct ResultCode: RawRepresentable, Hashable, Sendable {
    /// The numeric code, as SQLite's C API returns it.
    public let rawValue: Int32

    /// Makes a result code from its numeric value.
    public init(rawValue: Int32) {
        self.rawValue = rawValue
    }

    /// The primary code of this code's family (the low 8 bits): `.constraint`
    /// for `.constraintUnique`.
    public var primaryResultCode: ResultCode {
        ResultCode(rawValue: rawValue & 0xFF)
    }

    /// Whether this is a primary code rather than an extended one.
    public var isPrimary: Bool {
        rawValue & 0xFF == rawValue
    }

    /// SQLite's English description of the code (`sqlite3_errstr`).
    public var explanation: String {
        String(cString: sqlite3_errstr(rawValue))
    }

    // MARK: - Primary codes

    /// `SQLITE_OK`: successful result.
    public static let ok = ResultCode(rawValue: 0)
    /// `SQLITE_ERROR`: generic error.
    public static let error = ResultCode(rawValue: 1)
    /// `SQLITE_INTERNAL`: internal logic error in SQLite.
    public static let internalError = ResultCode(rawValue: 2)
    /// `SQLITE_PERM`: access permission denied.
    public static let permission = ResultCode(rawValue: 3)
    /// `SQLITE_ABORT`: callback routine requested an abort.
    public static let abort = ResultCode(rawValue: 4)
    /// `SQLITE_BUSY`: the database file is locked.
    public static let busy = ResultCode(rawValue: 5)
    /// `SQLITE_LOCKED`: a table in the database is locked.
    public static let locked = ResultCode(rawValue: 6)
    /// `SQLITE_NOMEM`: a memory allocation failed.
    public static let noMemory = ResultCode(rawValue: 7)
    /// `SQLITE_READONLY`: attempt to write a read-only database.
    public static let readOnly = ResultCode(rawValue: 8)
    /// `SQLITE_INTERRUPT`: operation interrupted by sqlite3_interrupt.
    public static let interrupt = ResultCode(rawValue: 9)
    /// `SQLITE_IOERR`: some kind of disk I/O error occurred.
    public static let ioError = ResultCode(rawValue: 10)
    /// `SQLITE_CORRUPT`: the database disk image is malformed.
    public static let corrupt = ResultCode(rawValue: 11)
    /// `SQLITE_NOTFOUND`: unknown opcode or file control.
    public static let notFound = ResultCode(rawValue: 12)
    /// `SQLITE_FULL`: insertion failed because the database is full.
    public static let full = ResultCode(rawValue: 13)
    /// `SQLITE_CANTOPEN`: unable to open the database file.
    public static let cantOpen = ResultCode(rawValue: 14)
    /// `SQLITE_PROTOCOL`: database lock protocol error.
    public static let protocolError = ResultCode(rawValue: 15)
    /// `SQLITE_EMPTY`: internal use only.
    public static let empty = ResultCode(rawValue: 16)
    /// `SQLITE_SCHEMA`: the database schema changed.
    public static let schema = ResultCode(rawValue: 17)
    /// `SQLITE_TOOBIG`: string or BLOB exceeds size limit.
    public static let tooBig = ResultCode(rawValue: 18)
    /// `SQLITE_CONSTRAINT`: abort due to constraint violation.
    public static let constraint = ResultCode(rawValue: 19)
    /// `SQLITE_MISMATCH`: data type mismatch.
    public static let mismatch = ResultCode(rawValue: 20)
    /// `SQLITE_MISUSE`: library used incorrectly.
    public static let misuse = ResultCode(rawValue: 21)
    /// `SQLITE_NOLFS`: uses OS features not supported on host.
    public static let noLargeFileSupport = ResultCode(rawValue: 22)
    /// `SQLITE_AUTH`: authorization denied.
    public static let authorization = ResultCode(rawValue: 23)
    /// `SQLITE_FORMAT`: not used.
    public static let format = ResultCode(rawValue: 24)
    /// `SQLITE_RANGE`: bind parameter index out of range.
    public static let range = ResultCode(rawValue: 25)
    /// `SQLITE_NOTADB`: file opened that is not a database file.
    public static let notADatabase = ResultCode(rawValue: 26)
    /// `SQLITE_NOTICE`: notification from sqlite3_log.
    public static let notice = ResultCode(rawValue: 27)
    /// `SQLITE_WARNING`: warning from sqlite3_log.
    public static let warning = ResultCode(rawValue: 28)
    /// `SQLITE_ROW`: sqlite3_step has another row ready.
    public static let row = ResultCode(rawValue: 100)
    /// `SQLITE_DONE`: sqlite3_step has finished executing.
    public static let done = ResultCode(rawValue: 101)

    // MARK: - Extended codes

    /// `SQLITE_ERROR_MISSING_COLLSEQ`: a collating sequence is missing.
    public static let errorMissingCollatingSequence = ResultCode(rawValue: 1 | (1 << 8))
    /// `SQLITE_ERROR_RETRY`: internal: prepare should retry.
    public static let errorRetry = ResultCode(rawValue: 1 | (2 << 8))
    /// `SQLITE_ERROR_SNAPSHOT`: the snapshot is no longer available.
    public static let errorSnapshot = ResultCode(rawValue: 1 | (3 << 8))
    /// `SQLITE_IOERR_READ`: I/O error while reading.
    public static let ioErrorRead = ResultCode(rawValue: 10 | (1 << 8))
    /// `SQLITE_IOERR_SHORT_READ`: a read returned fewer bytes than requested.
    public static let ioErrorShortRead = ResultCode(rawValue: 10 | (2 << 8))
    /// `SQLITE_IOERR_WRITE`: I/O error while writing.
    public static let ioErrorWrite = ResultCode(rawValue: 10 | (3 << 8))
    /// `SQLITE_IOERR_FSYNC`: I/O error while syncing to disk.
    public static let ioErrorFsync = ResultCode(rawValue: 10 | (4 << 8))
    /// `SQLITE_IOERR_TRUNCATE`: I/O error while truncating a file.
    public static let ioErrorTruncate = ResultCode(rawValue: 10 | (6 << 8))
    /// `SQLITE_IOERR_DELETE`: I/O error while deleting a file.
    public static let ioErrorDelete = ResultCode(rawValue: 10 | (10 << 8))
    /// `SQLITE_IOERR_NOMEM`: out of memory during I/O.
    public static let ioErrorNoMemory = ResultCode(rawValue: 10 | (12 << 8))
    /// `SQLITE_IOERR_ACCESS`: I/O error while checking file access.
    public static let ioErrorAccess = ResultCode(rawValue: 10 | (13 << 8))
    /// `SQLITE_IOERR_LOCK`: I/O error in the file locking logic.
    public static let ioErrorLock = ResultCode(rawValue: 10 | (15 << 8))
    /// `SQLITE_LOCKED_SHAREDCACHE`: locked by another connection of a shared cache.
    public static let lockedSharedCache = ResultCode(rawValue: 6 | (1 << 8))
    /// `SQLITE_LOCKED_VTAB`: locked inside a virtual table.
    public static let lockedVirtualTable = ResultCode(rawValue: 6 | (2 << 8))
    /// `SQLITE_BUSY_RECOVERY`: another connection is recovering a WAL file.
    public static let busyRecovery = ResultCode(rawValue: 5 | (1 << 8))
    /// `SQLITE_BUSY_SNAPSHOT`: a WAL read transaction cannot be upgraded: the snapshot is stale.
    public static let busySnapshot = ResultCode(rawValue: 5 | (2 << 8))
    /// `SQLITE_BUSY_TIMEOUT`: a blocking lock timed out.
    public static let busyTimeout = ResultCode(rawValue: 5 | (3 << 8))
    /// `SQLITE_CANTOPEN_NOTEMPDIR`: no temporary directory.
    public static let cantOpenNoTempDirectory = ResultCode(rawValue: 14 | (1 << 8))
    /// `SQLITE_CANTOPEN_ISDIR`: the path is a directory.
    public static let cantOpenIsDirectory = ResultCode(rawValue: 14 | (2 << 8))
    /// `SQLITE_CANTOPEN_FULLPATH`: the full path name could not be computed.
    public static let cantOpenFullPath = ResultCode(rawValue: 14 | (3 << 8))
    /// `SQLITE_CANTOPEN_CONVPATH`: the path could not be converted.
    public static let cantOpenConvertPath = ResultCode(rawValue: 14 | (4 << 8))
    /// `SQLITE_CANTOPEN_SYMLINK`: the path is a symbolic link and symlinks are refused.
    public static let cantOpenSymlink = ResultCode(rawValue: 14 | (6 << 8))
    /// `SQLITE_CORRUPT_VTAB`: a virtual table's content is corrupt.
    public static let corruptVirtualTable = ResultCode(rawValue: 11 | (1 << 8))
    /// `SQLITE_CORRUPT_SEQUENCE`: the sqlite_sequence table is corrupt.
    public static let corruptSequence = ResultCode(rawValue: 11 | (2 << 8))
    /// `SQLITE_CORRUPT_INDEX`: an index is corrupt.
    public static let corruptIndex = ResultCode(rawValue: 11 | (3 << 8))
    /// `SQLITE_READONLY_RECOVERY`: a WAL database needs recovery the connection cannot do.
    public static let readOnlyRecovery = ResultCode(rawValue: 8 | (1 << 8))
    /// `SQLITE_READONLY_CANTLOCK`: the shared-memory file is read-only.
    public static let readOnlyCantLock = ResultCode(rawValue: 8 | (2 << 8))
    /// `SQLITE_READONLY_ROLLBACK`: a hot journal needs rolling back but the database is read-only.
    public static let readOnlyRollback = ResultCode(rawValue: 8 | (3 << 8))
    /// `SQLITE_READONLY_DBMOVED`: the database file was moved or unlinked.
    public static let readOnlyDatabaseMoved = ResultCode(rawValue: 8 | (4 << 8))
    /// `SQLITE_READONLY_CANTINIT`: the shared memory region cannot be initialized.
    public static let readOnlyCantInit = ResultCode(rawValue: 8 | (5 << 8))
    /// `SQLITE_READONLY_DIRECTORY`: the directory holding the database is read-only.
    public static let readOnlyDirectory = ResultCode(rawValue: 8 | (6 << 8))
    /// `SQLITE_ABORT_ROLLBACK`: a statement was aborted by a rollback.
    public static let abortRollback = ResultCode(rawValue: 4 | (2 << 8))
    /// `SQLITE_CONSTRAINT_CHECK`: a CHECK constraint failed.
    public static let constraintCheck = ResultCode(rawValue: 19 | (1 << 8))
    /// `SQLITE_CONSTRAINT_COMMITHOOK`: a commit hook vetoed the commit.
    public static let constraintCommitHook = ResultCode(rawValue: 19 | (2 << 8))
    /// `SQLITE_CONSTRAINT_FOREIGNKEY`: a foreign key constraint failed.
    public static let constraintForeignKey = ResultCode(rawValue: 19 | (3 << 8))
    /// `SQLITE_CONSTRAINT_FUNCTION`: an extension function reported a constraint failure.
    public static let constraintFunction = ResultCode(rawValue: 19 | (4 << 8))
    /// `SQLITE_CONSTRAINT_NOTNULL`: a NOT NULL constraint failed.
    public static let constraintNotNull = ResultCode(rawValue: 19 | (5 << 8))
    /// `SQLITE_CONSTRAINT_PRIMARYKEY`: a PRIMARY KEY constraint failed.
    public static let constraintPrimaryKey = ResultCode(rawValue: 19 | (6 << 8))
    /// `SQLITE_CONSTRAINT_TRIGGER`: a RAISE in a trigger.
    public static let constraintTrigger = ResultCode(rawValue: 19 | (7 << 8))
    /// `SQLITE_CONSTRAINT_UNIQUE`: a UNIQUE constraint failed.
    public static let constraintUnique = ResultCode(rawValue: 19 | (8 << 8))
    /// `SQLITE_CONSTRAINT_VTAB`: a virtual table reported a constraint failure.
    public static let constraintVirtualTable = ResultCode(rawValue: 19 | (9 << 8))
    /// `SQLITE_CONSTRAINT_ROWID`: a rowid is not unique.
    public static let constraintRowID = ResultCode(rawValue: 19 | (10 << 8))
    /// `SQLITE_CONSTRAINT_PINNED`: an UPDATE trigger deleted the row being updated.
    public static let constraintPinned = ResultCode(rawValue: 19 | (11 << 8))
    /// `SQLITE_CONSTRAINT_DATATYPE`: a value does not fit a STRICT table's column type.
    public static let constraintDataType = ResultCode(rawValue: 19 | (12 << 8))
    /// `SQLITE_NOTICE_RECOVER_WAL`: a WAL file was recovered.
    public static let noticeRecoverWAL = ResultCode(rawValue: 27 | (1 << 8))
    /// `SQLITE_NOTICE_RECOVER_ROLLBACK`: a hot journal was rolled back.
    public static let noticeRecoverRollback = ResultCode(rawValue: 27 | (2 << 8))
    /// `SQLITE_WARNING_AUTOINDEX`: an automatic index was made.
    public static let warningAutoIndex = ResultCode(rawValue: 28 | (1 << 8))
    /// `SQLITE_AUTH_USER`: user authentication failed.
    public static let authorizationUser = ResultCode(rawValue: 23 | (1 << 8))
}

extension ResultCode: CustomStringConvertible {
    /// The numeric code followed by SQLite's description: `19 (constraint failed)`.
    public var description: String {
        "\(rawValue) (\(explanation))"
    }
}

// MARK: - Pattern matching

/// Matches a code against a pattern: a primary code matches every extended
/// code of its family, an extended code matches only itself.
public func ~= (pattern: ResultCode, code: ResultCode) -> Bool {
    if pattern.isPrimary {
        return pattern == code.primaryResultCode
    }
    return pattern == code
}

/// Lets `catch ResultCode.constraint` and `catch SQLiteError.constraint` match
/// a thrown ``SQLiteError`` by its code, with family matching.
public func ~= (pattern: ResultCode, error: any Error) -> Bool {
    guard let error = error as? SQLiteError else { return false }
    return pattern ~= error.code
}
