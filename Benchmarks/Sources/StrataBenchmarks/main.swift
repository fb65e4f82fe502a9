import Foundation
import Strata

// Usage: StrataBenchmarks [--quick] [--filter TEXT] [--flights FILE] [--sqlite3 PATH] [--tor-geoip DIR]
//        StrataBenchmarks [--quick] [--filter TEXT] --profile raw|strata|grdb
let arguments = CommandLine.arguments
if arguments.count == 4 && arguments[1] == "--import-child" {
    try TransferBench.importChild(csv: arguments[2], database: arguments[3])
    exit(0)
}
func option(_ name: String) -> String? {
    arguments.firstIndex(of: name).flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
}
let isQuick = arguments.contains("--quick")
let filter = option("--filter")
let fetchRows = isQuick ? 2_000 : 200_000
let insertRows = isQuick ? 500 : 50_000
let repetitions = isQuick ? 1 : 7

// Strata sets SQLite's process-wide options (statement journals in memory,
// no count of SQLite's memory) when its first connection opens, and they hold
// only if SQLite was not initialized before. The raw C and GRDB workloads
// share this process: a Strata connection opens first, so that all three run
// on the same SQLite, the one a Strata app gets.
_ = try Database()

let fetchPath = temporaryDatabasePath("fetch.sqlite")
try RawC.makeItems(fetchPath, rowCount: fetchRows)
let insertPath = temporaryDatabasePath("insert.sqlite")
func freshInsertDatabase() throws { _ = temporaryDatabasePath("insert.sqlite") }

var workloads: [Workload] = [
    Workload(name: "fetch, columns by index", raw: { try RawC.fetch(fetchPath) },
             strata: { try StrataBench.fetchByIndex(fetchPath) }, grdb: { try GRDBBench.fetchByIndex(fetchPath) }),
    Workload(name: "fetch, columns by name", raw: { try RawC.fetch(fetchPath) },
             strata: { try StrataBench.fetchByName(fetchPath) }, grdb: { try GRDBBench.fetchByName(fetchPath) }),
    Workload(name: "fetch, typed query DSL", raw: { try RawC.fetch(fetchPath) },
             strata: { try StrataBench.fetchDSL(fetchPath) }, grdb: { try GRDBBench.fetchDSL(fetchPath) }),
    Workload(name: "fetch, Codable records", raw: { try RawC.fetch(fetchPath) },
             strata: { try StrataBench.fetchCodable(fetchPath) }, grdb: { try GRDBBench.fetchCodable(fetchPath) }),
    Workload(name: "fetch, records with init(row:) by name (RowDecodable; GRDB FetchableRecord)", raw: { try RawC.fetch(fetchPath) },
             strata: { try StrataBench.fetchRowRecords(fetchPath) }, grdb: { try GRDBBench.fetchRowRecords(fetchPath) }),
    Workload(name: "fetch, @Record records (generated init(row:))", raw: { try RawC.fetch(fetchPath) },
             strata: { try StrataBench.fetchMacroRecords(fetchPath) }, grdb: { try GRDBBench.fetchRowRecords(fetchPath) }),
    Workload(name: "fetch, @Record typed query (filter { $0.i0 >= 0 })", raw: { try RawC.fetchWhere(fetchPath) },
             strata: { try StrataBench.fetchMacroQuery(fetchPath) }, grdb: nil),
    Workload(name: "insert, positional arguments", prepare: freshInsertDatabase, raw: { try RawC.insert(insertPath, rowCount: insertRows) },
             strata: { try StrataBench.insertPositional(insertPath, rowCount: insertRows) }, grdb: { try GRDBBench.insertPositional(insertPath, rowCount: insertRows) }),
    Workload(name: "insert, positional values bound directly (execute(binding:))", prepare: freshInsertDatabase, raw: { try RawC.insert(insertPath, rowCount: insertRows) },
             strata: { try StrataBench.insertBinding(insertPath, rowCount: insertRows) }, grdb: nil),
    Workload(name: "insert, named arguments", prepare: freshInsertDatabase, raw: { try RawC.insert(insertPath, rowCount: insertRows) },
             strata: { try StrataBench.insertNamed(insertPath, rowCount: insertRows) }, grdb: { try GRDBBench.insertNamed(insertPath, rowCount: insertRows) }),
    Workload(name: "insert, named values bound directly (execute(named:))", prepare: freshInsertDatabase, raw: { try RawC.insert(insertPath, rowCount: insertRows) },
             strata: { try StrataBench.insertNamedBinding(insertPath, rowCount: insertRows) }, grdb: nil),
    Workload(name: "insert, typed DSL setters", prepare: freshInsertDatabase, raw: { try RawC.insert(insertPath, rowCount: insertRows) },
             strata: { try StrataBench.insertDSL(insertPath, rowCount: insertRows) }, grdb: nil),
    Workload(name: "insert, typed DSL prepared insert (prepareInsert)", prepare: freshInsertDatabase, raw: { try RawC.insert(insertPath, rowCount: insertRows) },
             strata: { try StrataBench.insertPrepared(insertPath, rowCount: insertRows) }, grdb: nil),
    Workload(name: "insert, Codable records", prepare: freshInsertDatabase, raw: { try RawC.insert(insertPath, rowCount: insertRows) },
             strata: { try StrataBench.insertCodable(insertPath, rowCount: insertRows) }, grdb: { try GRDBBench.insertCodable(insertPath, rowCount: insertRows) }),
    Workload(name: "insert, @Record records (generated encodeColumns(into:))", prepare: freshInsertDatabase, raw: { try RawC.insert(insertPath, rowCount: insertRows) },
             strata: { try StrataBench.insertMacroRecords(insertPath, rowCount: insertRows) }, grdb: { try GRDBBench.insertCodable(insertPath, rowCount: insertRows) }),
]

