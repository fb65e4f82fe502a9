import ArgumentParser
import Foundation
import Strata

/// `strata demo`: a short tour of Strata on real data, in a temporary folder.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Walk through Strata's core on a small real book catalog, in a temporary database."
    )

    @Flag(name: .long, help: "Keep the database file instead of deleting it.")
    var keep = false

    func run() async throws {
        let folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("strata-demo-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer {
            if !keep { try? FileManager.default.removeItem(at: folder) }
        }
        let path = folder.appendingPathComponent("books.sqlite").path
        var configuration = Configuration()
        configuration.prepareDatabase = { db in
            try db.add(function: DatabaseFunction("initials", argumentCount: 1, isDeterministic: true) { arguments in
                guard case .text(let name) = arguments[0] else { return nil }
                return name.split(separator: " ").compactMap(\.first).map(String.init).joined()
            })
        }
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        print("Strata demo — SQLite \(Database.sqliteVersion), database \(keep ? path : "in a temporary folder")")

        step(1, "Create a table and insert \(DemoBooks.all.count) books from goodbooks-10k, bound values, one transaction")
        try await queue.write { db in
            try db.execute(sql: """
                CREATE TABLE books(
                    id INTEGER PRIMARY KEY,
                    title TEXT NOT NULL,
                    authors TEXT NOT NULL,
                    year INTEGER,
                    rating REAL NOT NULL
                )
                """)
            let insert = try db.makeStatement(sql: "INSERT INTO books(id, title, authors, year, rating) VALUES (?, ?, ?, ?, ?)")
            for book in DemoBooks.all {
                try insert.execute(arguments: [book.id, book.title, book.authors, book.year, book.rating])
            }
        }
        print("   \(try await queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM books") ?? 0 }) rows")

        step(2, "Query with named arguments: books since 2000, best rated first")
        let recent = try await queue.read { db in
            try Row.fetchAll(db, sql: """
                SELECT title, year, rating FROM books WHERE year >= :since ORDER BY rating DESC, title LIMIT :limit
                """, arguments: ["since": 2000, "limit": 3]).map(\.databaseValues)
        }
        print(indented(TextTable(columns: ["title", "year", "rating"], rows: recent).rendered))

        step(3, "A hostile title is stored as plain data, never spliced into SQL")
        let hostile = "Robert'); DROP TABLE books;--"
        let stored = try await queue.write { db in
            try db.execute(sql: "INSERT INTO books(title, authors, rating) VALUES (?, 'Bobby Tables', 1.0)", arguments: [hostile])
            return try String.fetchOne(db, sql: "SELECT title FROM books WHERE id = ?", arguments: [db.lastInsertedRowID])
        }
        print("   stored \(stored.map { "\"\($0)\"" } ?? "nothing"); books table still has \(try await queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM books") ?? 0 }) rows")

        step(4, "A transaction that throws is rolled back")
        struct ChangedMyMind: Error {}
        do {
            try await queue.write { db in
                try db.execute(sql: "DELETE FROM books")
                throw ChangedMyMind()
            }
        } catch is ChangedMyMind {
            print("   rolled back; \(try await queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM books") ?? 0 }) rows remain")
        }

        step(5, "Reading NULL into a non-optional Int is an error, not a silent 0")
        do {
            _ = try await queue.read { db in
                try Int.fetchAll(db, sql: "SELECT year FROM books ORDER BY id")
            }
        } catch let error as DatabaseDecodingError {
            print("   \(error)")
        }
        let years = try await queue.read { db in try Int?.fetchAll(db, sql: "SELECT year FROM books ORDER BY id") }
        print("   as Int? instead: \(years.filter { $0 == nil }.count) missing years out of \(years.count)")

        step(6, "Constraint errors carry SQLite's extended code and message")
        do {
            try await queue.write { db in
                try db.execute(sql: "INSERT INTO books(id, title, authors, rating) VALUES (1, 'Duplicate', 'Nobody', 3)")
            }
        } catch let error as SQLiteError where error.code == .constraintPrimaryKey {
            print("   \(error.message ?? "")")
        }

        step(7, "A SQL function written in Swift")
        let initials = try await queue.read { db in
            try Row.fetchAll(db, sql: "SELECT authors, initials(authors) FROM books WHERE year < 1950 ORDER BY year")
                .map(\.databaseValues)
        }
        print(indented(TextTable(columns: ["authors", "initials(authors)"], rows: initials).rendered))

        step(8, "Schema introspection")
        let columns = try await queue.read { db in try db.columns(in: "books") }
        for column in columns {
            print("   \(column.name) \(column.declaredType)\(column.isNotNull ? " NOT NULL" : "")\(column.primaryKeyIndex > 0 ? " PRIMARY KEY" : "")")
        }
        print("Done.")
    }

    private func step(_ number: Int, _ title: String) {
        print("\n\(number). \(title)")
    }

    private func indented(_ text: String) -> String {
        text.split(separator: "\n").map { "   " + $0 }.joined(separator: "\n")
    }
}

/// A few rows of goodbooks-10k (https://github.com/zygmuntz/goodbooks-10k),
/// CC BY-SA 4.0: book_id, title, authors, original_publication_year,
/// average_rating. Book 220 has no publication year in the data set.
enum DemoBooks {
    struct Book {
        var id: Int
        var title: String
        var authors: String
        var year: Int?
        var rating: Double
    }

    static let all: [Book] = [
        Book(id: 1, title: "The Hunger Games (The Hunger Games, #1)", authors: "Suzanne Collins", year: 2008, rating: 4.34),
        Book(id: 2, title: "Harry Potter and the Sorcerer's Stone (Harry Potter, #1)", authors: "J.K. Rowling, Mary GrandPré", year: 1997, rating: 4.44),
        Book(id: 3, title: "Twilight (Twilight, #1)", authors: "Stephenie Meyer", year: 2005, rating: 3.57),
        Book(id: 4, title: "To Kill a Mockingbird", authors: "Harper Lee", year: 1960, rating: 4.25),
        Book(id: 5, title: "The Great Gatsby", authors: "F. Scott Fitzgerald", year: 1925, rating: 3.89),
        Book(id: 6, title: "The Fault in Our Stars", authors: "John Green", year: 2012, rating: 4.26),
        Book(id: 7, title: "The Hobbit", authors: "J.R.R. Tolkien", year: 1937, rating: 4.25),
        Book(id: 8, title: "The Catcher in the Rye", authors: "J.D. Salinger", year: 1951, rating: 3.79),
        Book(id: 9, title: "Angels & Demons  (Robert Langdon, #1)", authors: "Dan Brown", year: 2000, rating: 3.85),
        Book(id: 10, title: "Pride and Prejudice", authors: "Jane Austen", year: 1813, rating: 4.24),
        Book(id: 11, title: "The Kite Runner", authors: "Khaled Hosseini", year: 2003, rating: 4.26),
        Book(id: 12, title: "Divergent (Divergent, #1)", authors: "Veronica Roth", year: 2011, rating: 4.24),
        Book(id: 220, title: "Twilight: The Complete Illustrated Movie Companion", authors: "Mark Cotta Vaz", year: nil, rating: 4.23),
    ]
}
