import Foundation

// Usage: StrataBenchmarks [--quick] [--filter TEXT]
let arguments = CommandLine.arguments
let isQuick = arguments.contains("--quick")
let filter = arguments.firstIndex(of: "--filter").flatMap { arguments.indices.contains($0 + 1) ? arguments[$0 + 1] : nil }
let fetchRows = isQuick ? 2_000 : 200_000
let insertRows = isQuick ? 500 : 50_000
let repetitions = isQuick ? 1 : 7

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
    Workload(name: "insert, positional arguments", prepare: freshInsertDatabase, raw: { try RawC.insert(insertPath, rowCount: insertRows) },
             strata: { try StrataBench.insertPositional(insertPath, rowCount: insertRows) }, grdb: { try GRDBBench.insertPositional(insertPath, rowCount: insertRows) }),
    Workload(name: "insert, named arguments", prepare: freshInsertDatabase, raw: { try RawC.insert(insertPath, rowCount: insertRows) },
             strata: { try StrataBench.insertNamed(insertPath, rowCount: insertRows) }, grdb: { try GRDBBench.insertNamed(insertPath, rowCount: insertRows) }),
    Workload(name: "insert, typed DSL setters", prepare: freshInsertDatabase, raw: { try RawC.insert(insertPath, rowCount: insertRows) },
             strata: { try StrataBench.insertDSL(insertPath, rowCount: insertRows) }, grdb: nil),
    Workload(name: "insert, Codable records", prepare: freshInsertDatabase, raw: { try RawC.insert(insertPath, rowCount: insertRows) },
             strata: { try StrataBench.insertCodable(insertPath, rowCount: insertRows) }, grdb: { try GRDBBench.insertCodable(insertPath, rowCount: insertRows) }),
]
workloads += transferWorkloads(isQuick: isQuick)

if let filter { workloads = workloads.filter { $0.name.contains(filter) } }

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