if let filter { workloads = workloads.filter { $0.name.contains(filter) } }

// `--profile raw|strata|grdb`: runs each selected workload's implementation
// once, untimed, for a profiler (`valgrind --tool=callgrind`, `perf record`).
if let implementation = option("--profile") {
    for workload in workloads {
        try workload.prepare()
        let run: (() throws -> Int)? = switch implementation {
        case "raw": workload.raw
        case "strata": workload.strata
        case "grdb": workload.grdb
        default: throw BenchmarkError("--profile takes raw, strata or grdb")
        }
        if let run { print("\(workload.name)\t\(implementation)\tchecksum \(try run())") }
    }
    exit(0)
}

print("# \(isQuick ? "quick mode" : "full run"): fetch \(fetchRows) rows, insert \(insertRows) rows, median of \(repetitions) after a warm-up")
print("path\tstrata÷raw\tgrdb÷raw")
var results: [Measurement] = []
for workload in workloads {
    let result = try measure(workload, repetitions: repetitions)
    results.append(result)
    print("\(result.name)\t\(String(format: "%.2f", result.strataRatio))\t\(result.grdbRatio.map { String(format: "%.2f", $0) } ?? "-")")
}
print("")
print("# medians in seconds: raw / strata / grdb")
for result in results {
    print("# \(result.name): \(String(format: "%.4f", result.raw)) / \(String(format: "%.4f", result.strata)) / \(result.grdb.map { String(format: "%.4f", $0) } ?? "-")")
}

// MARK: - Import and lookups

