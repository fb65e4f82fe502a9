import ArgumentParser
import ExampleSupport
import Foundation
import Strata
import StrataDocuments
import StrataSync

/// `notes`: the seeds' SwiftyDB notes app, with Codable records saved
/// asynchronously, and synced between devices (`notes sync`). A note's id is
/// a UUID, so that two devices never make the same one; commands take any
/// unique beginning of it, as `list` shows (8 characters).
@main
struct Notes: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notes",
        abstract: "Write notes with images, stored as records.",
        subcommands: [Create.self, Edit.self, Delete.self, List.self, Sync.self]
    )
}

struct ImageDescriptor: Codable, Sendable {
    var fileName: String
    var frameX: Double = 0
    var frameY: Double = 0
}

struct Note: DatabaseRecord, Sendable {
    /// A lowercase UUID.
    var id: String
    var title: String
    var text: String
    var fontName = "Helvetica"
    var fontSize = 14.0
    var creationDate = Date()
    var modificationDate = Date()
    var images: [ImageDescriptor] = []
    var isSelected = false

    static let databaseTableName = "notes"
    static let databaseIgnoredColumns: Set<String> = ["isSelected"]
    static let modificationDate = Column<Date>("modificationDate")

    static func open(_ path: String) throws -> DatabaseQueue {
        let queue = try openDatabase(path)
        var migrator = Migrator()
        migrator.register("v1: notes") { db in try db.create(table: Note.self) }
        migrator.register("v2: UUID keys, for sync") { db in
            // Files made before notes synced have INTEGER ids: each note gets a UUID.
            let idType = try String.fetchOne(db, sql: "SELECT type FROM pragma_table_info('notes') WHERE name = 'id'")
            guard idType == "INTEGER" else { return }
            try db.execute(sql: "ALTER TABLE notes RENAME TO notes_v1")
            try db.create(table: Note.self)
            let columns = try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info('notes') WHERE name != 'id'")
                .map(quoteIdentifier).joined(separator: ", ")
            try db.execute(sql: """
                INSERT INTO notes(id, \(columns))
                SELECT lower(substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-4' || substr(h, 14, 3) || '-a' || substr(h, 18, 3) || '-' || substr(h, 21, 12)), \(columns)
                FROM (SELECT hex(randomblob(16)) AS h, * FROM notes_v1 ORDER BY id);
                DROP TABLE notes_v1;
                """)
        }
        try migrator.migrate(queue)
        return queue
    }

    /// The note whose id begins with `prefix`, when exactly one does.
    static func find(_ db: Database, _ prefix: String) throws -> Note {
        let pattern = prefix.lowercased().replacingOccurrences(of: "%", with: "").replacingOccurrences(of: "_", with: "") + "%"
        let notes = try Note.fetchAll(db, sql: "SELECT * FROM notes WHERE id LIKE ? LIMIT 2", arguments: [pattern])
        guard notes.count == 1, !prefix.isEmpty else {
            throw ValidationError(notes.isEmpty ? "no note \(prefix)" : "several notes begin with \(prefix): give more of the id")
        }
        return notes[0]
    }
}

struct Create: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Create a note.")
    @Option(name: .long, help: "The database file.") var db: String
    @Argument var title: String
    @Argument var text: String = ""
    @Option(name: .long, help: "An image file name; repeat for several.") var image: [String] = []

    func run() async throws {
        try await reportingErrors("notes") {
            let queue = try Note.open(db)
            let note = Note(id: UUID().uuidString.lowercased(), title: title, text: text, images: image.map { ImageDescriptor(fileName: $0) })
            let saved = try await queue.write { db in try note.inserted(db) }
            print("created note \(saved.id.prefix(8))")
        }
    }
}

struct Edit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Change a note's title or text.")
    @Option(name: .long, help: "The database file.") var db: String
    @Argument(help: "The note's id, or its beginning.") var id: String
    @Option(name: .long) var title: String?
    @Option(name: .long) var text: String?

    func run() async throws {
        try await reportingErrors("notes") {
            let queue = try Note.open(db)
            let (id, title, text) = (self.id, self.title, self.text)
            try await queue.write { db in
                var note = try Note.find(db, id)
                let original = note
                if let title { note.title = title }
                if let text { note.text = text }
                note.modificationDate = Date()
                try note.updateChanges(db, from: original)
            }
            print("edited note \(id)")
        }
    }
}

struct Delete: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Delete a note.")
    @Option(name: .long, help: "The database file.") var db: String
    @Argument(help: "The note's id, or its beginning.") var id: String

    func run() async throws {
        try await reportingErrors("notes") {
            let queue = try Note.open(db)
            let id = self.id
            try await queue.write { db in _ = try Note.find(db, id).delete(db) }
            print("deleted note \(id)")
        }
    }
}

struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List notes, most recently modified first.")
    @Option(name: .long, help: "The database file.") var db: String

    func run() async throws {
        try await reportingErrors("notes") {
            let queue = try Note.open(db)
            let notes = try await queue.read { db in
                try Note.fetchAll(db, Note.table.order(Note.modificationDate.desc, Column<String>("id").desc))
            }
            for note in notes {
                let images = note.images.isEmpty ? "" : "\t[" + note.images.map(\.fileName).joined(separator: ", ") + "]"
                print("\(note.id.prefix(8))\t\(note.title)\t\(note.text)\(images)")
            }
        }
    }
}

/// `notes sync --db FILE URL`: the notes shared with a CouchDB database, both
/// ways; with `--continuous`, until interrupted.
struct Sync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Share the notes with a CouchDB database (strata serve), both ways.")
    @Option(name: .long, help: "The database file.") var db: String
    @Argument(help: "The database URL, credentials in it: http://alice:secret@127.0.0.1:5984/notes-alice") var url: String
    @Flag(name: .long, help: "Keep syncing each change until interrupted.") var continuous = false
    @Flag(name: .long, help: "Create the database on its server when missing.") var createTarget = false

    func run() async throws {
        try await reportingErrors("notes") {
            let queue = try Note.open(db)
            let sync = try TableSync(queue, tables: ["notes"])
            let remote = try openDocumentStore(url)
            if createTarget { try await remote.createIfMissing() }
            if continuous {
                try await sync.run(with: remote)
            } else {
                let (sent, received) = try await sync.sync(with: remote)
                let conflicts = try sync.conflicts(in: "notes").count
                print("notes synced: \(sent.documentsWritten) sent, \(received.documentsWritten) received"
                      + (conflicts > 0 ? ", \(conflicts) edited on two devices (the newest edit kept)" : ""))
                // Two devices edited a note: the latest modification wins.
                if conflicts > 0 {
                    try sync.resolveConflicts(in: "notes", using: .newest(by: "modificationDate"))
                    _ = try await sync.sync(with: remote)
                }
            }
        }
    }
}

