import Foundation
import Strata
import StrataTestHelpers
import Testing

/// A SwiftyDB-style model: its table appears when first used.
fileprivate struct Memo: DatabaseRecord, Equatable, Identifiable {
    var id: Int64?
    var title: String
    var folder: String
    static let databaseCreatesTableOnFirstUse = true
    static let title = Column<String>("title")
    static let folder = Column<String>("folder")
}

/// The same without the opt-in.
fileprivate struct Plain: DatabaseRecord {
    var id: Int64?
    var title: String
}

@Suite struct RecordConveniencesTests {
    fileprivate func makeMemos(_ db: Database) throws -> [Memo] {
        try [("b", "work"), ("a", "home"), ("c", "work"), ("d", "home")].map { title, folder in
            try Memo(id: nil, title: title, folder: folder).inserted(db)
        }
    }

    @Test(arguments: TestStorage.allCases)
    func queriesStartFromTheRecordType(_ storage: TestStorage) throws {
        let db = try storage.makeDatabase()
        let memos = try makeMemos(db)
        let query = Memo.filter(Memo.folder == "work").order(Memo.title.desc)
        #expect(query.sqlLiteral.sql == #"SELECT * FROM "memo" WHERE ("folder" = ?) ORDER BY "title" DESC"#)
        #expect(try query.fetchAll(db).map(\.title) == ["c", "b"])
        #expect(try query.fetchOne(db)?.title == "c")
        #expect(try query.fetchCount(db) == 2)
        #expect(try Memo.order(Memo.title).limit(2, offset: 1).fetchAll(db).map(\.title) == ["b", "c"])
        #expect(try Memo.all().fetchCount(db) == 4)
        let cursor = try Memo.filter(Memo.title > "b").order(Memo.title).fetchCursor(db)
        #expect(try cursor.next()?.title == "c")
        #expect(try Memo.limit(1).fetchAll(db) == [memos[0]])
        // Deleting through a query: its filter, never more than it selects.
        #expect(throws: SQLiteError.self) { try Memo.filter(Memo.folder == "home").limit(1).deleteAll(db) }
        #expect(try Memo.fetchCount(db) == 4)
        #expect(try Memo.filter(Memo.folder == "home").deleteAll(db) == 2)
        #expect(try Memo.all().order(Memo.title).fetchAll(db).map(\.title) == ["b", "c"])
    }

    @Test func aTableIsCreatedOnFirstUseWhenTheTypeAsks() throws {
        let db = try Database()
        #expect(try Memo.fetchAll(db) == [])                     // a fetch creates it
        #expect(try db.tableExists("memo"))
        try db.execute(sql: "DROP TABLE memo")
        var memo = Memo(id: nil, title: "x", folder: "y")
        try memo.insert(db)                                       // so does an insert
        #expect(memo.id == 1)
        try db.execute(sql: "DROP TABLE memo")
        try memo.save(db)                                         // and a save
        #expect(try Memo.filter(Memo.title == "x").fetchCount(db) == 1)
        // Without the opt-in a missing table stays an error.
        let error = try #require(throws: SQLiteError.self) { try Plain.fetchAll(db) }
        #expect(error.message == "no such table: plain")
        #expect(try !db.tableExists("plain"))
    }

    @Test func readsAnyValueAsTextLikeSQLite() throws {
        let db = try Database()
        let expressions = ["42", "-7", "2.5", "0.1", "1.0/3", "1e20", "-0.0", "1e-7", "'text'", "x'414243'", "NULL", "9223372036854775807"]
        let sql = "SELECT " + expressions.map { "\($0), CAST(\($0) AS TEXT)" }.joined(separator: ", ")
        let row = try #require(try Row.fetchOne(db, sql: sql))
        for index in expressions.indices {
            let expected: String? = try row[index * 2 + 1]
            #expect(try row.text(at: index * 2) == expected, "\(expressions[index])")
            #expect(try row.copy().text(at: index * 2) == expected, "\(expressions[index]) (a copied row)")
        }
        let named = try #require(try Row.fetchOne(db, sql: "SELECT 1 AS n, 2.5 AS r, NULL AS z"))
        #expect(try named.text(forColumn: "N") == "1" && named.text(forColumn: "r") == "2.5" && named.text(forColumn: "z") == nil)
        #expect(throws: DatabaseDecodingError.self) { try named.text(forColumn: "missing") }
    }

    @Test func sectionsFollowTheListOrder() throws {
        let db = try Database()
        _ = try makeMemos(db)
        let memos = try Memo.order(Memo.folder, Memo.title).fetchAll(db)
        let sections = SectionedResults(memos, by: \.folder)
        #expect(sections.sections.map(\.key) == ["home", "work"])
        #expect(sections.sections.map { $0.elements.map(\.title) } == [["a", "d"], ["b", "c"]])
        #expect(sections[1, 0].title == "b")
    }

