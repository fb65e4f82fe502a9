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

    public static let ok = ResultCode(rawValue: 0)
    public static let error = ResultCode(rawValue: 1)
    public static let internalError = ResultCode(rawValue: 2)
    public static let permission = ResultCode(rawValue: 3)
    public static let abort = ResultCode(rawValue: 4)
    public static let busy = ResultCode(rawValue: 5)
    public static let locked = ResultCode(rawValue: 6)
    public static let noMemory = ResultCode(rawValue: 7)
    public static let readOnly = ResultCode(rawValue: 8)
    public static let interrupt = ResultCode(rawValue: 9)
    public static let ioError = ResultCode(rawValue: 10)
    public static let corrupt = ResultCode(rawValue: 11)
    public static let notFound = ResultCode(rawValue: 12)
    public static let full = ResultCode(rawValue: 13)
    public static let cantOpen = ResultCode(rawValue: 14)
    public static let protocolError = ResultCode(rawValue: 15)
    public static let empty = ResultCode(rawValue: 16)
    public static let schema = ResultCode(rawValue: 17)
    public static let tooBig = ResultCode(rawValue: 18)
    public static let constraint = ResultCode(rawValue: 19)
    public static let mismatch = ResultCode(rawValue: 20)
    public static let misuse = ResultCode(rawValue: 21)
    public static let noLargeFileSupport = ResultCode(rawValue: 22)
    public static let authorization = ResultCode(rawValue: 23)
    public static let format = ResultCode(rawValue: 24)
    public static let range = ResultCode(rawValue: 25)
    public static let notADatabase = ResultCode(rawValue: 26)
    public static let notice = ResultCode(rawValue: 27)
    public static let warning = ResultCode(rawValue: 28)
    public static let row = ResultCode(rawValue: 100)
    public static let done = ResultCode(rawValue: 101)

    // MARK: - Extended codes

    public static let errorMissingCollatingSequence = ResultCode(rawValue: 1 | (1 << 8))
    public static let errorRetry = ResultCode(rawValue: 1 | (2 << 8))
    public static let errorSnapshot = ResultCode(rawValue: 1 | (3 << 8))
    public static let ioErrorRead = ResultCode(rawValue: 10 | (1 << 8))
    public static let ioErrorShortRead = ResultCode(rawValue: 10 | (2 << 8))
    public static let ioErrorWrite = ResultCode(rawValue: 10 | (3 << 8))
    public static let ioErrorFsync = ResultCode(rawValue: 10 | (4 << 8))
    public static let ioErrorTruncate = ResultCode(rawValue: 10 | (6 << 8))
    public static let ioErrorDelete = ResultCode(rawValue: 10 | (10 << 8))
    public static let ioErrorNoMemory = ResultCode(rawValue: 10 | (12 << 8))
    public static let ioErrorAccess = ResultCode(rawValue: 10 | (13 << 8))
    public static let ioErrorLock = ResultCode(rawValue: 10 | (15 << 8))
    public static let lockedSharedCache = ResultCode(rawValue: 6 | (1 << 8))
    public static let lockedVirtualTable = ResultCode(rawValue: 6 | (2 << 8))
    public static let busyRecovery = ResultCode(rawValue: 5 | (1 << 8))
    public static let busySnapshot = ResultCode(rawValue: 5 | (2 << 8))
    public static let busyTimeout = ResultCode(rawValue: 5 | (3 << 8))
    public static let cantOpenNoTempDirectory = ResultCode(rawValue: 14 | (1 << 8))
    public static let cantOpenIsDirectory = ResultCode(rawValue: 14 | (2 << 8))
    public static let cantOpenFullPath = ResultCode(rawValue: 14 | (3 << 8))
    public static let cantOpenConvertPath = ResultCode(rawValue: 14 | (4 << 8))
    public static let cantOpenSymlink = ResultCode(rawValue: 14 | (6 << 8))
    public static let corruptVirtualTable = ResultCode(rawValue: 11 | (1 << 8))
    public static let corruptSequence = ResultCode(rawValue: 11 | (2 << 8))
    public static let corruptIndex = ResultCode(rawValue: 11 | (3 << 8))
    public static let readOnlyRecovery = ResultCode(rawValue: 8 | (1 << 8))
    public static let readOnlyCantLock = ResultCode(rawValue: 8 | (2 << 8))
    public static let readOnlyRollback = ResultCode(rawValue: 8 | (3 << 8))
    public static let readOnlyDatabaseMoved = ResultCode(rawValue: 8 | (4 << 8))
    public static let readOnlyCantInit = ResultCode(rawValue: 8 | (5 << 8))
    public static let readOnlyDirectory = ResultCode(rawValue: 8 | (6 << 8))
    public static let abortRollback = ResultCode(rawValue: 4 | (2 << 8))
    public static let constraintCheck = ResultCode(rawValue: 19 | (1 << 8))
    public static let constraintCommitHook = ResultCode(rawValue: 19 | (2 << 8))
    public static let constraintForeignKey = ResultCode(rawValue: 19 | (3 << 8))
    public static let constraintFunction = ResultCode(rawValue: 19 | (4 << 8))
    public static let constraintNotNull = ResultCode(rawValue: 19 | (5 << 8))
    public static let constraintPrimaryKey = ResultCode(rawValue: 19 | (6 << 8))
    public static let constraintTrigger = ResultCode(rawValue: 19 | (7 << 8))
    public static let constraintUnique = ResultCode(rawValue: 19 | (8 << 8))
    public static let constraintVirtualTable = ResultCode(rawValue: 19 | (9 << 8))
    public static let constraintRowID = ResultCode(rawValue: 19 | (10 << 8))
    public static let constraintPinned = ResultCode(rawValue: 19 | (11 << 8))
    public static let constraintDataType = ResultCode(rawValue: 19 | (12 << 8))
    public static let noticeRecoverWAL = ResultCode(rawValue: 27 | (1 << 8))
    public static let noticeRecoverRollback = ResultCode(rawValue: 27 | (2 << 8))
    public static let warningAutoIndex = ResultCode(rawValue: 28 | (1 << 8))
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
