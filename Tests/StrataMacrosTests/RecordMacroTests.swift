import Foundation
import StrataMacros
import StrataTestHelpers
import Testing

// Records written with `@Record`, against real SQLite: every API that a
// `Codable` record has, and the two kinds side by side on one table.

enum Genre: String, Codable {
    case drama, comedy, scienceFiction = "science-fiction"
}

struct Poster: Codable, Equatable {
    var url: String
    var width: Int
}

@Record(table: "movies")
struct Movie: Equatable {
    var id: Int64?
    @Unique var title: String
    var year: Int
    var genre: Genre
    var rating: Double?
    var posters: [Poster] = []
    var tags: Set<String>? = nil
    @Ignored var isSelected = false
}

/// The same table, as a plain `Codable` record: the two kinds store alike.
struct CodableMovie: DatabaseRecord, Equatable {
    var id: Int64?
    var title: String
    var year: Int
    var genre: Genre
    var rating: Double?
    var posters: [Poster] = []
    var tags: Set<String>? = nil
    static let databaseTableName = "movies"
}

@Record(table: "authors")
final class Author {
    @Column("ID") var id: Int64?
    var name: String
    var born: Date?

    init(name: String, born: Date? = nil) {
        self.name = name
        self.born = born
    }
}

@Record(table: "books")
struct Book: Equatable {
    var id: Int64?
    var title: String
    @ForeignKey(Author.self, onDelete: .cascade) var authorID: Int64
}

@Record(table: "memberships", uniqueKeys: [["role", "since"]])
struct Membership: Equatable {
    @PrimaryKey var groupID: Int64
    @PrimaryKey var userID: Int64
    var role: String
    var since: Int
}

@Record(table: "log", withoutPrimaryKey: true)
struct LogLine: Equatable {
    var message: String
    var level: Int
}

@Suite struct RecordMacroTests {
    func makeDatabase() throws -> Database {
        let db = try Database()
        try db.create(table: Movie.self)
        return db
    }

    @Test func theTableComesFromTheType() throws {
        let db = try makeDatabase()
        let sql = try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = 'movies'")
        #expect(sql == #"CREATE TABLE "movies" ("id" INTEGER PRIMARY KEY, "title" TEXT NOT NULL, "year" INTEGER NOT NULL, "genre" TEXT NOT NULL, "rating" REAL, "posters" TEXT NOT NULL, "tags" TEXT, UNIQUE ("title"))"#)
        // As the Codable record's schema, but for the unique key.
        #expect(try Movie.createTableSQL().replacingOccurrences(of: #", UNIQUE ("title")"#, with: "") == CodableMovie.createTableSQL())
    }

    @Test func insertAssignsTheKeyAndFetchReadsItBack() throws {
        let db = try makeDatabase()
        var alien = Movie(id: nil, title: "Alien", year: 1979, genre: .scienceFiction, rating: 8.5, posters: [Poster(url: "a.png", width: 300)])
        alien.isSelected = true
        try alien.insert(db)
        #expect(alien.id == 1)
        var heat = Movie(id: nil, title: "Heat", year: 1995, genre: .drama, rating: nil, tags: ["crime"])
        try heat.insert(db)
        #expect(heat.id == 2)

        let movies = try Movie.fetchAll(db)
        alien.isSelected = false  // not stored: a fetched record has the default
        #expect(movies == [alien, heat])
        #expect(try Movie.fetchOne(db, key: 2) == heat)
        #expect(try Movie.fetchCount(db) == 2)
        #expect(try Movie.fetchOne(db, key: 3) == nil)
    }

    @Test func valuesAreStoredAsACodableRecordStoresThem() throws {
        let db = try makeDatabase()
        _ = try Movie(id: nil, title: "Alien", year: 1979, genre: .scienceFiction, rating: nil,
                      posters: [Poster(url: "a.png", width: 300)], tags: nil).inserted(db)
        let row = try #require(try Row.fetchOne(db, sql: "SELECT genre, rating, posters, tags, typeof(year) AS t FROM movies"))
        #expect(try row["genre"] as String == "science-fiction")  // the raw value
        #expect(try row["rating"] as String? == nil)              // NULL
        #expect(try row["posters"] as String == #"[{"url":"a.png","width":300}]"#)
        #expect(try row["tags"] as String? == nil)
        #expect(try row["t"] as String == "integer")

        // The same record, inserted as a Codable record, stores the same values.
        _ = try CodableMovie(id: nil, title: "Alien 2", year: 1979, genre: .scienceFiction, rating: nil,
                             posters: [Poster(url: "a.png", width: 300)], tags: nil).inserted(db)
        let stored = try Row.fetchAll(db, sql: "SELECT year, genre, rating, posters, tags FROM movies ORDER BY id")
        #expect(stored[0].databaseValues == stored[1].databaseValues)
    }

