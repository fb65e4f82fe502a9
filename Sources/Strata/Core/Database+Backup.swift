import StrataSQLite

/// How far an online backup has gone.
public struct BackupProgress: Hashable, Sendable {
    /// Pages still to copy.
    public var remainingPageCount: Int
    /// Pages in the source database.
    public var totalPageCount: Int
    /// Pages copied so far.
    public var completedPageCount: Int { totalPageCount - remainingPageCount }
    /// Whether every page is copied.
    public var isCompleted: Bool { remainingPageCount == 0 }
}

extension Database {
    /// Copies this database into another one, while this one stays usable.
    ///
    /// ```swift
    /// let copy = try Database(path: "backup.sqlite")
    /// try db.backup(to: copy, pagesPerStep: 100) { progress in
    ///     print("\(progress.completedPageCount)/\(progress.totalPageCount)")
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - destination: the database to overwrite.
    ///   - pagesPerStep: pages copied between progress reports; -1 copies all
    ///     at once.
    ///   - progress: called after each step; throw from it to stop the backup
    ///     (the destination is then left as it was).
    /// - Throws: ``SQLiteError`` when the backup fails, or what `progress`
    ///   throws.
    ///
    /// See <https://www.sqlite.org/backup.html>.
    public func backup(
        to destination: Database, pagesPerStep: Int = -1,
        progress: ((BackupProgress) throws -> Void)? = nil
    ) throws {
        let source = try checkedConnection()
        let target = try destination.checkedConnection()
        guard let backup = sqlite3_backup_init(target, "main", source, "main") else {
            throw SQLiteError.fromConnection(target, code: sqlite3_errcode(target))
        }
        var finished = false
        let timeout = configuration.busyTimeout.components
        var remainingWaits = (timeout.seconds * 1000 + timeout.attoseconds / 1_000_000_000_000_000) / 10
        defer {
            if !finished { sqlite3_backup_finish(backup) }
        }
        while true {
            let code = sqlite3_backup_step(backup, Int32(pagesPerStep))
            switch code {
            case SQLITE_OK, SQLITE_DONE:
                try progress?(BackupProgress(
                    remainingPageCount: Int(sqlite3_backup_remaining(backup)),
                    totalPageCount: Int(sqlite3_backup_pagecount(backup))))
                if code == SQLITE_DONE {
                    finished = true
                    let finishCode = sqlite3_backup_finish(backup)
                    guard finishCode == SQLITE_OK else {
                        throw SQLiteError.fromConnection(target, code: finishCode)
                    }
                    return
                }
            case SQLITE_BUSY, SQLITE_LOCKED:
                // Another connection holds a lock: wait a little and retry,
                // until the busy timeout is spent.
                guard remainingWaits > 0 else {
                    finished = true
                    sqlite3_backup_finish(backup)
                    throw SQLiteError(code: ResultCode(rawValue: code), message: "the database stayed locked during the backup")
                }
                remainingWaits -= 1
                sqlite3_sleep(10)
            default:
                finished = true
                sqlite3_backup_finish(backup)
                throw SQLiteError.fromConnection(target, code: code)
            }
        }
    }

    /// Copies this database into the file at `path`, replacing its content.
    public func backup(
        toPath path: String, pagesPerStep: Int = -1,
        progress: ((BackupProgress) throws -> Void)? = nil
    ) throws {
        let destination = try Database(path: path)
        try backup(to: destination, pagesPerStep: pagesPerStep, progress: progress)
        try destination.close()
    }
}
