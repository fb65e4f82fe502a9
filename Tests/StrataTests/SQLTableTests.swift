import Foundation
import Strata
import StrataTestHelpers
import Testing

private let movies = SQLTable("movies")
private let directors = SQLTable("directors")
private let id = Column<Int64>("id")
private let title = Column<String>("title")
private let year = Column<Int>("year")
private let genre = Column<String?>("genre")
private let directorID = Column<Int64?>("directorID")
private let name = Column<String>("name")

/// Queries: the SQL they make, and the rows SQLite returns for it.
@Suite struct SQLTableTests {
    func makeCatalog(_ storage: TestStorage) throws -> Database {
        let db = try storage.makeDatabase()
        try db.execute(sql: """
            CREATE TABLE directors(id INTEGER PRIMARY KEY, name TEXT NOT NULL);
            CREATE TABLE movies(id INTEGER PRIMARY KEY, title TEXT NOT NULL, year INT NOT NULL, genre TEXT,
                                directorID INTEGER REFERENCES directors(id));
            INSERT INTO directors VALUES (1, 'Michael Mann'), (2, 'Ridley Scott'), (3, 'Akira Kurosawa');
            INSERT INTO movies VALUES
                (1, 'Heat', 1995, 'crime', 1),
                (2, 'Alien', 1979, 'sci-fi', 2),
                (3, 'Ran', 1985, 'drama', 3),
                (4, 'Blade Runner', 1982, 'sci-fi', 2),
                (5, 'Collateral', 2004, 'crime', 1),
                (6, 'Untitled', 2030, NULL, NULL);
            """)
        return db
    }

