import ArgumentParser
import Foundation
import Strata

/// `strata demo`: a walk through Strata's layers on real data, in a
/// temporary folder.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Walk through Strata's layers on the goodbooks-10k catalog, in a temporary database."
    )

    @Option(name: .long, help: "The goodbooks-10k books.csv; by default the copy in Examples/Data.")
    var data: String?

    @Flag(name: .long, help: "Keep the database file instead of deleting it.")
    var keep = false

    /// The books.csv shipped in the repository.
    static var shippedData: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Examples/Data/books.csv")
    }

    /// A reader's favorite book, stored as a Codable record.
    struct Favorite: DatabaseRecord, Sendable {
        var id: Int64?
        var bookID: Int64
        var reader: String
        var note: String?
        static let databaseTableName = "favorites"
    }

    func run() async throws {
        try await reportingErrors {
            let csv = data.map { URL(fileURLWithPath: $0) } ?? Self.shippedData
            guard FileManager.default.fileExists(atPath: csv.path) else {
                throw ValidationError("cannot find \(csv.path); pass --data with goodbooks-10k's books.csv")
            }
            let folder = FileManager.default.temporaryDirectory
                .appendingPathComponent("strata-demo-\(UUID().uuidString)", isDirectory: true)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer {
                if !keep { try? FileManager.default.removeItem(at: folder) }
            }
            try await walkThrough(csv: csv, path: folder.appendingPathComponent("books.sqlite").path)
        }
    }

    private func walkThrough(csv: URL, path: String) async throws {
        var configuration = Configuration()
        configuration.prepareDatabase = { db in
            try db.add(function: DatabaseFunction("initials", argumentCount: 1, isDeterministic: true) { arguments in
                guard case .text(let name) = arguments[0] else { return nil }
                return name.split(separator: " ").compactMap(\.first).map(String.init).joined()
            })
        }
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        print("Strata demo — SQLite \(Database.sqliteVersion), database \(keep ? path : "in a temporary folder")")

        step(1, "Import goodbooks-10k's books.csv: streamed, typed from the data, one transaction")
        let start = Date()
        let imported = try await queue.writeWithoutTransaction { db in try db.importFile(csv, into: "books") }
        print("   \(imported.rowCount) rows in \(String(format: "%.2f", Date().timeIntervalSince(start))) s; columns:",
              try await queue.read { db in try db.columns(in: "books").prefix(4).map { "\($0.name) \($0.declaredType)" }.joined(separator: ", ") } + ", …")

        step(2, "Raw SQL with bound values: the best rated books published before 1900")
        let classics = try await queue.read { db in
            try Row.fetchAll(db, sql: """
                SELECT title, original_publication_year AS year, average_rating AS rating FROM books
                WHERE original_publication_year < ? ORDER BY average_rating DESC, title LIMIT ?
                """, arguments: [1900, 3]).map(\.databaseValues)
        }
        print(indented(TextTable(columns: ["title", "year", "rating"], rows: classics).rendered))

        step(3, "A typed query: the authors with the most books in the catalog")
        let books = SQLTable("books")
        let authors = Column<String>("authors")
        let bookCount = count().aliased("books")
        let prolific = try await queue.read { db in
            try books.select(authors, bookCount).group(authors).order(bookCount.desc, authors).limit(3).fetchAll(db)
                .map { [DatabaseValue.text(try $0[authors]), DatabaseValue.integer(Int64(try $0[bookCount]))] }
        }
        print(indented(TextTable(columns: ["authors", "books"], rows: prolific).rendered))

        step(4, "Codable records: a table derived from a struct, insert and fetch")
        let favorites = try await queue.write { db -> [Favorite] in
            try db.create(table: Favorite.self)
            _ = try Favorite(id: nil, bookID: 1, reader: "ann", note: "reread every summer").inserted(db)
            _ = try Favorite(id: nil, bookID: 5, reader: "ann", note: nil).inserted(db)
            return try Favorite.fetchAll(db)
        }
        for favorite in favorites {
            print("   #\(favorite.id ?? 0): book \(favorite.bookID) for \(favorite.reader)\(favorite.note.map { " — \($0)" } ?? "")")
        }

        step(5, "A hostile title is stored as plain data, never spliced into SQL")
        let hostile = "Robert'); DROP TABLE books;--"
        let stored = try await queue.write { db in
            try db.execute(literal: "INSERT INTO books(book_id, title, authors, average_rating) VALUES (\(99_999), \(hostile), \("Bobby Tables"), \(1.0))")
            return try String.fetchOne(db, sql: "SELECT title FROM books WHERE book_id = ?", arguments: [99_999])
        }
        print("   stored \(stored.map { "\"\($0)\"" } ?? "nothing"); the books table still has \(try await rowCount(queue)) rows")

        step(6, "A transaction that throws is rolled back")
        struct ChangedMyMind: Error {}
        do {
            try await queue.write { db in
                try db.execute(sql: "DELETE FROM books")
                throw ChangedMyMind()
            }
        } catch is ChangedMyMind {
            print("   rolled back; \(try await rowCount(queue)) rows remain")
        }

        step(7, "Reading NULL into a non-optional Int is an error, not a silent 0")
        do {
            _ = try await queue.read { db in
                try Int.fetchAll(db, sql: "SELECT original_publication_year FROM books ORDER BY book_id")
            }
        } catch let error as DatabaseDecodingError {
            print("   \(error)")
        }
        let years = try await queue.read { db in try Double?.fetchAll(db, sql: "SELECT original_publication_year FROM books") }
        print("   as Double? instead: \(years.filter { $0 == nil }.count) books without a year")

        step(8, "Constraint errors carry SQLite's extended code and message")
        do {
            try await queue.write { db in
                try db.execute(sql: "CREATE UNIQUE INDEX books_by_id ON books(book_id)")
                try db.execute(sql: "INSERT INTO books(book_id, title) VALUES (1, 'Duplicate')")
            }
        } catch let error as SQLiteError where error.code == .constraintUnique {
            print("   \(error.message ?? "")")
        }

        step(9, "A SQL function written in Swift")
        let initials = try await queue.read { db in
            try Row.fetchAll(db, sql: "SELECT authors, initials(authors) FROM books WHERE book_id IN (5, 7, 10) ORDER BY book_id")
                .map(\.databaseValues)
        }
        print(indented(TextTable(columns: ["authors", "initials(authors)"], rows: initials).rendered))
        print("Done.")
    }

    private func rowCount(_ queue: DatabaseQueue) async throws -> Int {
        try await queue.read { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM books") ?? 0 }
    }

    private func step(_ number: Int, _ title: String) {
        print("\n\(number). \(title)")
    }

    private func indented(_ text: String) -> String {
        text.split(separator: "\n").map { "   " + $0 }.joined(separator: "\n")
    }
}
