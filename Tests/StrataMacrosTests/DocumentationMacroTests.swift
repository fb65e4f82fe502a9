import Foundation
import StrataMacros
import Testing

// The Records article's `@Record` examples, compiled and run; the article
// check in StrataTests' DocumentationTests finds each line here.

@Record(table: "films")
struct Film {
    var id: Int64?          // INTEGER PRIMARY KEY, filled in on insert
    var title: String       // TEXT NOT NULL
    var year: Int?          // INTEGER, NULL allowed
    var tags: [String] = [] // nested Codable: stored as JSON text
}

enum RecordsArticleMacro {
    @Record(table: "movies")
    struct Movie: Equatable {
        enum Genre: String, Codable { case drama, comedy, thriller }
        enum Format: String, Codable { case film, digital }

        var id: Int64?                   // INTEGER PRIMARY KEY: nil until inserted
        @Unique var title: String        // TEXT NOT NULL UNIQUE
        var year: Int                    // INTEGER NOT NULL
        var genre: Genre                 // TEXT: the raw value
        var rating: Double?              // REAL, NULL-able
        var format: Format? = nil        // TEXT: the raw value or NULL
        var cast: [String] = []          // nested Codable: JSON text
        @Ignored var isSelected = false  // not stored
    }

    @Record(table: "books")
    struct Book {
        var id: Int64?
        var title: String
        @ForeignKey(Movie.self, onDelete: .cascade) var movieID: Int64
    }

    @Record(table: "credits")
    struct Credit {
        @PrimaryKey var movieID: Int64
        @PrimaryKey var person: String
        @Column("role_name") var role: String
    }
}

@Suite struct DocumentationMacroTests {
    @Test func readmeRecords() throws {
        let store = try DatabaseQueue()
        let films = try store.write { db in
            try db.create(table: Film.self)
            var film = Film(id: nil, title: "Heat", year: 1995, tags: ["crime"])
            try film.insert(db)     // film.id == 1
            return try Film.filter { $0.year > 1990 }.order(\.title).fetchAll(db)
        }
        #expect(films.map(\.id) == [1] && films.map(\.tags) == [["crime"]])
    }

    @Test func recordsArticle() throws {
        typealias Movie = RecordsArticleMacro.Movie
        typealias Book = RecordsArticleMacro.Book
        typealias Credit = RecordsArticleMacro.Credit

        let db = try Database()
        try db.create(table: Movie.self)
        var heat = Movie(id: nil, title: "Heat", year: 1995, genre: .thriller, rating: 8.3)
        try heat.insert(db)                  // heat.id is now set
        let recent = try Movie.filter { $0.year > 1990 }.order(\.title).fetchAll(db)
        let best = try Movie.order { $0.rating.desc }.limit(10).fetchAll(db)
        #expect(heat.id == 1 && recent == [heat] && best == [heat])
        var up = Movie(id: nil, title: "Up", year: 2009, genre: .comedy, rating: 8.3, format: .digital)
        try up.insert(db)
        let thrillers = try Movie.filter { $0.genre == .thriller }.fetchAll(db)
        let formatUnknown = try Movie.filter { $0.format == nil }.fetchAll(db)
        #expect(thrillers == [heat] && formatUnknown == [heat])

        try db.create(table: Book.self)
        try db.create(table: Credit.self)
        _ = try Book(id: nil, title: "Heat: the novel", movieID: heat.id!).inserted(db)
        _ = try Credit(movieID: heat.id!, person: "Michael Mann", role: "director").inserted(db)
        #expect(try String.fetchOne(db, sql: "SELECT role_name FROM credits") == "director")
        #expect(Credit.databasePrimaryKey == ["movieID", "person"])
    }
}