    @Test(arguments: TestStorage.allCases)
    func selectsFiltersOrdersAndPages(_ storage: TestStorage) throws {
        let db = try makeCatalog(storage)
        let query = movies.select(id, title).filter(year > 1980).filter(genre != nil).order(year.desc, title).limit(2, offset: 1)
        #expect(query.sqlLiteral.sql == """
            SELECT "id", "title" FROM "movies" WHERE (("year" > ?) AND ("genre" IS NOT NULL)) ORDER BY "year" DESC, "title" LIMIT ? OFFSET ?
            """)
        #expect(try query.fetchAll(db).map { try $0[title] } == ["Heat", "Ran"])
        // Paging through all rows, three at a time.
        var pages: [[String]] = []
        for page in 0..<3 {
            pages.append(try String.fetchAll(db, movies.select(title).order(id).limit(3, offset: page * 3)))
        }
        #expect(pages == [["Heat", "Alien", "Ran"], ["Blade Runner", "Collateral", "Untitled"], []])
    }

    @Test func fetchesOneRowPlucksCountsAndChecksExistence() throws {
        let db = try makeCatalog(.memory)
        let row = try #require(try movies.filter(id == 3).fetchOne(db))
        #expect(try row[title] == "Ran")
        #expect(try row[genre] == "drama")
        #expect(try movies.filter(year < 1900).fetchOne(db) == nil)
        #expect(try movies.order(year).pluck(db)?[title] == "Alien")
        #expect(try movies.filter(genre == "sci-fi").fetchCount(db) == 2)
        #expect(try movies.fetchExists(db))
        #expect(try !movies.filter(year < 1900).fetchExists(db))
        var titles: [String] = []
        let cursor = try movies.order(title).fetchCursor(db)
        while let row = try cursor.next() { titles.append(try row[title]) }
        #expect(titles.first == "Alien" && titles.count == 6)
        #expect(try Int.fetchSet(db, movies.select(year / 10 * 10).filter(year < 2000)) == [1970, 1980, 1990])
    }

    @Test func ordersNullsFirstOrLast() throws {
        let db = try makeCatalog(.memory)
        #expect(try String?.fetchAll(db, movies.select(genre).order(genre.asc.nullsLast)).last == .some(nil))
        #expect(try String?.fetchAll(db, movies.select(genre).order(genre.desc.nullsFirst)).first == .some(nil))
        #expect(movies.order(genre.asc.nullsLast).sqlLiteral.sql == "SELECT * FROM \"movies\" ORDER BY \"genre\" ASC NULLS LAST")
    }

    @Test func selectsDistinctValues() throws {
        let db = try makeCatalog(.memory)
        let query = movies.select(distinct: genre).filter(genre != nil).order(genre)
        #expect(query.sqlLiteral.sql.hasPrefix("SELECT DISTINCT \"genre\" FROM \"movies\""))
        #expect(try String.fetchAll(db, query) == ["crime", "drama", "sci-fi"])
    }

    @Test func groupsWithAggregatesAndHaving() throws {
        let db = try makeCatalog(.memory)
        let films = count(id).aliased("films")
        let latest = max(year).aliased("latest")
        let query = movies.select(genre, films, latest).filter(genre != nil).group(genre, having: count(id) > 1).order(films.desc, genre)
        #expect(query.sqlLiteral.sql == """
            SELECT "genre", count("id") AS "films", max("year") AS "latest" FROM "movies" WHERE ("genre" IS NOT NULL) GROUP BY "genre" HAVING (count("id") > ?) ORDER BY "films" DESC, "genre"
            """)
        let rows = try query.fetchAll(db)
        #expect(try rows.map { [try $0[genre] ?? "", String(try $0[films]), String(try $0[latest] ?? 0)] } == [
            ["crime", "2", "2004"], ["sci-fi", "2", "1982"],
        ])
        let stats = try #require(try movies.select(count(), count(distinct: genre), sum(year), total(year), average(year), min(title), groupConcat(title, separator: "|")).filter(year < 1990).fetchOne(db))
        #expect(stats.databaseValues == [3, 2, 5946, 5946.0, 1982.0, "Alien", "Alien|Ran|Blade Runner"])
    }

    @Test func joinsWithAliasesAndQualifiedColumns() throws {
        let db = try makeCatalog(.memory)
        let m = movies.aliased("m")
        let d = directors.aliased("d")
        let query = m.select(m[title], d[name]).join(d, on: m[directorID] == d[id]).filter(d[name].like("%Scott")).order(m[year])
        #expect(query.sqlLiteral.sql == """
            SELECT "m"."title", "d"."name" FROM "movies" AS "m" JOIN "directors" AS "d" ON ("m"."directorID" = "d"."id") WHERE ("d"."name" LIKE ?) ORDER BY "m"."year"
            """)
        #expect(try query.fetchAll(db).map { [try $0[title], try $0[name]] } == [["Alien", "Ridley Scott"], ["Blade Runner", "Ridley Scott"]])

        // LEFT JOIN keeps movies without a director.
        let left = movies.select(movies[title], directors[name].typed(as: String?.self)).leftJoin(directors, on: movies[directorID] == directors[id]).order(movies[id])
        #expect(try left.fetchAll(db).map { try $0[Column<String?>("name")] }.last == .some(nil))

        // CROSS JOIN pairs every row.
        #expect(try movies.crossJoin(directors).fetchCount(db) == 18)

        // A self-join through an alias.
        let other = movies.aliased("other")
        let sameYearGenre = movies.select(movies[title]).join(other, on: movies[genre] == other[genre] && movies[id] < other[id])
        #expect(try String.fetchAll(db, sameYearGenre.order(movies[title])) == ["Alien", "Heat"])
    }

    @Test func usesSubqueries() throws {
        let db = try makeCatalog(.memory)
        let scottIDs = directors.select(id).filter(name == "Ridley Scott")
        let byScott = movies.select(title).filter(directorID.in(scottIDs)).order(title)
        #expect(byScott.sqlLiteral.sql == """
            SELECT "title" FROM "movies" WHERE ("directorID" IN (SELECT "id" FROM "directors" WHERE ("name" = ?))) ORDER BY "title"
            """)
        #expect(try String.fetchAll(db, byScott) == ["Alien", "Blade Runner"])
        let newest = SQLExpression<Int?>(subquery: movies.select(max(year)).filter(year < 2020))
        #expect(try String.fetchAll(db, movies.select(title).filter(year == newest.typed(as: Int.self))) == ["Collateral"])
        let withMovies = directors.select(name).filter(exists(movies.filter(movies[directorID] == directors[id] && movies[year] > 2000)))
        #expect(try String.fetchAll(db, withMovies) == ["Michael Mann"])
        let decades = SQLTable(subquery: movies.select((year / 10 * 10).aliased("decade")), alias: "d")
        #expect(try Int.fetchAll(db, decades.select(distinct: Column<Int>("decade")).order(Column<Int>("decade"))) == [1970, 1980, 1990, 2000, 2030])
    }

    @Test func combinesQueriesWithUnionAndFriends() throws {
        let db = try makeCatalog(.memory)
        let old = movies.select(title).filter(year < 1983)
        let crime = movies.select(title).filter(genre == "crime")
        #expect(try String.fetchAll(db, old.union(crime).order(title)) == ["Alien", "Blade Runner", "Collateral", "Heat"])
        #expect(try String.fetchAll(db, old.unionAll(old).order(title)).count == 4)
        #expect(try String.fetchAll(db, old.intersect(movies.select(title).filter(genre == "sci-fi"))).sorted() == ["Alien", "Blade Runner"])
        #expect(try String.fetchAll(db, old.except(movies.select(title).filter(title == "Alien"))) == ["Blade Runner"])
        // A member's own order and limit are kept, through a subquery.
        let newest = movies.select(title).order(year.desc).limit(1)
        #expect(try String.fetchAll(db, old.union(newest).order(title)) == ["Alien", "Blade Runner", "Untitled"])
        #expect(old.union(crime).order(title).sqlLiteral.sql == """
            SELECT "title" FROM "movies" WHERE ("year" < ?) UNION SELECT "title" FROM "movies" WHERE ("genre" = ?) ORDER BY "title"
            """)
    }

    @Test func runsRecursiveCommonTableExpressions() throws {
        let db = try Database()
        let n = SQLTable("n")
        let x = Column<Int>("x")
        let counting = SQLTable.selecting(SQLExpression(value: 1)).unionAll(n.select(x + 1).filter(x < 10))
        let query = n.with("n", columns: ["x"], as: counting, recursive: true).select(x)
        #expect(query.sqlLiteral.sql == """
            WITH RECURSIVE "n"("x") AS (SELECT ? UNION ALL SELECT ("x" + ?) FROM "n" WHERE ("x" < ?)) SELECT "x" FROM "n"
            """)
        #expect(try Int.fetchAll(db, query) == Array(1...10))
        // A plain CTE.
        let db2 = try makeCatalog(.memory)
        let recent = SQLTable("recent")
        let plain = recent.with("recent", as: movies.filter(year > 2000)).select(title)
        #expect(try String.fetchAll(db2, plain).sorted() == ["Collateral", "Untitled"])
    }

    @Test func interpolatesQueriesIntoRawSQL() throws {
        let db = try makeCatalog(.memory)
        let minimum = 1990
        let rows = try Row.fetchAll(db, literal: "SELECT count(*) AS n FROM (\(movies.filter(year > minimum)))")
        #expect(try rows[0]["n"] as Int == 3)
    }
}
