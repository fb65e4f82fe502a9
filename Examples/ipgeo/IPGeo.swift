import ArgumentParser
import ExampleSupport
import Foundation
import Strata

/// `ipgeo`: IP address to country, from db-ip style CSV ranges and Tor's
/// geoip files, with a lookup that is one indexed query.
///
/// Addresses are stored as 16-byte BLOBs (IPv4 as IPv4-mapped IPv6), so byte
/// order is numeric order for both families and one primary-key index serves
/// every lookup: `start <= ? ORDER BY start DESC LIMIT 1`, O(log n).
@main
struct IPGeo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ipgeo",
        abstract: "Look up the country of IPv4 and IPv6 addresses.",
        subcommands: [Import.self, Lookup.self]
    )
}

/// An address as 16 bytes, IPv4 mapped into IPv6 (`::ffff:a.b.c.d`).
func addressBytes(_ text: String) -> Data? {
    let text = text.trimmingCharacters(in: .whitespaces)
    if text.contains(":") {
        var address = in6_addr()
        guard inet_pton(AF_INET6, text, &address) == 1 else { return nil }
        return withUnsafeBytes(of: &address) { Data($0) }
    }
    var value: UInt32
    if text.contains(".") {
        var address = in_addr()
        guard inet_pton(AF_INET, text, &address) == 1 else { return nil }
        value = UInt32(bigEndian: address.s_addr)
    } else {
        // Tor's geoip file: the address as a decimal number.
        guard let decimal = UInt32(text) else { return nil }
        value = decimal
    }
    var bytes = Data(repeating: 0, count: 10) + Data([0xFF, 0xFF])
    bytes.append(contentsOf: [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)])
    return bytes
}

struct Import: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Load address ranges (start,end,country) from db-ip CSV files or Tor's geoip and geoip6 files.")

    @Option(name: .long, help: "The database file.")
    var db: String

    @Argument(help: "Range files: db-ip CSV (dotted or colon addresses), Tor geoip (decimal) or geoip6.")
    var sources: [String]

    func run() async throws {
        try await reportingErrors("ipgeo") {
            let queue = try openDatabase(db)
            let sources = self.sources
            let count = try await queue.write { db -> Int in
                try db.execute(sql: """
                    CREATE TABLE IF NOT EXISTS ranges(
                        start BLOB PRIMARY KEY,
                        "end" BLOB NOT NULL,
                        country TEXT NOT NULL
                    ) WITHOUT ROWID
                    """)
                let insert = try db.makeStatement(sql: "INSERT OR REPLACE INTO ranges(start, \"end\", country) VALUES (?, ?, ?)")
                var count = 0
                for source in sources {
                    let reader = try LineReader(url: URL(fileURLWithPath: source))
                    while let line = try reader.nextLine() {
                        if line.isEmpty || line.hasPrefix("#") { continue }
                        let fields = line.split(separator: ",", omittingEmptySubsequences: false).map {
                            $0.trimmingCharacters(in: CharacterSet(charactersIn: "\" "))
                        }
                        guard fields.count == 3 else {
                            throw ValidationError("\(source):\(reader.lineNumber): expected start,end,country, found \(fields.count) fields")
                        }
                        guard let start = addressBytes(fields[0]), let end = addressBytes(fields[1]) else {
                            throw ValidationError("\(source):\(reader.lineNumber): invalid address range \(fields[0]) - \(fields[1])")
                        }
                        guard start.lexicographicallyPrecedes(end) || start == end else {
                            throw ValidationError("\(source):\(reader.lineNumber): the range ends before it starts")
                        }
                        try insert.execute(arguments: [start, end, fields[2]])
                        count += 1
                        if standardErrorIsTerminal && count % 50_000 == 0 {
                            FileHandle.standardError.write(Data("\rimported \(count) ranges".utf8))
                        }
                    }
                }
                return count
            }
            if standardErrorIsTerminal { FileHandle.standardError.write(Data("\n".utf8)) }
            print("imported \(count) ranges")
        }
    }
}

struct Lookup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print ADDRESS<TAB>COUNTRY for each address (from the arguments, or standard input), -- when unknown.")

    @Option(name: .long, help: "The database file.")
    var db: String

    @Argument(help: "Addresses; standard input, one per line, when none are given.")
    var addresses: [String] = []

    func run() async throws {
        let queue: DatabaseQueue
        do {
            var configuration = Configuration()
            configuration.isReadOnly = true
            configuration.createsMissingFile = false
            queue = try DatabaseQueue(path: db, configuration: configuration)
        } catch {
            printError("ipgeo: \(error)")
            throw ExitCode.failure
        }
        var sawInvalid = false
        var pending = addresses
        if pending.isEmpty {
            while let line = readLine() {
                if !line.isEmpty { pending.append(line) }
            }
        }
        let batch = pending
        let results = try await queue.read { db -> [(String, String?)] in
            let lookup = try db.makeStatement(sql: """
                SELECT "end", country FROM ranges WHERE start <= ? ORDER BY start DESC LIMIT 1
                """)
            return try batch.map { address in
                guard let bytes = addressBytes(address) else { return (address, nil) }
                guard let row = try Row.fetchOne(lookup, arguments: [bytes]),
                    let end: Data = try row["end"], !end.lexicographicallyPrecedes(bytes)
                else { return (address, "--") }
                return (address, try row["country"] as String)
            }
        }
        for (address, country) in results {
            if let country {
                print("\(address)\t\(country)")
            } else {
                printError("ipgeo: invalid address: \(address)")
                sawInvalid = true
            }
        }
        if sawInvalid { throw ExitCode.failure }
    }
}