    @Test func codableAndGeneratedRecordsReadEachOthersRows() throws {
        let db = try makeDatabase()
        var written = CodableMovie(id: nil, title: "Heat", year: 1995, genre: .drama, rating: 8.3, posters: [Poster(url: "h.png", width: 10)], tags: ["crime", "la"])
        try written.insert(db)
        let read = try #require(try Movie.fetchOne(db, key: written.id!))
        #expect(read.title == "Heat" && read.genre == .drama && read.rating == 8.3 && read.posters == written.posters && read.tags == ["crime", "la"])

        var generated = Movie(id: nil, title: "Ran", year: 1985, genre: .drama, rating: nil, tags: nil)
        try generated.insert(db)
        let back = try #require(try CodableMovie.fetchOne(db, key: generated.id!))
        #expect(back == CodableMovie(id: generated.id, title: "Ran", year: 1985, genre: .drama, rating: nil, posters: [], tags: nil))
    }

    @Test func updateSaveUpsertAndDelete() throws {
        let db = try makeDatabase()
        var movie = Movie(id: nil, title: "Alien", year: 1979, genre: .scienceFiction)
        try movie.save(db)  // no key: inserted
        #expect(movie.id == 1)
        movie.year = 1980
        try movie.update(db)
        #expect(try Movie.fetchOne(db, key: 1)?.year == 1980)

        let old = movie
        movie.rating = 9
        #expect(try movie.updateChanges(db, from: old))
        #expect(try !movie.updateChanges(db, from: movie))
        #expect(try Movie.fetchOne(db, key: 1)?.rating == 9)

        movie.title = "Alien (1979)"
        try movie.save(db)  // a key that exists: updated
        #expect(try Movie.fetchAll(db).map(\.title) == ["Alien (1979)"])

        var replacement = Movie(id: 1, title: "Aliens", year: 1986, genre: .scienceFiction)
        try replacement.upsert(db)
        #expect(try Movie.fetchOne(db, key: 1)?.title == "Aliens")
        #expect(try replacement.exists(db))

        let missing = Movie(id: 42, title: "Nope", year: 2000, genre: .comedy)
        #expect(throws: RecordError.self) { try missing.update(db) }
        #expect(try replacement.delete(db))
        #expect(try !replacement.delete(db))
        #expect(try Movie.fetchCount(db) == 0)
    }

    @Test func typedQueriesThroughTheGeneratedColumns() throws {
        let db = try makeDatabase()
        for (title, year, genre) in [("Heat", 1995, Genre.drama), ("Alien", 1979, .scienceFiction), ("Fargo", 1996, .comedy), ("Brazil", 1985, .comedy)] {
            _ = try Movie(id: nil, title: title, year: year, genre: genre).inserted(db)
        }
        #expect(try Movie.filter { $0.year > 1990 }.order(\.title).fetchAll(db).map(\.title) == ["Fargo", "Heat"])
        #expect(try Movie.order(\.year).fetchAll(db).map(\.title) == ["Alien", "Brazil", "Heat", "Fargo"])
        #expect(try Movie.order { $0.year.desc }.limit(2).fetchAll(db).map(\.title) == ["Fargo", "Heat"])
        #expect(try Movie.filter { $0.title.like("%a%") }.filter { $0.year < 1990 }.fetchCount(db) == 2)
        #expect(try Movie.all().filter { $0.rating == nil }.fetchCount(db) == 4)
        let year: Column<Int> = Movie.columns.year
        #expect(year.columnName == "year")
        #expect(try Movie.fetchAll(db, Movie.table.filter(Movie.columns.title == "Heat")).count == 1)
        #expect(try Movie.filter { $0.year > 1990 }.deleteAll(db) == 2)
        #expect(try Movie.fetchCount(db) == 2)
    }

