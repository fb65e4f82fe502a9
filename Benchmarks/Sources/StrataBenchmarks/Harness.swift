import Foundation

/// One measured path: the same work done by the raw C API (the baseline),
/// by Strata and, where it has an equivalent, by GRDB.
struct Workload {
    var name: String
    /// Runs once before each repetition (not timed), e.g. to make a fresh
    /// database; returns the setup value passed to the runs.
    var prepare: () throws -> Void = {}
    var raw: () throws -> Int
    var strata: () throws -> Int
    var grdb: (() throws -> Int)?
}

struct Measurement {
    var name: String
    var raw: Double
    var strata: Double
    var grdb: Double?

    var strataRatio: Double { strata / raw }
    var grdbRatio: Double? { grdb.map { $0 / raw } }
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
}

func seconds(_ body: () throws -> Int) rethrows -> (Double, Int) {
    let start = DispatchTime.now().uptimeNanoseconds
    let checksum = try body()
    return (Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9, checksum)
}

/// Runs the three implementations interleaved, after a warm-up, and keeps
/// the median of each. Every implementation must produce the same checksum.
func measure(_ workload: Workload, repetitions: Int) throws -> Measurement {
    var raw: [Double] = [], strata: [Double] = [], grdb: [Double] = []
    for repetition in 0...repetitions {
        try workload.prepare()
        let (rawTime, expected) = try seconds(workload.raw)
        try workload.prepare()
        let (strataTime, strataSum) = try seconds(workload.strata)
        guard strataSum == expected else {
            throw BenchmarkError("\(workload.name): Strata computed \(strataSum), the raw C API \(expected)")
        }
        var grdbTime: Double?
        if let run = workload.grdb {
            try workload.prepare()
            let (time, sum) = try seconds(run)
            guard sum == expected else { throw BenchmarkError("\(workload.name): GRDB computed \(sum), the raw C API \(expected)") }
            grdbTime = time
        }
        if repetition == 0 { continue }  // warm-up
        raw.append(rawTime)
        strata.append(strataTime)
        if let grdbTime { grdb.append(grdbTime) }
    }
    return Measurement(name: workload.name, raw: median(raw), strata: median(strata), grdb: grdb.isEmpty ? nil : median(grdb))
}

struct BenchmarkError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A new database file path in a temporary folder.
func temporaryDatabasePath(_ name: String) -> String {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("strata-benchmarks", isDirectory: true)
    try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    let path = folder.appendingPathComponent(name).path
    for suffix in ["", "-journal", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    return path
}
