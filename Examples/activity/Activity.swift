import ArgumentParser
import ExampleSupport
import Foundation
import Strata

/// `activity`: the seeds' SQLite.swift activity log, with typed queries.
@main
struct Activity: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "activity",
        abstract: "Record activity events and list them.",
        subcommands: [Record.self, List.self]
    )
}

enum ActivityLog {
    static let table = SQLTable("activities")
    static let id = Column<Int64>("id")
    static let latitude = Column<Double?>("latitude")
    static let longitude = Column<Double?>("longitude")
    static let time = Column<Date>("time")
    static let away = Column<Bool>("away")

    static func open(_ path: String) throws -> DatabaseQueue {
        let queue = try openDatabase(path)
        try queue.write { db in
            try db.run(table.create(ifNotExists: true) { t in
                t.column(id, primaryKey: .autoincrement)
                t.column(latitude)
                t.column(longitude)
                t.column(time, unique: true)
                t.column(away)
            })
        }
        return queue
    }
}

/// Parses `2024-05-01 12:30` or `2024-05-01T12:30:00Z` (UTC).
func parseDate(_ text: String) throws -> Date {
    guard let date = Date.fromDatabaseValue(.text(text)) else {
        throw ValidationError("invalid date \"\(text)\"; use YYYY-MM-DD[ HH:MM[:SS]] (UTC)")
    }
    return date
}

struct Record: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Record an event.")

    @Option(name: .long, help: "The database file.") var db: String
    @Flag(name: .long, help: "The person was away.") var away = false
    @Option(name: .long, help: "Latitude.") var latitude: Double?
    @Option(name: .long, help: "Longitude.") var longitude: Double?
    @Option(name: .long, help: "The time (UTC), now by default.") var time: String?

    func validate() throws {
        if (latitude == nil) != (longitude == nil) {
            throw ValidationError("Give both --latitude and --longitude, or neither.")
        }
    }

    func run() async throws {
        try await reportingErrors("activity") {
            let queue = try ActivityLog.open(db)
            let when = try time.map(parseDate) ?? Date()
            let (away, latitude, longitude) = (self.away, self.latitude, self.longitude)
            let id = try await queue.write { db in
                try db.run(ActivityLog.table.insert(
                    ActivityLog.time <- when, ActivityLog.away <- away,
                    ActivityLog.latitude <- latitude, ActivityLog.longitude <- longitude))
            }
            print("recorded event \(id)")
        }
    }
}

struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List events, oldest first, optionally in a time range.")

    @Option(name: .long, help: "The database file.") var db: String
    @Option(name: .long, help: "From this time (UTC, included).") var from: String?
    @Option(name: .long, help: "Before this time (UTC).") var to: String?
    @Flag(name: .long, help: "Only events while away.") var away = false

    func run() async throws {
        try await reportingErrors("activity") {
            let queue = try ActivityLog.open(db)
            var query = ActivityLog.table.order(ActivityLog.time)
            if let from { query = query.filter(ActivityLog.time >= (try parseDate(from))) }
            if let to { query = query.filter(ActivityLog.time < (try parseDate(to))) }
            if away { query = query.filter(ActivityLog.away == true) }
            let selected = query
            let lines = try await queue.read { db in
                try selected.fetchAll(db).map { row -> String in
                    var line = "\(try row[ActivityLog.id])\t\(try row[ActivityLog.time].databaseValue.description.replacingOccurrences(of: "'", with: ""))"
                    line += try row[ActivityLog.away] ? "\taway" : "\there"
                    if let latitude = try row[ActivityLog.latitude], let longitude = try row[ActivityLog.longitude] {
                        line += "\t\(latitude),\(longitude)"
                    }
                    return line
                }
            }
            for line in lines { print(line) }
        }
    }
}
