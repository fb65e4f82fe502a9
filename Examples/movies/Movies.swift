import ArgumentParser
import ExampleSupport
import Foundation
import Strata

/// `movies`: the seeds' FMDB movie list, with bound parameters instead of
/// SQL built by string concatenation. The table is seeded once, on first
/// launch, from the TSV shipped in `Examples/Data`.
@main
struct Movies: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "movies",
        abstract: "Browse and rate a catalog of movies.",
        subcommands: [List.self, Show.self, Watch.self, Like.self, Delete.self, Filter.self]
    )
}

struct DatabaseOptions: ParsableArguments {
    @Option(name: .long, help: "The database file.") var db: String
    @Option(name: .long, help: "The TSV to seed from on first launch.") var data: String?

    func open() throws -> DatabaseQueue {
        let queue = try openDatabase(db)
        let seed = data.map { URL(fileURLWithPath: $0) } ?? exampleDataURL("movies.tsv")
        var migrator = Migrator()
        migrator.register("v1: movies") { db in
            try db.execute(sql: """
                CREATE TABLE movies(
                    id INTEGER PRIMARY KEY,
                    title TEXT NOT NULL,
                    genre TEXT,
                    year INTEGER,
                    url TEXT,
                    watched BOOLEAN NOT NULL DEFAULT FALSE,
                    likes INTEGER NOT NULL DEFAULT 0 CHECK (likes BETWEEN 0 AND 3)
                );
                CREATE INDEX movies_by_year ON movies(year);
                """)
        }
        migrator.register("v2: seed from movies.tsv") { db in
            try db.importFile(seed, into: "movies")
        }
        try migrator.migrate(queue)
        return queue
    }
}

/// One movie line: `id  year  title  [genre]  watched  likes`.
func describe(_ row: Row) throws -> String {
    let year = try row["year"] as Int?
    let genre = try row["genre"] as String?
    return "\(try row["id"] as Int64)\t\(year.map(String.init) ?? "----")\t\(try row["title"] as String)\t\(genre ?? "")"
        + "\t\(try row["watched"] as Bool ? "watched" : "-")\t\(String(repeating: "*", count: try row["likes"] as Int))"
}

struct List: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "List movies ordered by year.")
    @OptionGroup var options: DatabaseOptions
    @Option(name: .long) var limit = 20
    @Option(name: .long) var offset = 0

    func run() async throws {
        try await reportingErrors("movies") {
            let queue = try options.open()
            let (limit, offset) = (self.limit, self.offset)
            let lines = try await queue.read { db in
                try Row.fetchAll(db, sql: "SELECT * FROM movies ORDER BY year, title LIMIT ? OFFSET ?", arguments: [limit, offset]).map(describe)
            }
            lines.forEach { print($0) }
        }
    }
}

struct Show: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show one movie.")
    @OptionGroup var options: DatabaseOptions
    @Argument var id: Int64

    func run() async throws {
        try await reportingErrors("movies") {
            let queue = try options.open()
            let id = self.id
            let movie = try await queue.read { db in try Row.fetchOne(db, sql: "SELECT * FROM movies WHERE id = ?", arguments: [id]) }
            guard let movie else { throw ValidationError("no movie \(id)") }
            print(try describe(movie))
            print(try movie["url"] as String? ?? "")
        }
    }
}

/// Runs an UPDATE of one movie; fails when there is no such movie.
func updateMovie(_ options: DatabaseOptions, id: Int64, sql: String, arguments: StatementArguments) async throws {
    let queue = try options.open()
    let changed = try await queue.write { db in
        try db.execute(sql: sql, arguments: arguments)
        return db.changesCount
    }
    guard changed == 1 else { throw ValidationError("no movie \(id)") }
}

struct Watch: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Mark a movie watched (or not).")
    @OptionGroup var options: DatabaseOptions
    @Argument var id: Int64
    @Flag(name: .long, help: "Mark it not watched.") var unwatch = false

    func run() async throws {
        try await reportingErrors("movies") {
            try await updateMovie(options, id: id, sql: "UPDATE movies SET watched = :watched WHERE id = :id", arguments: ["watched": !unwatch, "id": id])
            print(unwatch ? "unwatched \(id)" : "watched \(id)")
        }
    }
}

struct Like: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Set how much you like a movie, 0 to 3.")
    @OptionGroup var options: DatabaseOptions
    @Argument var id: Int64
    @Argument var likes: Int

    func validate() throws {
        guard (0...3).contains(likes) else { throw ValidationError("likes go from 0 to 3") }
    }

    func run() async throws {
        try await reportingErrors("movies") {
            try await updateMovie(options, id: id, sql: "UPDATE movies SET likes = ? WHERE id = ?", arguments: [likes, id])
            print("\(id): \(String(repeating: "*", count: likes))")
        }
    }
}

struct Delete: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Delete a movie.")
    @OptionGroup var options: DatabaseOptions
    @Argument var id: Int64

    func run() async throws {
        try await reportingErrors("movies") {
            try await updateMovie(options, id: id, sql: "DELETE FROM movies WHERE id = ?", arguments: [id])
            print("deleted \(id)")
        }
    }
}

struct Filter: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Movies of a category and/or year, with bound parameters.")
    @OptionGroup var options: DatabaseOptions
    @Option(name: .long, help: "A genre, such as Drama.") var category: String?
    @Option(name: .long) var year: Int?
    @Option(name: .long) var limit = 50

    func run() async throws {
        try await reportingErrors("movies") {
            let queue = try options.open()
            let (category, year, limit) = (self.category, self.year, self.limit)
            let lines = try await queue.read { db in
                try Row.fetchAll(db, sql: """
                    SELECT * FROM movies
                    WHERE (:category IS NULL OR ', ' || genre || ',' LIKE '%, ' || :category || ',%')
                      AND (:year IS NULL OR year = :year)
                    ORDER BY year, title LIMIT :limit
                    """, arguments: ["category": category, "year": year, "limit": limit]).map(describe)
            }
            lines.forEach { print($0) }
        }
    }
}
