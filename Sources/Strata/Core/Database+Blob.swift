import Foundation
import StrataSQLite

/// One BLOB value opened for incremental I/O: a range is read or written
/// without the whole value in memory.
///
/// Get one from ``Database/withBlob(table:column:rowID:writable:schema:_:)``
/// and use it only inside that closure. The value's size is fixed: write a
/// `zeroblob(n)` first to make room, then fill it a chunk at a time.
///
/// See <https://www.sqlite.org/c3ref/blob_open.html>.
public final class DatabaseBlob {
    private let handle: OpaquePointer
    private let connection: OpaquePointer

    /// The value's size in bytes.
    public let count: Int

    fileprivate init(handle: OpaquePointer, connection: OpaquePointer) {
        self.handle = handle
        self.connection = connection
        count = Int(sqlite3_blob_bytes(handle))
    }

    /// Reads `buffer.count` bytes from `offset` into `buffer`.
    ///
    /// - Throws: ``SQLiteError`` when the range runs past the value's end,
    ///   or when the row changed or was deleted since it was opened
    ///   (`SQLITE_ABORT`).
    public func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int) throws {
        guard let base = buffer.baseAddress, !buffer.isEmpty else { return }
        try checkRange(offset, buffer.count)
        try check(sqlite3_blob_read(handle, base, Int32(buffer.count), Int32(offset)))
    }

    /// Up to `count` bytes from `offset` (fewer at the value's end).
    public func read(count: Int, at offset: Int) throws -> Data {
        let available = max(0, min(count, self.count - offset))
        var data = Data(count: available)
        try data.withUnsafeMutableBytes { try read(into: $0, at: offset) }
        return data
    }

    /// Writes `bytes` at `offset`; the value's size does not change.
    ///
    /// - Throws: ``SQLiteError`` when the blob was opened read-only, when the
    ///   bytes run past the value's end, or when the row changed.
    public func write(_ bytes: UnsafeRawBufferPointer, at offset: Int) throws {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        try checkRange(offset, bytes.count)
        try check(sqlite3_blob_write(handle, base, Int32(bytes.count), Int32(offset)))
    }

    /// Writes `data` at `offset`; the value's size does not change.
    public func write(_ data: some DataProtocol, at offset: Int) throws {
        var position = offset
        for region in data.regions {
            try region.withUnsafeBytes { try write($0, at: position) }
            position += region.count
        }
    }

    fileprivate func close() {
        sqlite3_blob_close(handle)
    }

    private func checkRange(_ offset: Int, _ length: Int) throws {
        guard offset >= 0, length <= Int(Int32.max), offset <= count, length <= count - offset else {
            throw SQLiteError(
                code: .error,
                message: "the range \(offset)..<\(offset + length) is outside the blob's \(count) bytes")
        }
    }

    private func check(_ code: Int32) throws {
        guard code == SQLITE_OK else { throw SQLiteError.fromConnection(connection, code: code) }
    }
}

extension Database {
    /// Opens one BLOB value for incremental reads (and writes, when
    /// `writable`), runs `body` with it, and closes it.
    ///
    /// ```swift
    /// let id = try Int64.fetchOne(db, sql: "INSERT INTO files(data) VALUES (zeroblob(?)) RETURNING rowid", arguments: [size])!
    /// try db.withBlob(table: "files", column: "data", rowID: id, writable: true) { blob in
    ///     var offset = 0
    ///     while let chunk = try file.read(upToCount: 1 << 20), !chunk.isEmpty {
    ///         try blob.write(chunk, at: offset)
    ///         offset += chunk.count
    ///     }
    /// }
    /// ```
    ///
    /// The table must have a rowid (not `WITHOUT ROWID`). A write from this
    /// connection to the same row while the blob is open ends it: its reads
    /// and writes then throw `SQLITE_ABORT`.
    ///
    /// - Throws: ``SQLiteError`` when the table, column or row does not
    ///   exist, when the value is not a BLOB or TEXT, or when `writable` and
    ///   the column is indexed or the database read-only.
    public func withBlob<T>(
        table: String, column: String, rowID: Int64, writable: Bool = false, schema: String = "main",
        _ body: (DatabaseBlob) throws -> T
    ) throws -> T {
        let connection = try checkedConnection()
        var handle: OpaquePointer?
        let code = sqlite3_blob_open(connection, schema, table, column, rowID, writable ? 1 : 0, &handle)
        guard code == SQLITE_OK, let handle else {
            if let handle { sqlite3_blob_close(handle) }
            throw SQLiteError.fromConnection(connection, code: code)
        }
        let blob = DatabaseBlob(handle: handle, connection: connection)
        defer { blob.close() }
        return try body(blob)
    }
}