    fileprivate struct Item: Identifiable, Equatable {
        var id: Int
        var value: Int
    }

    /// Applying the changes as UIKit does (deletes and moves' sources from
    /// the old list, then inserts and moves' destinations at their new
    /// indexes) turns the old ids into the new ones, and `updated` names
    /// exactly the elements kept in place with another value.
    @Test func listChangesTurnTheOldListIntoTheNewOne() {
        var generator = SplitMix64(seed: 42)
        for _ in 0..<500 {
            let old = (0..<Int(generator.next() % 12)).map { Item(id: $0, value: Int(generator.next() % 3)) }.shuffled(using: &generator)
            var new = old.filter { _ in generator.next() % 4 != 0 }.map { item in
                Item(id: item.id, value: generator.next() % 5 == 0 ? item.value + 10 : item.value)
            }
            new += (100..<(100 + Int(generator.next() % 4))).map { Item(id: $0, value: 0) }
            new.shuffle(using: &generator)
            let changes = ListChanges(from: old, to: new)

            let removed = Set(changes.deleted + changes.moved.map(\.from))
            var ids = old.indices.filter { !removed.contains($0) }.map { old[$0].id }
            let placed = (changes.inserted.map { ($0, new[$0].id) } + changes.moved.map { ($0.to, old[$0.from].id) }).sorted { $0.0 < $1.0 }
            for (index, id) in placed { ids.insert(id, at: index) }
            #expect(ids == new.map(\.id))

            let newByID = Dictionary(uniqueKeysWithValues: new.map { ($0.id, $0) })
            let movedIDs = Set(changes.moved.map { old[$0.from].id })
            let expectedUpdates = old.indices.filter { index in
                guard let now = newByID[old[index].id], !movedIDs.contains(old[index].id) else { return false }
                return now != old[index]
            }
            #expect(changes.updated == expectedUpdates)
            #expect(changes.moved.allSatisfy { $0.isUpdated == (old[$0.from] != new[$0.to]) })
            #expect(changes.isEmpty == (old == new))
        }
    }

    @Test func observationCallsBackOnAChosenQueueUntilCancelled() async throws {
        let queue = try DatabaseQueue(path: try makeTemporaryPath())
        try await queue.write { db in _ = try Memo(id: nil, title: "a", folder: "f").inserted(db) }
        let observation = ValueObservation { db in try Memo.order(Memo.title).fetchAll(db).map(\.title) }
        let log = ValueLog<[String]>()
        let errors = ValueLog<String>()
        let callbacks = DispatchQueue(label: "callbacks")
        let cancellable = observation.start(in: queue, on: callbacks, onError: { errors.append("\($0)") }, onChange: { titles in
            dispatchPrecondition(condition: .onQueue(callbacks))
            log.append(titles)
        })
        try await log.wait(for: 1)
        try await queue.write { db in _ = try Memo(id: nil, title: "b", folder: "f").inserted(db) }
        try await log.wait(for: 2)
        #expect(log.values == [["a"], ["a", "b"]])
        cancellable.cancel()
        try await queue.write { db in _ = try Memo(id: nil, title: "c", folder: "f").inserted(db) }
        // The callbacks queue is serial: once it has run a block enqueued
        // after the cancel, no further callback can come.
        await withCheckedContinuation { continuation in callbacks.async { continuation.resume() } }
        #expect(log.values == [["a"], ["a", "b"]])
        #expect(errors.values.isEmpty)
    }

    @MainActor
    @Test func observationCallsBackOnTheMainActorAndReportsErrors() async throws {
        let pool = try DatabasePool(path: try makeTemporaryPath())
        try await pool.write { db in try db.execute(sql: "CREATE TABLE t(v); INSERT INTO t VALUES (1)") }
        let log = ValueLog<[Int]>()
        let errors = ValueLog<String>()
        let observation = ValueObservation { db in try Int.fetchAll(db, sql: "SELECT v FROM t ORDER BY rowid") }
        let cancellable = observation.start(in: pool, onError: { errors.append("\($0)") }, onChange: { values in
            MainActor.assertIsolated()
            log.append(values)
        })
        try await log.wait(for: 1)
        #expect(log.values == [[1]])
        // A fetch that fails stops the observation and reaches onError.
        try await pool.write { db in try db.execute(sql: "INSERT INTO t VALUES ('two')") }
        try await errors.wait(for: 1)
        #expect(errors.values.count == 1 && errors.values[0].contains("cannot read TEXT as Int"))
        #expect(log.values == [[1]])
        withExtendedLifetime(cancellable) {}
    }
}
