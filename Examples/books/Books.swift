import ArgumentParser
import ExampleSupport
import Foundation
import Strata
import StrataDocuments
import StrataSync

/// `books`: the seeds' book catalog — books, authors and the book_authors
/// join table, seeded once through a migration from goodbooks-10k, with
/// favorites.
@main
struct Books: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "books",
        abstract: "Browse a catalog of 10,000 books and keep favorites.",
        subcommands: [List.self, Author.self, Show.self, Favorite.self, Sync.self]
    )
}

struct Book: DatabaseRecord, Sendable {
    var id: Int64?
    var title: String
    var year: Int?
    var rating: Double

    static let databaseTableName = "books"
    static let title = Column<String>("title")
    static let authors = hasMany(Writer.self, through: BookAuthor.self, parentKey: "bookID", childKey: "authorID")
}

struct Writer: DatabaseRecord, Sendable {
    var id: Int64?
    var name: String

    static let databaseTableName = "authors"
    static let databaseUniqueKeys = [["name"]]
    static let books = hasMany(Book.self, through: BookAuthor.self, parentKey: "authorID", childKey: "bookID")
}

struct BookAuthor: DatabaseRecord, Sendable {
    var bookID: Int64
    var authorID: Int64

    static let databaseTableName = "book_authors"
    static let databasePrimaryKey = ["bookID", "authorID"]
    static let databaseForeignKeys = [
        DatabaseForeignKey(["bookID"], references: Book.self, onDelete: .cascade),
        DatabaseForeignKey(["authorID"], references: Writer.self, onDelete: .cascade),
    ]
}

struct FavoriteBook: DatabaseRecord, Sendable {
    var bookID: Int64
    var addedAt: Date

    static let databaseTableName = "favorites"
    static let databasePrimaryKey = ["bookID"]
    static let databaseForeignKeys = [DatabaseForeignKey(["bookID"], references: Book.self, onDelete: .cascade)]
    static let book = belongsTo(Book.self, foreignKey: "bookID")
}

struct DatabaseOptions: ParsableArguments {
    @Option(name: .long, help: "The database file.") var db: String
    @Option(name: .long, help: "The goodbooks-10k books.csv to seed from on first launch.") var data: String?

    func open() throws -> DatabaseQueue {
        let queue = try openDatabase(db)
        let seed = data.map { URL(fileURLWithPath: $0) } ?? exampleDataURL("books.csv")
        var migrator = Migrator()
        migrator.register("v1: catalog") { db in
            try db.create(table: Book.self)
            try db.create(table: Writer.self)
            try db.create(table: BookAuthor.self)
            try db.create(table: FavoriteBook.self)
            try db.execute(sql: "CREATE INDEX book_authors_by_author ON book_authors(authorID)")
        }
        migrator.register("v2: seed from goodbooks-10k") { db in
            // Import the CSV as it is, then spread it over the three tables.
            var options = ImportOptions()
            options.mode = .replace
            try db.importFile(seed, into: "goodbooks", options: options)
            var authorIDs: [String: Int64] = [:]
            let rows = try Row.fetchCursor(db, sql: "SELECT book_id, title, authors, original_publication_year, average_rating FROM goodbooks")
            while let row = try rows.next() {
                let book = try Book(id: row["book_id"], title: row["title"], year: (row["original_publication_year"] as Double?).map { Int($0) }, rating: row["average_rating"]).inserted(db)
                let names = (try row["authors"] as String).components(separatedBy: ", ")
                for name in Set(names) {
                    let authorID: Int64
                    if let known = authorIDs[name] {
                        authorID = known
                    } else {
                        authorID = try Writer(id: nil, name: name).inserted(db).id!
                        authorIDs[name] = authorID
                    }
                    _ = try BookAuthor(bookID: book.id!, authorID: authorID).inserted(db)
                }
            }
            try db.execute(sql: "DROP TABLE goodbooks")
        }
        try migrator.migrate(queue)
        return queue
    }
}

func line(_ book: Book, authors: [Writer]? = nil) -> String {
    var text = "\(book.id ?? 0)\t\(book.title)\t\(book.year.map(String.init) ?? "----")\t\(String(format: "%.2f", book.rating))"
    if let authors { text += "\t" + authors.map(\.name).sorted().joined(separator: ", ") }
    return text
}

struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List books sorted by title, a page at a time.")
    @OptionGroup var options: DatabaseOptions
    @Option(name: .long) var page = 1
    @Option(name: .long) var perPage = 20

    func validate() throws {
        guard page >= 1, perPage >= 1 else { throw ValidationError("pages and page sizes start at 1") }
    }

    func run() async throws {
        try await reportingErrors("books") {
            let queue = try options.open()
            let query = Book.table.order(Book.title).limit(perPage, offset: (page - 1) * perPage)
            let (books, authors) = try await queue.read { db in
                let books = try Book.fetchAll(db, query)
                return (books, try Book.authors.fetchAll(db, for: books))
            }
            for (book, writers) in zip(books, authors) { print(line(book, authors: writers)) }
        }
    }
}

struct Author: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "The books of an author, sorted by title.")
    @OptionGroup var options: DatabaseOptions
    @Argument var name: String

    func run() async throws {
        try await reportingErrors("books") {
            let queue = try options.open()
            let name = self.name
            let books = try await queue.read { db -> [Book] in
                guard let writer = try Writer.fetchOne(db, keys: ["name": name]) else {
                    throw ValidationError("no author named \"\(name)\"")
                }
                return try Book.fetchAll(db, Writer.books.query(for: writer).order(Book.title))
            }
            books.forEach { print(line($0)) }
        }
    }
}

struct Show: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "A book with its authors.")
    @OptionGroup var options: DatabaseOptions
    @Argument var id: Int64

    func run() async throws {
        try await reportingErrors("books") {
            let queue = try options.open()
            let id = self.id
            let (book, authors) = try await queue.read { db -> (Book, [Writer]) in
                guard let book = try Book.fetchOne(db, key: id) else { throw ValidationError("no book \(id)") }
                return (book, try Book.authors.fetchAll(db, for: book))
            }
            print(line(book, authors: authors))
        }
    }
}

struct Favorite: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Keep favorite books.", subcommands: [Add.self, Remove.self, List.self])

    struct Add: AsyncParsableCommand {
        @OptionGroup var options: DatabaseOptions
        @Argument var id: Int64

        func run() async throws {
            try await reportingErrors("books") {
                let queue = try options.open()
                let id = self.id
                do {
                    try await queue.write { db in
                        var favorite = FavoriteBook(bookID: id, addedAt: Date())
                        try favorite.upsert(db)
                    }
                } catch SQLiteError.constraintForeignKey {
                    throw ValidationError("no book \(id)")
                }
                print("added \(id) to favorites")
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        @OptionGroup var options: DatabaseOptions
        @Argument var id: Int64

        func run() async throws {
            try await reportingErrors("books") {
                let queue = try options.open()
                let id = self.id
                let removed = try await queue.write { db in
                    try FavoriteBook(bookID: id, addedAt: Date()).delete(db)
                }
                guard removed else { throw ValidationError("book \(id) is not a favorite") }
                print("removed \(id) from favorites")
            }
        }
    }

    struct List: AsyncParsableCommand {
        @OptionGroup var options: DatabaseOptions

        func run() async throws {
            try await reportingErrors("books") {
                let queue = try options.open()
                let books = try await queue.read { db in
                    let favorites = try FavoriteBook.fetchAll(db, FavoriteBook.table.order(Column<Date>("addedAt")))
                    return try FavoriteBook.book.fetchAll(db, for: favorites).compactMap { $0 }
                }
                books.forEach { print(line($0)) }
            }
        }
    }
}

/// `books sync --db FILE URL`: the favorites shared with a CouchDB database,
/// both ways. Every device has the same catalog (the same book ids), so a
/// favorite is keyed by its book id on every device.
struct Sync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Share the favorites with a CouchDB database (strata serve), both ways.")
    @OptionGroup var options: DatabaseOptions
    @Argument(help: "The database URL, credentials in it: http://alice:secret@127.0.0.1:5984/favorites-alice")
    var url: String
    @Flag(name: .long, help: "Keep syncing each change until interrupted.") var continuous = false
    @Flag(name: .long, help: "Create the database on its server when missing.") var createTarget = false

    func run() async throws {
        try await reportingErrors("books") {
            let queue = try options.open()
            let sync = try TableSync(queue, tables: ["favorites"], sharedIntegerKeys: ["favorites"])
            let remote = try openDocumentStore(url)
            if createTarget { try await remote.createIfMissing() }
            if continuous {
                try await sync.run(with: remote)
            } else {
                let (sent, received) = try await sync.sync(with: remote)
                print("favorites synced: \(sent.documentsWritten) sent, \(received.documentsWritten) received")
            }
        }
    }
}

