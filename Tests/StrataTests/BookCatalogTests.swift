import Foundation
import Strata
import StrataTestHelpers
// The raw C API, imported as a user who needs it would.
#if canImport(SQLite3)
import SQLite3
#else
import CSQLite
#endif
import Testing

// The seeds' book catalog: BOOKS, AUTHORS and the BOOK_AUTHORS join table.

struct Book: DatabaseRecord, Equatable {
    var id: Int64?
    var title: String
    var year: Int?
    var rating: Double

    static let databaseTableName = "books"
    static let authors = hasMany(Author.self, through: BookAuthor.self, parentKey: "bookID", childKey: "authorID")
    static let title = Column<String>("title")
}

struct Author: DatabaseRecord, Equatable {
    var id: Int64?
    var name: String

    static let databaseTableName = "authors"
    static let databaseUniqueKeys = [["name"]]
    static let books = hasMany(Book.self, through: BookAuthor.self, parentKey: "authorID", childKey: "bookID")
    static let favorites = hasMany(Favorite.self, foreignKey: "authorID")
}

struct BookAuthor: DatabaseRecord, Equatable {
    var bookID: Int64
    var authorID: Int64

    static let databaseTableName = "book_authors"
    static let databasePrimaryKey = ["bookID", "authorID"]
    static let databaseForeignKeys = [
        DatabaseForeignKey(["bookID"], references: Book.self, onDelete: .cascade),
        DatabaseForeignKey(["authorID"], references: Author.self, onDelete: .cascade),
    ]
    static let book = belongsTo(Book.self, foreignKey: "bookID")
}

/// A favorite author, kept per reader.
struct Favorite: DatabaseRecord, Equatable {
    var id: Int64?
    var authorID: Int64
    var reader: String

    static let databaseTableName = "favorites"
    static let databaseForeignKeys = [DatabaseForeignKey(["authorID"], references: Author.self, onDelete: .cascade)]
    static let author = belongsTo(Author.self, foreignKey: "authorID")
}

/// The catalog as the bundled JSON describes it.
struct CatalogEntry: Decodable {
    var id: Int64
    var title: String
    var authors: [String]
    var year: Int?
    var rating: Double
}

/// Counts the statements a connection runs, through SQLite's trace hook
/// (the raw C API, reached through `sqliteConnection`).
final class StatementCounter {
    var count = 0

    init(_ db: Database) {
        sqlite3_trace_v2(db.sqliteConnection, UInt32(SQLITE_TRACE_STMT), { _, context, _, _ in
            Unmanaged<StatementCounter>.fromOpaque(context!).takeUnretainedValue().count += 1
            return 0
        }, Unmanaged.passUnretained(self).toOpaque())
    }
}

@Suite struct BookCatalogTests {
    static func makeMigrator() -> Migrator {
        var migrator = Migrator()
        migrator.register("v1: schema") { db in
            try db.create(table: Book.self)
            try db.create(table: Author.self)
            try db.create(table: BookAuthor.self)
            try db.create(table: Favorite.self)
        }
        migrator.register("v2: seed from the bundled catalog") { db in
            let url = try #require(Bundle.module.url(forResource: "books-sample", withExtension: "json", subdirectory: "Resources"))
            let entries = try JSONDecoder().decode([CatalogEntry].self, from: Data(contentsOf: url))
            for entry in entries {
                _ = try Book(id: entry.id, title: entry.title, year: entry.year, rating: entry.rating).inserted(db)
                for name in entry.authors {
                    let author = try Author.fetchOne(db, keys: ["name": name]) ?? Author(id: nil, name: name).inserted(db)
                    _ = try BookAuthor(bookID: entry.id, authorID: author.id!).inserted(db)
                }
            }
        }
        return migrator
    }

    func makeCatalog(_ storage: TestStorage) throws -> DatabaseQueue {
        let queue = try storage.makeQueue()
        try Self.makeMigrator().migrate(queue)
        return queue
    }