    @Test func aRenamedColumnAndAClassKeepTheirObject() throws {
        let db = try Database()
        try db.create(table: Author.self)
        let sql = try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = 'authors'")
        #expect(sql == #"CREATE TABLE "authors" ("ID" INTEGER PRIMARY KEY, "name" TEXT NOT NULL, "born" TEXT)"#)
        let author = Author(name: "Le Guin", born: Date(timeIntervalSince1970: 0))
        try author.insert(db)
        #expect(author.id == 1)  // written into the same object
        let fetched = try #require(try Author.fetchOne(db, key: 1))
        #expect(fetched.name == "Le Guin" && fetched.born == Date(timeIntervalSince1970: 0))
        #expect(try Author.filter { $0.id == 1 }.fetchCount(db) == 1)
        author.name = "Ursula K. Le Guin"
        try author.save(db)
        #expect(try String.fetchOne(db, sql: "SELECT name FROM authors WHERE ID = 1") == "Ursula K. Le Guin")
    }

    @Test func foreignKeysAndAssociations() throws {
        let db = try Database()
        try db.execute(sql: "PRAGMA foreign_keys = ON")
        try db.create(table: Author.self)
        try db.create(table: Book.self)
        let sql = try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = 'books'")
        #expect(sql?.contains(#"FOREIGN KEY ("authorID") REFERENCES "authors" ("ID") ON DELETE CASCADE"#) == true)
        let author = Author(name: "Calvino")
        try author.insert(db)
        let book = try Book(id: nil, title: "Invisible Cities", authorID: author.id!).inserted(db)
        _ = try Book(id: nil, title: "If on a winter's night a traveler", authorID: author.id!).inserted(db)

        let writer = Book.belongsTo(Author.self, foreignKey: "authorID")
        #expect(try writer.fetchOne(db, for: book)?.name == "Calvino")
        let books = Author.hasMany(Book.self, foreignKey: "authorID")
        #expect(try books.fetchAll(db, for: author).map(\.title).sorted() == ["If on a winter's night a traveler", "Invisible Cities"])

        #expect(throws: SQLiteError.self) { try Book(id: nil, title: "Orphan", authorID: 99).inserted(db) }
        #expect(try author.delete(db))
        #expect(try Book.fetchCount(db) == 0)  // cascaded
    }

    @Test func compositeKeysAndUniqueGroups() throws {
        let db = try Database()
        try db.create(table: Membership.self)
        let sql = try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE name = 'memberships'")
        #expect(sql?.contains(#"PRIMARY KEY ("groupID", "userID")"#) == true)
        #expect(sql?.contains(#"UNIQUE ("role", "since")"#) == true)
        var membership = Membership(groupID: 1, userID: 2, role: "owner", since: 2020)
        try membership.insert(db)
        membership.role = "member"
        try membership.update(db)
        #expect(try Membership.fetchOne(db, keys: ["groupID": 1, "userID": 2])?.role == "member")
        #expect(throws: SQLiteError.self) { try Membership(groupID: 1, userID: 2, role: "x", since: 1).inserted(db) }
        #expect(try membership.delete(db))
    }

    @Test func aRecordWithoutPrimaryKeyIsIdentifiedByRowID() throws {
        let db = try Database()
        try db.create(table: LogLine.self)
        var line = LogLine(message: "started", level: 1)
        try line.insert(db)
        try line.insert(db)
        #expect(try LogLine.fetchAll(db) == [line, line])
        #expect(throws: RecordError.self) { try line.save(db) }
        #expect(LogLine.databasePrimaryKey.isEmpty)
    }