func wanted(_ name: String) -> Bool { filter.map { name.contains($0) } ?? true }
var notes: [String] = []
let sqlite3 = option("--sqlite3") ?? "/usr/bin/sqlite3"
if wanted("import") {
    if let flights = option("--flights"), FileManager.default.fileExists(atPath: sqlite3) {
        let (ratio, strataTime, shellTime) = try TransferBench.importVersusShell(
            csv: flights, schema: TransferBench.flightsSchema, table: "flights", sqlite3: sqlite3, repetitions: isQuick ? 1 : 5)
        print("import flights.csv (strata÷sqlite3 shell)\t\(String(format: "%.2f", ratio))\t-")
        notes.append("import flights.csv: strata \(String(format: "%.3f", strataTime)) s, sqlite3 .import \(String(format: "%.3f", shellTime)) s")
    } else {
        print("import flights.csv (strata÷sqlite3 shell)\tskipped (no --flights file or no sqlite3)\t-")
    }
    let generated = temporaryDatabasePath("generated.csv")
    let megabytes = isQuick ? 4 : 1024
    let rows = try TransferBench.generateCSV(path: generated, megabytes: megabytes)
    let peak = try TransferBench.peakImportMemory(csv: generated)
    print("import \(megabytes) MB CSV, peak memory (MB)\t\(String(format: "%.0f", peak))\t-")
    notes.append("generated CSV: \(rows) rows, \(megabytes) MB")
    try? FileManager.default.removeItem(atPath: generated)
}
if wanted("lookup") {
    let geoip = option("--tor-geoip")
    let (indexed, scan) = try TransferBench.ipLookups(
        rangeCount: isQuick ? 2_000 : 200_000, lookups: isQuick ? 1_000 : 100_000, scanLookups: isQuick ? 50 : 200,
        torGeoIP: isQuick ? nil : geoip)
    print("ip lookup (ipgeo index÷seed BETWEEN scan)\t\(String(format: "%.5f", indexed / scan))\t-")
    notes.append("ip lookup (\(geoip != nil && !isQuick ? "Tor's geoip ranges" : "synthetic ranges")): \(String(format: "%.2f", indexed * 1e6)) µs indexed, \(String(format: "%.0f", scan * 1e6)) µs scanning, per lookup")
}
if wanted("pool") {
    let reads = isQuick ? 50 : 2_000
    // WAL mode for the pool: a fresh copy of the fetch table.
    let poolPath = temporaryDatabasePath("pool.sqlite")
    try RawC.makeItems(poolPath, rowCount: 2_000)
    let one = try await PoolBench.readThroughput(path: poolPath, readers: 1, readsPerReader: reads)
    let two = try await PoolBench.readThroughput(path: poolPath, readers: 2, readsPerReader: reads)
    print("pool read throughput, 2 readers ÷ 1 reader\t\(String(format: "%.2f", two / one))\t-")
    notes.append("pool reads per second: \(String(format: "%.0f", one)) with 1 reader, \(String(format: "%.0f", two)) with 2")
    let latency = try await PoolBench.observationLatency(rounds: isQuick ? 5 : 200)
    print("observation latency, commit to value (µs)\t\(String(format: "%.0f", latency))\t-")
}
if wanted("synced") {
    // Alternated, so that the machine's drift falls on both alike.
    var plain: [Double] = []
    var synced: [Double] = []
    var captures: [Double] = []
    _ = try SyncBench.insert(rowCount: insertRows, synced: true)  // warm-up
    for _ in 0..<(isQuick ? 1 : 5) {
        plain.append(try SyncBench.insert(rowCount: insertRows, synced: false).insert)
        let run = try SyncBench.insert(rowCount: insertRows, synced: true)
        synced.append(run.insert)
        captures.append(run.capture ?? 0)
    }
    print("insert \(insertRows) rows, synced table ÷ plain table\t\(String(format: "%.2f", median(synced) / median(plain)))\t-")
    // Issue 35's Note (a 200-character body, a folder id).
    var plainNotes: [Double] = []
    var syncedNotes: [Double] = []
    for _ in 0..<(isQuick ? 1 : 5) {
        plainNotes.append(try SyncBench.insert(rowCount: insertRows, synced: false, shape: .note).insert)
        syncedNotes.append(try SyncBench.insert(rowCount: insertRows, synced: true, shape: .note).insert)
    }
    print("insert \(insertRows) notes (a 200-character body), synced ÷ plain\t\(String(format: "%.2f", median(syncedNotes) / median(plainNotes)))\t-")
    notes.append("synced table: insert \(String(format: "%.3f", median(plain))) s plain, \(String(format: "%.3f", median(synced))) s synced; "
        + "captureLocalChanges \(String(format: "%.3f", median(captures))) s (\(String(format: "%.0f", Double(insertRows) / median(captures))) rows/s)")
}
for note in notes { print("# \(note)") }
