import ArgumentParser
import ExampleSupport
import Foundation
import Strata

/// `notes`: the seeds' SwiftyDB notes app, with Codable records saved
/// asynchronously.
@main
struct Notes: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "notes",
        abstract: "Write notes with images, stored as records.",
        subcommands: [Create.self, Edit.self, Delete.self, List.self]
    )
}

struct ImageDescriptor: Codable, Sendable {
    var fileName: String
    var frameX: Double = 0
    var frameY: Double = 0
}

struct Note: DatabaseRecord, Sendable {
    var id: Int64?
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
        try migrator.migrate(queue)
        return queue
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
            let note = Note(id: nil, title: title, text: text, images: image.map { ImageDescriptor(fileName: $0) })
            let saved = try await queue.write { db in try note.inserted(db) }
            print("created note \(saved.id ?? 0)")
        }
    }
}

struct Edit: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Change a note's title or text.")
    @Option(name: .long, help: "The database file.") var db: String
    @Argument var id: Int64
    @Option(name: .long) var title: String?
    @Option(name: .long) var text: String?

    func run() async throws {
        try await reportingErrors("notes") {
            let queue = try Note.open(db)
            let (id, title, text) = (self.id, self.title, self.text)
            try await queue.write { db in
                guard var note = try Note.fetchOne(db, key: id) else { throw ValidationError("no note \(id)") }
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
    @Argument var id: Int64

    func run() async throws {
        try await reportingErrors("notes") {
            let queue = try Note.open(db)
            let id = self.id
            let deleted = try await queue.write { db in try Note.fetchOne(db, key: id)?.delete(db) ?? false }
            guard deleted else { throw ValidationError("no note \(id)") }
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
                try Note.fetchAll(db, Note.table.order(Note.modificationDate.desc, Column<Int64>("id").desc))
            }
            for note in notes {
                let images = note.images.isEmpty ? "" : "\t[" + note.images.map(\.fileName).joined(separator: ", ") + "]"
                print("\(note.id ?? 0)\t\(note.title)\t\(note.text)\(images)")
            }
        }
    }
}
