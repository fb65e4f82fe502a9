import Foundation
import Strata

/// Import and lookup workloads, compared with the sqlite3 shell and with the
/// seed's unindexed scan rather than with the raw C API.
func transferWorkloads(isQuick: Bool) -> [Workload] { [] }

struct SpecialResult {
    var name: String
    var value: String
}

enum TransferBench {
    /// The flights table's schema, as Strata's import infers it.
    static let flightsSchema = """
        CREATE TABLE flights (year INTEGER, month INTEGER, day INTEGER, dep_time INTEGER, sched_dep_time INTEGER,
        dep_delay INTEGER, arr_time INTEGER, sched_arr_time INTEGER, arr_delay INTEGER, carrier TEXT, flight INTEGER,
        tailnum TEXT, origin TEXT, dest TEXT, air_time INTEGER, distance INTEGER, hour INTEGER, minute INTEGER, time_hour TEXT)
        """

    /// Imports the CSV with Strata and with the sqlite3 shell's `.import`
    /// into the same schema, interleaved; returns strata÷shell (medians).
    static func importVersusShell(csv: String, schema: String, table: String, sqlite3: String, repetitions: Int) throws -> (Double, Double, Double) {
        var strataTimes: [Double] = [], shellTimes: [Double] = []
        for repetition in 0...repetitions {
            let strataPath = temporaryDatabasePath("import-strata.sqlite")
            let (strataTime, strataRows) = try seconds {
                let db = try Database(path: strataPath)
                try db.execute(sql: schema)
                return try db.importFile(URL(fileURLWithPath: csv), into: table).rowCount
            }
            let shellPath = temporaryDatabasePath("import-shell.sqlite")
            try Database(path: shellPath).execute(sql: schema)
            let (shellTime, _) = try seconds {
                let process = Process()
                process.executableURL = URL(fileURLWithPath: sqlite3)
                process.arguments = [shellPath, ".import --csv --skip 1 \(csv) \(table)"]
                try process.run()
                process.waitUntilExit()
                guard process.terminationStatus == 0 else { throw BenchmarkError("sqlite3 .import failed") }
                return 0
            }
            let shellRows = try Int.fetchOne(Database(path: shellPath), sql: "SELECT count(*) FROM \(table)") ?? -1
            guard shellRows == strataRows else { throw BenchmarkError("sqlite3 imported \(shellRows) rows, Strata \(strataRows)") }
            if repetition == 0 { continue }
            strataTimes.append(strataTime)
            shellTimes.append(shellTime)
        }
        return (median(strataTimes) / median(shellTimes), median(strataTimes), median(shellTimes))
    }

