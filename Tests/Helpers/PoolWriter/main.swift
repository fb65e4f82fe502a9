// Writes rows into a database through a DatabasePool, for the test that two
// processes writing the same file never see "database is locked".
// Usage: PoolWriter PATH TAG COUNT
import Foundation
import Strata

let arguments = CommandLine.arguments
guard arguments.count == 4, let count = Int(arguments[3]) else {
    FileHandle.standardError.write(Data("usage: PoolWriter PATH TAG COUNT\n".utf8))
    exit(64)
}
do {
    let pool = try DatabasePool(path: arguments[1])
    for index in 0..<count {
        try pool.write { db in
            try db.execute(sql: "INSERT INTO writes(tag, number) VALUES (?, ?)", arguments: [arguments[2], index])
            // Hold the write lock a little, so the processes contend.
            _ = try Int.fetchOne(db, sql: "SELECT count(*) FROM writes")
        }
    }
} catch {
    FileHandle.standardError.write(Data("PoolWriter: \(error)\n".utf8))
    exit(1)
}
