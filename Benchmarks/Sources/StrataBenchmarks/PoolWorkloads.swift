import Foundation
import Strata

/// DatabasePool and observation measurements.
enum PoolBench {
    /// Reads per second with `readers` tasks reading concurrently.
    static func readThroughput(path: String, readers: Int, readsPerReader: Int) async throws -> Double {
        let pool = try DatabasePool(path: path, maximumReaderCount: readers)
        let start = DispatchTime.now().uptimeNanoseconds
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<readers {
                group.addTask {
                    var sum = 0
                    for _ in 0..<readsPerReader {
                        sum &+= try await pool.read { db in
                            try Int.fetchOne(db, sql: "SELECT sum(i0 + i9) FROM (SELECT * FROM items LIMIT 2000)") ?? 0
                        }
                    }
                    return sum
                }
            }
            for try await _ in group {}
        }
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        try pool.close()
        return Double(readers * readsPerReader) / seconds
    }

    /// The median time from a write's commit to the observed new value, in
    /// microseconds.
    static func observationLatency(rounds: Int) async throws -> Double {
        let pool = try DatabasePool(path: temporaryDatabasePath("observation.sqlite"))
        try await pool.write { db in try db.execute(sql: "CREATE TABLE events(id INTEGER PRIMARY KEY)") }
        let observation = ValueObservation { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM events") ?? 0 }
        var iterator = observation.values(in: pool).makeAsyncIterator()
        _ = try await iterator.next()
        var latencies: [Double] = []
        for round in 1...rounds {
            try await pool.write { db in try db.execute(sql: "INSERT INTO events DEFAULT VALUES") }
            let committed = DispatchTime.now().uptimeNanoseconds
            guard let value = try await iterator.next(), value == round else {
                throw BenchmarkError("observation missed a commit")
            }
            latencies.append(Double(DispatchTime.now().uptimeNanoseconds - committed) / 1e3)
        }
        return median(latencies)
    }
}