    /// Writes a CSV of about `megabytes` MB (the flights columns).
    static func generateCSV(path: String, megabytes: Int) throws -> Int {
        FileManager.default.createFile(atPath: path, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        defer { try? handle.close() }
        try handle.write(contentsOf: Data("year,month,day,dep_time,carrier,flight,origin,dest,air_time,distance\n".utf8))
        var generator = SystemRandomNumberGenerator()
        var written = 0
        var rows = 0
        let carriers = ["UA", "AA", "B6", "DL", "EV", "MQ"], airports = ["EWR", "LGA", "JFK", "IAH", "MIA", "ORD", "ATL"]
        while written < megabytes << 20 {
            var chunk = ""
            for _ in 0..<10_000 {
                chunk += "2013,\(Int.random(in: 1...12, using: &generator)),\(Int.random(in: 1...28, using: &generator)),\(Int.random(in: 0...2359, using: &generator)),\(carriers.randomElement(using: &generator)!),\(Int.random(in: 1...6000, using: &generator)),\(airports.randomElement(using: &generator)!),\(airports.randomElement(using: &generator)!),\(Int.random(in: 20...600, using: &generator)),\(Int.random(in: 100...5000, using: &generator))\n"
                rows += 1
            }
            let data = Data(chunk.utf8)
            try handle.write(contentsOf: data)
            written += data.count
        }
        return rows
    }

    /// Imports a file in a child process and returns its peak resident
    /// memory in MB.
    static func peakImportMemory(csv: String) throws -> Double {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
        process.arguments = ["--import-child", csv, temporaryDatabasePath("memory.sqlite")]
        try process.run()
        // The child's own high-water mark (VmHWM), read while it runs.
        var peakKilobytes = 0
        while process.isRunning {
            if let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8),
                let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
                let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "")
            {
                peakKilobytes = max(peakKilobytes, kilobytes)
            }
            usleep(20_000)
        }
        guard process.terminationStatus == 0 else { throw BenchmarkError("the import child failed") }
        return Double(peakKilobytes) / 1024
    }

    /// The child's work for `peakImportMemory`.
    static func importChild(csv: String, database: String) throws {
        let db = try Database(path: database)
        try db.importFile(URL(fileURLWithPath: csv), into: "big")
    }

    /// `count` lookups of random IPv4 addresses in `rangeCount` ranges:
    /// ipgeo's 16-byte BLOB primary key, against the seed's unindexed
    /// `? BETWEEN start AND end` scan. Returns seconds per lookup for each.
    static func ipLookups(rangeCount: Int, lookups: Int, scanLookups: Int, torGeoIP: String? = nil) throws -> (Double, Double) {
        let db = try Database(path: temporaryDatabasePath("ip.sqlite"))
        try db.execute(sql: """
            CREATE TABLE ranges(start BLOB PRIMARY KEY, "end" BLOB NOT NULL, country TEXT NOT NULL) WITHOUT ROWID;
            CREATE TABLE ips(start INTEGER, "end" INTEGER, country TEXT);
            """)
        func blob(_ value: UInt32) -> Data {
            Data(repeating: 0, count: 10) + Data([0xFF, 0xFF, UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)])
        }
        // Tor's IPv4 geoip file (the ipgeo example's real data) when given,
        // else evenly spread synthetic ranges.
        var ranges: [(UInt32, UInt32, String)] = []
        if let torGeoIP, let text = try? String(contentsOfFile: torGeoIP + "/geoip", encoding: .utf8) {
            for line in text.split(separator: "\n") where !line.hasPrefix("#") {
                let fields = line.split(separator: ",")
                if fields.count == 3, let start = UInt32(fields[0]), let end = UInt32(fields[1]) {
                    ranges.append((start, end, String(fields[2])))
                }
            }
        } else {
            let width = UInt32.max / UInt32(rangeCount)
            for index in 0..<UInt32(rangeCount) {
                ranges.append((index * width, index * width + width - 1, ["AU", "CN", "US", "FR", "JP"][Int(index % 5)]))
            }
        }
        try db.transaction {
            let indexed = try db.makeStatement(sql: "INSERT INTO ranges VALUES (?, ?, ?)")
            let scanned = try db.makeStatement(sql: "INSERT INTO ips VALUES (?, ?, ?)")
            for (start, end, country) in ranges {
                try indexed.execute(arguments: [blob(start), blob(end), country])
                try scanned.execute(arguments: [Int64(start), Int64(end), country])
            }
        }
        // Addresses inside the ranges, so both lookups find a country.
        let addresses = (0..<lookups).map { _ -> UInt32 in
            let range = ranges.randomElement()!
            return UInt32.random(in: range.0...range.1)
        }
        let lookup = try db.makeStatement(sql: "SELECT \"end\", country FROM ranges WHERE start <= ? ORDER BY start DESC LIMIT 1")
        let (indexedTime, found) = try seconds {
            var found = 0
            for address in addresses {
                let bytes = blob(address)
                if let row = try Row.fetchOne(lookup, arguments: [bytes]), let end: Data = try row["end"], !end.lexicographicallyPrecedes(bytes) {
                    found += 1
                }
            }
            return found
        }
        guard found == lookups else { throw BenchmarkError("indexed lookups found \(found) of \(lookups)") }
        let scan = try db.makeStatement(sql: "SELECT country FROM ips WHERE ? BETWEEN start AND \"end\"")
        let (scanTime, scanFound) = try seconds {
            try addresses.prefix(scanLookups).reduce(0) { count, address in
                count + (try String.fetchOne(scan, arguments: [Int64(address)]) == nil ? 0 : 1)
            }
        }
        guard scanFound == scanLookups else { throw BenchmarkError("scans found \(scanFound) of \(scanLookups)") }
        return (indexedTime / Double(lookups), scanTime / Double(scanLookups))
    }
}
