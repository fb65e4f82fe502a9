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
    ///
    /// `shape` is `.narrow` (a UUID key, a short title, an integer and a
    /// real: the insert itself is cheap, so the capture's share is the
    /// largest) or `.note` (issue 35's `Note`: a UUID key, a title, a body of
    /// about 200 characters and a folder's UUID).
    static func insert(rowCount: Int, synced: Bool, shape: Shape = .narrow) throws -> (insert: Double, capture: Double?) {
        let path = temporaryDatabasePath("synced.sqlite")
        let pool = try DatabasePool(path: path)
        switch shape {
        case .narrow:
            try pool.write { try $0.execute(sql: "CREATE TABLE notes(id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL, n INTEGER, score REAL)") }
        case .note:
            try pool.write { try $0.execute(sql: "CREATE TABLE notes(id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL, body TEXT NOT NULL, folderID TEXT)") }
        }
        let sync = synced ? try TableSync(pool, tables: ["notes"]) : nil
        let ids = (0..<rowCount).map { _ in UUID().uuidString }
        let folders = (0..<20).map { _ in UUID().uuidString }
        let body = String(repeating: "Milk, eggs, flour and a note about the week. ", count: 4)
        let start = ContinuousClock.now
        try pool.write { db in
            let statement = try db.makeStatement(sql: "INSERT INTO notes VALUES (?, ?, ?, ?)")
            for (index, id) in ids.enumerated() {
                switch shape {
                case .narrow: try statement.execute(binding: id, "note", index, Double(index) / 2)
                case .note: try statement.execute(binding: id, "Note \(index)", body, folders[index % folders.count])
                }
            }
        }
        let inserted = seconds(ContinuousClock.now - start)
        guard let sync else { return (inserted, nil) }
        let captureStart = ContinuousClock.now
        let written = try sync.captureLocalChanges()
        guard written == rowCount else { throw BenchmarkError("captured \(written) of \(rowCount) rows") }
        return (inserted, seconds(ContinuousClock.now - captureStart))
    }

    enum Shape { case narrow, note }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
