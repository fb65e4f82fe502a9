import Foundation
import Strata
import StrataTestHelpers
import Testing

private let movies = SQLTable("movies")
private let id = Column<Int64>("id")
private let title = Column<String>("title")
private let year = Column<Int>("year")
private let likes = Column<Int>("likes")
private let watched = Column<Bool>("watched")
private let url = Column<String?>("url")

@Suite struct SQLTableWritesTests {
    func makeMovies(_ storage: TestStorage) throws -> Database {
        let db = try storage.makeDatabase()
        try db.run(movies.create { t in
            t.column(id, primaryKey: .autoincrement)
            t.column(title, unique: true)
            t.column(year)
            t.column(likes, defaultValue: 0)
            t.column(watched, defaultValue: false)
            t.column(url)
        })
        return db
    }

    @Test(arguments: TestStorage.allCases)
    func insertsWithSettersAndReturnsTheRowID(_ storage: TestStorage) throws {
        let db = try makeMovies(storage)
        let insert = movies.insert(title <- "Heat", year <- 1995)
        #expect(insert.sqlLiteral.sql == "INSERT INTO \"movies\" (\"title\", \"year\") VALUES (?, ?)")
        #expect(try db.run(insert) == 1)
        #expect(try db.run(movies.insert(title <- "Alien", year <- 1979, url <- "https://example.com")) == 2)
        let row = try #require(try movies.filter(id == 1).fetchOne(db))
        #expect(try row[likes] == 0 && row[watched] == false && row[url] == nil)
    }

    /// Two tables named `café`, with a precomposed `é` and with `e` and a
    /// combining accent: one name to Swift's `==`, two tables to SQLite. A
    /// typed insert into one does not reuse the other's statement.
    @Test func typedInsertsReachTheTableTheirNameSpellsInBytes() throws {
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        let db = try Database()
        try db.execute(sql: "CREATE TABLE \"\(composed)\"(v INTEGER); CREATE TABLE \"\(decomposed)\"(v INTEGER)")
        let v = Column<Int>("v")
        for round in 0..<2 {
            try db.run(SQLTable(composed).insert(v <- 10 + round))
            try db.run(SQLTable(decomposed).insert(v <- 20 + round))
        }
        #expect(try Int.fetchAll(db, sql: "SELECT v FROM \"\(composed)\" ORDER BY v") == [10, 11])
        #expect(try Int.fetchAll(db, sql: "SELECT v FROM \"\(decomposed)\" ORDER BY v") == [20, 21])
    }