    @Test(arguments: TestStorage.allCases)
    func seedsOnceThenSortsPagesAndFilters(_ storage: TestStorage) throws {
        let queue = try makeCatalog(storage)
        try Self.makeMigrator().migrate(queue)  // seeding runs once
        try queue.read { db in
            #expect(try Book.fetchCount(db) == 60)
            #expect(try BookAuthor.fetchCount(db) == 80)
            // Sorted by title, paged.
            let page1 = try Book.fetchAll(db, Book.table.order(Book.title).limit(10))
            let page2 = try Book.fetchAll(db, Book.table.order(Book.title).limit(10, offset: 10))
            #expect(page1.count == 10 && page2.count == 10)
            #expect(page1.map(\.title) == page1.map(\.title).sorted())
            #expect(page1.last!.title <= page2.first!.title)
            // Filtered by author.
            let rowling = try #require(try Author.fetchOne(db, keys: ["name": "J.K. Rowling"]))
            let potter = try Author.books.fetchAll(db, for: rowling)
            #expect(potter.count == 7)
            #expect(potter.allSatisfy { $0.title.hasPrefix("Harry Potter") })
            let sorted = try Book.fetchAll(db, Author.books.query(for: rowling).order(Book.title).limit(2))
            #expect(sorted.map(\.title) == Array(potter.map(\.title).sorted().prefix(2)))
            // A book with its authors.
            let stone = try #require(try Book.fetchOne(db, key: 2))
            #expect(try Book.authors.fetchAll(db, for: stone).map(\.name) == ["J.K. Rowling", "Mary GrandPré"])
            // Belongs-to.
            let link = try #require(try BookAuthor.fetchOne(db, keys: ["bookID": 2, "authorID": rowling.id!]))
            #expect(try BookAuthor.book.fetchOne(db, for: link)?.title == stone.title)
        }
    }

    @Test func eagerLoadingTakesAFixedNumberOfQueries() throws {
        let queue = try makeCatalog(.memory)
        try queue.read { db in
            let books = try Book.fetchAll(db)
            let counter = StatementCounter(db)
            let authorsPerBook = try Book.authors.fetchAll(db, for: books)
            #expect(counter.count == 1)
            #expect(authorsPerBook.count == 60)
            #expect(authorsPerBook.map(\.count).reduce(0, +) == 80)
            #expect(authorsPerBook[1].map(\.name).sorted() == ["J.K. Rowling", "Mary GrandPré"])

            let links = try BookAuthor.fetchAll(db)
            counter.count = 0
            let linkedBooks = try BookAuthor.book.fetchAll(db, for: links)
            #expect(counter.count == 1)
            #expect(linkedBooks.allSatisfy { $0 != nil })

            let authors = try Author.fetchAll(db)
            counter.count = 0
            let booksPerAuthor = try Author.books.fetchAll(db, for: authors)
            #expect(counter.count == 1)
            #expect(booksPerAuthor.map(\.count).reduce(0, +) == 80)
            sqlite3_trace_v2(db.sqliteConnection, 0, nil, nil)
        }
    }

    @Test(arguments: TestStorage.allCases)
    func keepsAndRemovesFavorites(_ storage: TestStorage) throws {
        let queue = try makeCatalog(storage)
        try queue.write { db in
            let austen = try #require(try Author.fetchOne(db, keys: ["name": "Jane Austen"]))
            let tolkien = try #require(try Author.fetchOne(db, keys: ["name": "J.R.R. Tolkien"]))
            var first = try Favorite(id: nil, authorID: austen.id!, reader: "ann").inserted(db)
            _ = try Favorite(id: nil, authorID: tolkien.id!, reader: "ann").inserted(db)
            #expect(try Author.favorites.fetchAll(db, for: austen).map(\.reader) == ["ann"])
            let favoriteAuthors = try Favorite.author.fetchAll(db, for: Favorite.fetchAll(db))
            #expect(favoriteAuthors.map { $0?.name } == ["Jane Austen", "J.R.R. Tolkien"])
            #expect(try first.delete(db))
            first.id = nil
            #expect(try Author.favorites.fetchAll(db, for: austen).isEmpty)
            // A favorite must point at an existing author.
            expectError(.constraintForeignKey) { try Favorite(id: nil, authorID: 9999, reader: "ann").inserted(db) }
        }
    }

    @Test func deletingABookRemovesItsJoinRows() throws {
        let queue = try makeCatalog(.temporaryFile)
        try queue.write { db in
            let stone = try #require(try Book.fetchOne(db, key: 2))
            #expect(try BookAuthor.fetchAll(db, BookAuthor.table.filter(Column<Int64>("bookID") == 2)).count == 2)
            #expect(try stone.delete(db))
            #expect(try BookAuthor.fetchAll(db, BookAuthor.table.filter(Column<Int64>("bookID") == 2)).isEmpty)
            #expect(try BookAuthor.fetchCount(db) == 78)
            // The authors stay.
            #expect(try Author.fetchOne(db, keys: ["name": "Mary GrandPré"]) != nil)
        }
    }
}