    @Test func rowsReadBySelectionOrderAndDetachedRows() throws {
        let db = try makeDatabase()
        _ = try Movie(id: nil, title: "Alien", year: 1979, genre: .scienceFiction, rating: 8.5).inserted(db)
        // Columns in another order, a missing optional column: read by name.
        let reordered = try Movie.fetchAll(db, sql: "SELECT year, title, genre, id, posters FROM movies")
        #expect(reordered.map(\.title) == ["Alien"] && reordered[0].rating == nil && reordered[0].year == 1979)
        // One cursor after another, with other layouts, through one reader.
        let read = Movie.makeRowReader()
        for sql in ["SELECT * FROM movies", "SELECT posters, genre, year, title, id, rating, tags FROM movies"] {
            let rows = try Row.fetchCursor(db, sql: sql)
            while let row = try rows.next() { #expect(try read(row).rating == 8.5) }
        }
        // A copied row.
        let copy = try #require(try Row.fetchOne(db, sql: "SELECT * FROM movies"))
        #expect(try Movie.makeRowReader()(LiveRow(copy)).title == "Alien")
    }

    @Test func rowsThatDoNotFitAreClearErrors() throws {
        let db = try makeDatabase()
        _ = try Movie(id: nil, title: "Alien", year: 1979, genre: .scienceFiction).inserted(db)
        #expect {
            _ = try Movie.fetchAll(db, sql: "SELECT id, title, genre, posters FROM movies")
        } throws: { error in
            let error = error as? DatabaseDecodingError
            return error?.reason == .columnNotFound && error?.column == "year"
        }
        try db.execute(sql: "UPDATE movies SET year = 'last year'")
        #expect {
            _ = try Movie.fetchAll(db)
        } throws: { error in
            let error = error as? DatabaseDecodingError
            return error?.reason == .valueMismatch && error?.column == "year" && error?.columnIndex == 2
        }
        try db.execute(sql: "UPDATE movies SET year = 1979, genre = 'western'")
        #expect {
            _ = try Movie.fetchAll(db)
        } throws: { error in
            (error as? DatabaseDecodingError)?.column == "genre"
        }
        try db.execute(sql: "UPDATE movies SET genre = 'drama', posters = '[{\"url\": 1}]'")
        #expect {
            _ = try Movie.fetchAll(db)
        } throws: { error in
            (error as? DatabaseDecodingError)?.reason == .invalidJSON
        }
    }

    @Test func aStaleRowIsRefused() throws {
        let db = try makeDatabase()
        _ = try Movie(id: nil, title: "A", year: 1, genre: .drama).inserted(db)
        _ = try Movie(id: nil, title: "B", year: 2, genre: .drama).inserted(db)
        let rows = try Row.fetchCursor(db, sql: "SELECT * FROM movies")
        let first = try #require(try rows.next())
        _ = try rows.next()
        #expect(throws: SQLiteError.self) { try Movie.makeRowReader()(first) }
    }

    @Test func insertsManyRecordsWithOneStatementAndNamesTheValuesOnFailure() throws {
        let db = try makeDatabase()
        let movies = try Movie.insertAll(db, (1...100).map { Movie(id: nil, title: "M\($0)", year: 1900 + $0, genre: .drama) })
        #expect(movies.map(\.id) == (1...100).map { Int64($0) })
        #expect {
            try Movie(id: nil, title: "M1", year: 2000, genre: .drama).inserted(db)
        } throws: { error in
            let error = error as? SQLiteError
            return error?.code.primaryResultCode == .constraint && error?.arguments != nil
        }
        #expect(try Movie.fetchCount(db) == 100)  // nothing lost
    }

    @Test func observationSeesGeneratedRecords() async throws {
        let queue = try DatabaseQueue(path: try makeTemporaryPath())
        try await queue.write { db in try db.create(table: Movie.self) }
        let observation = ValueObservation { db in try Movie.order(\.title).fetchAll(db).map(\.title) }
        let log = ValueLog<[String]>()
        let task = Task {
            for try await titles in observation.values(in: queue) { log.append(titles) }
        }
        try await log.wait(for: 1)
        try await queue.write { db in _ = try Movie(id: nil, title: "Heat", year: 1995, genre: .drama).inserted(db) }
        try await log.wait(for: 2)
        task.cancel()
        #expect(log.values.prefix(2) == [[], ["Heat"]])
    }

    @Test func tablesAreCreatedOnFirstUseWhenAsked() throws {
        let db = try Database()
        _ = try Lazy(id: nil, note: "x").inserted(db)
        #expect(try Lazy.fetchAll(db).map(\.note) == ["x"])
    }
}

@Record
struct Lazy {
    var id: Int?
    var note: String
    static let databaseCreatesTableOnFirstUse = true
}