    /// Repeated plain inserts reuse one statement: each row keeps its own
    /// values, of every kind, and a failed one names its values.
    @Test func repeatedInsertsBindEachRowsValues() throws {
        let db = try Database()
        let values = SQLTable("kinds")
        let int = Column<Int>("int"), text = Column<String?>("text"), real = Column<Double>("real")
        let blob = Column<Data>("blob"), day = Column<Date>("day"), big = Column<UInt64>("big")
        try db.run(values.create { t in
            t.column(int, unique: true); t.column(text); t.column(real); t.column(blob); t.column(day); t.column(big)
        })
        let epoch = Date(timeIntervalSince1970: 0)
        for index in 0..<3 {
            try db.run(values.insert(
                int <- index, text <- (index == 1 ? nil : "t\(index)"), real <- Double(index) / 2,
                blob <- Data([UInt8(index)]), day <- epoch.addingTimeInterval(Double(index) * 86_400), big <- UInt64(index)))
        }
        let rows = try values.order(int).fetchAll(db)
        #expect(try rows.map { try $0[text] } == ["t0", nil, "t2"])
        #expect(try rows.map { try $0[real] } == [0, 0.5, 1])
        #expect(try rows.map { try $0[blob] } == [Data([0]), Data([1]), Data([2])])
        #expect(try String.fetchAll(db, sql: "SELECT day FROM kinds ORDER BY int") == ["1970-01-01 00:00:00.000", "1970-01-02 00:00:00.000", "1970-01-03 00:00:00.000"])
        // An unsigned value SQLite cannot hold is refused, not stored as REAL.
        expectError(.mismatch) {
            try db.run(values.insert(int <- 9, text <- "x", real <- 0, blob <- Data(), day <- epoch, big <- UInt64.max))
        }
        let duplicate = try #require(throws: SQLiteError.self) {
            try db.run(values.insert(int <- 2, text <- "dup", real <- 0, blob <- Data(), day <- epoch, big <- 0))
        }
        #expect(duplicate.code == .constraintUnique)
        #expect(duplicate.arguments?.description.contains("'dup'") == true)
        #expect(try values.fetchCount(db) == 3)
    }

    /// Plain inserts alternating between tables and between column lists
    /// each use the statement of their own table and columns.
    @Test func insertsAlternatingTablesAndColumns() throws {
        let db = try makeMovies(.memory)
        let notes = SQLTable("notes"), body = Column<String>("body")
        try db.run(notes.create { t in t.column(body) })
        try db.run(movies.insert(title <- "Heat", year <- 1995))
        try db.run(notes.insert(body <- "first"))
        try db.run(movies.insert(title <- "Alien", likes <- 4, year <- 1979))
        try db.run(movies.insert(title <- "Ronin", year <- 1998))
        try db.run(notes.insert(body <- "second"))
        try db.run(movies.insert(year <- 2009, title <- "Up"))
        #expect(try Row.fetchAll(db, sql: "SELECT title, year, likes FROM movies ORDER BY id").map(\.databaseValues) == [
            ["Heat", 1995, 0], ["Alien", 1979, 4], ["Ronin", 1998, 0], ["Up", 2009, 0],
        ])
        #expect(try String.fetchAll(db, sql: "SELECT body FROM notes ORDER BY rowid") == ["first", "second"])
    }

    /// A plain insert reuses the statement of the previous one when it sets
    /// the same columns, whether its columns are plain, qualified, typed
    /// differently or have names too long to be interned, and leaves it for
    /// SQL of its own when a setter is an expression.
    @Test func insertsOfTheSameColumnsInAnyFormWriteTheirOwnValues() throws {
        let db = try makeMovies(.memory)
        let optionalYear = Column<Int?>("year")
        let long = Column<String>(String(repeating: "n", count: 300))
        try db.run(movies.insert(title <- "Heat", year <- 1995))
        // An expression where the cached statement binds a value.
        try db.run(movies.insert(title <- "Alien", year <- SQLExpression<Int>(literal: "1978 + 1")))
        // The same columns, qualified by their table or typed as optional.
        try db.run(movies.insert(movies[title] <- "Ronin", movies[year] <- 1998))
        try db.run(movies.insert(title <- "Up", optionalYear <- 2009))
        try db.run(movies.insert(movies[title] <- "Big", year <- 1988))
        try db.run(movies.insert(title <- "Fargo", year <- 1996))
        #expect(try Row.fetchAll(db, sql: "SELECT title, year FROM movies ORDER BY id").map(\.databaseValues) == [
            ["Heat", 1995], ["Alien", 1979], ["Ronin", 1998], ["Up", 2009], ["Big", 1988], ["Fargo", 1996],
        ])
        // The expression did not stay in the statement the plain inserts use.
        #expect(try Int.fetchAll(db, sql: "SELECT year FROM movies WHERE title IN ('Ronin', 'Fargo') ORDER BY id") == [1998, 1996])

        let notes = SQLTable("notes")
        try db.run(notes.create { t in t.column(long) })
        for text in ["first", "second"] {
            try db.run(notes.insert(long <- text))
        }
        #expect(try String.fetchAll(db, sql: "SELECT \(quoteIdentifier(long.columnName!)) FROM notes ORDER BY rowid") == ["first", "second"])
        #expect((long <- "x").columnName == long.columnName)
        #expect((movies[title] <- "x").columnName == "title" && (title <- "x").columnName == "title")
    }

    @Test(arguments: TestStorage.allCases)
    func preparedInsertsTakeTheColumnsTypes(_ storage: TestStorage) throws {
        let db = try makeMovies(storage)
        let insertMovie = try db.prepareInsert(into: movies, title, year, url)
        #expect(insertMovie.statement.sql == "INSERT INTO \"movies\" (\"title\", \"year\", \"url\") VALUES (?, ?, ?)")
        let rowIDs = try db.transaction {
            [try insertMovie.run("Heat", 1995, nil), try insertMovie.run("Ronin", 1998, "https://example.com/ronin")]
        }
        #expect(rowIDs == [1, 2])
        #expect(try Row.fetchAll(db, sql: "SELECT id, title, year, likes, url FROM movies ORDER BY id").map(\.databaseValues) == [
            [1, "Heat", 1995, 0, .null], [2, "Ronin", 1998, 0, "https://example.com/ronin"],
        ])
        // A constraint error names the values and keeps what was inserted.
        let duplicate = try #require(throws: SQLiteError.self) { try insertMovie.run("Heat", 2000, nil) }
        #expect(duplicate.code == .constraintUnique)
        #expect(duplicate.arguments?.description == "['Heat', 2000, NULL]")
        #expect(try movies.fetchCount(db) == 2)
        // INSERT OR IGNORE skips the row; the rowid stays the last inserted.
        let insertOrIgnore = try db.prepareInsert(into: movies, or: .ignore, title, year)
        try insertOrIgnore.run("Heat", 2001)
        try insertOrIgnore.run("Alien", 1979)
        #expect(try String.fetchAll(db, sql: "SELECT title FROM movies ORDER BY id") == ["Heat", "Ronin", "Alien"])
        // Only columns, and only existing ones.
        let refused = try #require(throws: SQLiteError.self) { try db.prepareInsert(into: movies, year + 1) }
        #expect(refused.code == .misuse)
        #expect(refused.message == "prepareInsert takes columns, not the expression (\"year\" + ?)")
        expectError(.error) { try db.prepareInsert(into: movies, Column<Int>("stars")) }
        expectError(.error) { try db.prepareInsert(into: SQLTable("nowhere"), title) }
    }

    @Test func insertOrReplaceAndIgnore() throws {
        let db = try makeMovies(.memory)
        try db.run(movies.insert(title <- "Heat", year <- 1995))
        expectError(.constraintUnique) { try db.run(movies.insert(title <- "Heat", year <- 2000)) }
        try db.run(movies.insert(or: .ignore, title <- "Heat", year <- 2001))
        #expect(try Int.fetchOne(db, movies.select(year)) == 1995)
        #expect(movies.insert(or: .replace, title <- "Heat").sqlLiteral.sql.hasPrefix("INSERT OR REPLACE INTO"))
        try db.run(movies.insert(or: .replace, title <- "Heat", year <- 2002))
        #expect(try Int.fetchAll(db, movies.select(year)) == [2002])
    }

    @Test func insertsManyRowsInOneSavepointWithOneStatement() throws {
        let db = try makeMovies(.temporaryFile)
        let rows = (1...500).map { movies.insert(title <- "Movie \($0)", year <- 1900 + $0 % 100) }
        #expect(try db.run(rows) == 500)
        #expect(try movies.fetchCount(db) == 500)
        // All or nothing: a duplicate title in the batch inserts none of it.
        let batch = [movies.insert(title <- "New", year <- 2000), movies.insert(title <- "Movie 1", year <- 2000)]
        expectError(.constraintUnique) { try db.run(batch) }
        #expect(try movies.fetchCount(db) == 500)
        #expect(!db.isInsideTransaction)
    }

    @Test func upsertsOnConflict() throws {
        let db = try makeMovies(.memory)
        try db.run(movies.insert(title <- "Heat", year <- 1995, likes <- 1))
        let bump = movies.insert(title <- "Heat", year <- 1995, likes <- 1).onConflict(title, update: likes += 1)
        #expect(bump.sqlLiteral.sql == """
            INSERT INTO "movies" ("title", "year", "likes") VALUES (?, ?, ?) ON CONFLICT ("title") DO UPDATE SET "likes" = ("likes" + ?)
            """)
        try db.run(bump)
        try db.run(bump)
        #expect(try Int.fetchOne(db, movies.select(likes)) == 3)
        // Without setters: every other column takes the new values.
        try db.run(movies.insert(title <- "Heat", year <- 1996, likes <- 9).onConflict(title))
        #expect(try movies.fetchOne(db).map { [try $0[year], try $0[likes]] } == [1996, 9])
        // excluded(…) names the value the INSERT tried to write.
        try db.run(movies.insert(title <- "Heat", year <- 1, likes <- 5).onConflict(title, update: likes <- likes + excluded(likes)))
        #expect(try Int.fetchOne(db, movies.select(likes)) == 14)
        try db.run(movies.insert(title <- "Heat", year <- 1).onConflictDoNothing(title))
        try db.run(movies.insert(title <- "Heat", year <- 1).onConflictDoNothing())
        #expect(try movies.fetchCount(db) == 1)
        #expect(try Int.fetchOne(db, movies.select(year)) == 1996)
    }

    @Test(arguments: TestStorage.allCases)
    func updatesWithSettersAndCompoundSetters(_ storage: TestStorage) throws {
        let db = try makeMovies(storage)
        try db.run([1995, 1979, 1985].map { movies.insert(title <- "Movie \($0)", year <- $0) })
        let update = movies.filter(year > 1980).update(likes += 2, watched <- true)
        #expect(update.sqlLiteral.sql == "UPDATE \"movies\" SET \"likes\" = (\"likes\" + ?), \"watched\" = ? WHERE (\"year\" > ?)")
        #expect(try db.run(update) == 2)
        #expect(try db.run(movies.filter(title == "Movie 1995").update(likes -= 1, year <- year + 1)) == 1)
        #expect(try db.run(movies.update(likes *= 10)) == 3)
        #expect(try Int.fetchAll(db, movies.select(likes).order(id)) == [10, 0, 20])
        #expect(try Int.fetchAll(db, movies.select(year).order(id)) == [1996, 1979, 1985])
        #expect(try db.run(movies.update(title += "!")) == 3)
        #expect(try String.fetchOne(db, movies.select(title).filter(id == 2)) == "Movie 1979!")
    }

    @Test func deletesFilteredRowsOrAll() throws {
        let db = try makeMovies(.memory)
        try db.run((1...5).map { movies.insert(title <- "M\($0)", year <- 2000 + $0) })
        let delete = movies.filter(year >= 2004).delete()
        #expect(delete.sqlLiteral.sql == "DELETE FROM \"movies\" WHERE (\"year\" >= ?)")
        #expect(try db.run(delete) == 2)
        #expect(try db.run(movies.delete()) == 3)
        #expect(try movies.fetchCount(db) == 0)
    }

    @Test func updatesAndDeletesOnlyTheRowsAnOrderedLimitedOrJoinedQuerySelects() throws {
        let db = try makeMovies(.memory)
        try db.run((1...5).map { movies.insert(title <- "M\($0)", year <- 2000 + $0) })
        let oldest = movies.order(year).limit(2)
        #expect(oldest.delete().sqlLiteral.sql == """
            DELETE FROM "movies" WHERE rowid IN (SELECT "movies".rowid FROM "movies" ORDER BY "year" LIMIT ?)
            """)
        #expect(try db.run(oldest.delete()) == 2)
        #expect(try db.run(movies.order(year.desc).limit(1).update(likes <- 9)) == 1)
        #expect(try Int.fetchAll(db, movies.select(likes).order(year)) == [0, 0, 9])
        let favorites = SQLTable("favorites")
        let movieID = Column<Int64>("movieID")
        try db.run(favorites.create { t in t.column(movieID) })
        try db.run(favorites.insert(movieID <- 3))
        let favorite = movies.join(favorites, on: movies[id] == favorites[movieID])
        #expect(try db.run(favorite.update(watched <- true)) == 1)
        #expect(try Int64.fetchAll(db, movies.select(id).filter(watched)) == [3])
    }

    @Test func returnsRowsFromWrites() throws {
        let db = try makeMovies(.memory)
        let inserted = try #require(try Row.fetchOne(db, movies.insert(title <- "Heat", year <- 1995).returning(id, likes)))
        #expect(try inserted[id] == 1 && inserted[likes] == 0)
        let updated = try Row.fetchAll(db, movies.update(likes <- 5).returning(title, likes))
        #expect(try updated.map { try $0[likes] } == [5])
        let deleted = try String.fetchAll(db, movies.delete().returning(title))
        #expect(deleted == ["Heat"])
    }

    @Test(arguments: TestStorage.allCases)
    func hostileStringsRoundTripAsPlainData(_ storage: TestStorage) throws {
        let db = try makeMovies(storage)
        let hostile = "Robert'); DROP TABLE movies;--"
        let quoted = "It's \"quoted\" ; -- not a comment"
        try db.run(movies.insert(title <- hostile, year <- 2000))
        try db.run(movies.insert(title <- quoted, year <- 2001))
        #expect(try String.fetchAll(db, movies.select(title).filter(title == hostile)) == [hostile])
        #expect(try db.run(movies.filter(title == hostile).update(title <- hostile + "2", url <- quoted)) == 1)
        #expect(try String.fetchOne(db, movies.select(url).filter(title == hostile + "2")) == quoted)
        #expect(try String.fetchAll(db, movies.select(title).filter(title.like("%DROP TABLE%"))) == [hostile + "2"])
        try db.execute(literal: "UPDATE movies SET likes = \(7) WHERE title = \(quoted)")
        #expect(try Int.fetchOne(db, literal: "SELECT likes FROM movies WHERE title = \(quoted)") == 7)
        #expect(try db.tableExists("movies"))
        #expect(try movies.fetchCount(db) == 2)
    }
}
