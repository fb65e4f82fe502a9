import Foundation
import Strata
import StrataTestHelpers
import Testing

/// The seeds' SwiftyDB notes app as a plain Codable record.
struct ImageDescriptor: Codable, Equatable, Sendable {
    var frameX: Double
    var frameY: Double
    var fileName: String
    var tags: [String] = []
}

struct Note: DatabaseRecord, Equatable {
    var id: Int64?
    var title: String
    var text: String
    var fontName: String
    var fontSize: Double
    var creationDate: Date
    var modificationDate: Date
    var images: [ImageDescriptor] = []
    var isSelected = false  // UI state: listed as ignored, never stored

    static let databaseTableName = "notes"
    static let databaseIgnoredColumns: Set<String> = ["isSelected"]

    static let title = Column<String>("title")
    static let modificationDate = Column<Date>("modificationDate")
}

@Suite struct NotesRecordTests {
    static let now = Date(timeIntervalSince1970: 1_700_000_000)

    func makeNote(_ title: String, images: [ImageDescriptor] = []) -> Note {
        Note(id: nil, title: title, text: "Body of \(title)", fontName: "Helvetica", fontSize: 14,
             creationDate: Self.now, modificationDate: Self.now, images: images)
    }

    @Test func derivesTheTableFromTheType() throws {
        #expect(try Note.createTableSQL(ifNotExists: true) == """
            CREATE TABLE IF NOT EXISTS "notes" ("id" INTEGER PRIMARY KEY, "title" TEXT NOT NULL, "text" TEXT NOT NULL, "fontName" TEXT NOT NULL, "fontSize" REAL NOT NULL, "creationDate" TEXT NOT NULL, "modificationDate" TEXT NOT NULL, "images" TEXT NOT NULL)
            """)
        #expect(Note.databasePrimaryKey == ["id"])
        let db = try Database()
        try db.create(table: Note.self, ifNotExists: true)
        try db.create(table: Note.self, ifNotExists: true)
        #expect(try db.columns(in: "notes").map(\.name) == ["id", "title", "text", "fontName", "fontSize", "creationDate", "modificationDate", "images"])
    }

    @Test(arguments: TestStorage.allCases)
    func createsUpdatesDeletesAndLists(_ storage: TestStorage) throws {
        let db = try storage.makeDatabase()
        try db.create(table: Note.self)
        var groceries = makeNote("Groceries", images: [ImageDescriptor(frameX: 1, frameY: 2, fileName: "milk.png", tags: ["a"])])
        groceries.isSelected = true
        try groceries.insert(db)
        #expect(groceries.id == 1)  // written back
        var ideas = try makeNote("Ideas").inserted(db)
        #expect(ideas.id == 2)

        // Fetch by key: nested JSON round-trips; the ignored property is not stored.
        let fetched = try #require(try Note.fetchOne(db, key: 1))
        #expect(fetched.images == groceries.images)
        #expect(fetched.isSelected == false)
        #expect(fetched.creationDate == Self.now)
        #expect(try String.fetchOne(db, sql: "SELECT images FROM notes WHERE id = 1") == #"[{"fileName":"milk.png","frameX":1,"frameY":2,"tags":["a"]}]"#)

        // Update all columns, then only the changed ones.
        ideas.text = "Write more tests"
        ideas.modificationDate = Self.now.addingTimeInterval(60)
        try ideas.update(db)
        #expect(try Note.fetchOne(db, key: 2)?.text == "Write more tests")
        let before = ideas
        ideas.fontSize = 18
        #expect(try ideas.updateChanges(db, from: before))
        #expect(try !ideas.updateChanges(db, from: ideas))
        #expect(try Note.fetchOne(db, key: 2)?.fontSize == 18)

        // List, sorted and filtered through the typed query API.
        let titles = try Note.fetchAll(db, Note.table.order(Note.title)).map(\.title)
        #expect(titles == ["Groceries", "Ideas"])
        let recent = try Note.fetchAll(db, Note.table.filter(Note.modificationDate > Self.now))
        #expect(recent.map(\.title) == ["Ideas"])
        #expect(try Note.fetchCount(db) == 2)

        // Delete.
        #expect(try groceries.delete(db))
        #expect(try !groceries.delete(db))
        #expect(try !groceries.exists(db))
        #expect(try ideas.exists(db))
        #expect(try Note.fetchOne(db, key: 1) == nil)
        #expect(try Note.deleteAll(db) == 1)
    }

    @Test func savesUpsertsAndInsertsInBatches() throws {
        let db = try Database()
        try db.create(table: Note.self)
        var note = makeNote("Draft")
        try note.save(db)  // no id: insert
        #expect(note.id == 1)
        note.title = "Final"
        try note.save(db)  // id: update
        #expect(try Note.fetchAll(db).map(\.title) == ["Final"])
        var explicit = makeNote("Explicit")
        explicit.id = 10
        try explicit.save(db)  // id but no row: insert
        explicit.title = "Upserted"
        try explicit.upsert(db)
        #expect(try Note.fetchOne(db, key: 10)?.title == "Upserted")
        let batch = try Note.insertAll(db, (1...100).map { makeNote("Batch \($0)") })
        #expect(batch.map(\.id) == (11...110).map { Int64($0) })
        #expect(try Note.fetchCount(db) == 102)
        // A failing batch inserts nothing.
        var duplicate = makeNote("Duplicate")
        duplicate.id = 10
        expectError(.constraintPrimaryKey) { try Note.insertAll(db, [makeNote("Fresh"), duplicate]) }
        #expect(try Note.fetchCount(db) == 102)
    }

    @Test func updatingAMissingRowIsAnError() throws {
        let db = try Database()
        try db.create(table: Note.self)
        var ghost = makeNote("Ghost")
        ghost.id = 99
        let error = try #require(throws: RecordError.self) { try ghost.update(db) }
        #expect(error.kind == .notFound)
        #expect(error.description == "notes: no row with id = 99")
        let unsaved = makeNote("Unsaved")
        #expect(throws: RecordError.self) { try unsaved.update(db) }
        #expect(throws: RecordError.self) { try unsaved.delete(db) }
    }

    @Test(arguments: TestStorage.allCases)
    func savesAsynchronouslyThroughAQueue(_ storage: TestStorage) async throws {
        let queue = try storage.makeQueue()
        try await queue.write { db in try db.create(table: Note.self) }
        let note = makeNote("Async")
        let saved = try await queue.write { db in
            var copy = note
            try copy.save(db)
            return copy
        }
        #expect(saved.id == 1)
        let notes = try await queue.read { db in try Note.fetchAll(db) }
        #expect(notes == [saved])
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<20 {
                group.addTask {
                    try await queue.write { db in
                        var copy = note
                        copy.title = "Task \(index)"
                        try copy.insert(db)
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try await queue.read { db in try Note.fetchCount(db) } == 21)
    }
}
