import Foundation
import Strata
import StrataTestHelpers
import Testing

/// The seed workflows under `Examples/`, run as built executables.
@Suite struct ExamplesTests {
    func run(_ product: String, _ arguments: [String], input: String? = nil, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let output = try runProduct(product, arguments, input: input)
        #expect(output.status == 0, "\(product) \(arguments): \(output.standardError)", sourceLocation: sourceLocation)
        return output.standardOutput
    }

    // MARK: - ipgeo

    @Test func ipgeoImportsRangesAndLooksUpAddresses() throws {
        let database = try makeTemporaryPath("geo.sqlite")
        let dbip = try makeFile("dbip.csv", """
            "1.0.0.0","1.0.0.255","AU"
            8.8.8.0,8.8.8.255,US
            2001:4860::,2001:4860:ffff:ffff:ffff:ffff:ffff:ffff,US
            2a00:1450::,2a00:1450:ffff:ffff:ffff:ffff:ffff:ffff,IE

            """)
        let tor = try makeFile("geoip", "# Tor's format: decimal IPv4\n16777472,16778239,CN\n3232235520,3232301055,ZZ\n")
        let tor6 = try makeFile("geoip6", "# IPv6\n2001:db8::,2001:db8:ffff:ffff:ffff:ffff:ffff:ffff,XX\n")
        #expect(try run("ipgeo", ["import", "--db", database, dbip.path, tor.path, tor6.path]) == "imported 7 ranges\n")
        let lookups = try run("ipgeo", ["lookup", "--db", database, "1.0.0.7", "1.0.1.5", "192.168.1.1", "8.8.8.8", "8.8.9.1", "2001:4860:4860::8888", "2001:db8::1", "::1"])
        #expect(lookups == """
            1.0.0.7\tAU
            1.0.1.5\tCN
            192.168.1.1\tZZ
            8.8.8.8\tUS
            8.8.9.1\t--
            2001:4860:4860::8888\tUS
            2001:db8::1\tXX
            ::1\t--

            """)
        // Addresses on standard input; an invalid one is reported after the others are answered.
        let mixed = try runProduct("ipgeo", ["lookup", "--db", database], input: "2a00:1450:4001::1\nnot-an-address\n8.8.8.8\n")
        #expect(mixed.status == 1)
        #expect(mixed.standardOutput == "2a00:1450:4001::1\tIE\n8.8.8.8\tUS\n")
        #expect(mixed.standardError == "ipgeo: invalid address: not-an-address\n")
        // The lookup is one indexed query: the plan searches the primary key.
        let plan = try Row.fetchAll(Database(path: database), sql: "EXPLAIN QUERY PLAN SELECT \"end\", country FROM ranges WHERE start <= ? ORDER BY start DESC LIMIT 1", arguments: [Data(count: 16)])
            .map { try $0["detail"] as String }
        #expect(plan.contains { $0.contains("SEARCH ranges USING PRIMARY KEY") })
    }

    @Test func ipgeoReportsABadRangeWithItsLineAndKeepsTheDatabase() throws {
        let database = try makeTemporaryPath("geo.sqlite")
        let good = try makeFile("good.csv", "1.0.0.0,1.0.0.255,AU\n")
        _ = try run("ipgeo", ["import", "--db", database, good.path])
        let bad = try makeFile("bad.csv", "2.0.0.0,2.0.0.255,FR\n2.0.1.0,not-an-ip,FR\n")
        let output = try runProduct("ipgeo", ["import", "--db", database, bad.path])
        #expect(output.status == 1)
        #expect(output.standardError == "ipgeo: \(bad.path):2: invalid address range 2.0.1.0 - not-an-ip\n")
        #expect(try Int.fetchOne(Database(path: database), sql: "SELECT count(*) FROM ranges") == 1)
    }

    /// Tor's geoip and geoip6 files from Debian's tor-geoipdb (IPFire location
    /// data, CC BY-SA 4.0), when `.ci/run` has fetched them.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["STRATA_TOR_GEOIP"] != nil))
    func ipgeoLoadsTorsRealGeoIPFiles() throws {
        let folder = try #require(ProcessInfo.processInfo.environment["STRATA_TOR_GEOIP"])
        let database = try makeTemporaryPath("tor.sqlite")
        let imported = try run("ipgeo", ["import", "--db", database, folder + "/geoip", folder + "/geoip6"])
        let count = try #require(Int(imported.split(separator: " ")[1]))
        #expect(count > 500_000)
        let lookups = try run("ipgeo", ["lookup", "--db", database, "1.1.1.1", "8.8.8.8", "2001:4860:4860::8888", "10.0.0.1"])
        let countries = lookups.split(separator: "\n").map { $0.split(separator: "\t")[1] }
        #expect(countries.count == 4)
        #expect(countries.allSatisfy { $0.count == 2 })
        #expect(countries[1] == "US")
        #expect(countries[3] == "--")
    }

    // MARK: - activity, stock, notes

    @Test func activityRecordsListsAndFiltersByTime() throws {
        let database = try makeTemporaryPath("activity.sqlite")
        #expect(try run("activity", ["record", "--db", database, "--away", "--latitude", "48.85", "--longitude", "2.35", "--time", "2024-05-01 12:00"]) == "recorded event 1\n")
        #expect(try run("activity", ["record", "--db", database, "--time", "2024-05-02 08:30"]) == "recorded event 2\n")
        #expect(try run("activity", ["record", "--db", database, "--time", "2024-05-03 09:00", "--away"]) == "recorded event 3\n")
        #expect(try run("activity", ["list", "--db", database]) == """
            1\t2024-05-01 12:00:00.000\taway\t48.85,2.35
            2\t2024-05-02 08:30:00.000\there
            3\t2024-05-03 09:00:00.000\taway

            """)
        #expect(try run("activity", ["list", "--db", database, "--from", "2024-05-02", "--to", "2024-05-03"]) == "2\t2024-05-02 08:30:00.000\there\n")
        #expect(try run("activity", ["list", "--db", database, "--away"]).split(separator: "\n").count == 2)
        // The time is unique.
        let duplicate = try runProduct("activity", ["record", "--db", database, "--time", "2024-05-02 08:30"])
        #expect(duplicate.status == 1)
        #expect(duplicate.standardError.contains("UNIQUE constraint failed: activities.time"))
        #expect(try runProduct("activity", ["record", "--db", database, "--latitude", "1"]).status == 64)
    }

    @Test func stockAddsListsFiltersAndAdjusts() throws {
        let database = try makeTemporaryPath("stock.sqlite")
        _ = try run("stock", ["add", "--db", database, "Lamp", "12.5", "3"])
        _ = try run("stock", ["add", "--db", database, "Chair", "30", "10"])
        _ = try run("stock", ["add", "--db", database, "Desk", "120", "1"])
        #expect(try run("stock", ["list", "--db", database]) == "Chair\t30.00\t10\nDesk\t120.00\t1\nLamp\t12.50\t3\n")
        #expect(try run("stock", ["list", "--db", database, "--below", "5"]) == "Desk\t120.00\t1\nLamp\t12.50\t3\n")
        #expect(try run("stock", ["list", "--db", database, "--max-price", "50"]) == "Chair\t30.00\t10\nLamp\t12.50\t3\n")
        #expect(try run("stock", ["adjust", "--db", database, "Lamp", "--by", "-2"]) == "Lamp: 1 units\n")
        let tooMany = try runProduct("stock", ["adjust", "--db", database, "Lamp", "--by", "-5"])
        #expect(tooMany.status == 1)
        #expect(tooMany.standardError == "stock: only 1 units of Lamp in stock\n")
        let duplicate = try runProduct("stock", ["add", "--db", database, "Lamp", "1", "1"])
        #expect(duplicate.standardError == "stock: a product named \"Lamp\" exists\n")
    }

    @Test func notesCreatesEditsDeletesAndLists() throws {
        let database = try makeTemporaryPath("notes.sqlite")
        // A note's id is a UUID; commands take its first characters.
        func created(_ output: String) throws -> String {
            let id = try #require(output.wholeMatch(of: /created note ([0-9a-f]{8})\n/)?.output.1)
            return String(id)
        }
        let groceries = try created(try run("notes", ["create", "--db", database, "Groceries", "milk, eggs", "--image", "list.png", "--image", "shop.png"]))
        let ideas = try created(try run("notes", ["create", "--db", database, "Ideas"]))
        _ = try run("notes", ["edit", "--db", database, groceries, "--text", "milk"])
        let listed = try run("notes", ["list", "--db", database])
        #expect(listed == "\(groceries)\tGroceries\tmilk\t[list.png, shop.png]\n\(ideas)\tIdeas\t\n")
        _ = try run("notes", ["delete", "--db", database, ideas])
        #expect(try run("notes", ["list", "--db", database]) == "\(groceries)\tGroceries\tmilk\t[list.png, shop.png]\n")
        let missing = try runProduct("notes", ["delete", "--db", database, ideas])
        #expect(missing.status == 1 && missing.standardError == "notes: no note \(ideas)\n")
        let ids = try String.fetchAll(Database(path: database), sql: "SELECT id FROM notes")
        #expect(ids.count == 1 && UUID(uuidString: ids[0]) != nil)
    }

    @Test func notesFromBeforeSyncGetUUIDs() throws {
        // A file the integer-keyed notes app made keeps its notes.
        let database = try makeTemporaryPath("old-notes.sqlite")
        let db = try Database(path: database)
        try db.execute(sql: """
            CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT NOT NULL, text TEXT NOT NULL, fontName TEXT NOT NULL,
              fontSize REAL NOT NULL, creationDate TEXT NOT NULL, modificationDate TEXT NOT NULL, images TEXT NOT NULL);
            INSERT INTO notes VALUES (1, 'Old', 'kept', 'Helvetica', 14, '2024-01-01 00:00:00.000', '2024-01-01 00:00:00.000', '[]');
            CREATE TABLE strata_migrations(identifier TEXT NOT NULL PRIMARY KEY, appliedAt TEXT NOT NULL);
            INSERT INTO strata_migrations VALUES ('v1: notes', '2024-01-01');
            """)
        try db.close()
        let listed = try run("notes", ["list", "--db", database])
        #expect(listed.wholeMatch(of: /[0-9a-f]{8}\tOld\tkept\n/) != nil, "\(listed)")
    }

    // MARK: - movies, books

    @Test func moviesSeedsOnceThenListsRatesAndFilters() throws {
        let database = try makeTemporaryPath("movies.sqlite")
        let first = try run("movies", ["list", "--db", database, "--limit", "2"])
        #expect(first.split(separator: "\n").count == 2)
        #expect(try Int.fetchOne(Database(path: database), sql: "SELECT count(*) FROM movies") == 17_472)
        _ = try run("movies", ["list", "--db", database])  // no second seeding
        #expect(try Int.fetchOne(Database(path: database), sql: "SELECT count(*) FROM movies") == 17_472)
        let years = try run("movies", ["list", "--db", database, "--limit", "50", "--offset", "1000"]).split(separator: "\n").map { Int($0.split(separator: "\t")[1])! }
        #expect(years == years.sorted())

        #expect(try run("movies", ["show", "--db", database, "372"]) == "372\t2009\tWe Live in Public\tDocumentary\t-\t\nhttps://www.imdb.com/title/tt0498329/\n")
        _ = try run("movies", ["watch", "--db", database, "372"])
        _ = try run("movies", ["like", "--db", database, "372", "3"])
        #expect(try run("movies", ["show", "--db", database, "372"]).hasPrefix("372\t2009\tWe Live in Public\tDocumentary\twatched\t***\n"))
        #expect(try runProduct("movies", ["like", "--db", database, "372", "4"]).status == 64)
        _ = try run("movies", ["delete", "--db", database, "372"])
        #expect(try runProduct("movies", ["show", "--db", database, "372"]).standardError == "movies: no movie 372\n")

        let dramas = try run("movies", ["filter", "--db", database, "--category", "Drama", "--year", "1995", "--limit", "500"]).split(separator: "\n")
        #expect(!dramas.isEmpty)
        #expect(dramas.allSatisfy { $0.split(separator: "\t")[1] == "1995" && $0.split(separator: "\t")[3].contains("Drama") })
        // A hostile category is a bound value, not SQL.
        #expect(try run("movies", ["filter", "--db", database, "--category", "x' OR '1'='1"]) == "")
    }

    @Test func booksSeedsThroughAMigrationThenPagesFiltersAndKeepsFavorites() throws {
        let database = try makeTemporaryPath("books.sqlite")
        let page1 = try run("books", ["list", "--db", database, "--per-page", "5"]).split(separator: "\n")
        let page2 = try run("books", ["list", "--db", database, "--per-page", "5", "--page", "2"]).split(separator: "\n")
        #expect(page1.count == 5 && page2.count == 5)
        let titles = (page1 + page2).map { String($0.split(separator: "\t")[1]) }
        #expect(titles == titles.sorted())
        let db = try Database(path: database)
        #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM books") == 10_000)
        #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM authors") ?? 0 > 4_000)
        #expect(try !db.tableExists("goodbooks"))

        let austen = try run("books", ["author", "--db", database, "Jane Austen"]).split(separator: "\n")
        #expect(austen.contains { $0.contains("\tPride and Prejudice\t1813\t") })
        #expect(try run("books", ["show", "--db", database, "2"]) == "2\tHarry Potter and the Sorcerer's Stone (Harry Potter, #1)\t1997\t4.44\tJ.K. Rowling, Mary GrandPré\n")

        _ = try run("books", ["favorite", "add", "--db", database, "2"])
        _ = try run("books", ["favorite", "add", "--db", database, "10"])
        _ = try run("books", ["favorite", "add", "--db", database, "2"])  // again: fine, and now the latest
        #expect(try run("books", ["favorite", "list", "--db", database]).split(separator: "\n").map { $0.split(separator: "\t")[0] } == ["10", "2"])
        _ = try run("books", ["favorite", "remove", "--db", database, "2"])
        #expect(try run("books", ["favorite", "list", "--db", database]).split(separator: "\n").count == 1)
        #expect(try runProduct("books", ["favorite", "add", "--db", database, "999999"]).standardError == "books: no book 999999\n")
        #expect(try runProduct("books", ["author", "--db", database, "Nobody At All"]).status == 1)
    }
}
