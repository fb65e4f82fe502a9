import Foundation
import Strata
import Testing

/// Incremental BLOB I/O: a value read and written a range at a time.
@Suite struct DatabaseBlobTests {
    func filesTable() throws -> Database {
        let db = try Database()
        try db.execute(sql: "CREATE TABLE files(id INTEGER PRIMARY KEY, name TEXT, data BLOB)")
        return db
    }

    @Test func writesAZeroBlobInChunksAndReadsRangesBack() throws {
        let db = try filesTable()
        let bytes = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        try db.execute(sql: "INSERT INTO files(id, name, data) VALUES (1, 'a', zeroblob(?))", arguments: [bytes.count])
        try db.withBlob(table: "files", column: "data", rowID: 1, writable: true) { (blob: DatabaseBlob) throws in
            #expect(blob.count == bytes.count)
            var offset = 0
            while offset < bytes.count {
                let end = min(offset + 65_536, bytes.count)
                try blob.write(bytes[offset..<end], at: offset)
                offset = end
            }
        }
        #expect(try Data.fetchOne(db, sql: "SELECT data FROM files WHERE id = 1") == bytes)
        try db.withBlob(table: "files", column: "data", rowID: 1) { (blob: DatabaseBlob) throws in
            #expect(try blob.read(count: 10, at: 1000) == bytes[1000..<1010])
            // At the end, fewer bytes than asked.
            #expect(try blob.read(count: 100, at: bytes.count - 7) == bytes[(bytes.count - 7)...])
            #expect(try blob.read(count: 5, at: bytes.count).isEmpty)
        }
    }

    @Test func refusesRangesPastTheEndAndWritesToAReadOnlyBlob() throws {
        let db = try filesTable()
        try db.execute(sql: "INSERT INTO files(id, name, data) VALUES (1, 'a', zeroblob(16))")
        try db.withBlob(table: "files", column: "data", rowID: 1, writable: true) { (blob: DatabaseBlob) throws in
            #expect(throws: SQLiteError.self) { try blob.write(Data(count: 17), at: 0) }
            #expect(throws: SQLiteError.self) { try blob.write(Data(count: 1), at: 16) }
            var buffer = [UInt8](repeating: 0, count: 4)
            #expect(throws: SQLiteError.self) { try buffer.withUnsafeMutableBytes { try blob.read(into: $0, at: 13) } }
        }
        let error = #expect(throws: SQLiteError.self) {
            try db.withBlob(table: "files", column: "data", rowID: 1) { blob in try blob.write(Data([1]), at: 0) }
        }
        #expect(error?.primaryResultCode == .readOnly)
        // Nothing was written.
        #expect(try Data.fetchOne(db, sql: "SELECT data FROM files") == Data(count: 16))
    }

    @Test func saysWhatIsMissing() throws {
        let db = try filesTable()
        try db.execute(sql: "INSERT INTO files(id, name, data) VALUES (1, 'a', NULL)")
        let noRow = #expect(throws: SQLiteError.self) { try db.withBlob(table: "files", column: "data", rowID: 9) { _ in } }
        #expect(noRow?.message?.contains("no such rowid: 9") == true)
        let null = #expect(throws: SQLiteError.self) { try db.withBlob(table: "files", column: "data", rowID: 1) { _ in } }
        #expect(null?.message?.contains("cannot open value of type null") == true)
        let noColumn = #expect(throws: SQLiteError.self) { try db.withBlob(table: "files", column: "size", rowID: 1) { _ in } }
        #expect(noColumn?.message?.contains("no such column") == true)
        try db.execute(sql: "CREATE TABLE keyed(k TEXT PRIMARY KEY, v BLOB) WITHOUT ROWID")
        let withoutRowID = #expect(throws: SQLiteError.self) { try db.withBlob(table: "keyed", column: "v", rowID: 1) { _ in } }
        #expect(withoutRowID?.message?.lowercased().contains("without rowid") == true)
    }

    @Test func aWriteToTheRowEndsTheOpenBlob() throws {
        let db = try filesTable()
        try db.execute(sql: "INSERT INTO files(id, name, data) VALUES (1, 'a', zeroblob(8))")
        try db.withBlob(table: "files", column: "data", rowID: 1) { (blob: DatabaseBlob) throws in
            try db.execute(sql: "UPDATE files SET data = x'0102' WHERE id = 1")
            let error = #expect(throws: SQLiteError.self) { try blob.read(count: 2, at: 0) }
            #expect(error?.primaryResultCode == .abort)
        }
    }
}
