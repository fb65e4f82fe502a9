import Foundation
import Strata
import StrataDocuments

/// What syncing a table costs the app's own writes (issue 35's ≤ 1.5×):
/// inserting rows into a table with and without `TableSync`'s capture
/// triggers, and turning the captured rows into documents.
enum SyncBench {
    /// The seconds an insert of `rowCount` rows (one transaction, one
    /// prepared statement, UUID keys) takes into a synced table or a plain
    /// one; with sync on, also the seconds `captureLocalChanges()` takes.
    static func insert(rowCount: Int, synced: Bool) throws -> (insert: Double, capture: Double?) {
        let path = temporaryDatabasePath("synced.sqlite")
        let pool = try DatabasePool(path: path)
        try pool.write { try $0.execute(sql: "CREATE TABLE notes(id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL, n INTEGER, score REAL)") }
        let sync = synced ? try TableSync(pool, tables: ["notes"]) : nil
        let ids = (0..<rowCount).map { _ in UUID().uuidString }
        let start = ContinuousClock.now
        try pool.write { db in
            let statement = try db.makeStatement(sql: "INSERT INTO notes VALUES (?, ?, ?, ?)")
            for (index, id) in ids.enumerated() {
                try statement.execute(binding: id, "note", index, Double(index) / 2)
            }
        }
        let inserted = seconds(ContinuousClock.now - start)
        guard let sync else { return (inserted, nil) }
        let captureStart = ContinuousClock.now
        let written = try sync.captureLocalChanges()
        guard written == rowCount else { throw BenchmarkError("captured \(written) of \(rowCount) rows") }
        return (inserted, seconds(ContinuousClock.now - captureStart))
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
