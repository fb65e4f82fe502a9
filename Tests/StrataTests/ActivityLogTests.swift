import Foundation
import Strata
import StrataTestHelpers
import Testing

/// The seeds' SQLite.swift activity log, written with Strata's typed queries:
/// an autoincrement id, optional latitude and longitude, a unique time, and an
/// `away` flag.
@Suite struct ActivityLogTests {
    let activities = SQLTable("activities")
    let id = Column<Int64>("id")
    let latitude = Column<Double?>("latitude")
    let longitude = Column<Double?>("longitude")
    let time = Column<Date>("time")
    let away = Column<Bool>("away")

    func makeLog(_ storage: TestStorage) throws -> DatabaseQueue {
        let queue = try storage.makeQueue()
        try queue.write { db in
            try db.run(activities.create(ifNotExists: true) { t in
                t.column(id, primaryKey: .autoincrement)
                t.column(latitude)
                t.column(longitude)
                t.column(time, unique: true)
                t.column(away)
            })
        }
        return queue
    }

    @Test(arguments: TestStorage.allCases)
    func recordsListsAndFiltersEvents(_ storage: TestStorage) throws {
        let queue = try makeLog(storage)
        let start = Date(timeIntervalSince1970: 1_700_000_000)
        try queue.write { db in
            for hour in 0..<24 {
                let located = hour % 3 == 0
                try db.run(activities.insert(
                    latitude <- (located ? 48.85 + Double(hour) / 100 : nil),
                    longitude <- (located ? 2.35 : nil),
                    time <- start.addingTimeInterval(Double(hour) * 3600),
                    away <- (hour >= 9 && hour < 18)))
            }
        }
        // A second event at the same time breaks the UNIQUE constraint.
        expectError(.constraintUnique) {
            try queue.write { db in try db.run(activities.insert(time <- start, away <- false)) }
        }

        try queue.read { db in
            // Iterate every event.
            var seen = 0
            for row in try activities.order(time).fetchAll(db) {
                #expect(try row[id] == Int64(seen + 1))
                seen += 1
            }
            #expect(seen == 24)

            // Filter a time range.
            let workday = activities.filter(time >= start.addingTimeInterval(9 * 3600) && time < start.addingTimeInterval(18 * 3600))
            #expect(try workday.fetchCount(db) == 9)
            #expect(try workday.filter(away == false).fetchCount(db) == 0)

            // Events with a location, latest first.
            let located = try activities.select(time, latitude).filter(latitude != nil).order(time.desc).fetchAll(db)
            #expect(located.count == 8)
            #expect(try located.first?[latitude] == 48.85 + 21.0 / 100)
            #expect(try located.first?[time] == start.addingTimeInterval(21 * 3600))

            // Hours spent away.
            #expect(try Int.fetchOne(db, activities.select(count()).filter(away)) == 9)
        }
    }
}
