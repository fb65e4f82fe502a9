import Foundation
import Strata
import StrataTestHelpers
import Testing

// MARK: - README and Records article types

struct Show: DatabaseRecord {
    var id: Int64?          // INTEGER PRIMARY KEY, filled in on insert
    var title: String       // TEXT NOT NULL
    var seasons: Int?       // INTEGER, NULL allowed
}

struct Recipe: DatabaseRecord, Equatable {
    struct Step: Codable, Equatable {
        var text: String
        var minutes: Int
    }

    var id: Int64?
    var name: String
    var servings: Int
    var steps: [Step]
    var rating: Double?
    var isExpanded = false

    static let databaseTableName = "recipes"
    static let databaseIgnoredColumns: Set<String> = ["isExpanded"]
    static let databaseUniqueKeys = [["name"]]
    static let name = Column<String>("name")
}

struct Score: DatabaseRecord {
    var id: Int64?
    var player: String
    var points: Int
}

extension Score: RowDecodable {
    init(row: LiveRow) throws {
        id = try row["id"]
        player = try row["player"]
        points = try row["points"]
    }
}

struct Cook: DatabaseRecord {
    var id: Int64?
    var name: String
    static let recipes = hasMany(Dish.self, foreignKey: "cookID")
}

struct Dish: DatabaseRecord {
    var id: Int64?
    var cookID: Int64
    var title: String
    static let cook = belongsTo(Cook.self, foreignKey: "cookID")
    static let databaseForeignKeys = [DatabaseForeignKey(["cookID"], references: Cook.self, onDelete: .cascade)]
}

/// The Records article's types, in a namespace of their own: the test
/// module has other types of these names.
enum RecordsArticle {
    struct Contact: DatabaseRecord {
        var id: Int64?
        var name: String
        enum CodingKeys: String, CodingKey {
            case id = "ID"
            case name
        }
    }

    struct Membership: DatabaseRecord {
        var groupID: Int64
        var userID: Int64
        var role: String
        static let databasePrimaryKey = ["groupID", "userID"]
    }

    struct Product: DatabaseRecord {
        enum Category: String, Codable { case food, drinks }
        var id: Int64?
        var name: String
        var category: Category      // TEXT "food"
        var price: Decimal          // TEXT "12.5", exact
    }

    final class Dog: DatabaseRecord {
        var id: Int64?
        var name: String
        init(name: String) { self.name = name }
    }

    struct Draft: DatabaseRecord {
        var id: Int64?
        var text: String
        static let databaseCreatesTableOnFirstUse = true
    }
}

extension Recipe: Identifiable {}

/// The Concurrency article's transaction observer.
final class UploadQueue: TransactionObserver {
    var pendingTables: Set<String> = []

    func databaseDidCommit(_ db: Database, changes: TransactionChanges) {
        pendingTables.formUnion(changes.modifiedTables)
    }

    func databaseDidRollback(_ db: Database) {}
}

/// The examples of the README and the DocC articles, compiled and run. Each
/// document's Swift blocks must appear here line for line (in order; extra
/// lines such as expectations may sit between them), so the documents cannot
/// drift from code that compiles.
@Suite struct DocumentationTests {
    // MARK: - README

    @Test func readmeTour() throws {
        let queue = try DatabaseQueue()  // in memory; DatabaseQueue(path: "movies.sqlite") for a file
        try queue.write { db in
            try db.execute(sql: """
                CREATE TABLE movies(
                    id INTEGER PRIMARY KEY,
                    title TEXT NOT NULL,
                    year INTEGER,
                    likes INTEGER NOT NULL DEFAULT 0
                )
                """)
            try db.execute(sql: "INSERT INTO movies(title, year) VALUES (?, ?)", arguments: ["Heat", 1995])
            try db.execute(sql: "INSERT INTO movies(title, year) VALUES (:title, :year)",
                           arguments: ["title": "Alien", "year": 1979])
        }

        let titles = try queue.read { db in
            try String.fetchAll(db, sql: "SELECT title FROM movies ORDER BY year")
        }
        // ["Alien", "Heat"]
        #expect(titles == ["Alien", "Heat"])

        let heat = try queue.read { db in
            try Row.fetchOne(db, sql: "SELECT * FROM movies WHERE title = ?", arguments: ["Heat"])
        }
        let heatYear: Int = try heat!["year"]
        let heatLikes = try heat!["LIKES"] as Int  // column names ignore case, as in SQLite
        #expect(heatYear == 1995 && heatLikes == 0)

        try queue.read { db in
            let rows = try Row.fetchCursor(db, sql: "SELECT title, year FROM movies")
            while let row = try rows.next() {
                print(try row["title"] as String, try row["year"] as Int? ?? 0)
            }
        }

        var message = ""
        do {
            try queue.write { db in
                try db.execute(sql: "INSERT INTO movies(id, title) VALUES (1, 'Duplicate')")
            }
        } catch let error as SQLiteError where error.code == .constraintPrimaryKey {
            print(error.message ?? "")  // UNIQUE constraint failed: movies.id
            message = error.message ?? ""
        } catch SQLiteError.constraint {
            print("another constraint failed")
        }
        #expect(message == "UNIQUE constraint failed: movies.id")
    }

    @Test func readmeTourAsync() async throws {
        func addClassics(to queue: DatabaseQueue) async throws -> Int {
            try await queue.write { db in
                let insert = try db.makeStatement(sql: "INSERT INTO movies(title, year) VALUES (?, ?)")
                for (title, year) in [("Ran", 1985), ("Seven Samurai", 1954)] {
                    try insert.execute(arguments: [title, year])
                }
            }
            return try await queue.read { db in
                try Int.fetchOne(db, sql: "SELECT count(*) FROM movies") ?? 0
            }
        }
        let queue = try DatabaseQueue()
        try await queue.write { db in
            try db.execute(sql: "CREATE TABLE movies(id INTEGER PRIMARY KEY, title TEXT NOT NULL, year INTEGER)")
            try db.execute(sql: "INSERT INTO movies(title, year) VALUES ('Heat', 1995), ('Alien', 1979)")
        }
        #expect(try await addClassics(to: queue) == 4)
    }

    @Test func readmeTypedQueries() throws {
        let movies = SQLTable("movies")
        let id = Column<Int64>("id")
        let title = Column<String>("title")
        let year = Column<Int>("year")
        let likes = Column<Int>("likes")

        let db = try Database()  // one connection, for code that stays on one thread
        try db.run(movies.create { t in
            t.column(id, primaryKey: .autoincrement)
            t.column(title, unique: true)
            t.column(year)
            t.column(likes, defaultValue: 0)
        })
        let heatID = try db.run(movies.insert(title <- "Heat", year <- 1995))
        try db.run(movies.insert(title <- "Alien", year <- 1979))
        try db.run(movies.filter(id == heatID).update(likes += 1))

        for row in try movies.filter(year > 1990).order(year.desc).limit(20, offset: 0).fetchAll(db) {
            print(try row[title], try row[likes])  // Heat 1
            #expect(try row[title] == "Heat" && row[likes] == 1)
        }
        let alienCount = try movies.filter(title.like("A%")).fetchCount(db)
        #expect(alienCount == 1)

        let hostile = "Robert'); DROP TABLE movies;--"
        try db.execute(literal: "UPDATE movies SET likes = \(3) WHERE title = \(hostile)")
        let sorted = try String.fetchAll(db, literal: "SELECT title FROM \(identifier: "movies") ORDER BY \(identifier: "year")")
        #expect(sorted == ["Alien", "Heat"])
    }

    @Test func readmeRecords() throws {
        let store = try DatabaseQueue()
        let show = try store.write { db in
            try db.create(table: Show.self)
            var show = Show(id: nil, title: "The Wire", seasons: 5)
            try show.insert(db)     // show.id == 1
            show.seasons = 6
            try show.update(db)
            return show
        }
        let shows = try store.read { db in
            try Show.fetchAll(db, Show.table.order(Column<String>("title")))
        }
        #expect(show.id == 1 && shows.map(\.seasons) == [6])
        #expect(try store.read { db in try Show.filter(Column<Int?>("seasons") > 3).fetchAll(db) }.count == 1)
    }

    // MARK: - Typed queries (DocC)

    @Test func typedQueriesArticle() throws {
        let books = SQLTable("books")
        let id = Column<Int64>("id")
        let title = Column<String>("title")
        let year = Column<Int?>("year")
        let rating = Column<Double>("rating")
        let authorID = Column<Int64>("authorID")

        let authors = SQLTable("authors")
        let name = Column<String>("name")

        let db = try Database()
        try db.run(authors.create { t in
            t.column(id, primaryKey: .autoincrement)
            t.column(name, unique: true)
        })
        try db.run(books.create(ifNotExists: true) { t in
            t.column(id, primaryKey: .autoincrement)
            t.column(title, unique: true, check: title.length > 0)
            t.column(year)
            t.column(rating, defaultValue: 0)
            t.column(authorID, references: authors, id, onDelete: .cascade)
        })
        try db.run(books.createIndex(year, where: year != nil))

        let austen = try db.run(authors.insert(name <- "Jane Austen"))
        try db.run(books.insert(title <- "Emma", year <- 1815, rating <- 4.0, authorID <- austen))
        try db.run(books.insert(title <- "Persuasion", year <- 1817, rating <- 4.1, authorID <- austen))
        let changed = try db.run(books.filter(year < 1816).update(rating += 0.5))
        try db.run(books.insert(title <- "Emma", year <- 1815, rating <- 4.2, authorID <- austen)
            .onConflictDoNothing())
        #expect(changed == 1)

        let page = books.select(title, year)
            .filter(year > 1800 && rating >= 4)
            .order(year.desc, title)
            .limit(10, offset: 0)
        for row in try page.fetchAll(db) {
            let bookTitle: String = try row[title]
            let published: Int? = try row[year]
            print(bookTitle, published ?? 0)
        }
        #expect(try page.fetchAll(db).map { try $0[title] } == ["Persuasion", "Emma"])
        let titles = try String.fetchAll(db, books.select(title).order(title))
        let byAusten = books.select(books[title], authors[name])
            .join(authors, on: books[authorID] == authors[id])
            .filter(authors[name] == "Jane Austen")
        let bestRated = try String.fetchOne(db, books.select(title).order(rating.desc))
        #expect(titles == ["Emma", "Persuasion"] && bestRated == "Emma")
        #expect(try byAusten.fetchCount(db) == 2)

        let minimum = 4.0
        let good = try Row.fetchAll(db, literal: """
            SELECT title FROM \(identifier: "books") WHERE rating >= \(minimum) ORDER BY title
            """)
        #expect(good.count == 2)

        let insertBook = try db.prepareInsert(into: books, title, year, authorID)
        try db.transaction {
            for (bookTitle, published) in [("Sense and Sensibility", 1811), ("Mansfield Park", 1814)] {
                try insertBook.run(bookTitle, published, austen)
            }
        }
        #expect(try byAusten.fetchCount(db) == 4)
    }

    // MARK: - Records (DocC)

    @Test func recordsArticle() throws {
        let db = try Database()
        try db.create(table: Recipe.self, ifNotExists: true)

        var pancakes = Recipe(id: nil, name: "Pancakes", servings: 4,
                              steps: [.init(text: "Mix", minutes: 5), .init(text: "Fry", minutes: 10)], rating: nil)
        try pancakes.insert(db)          // pancakes.id is now set
        pancakes.rating = 4.5
        try pancakes.update(db)          // every column
        let before = pancakes
        pancakes.servings = 6
        try pancakes.updateChanges(db, from: before)   // only `servings`
        try pancakes.save(db)            // update, or insert when there is no such row
        #expect(pancakes.id == 1)

        let all = try Recipe.fetchAll(db)
        let one = try Recipe.fetchOne(db, key: pancakes.id!)
        let byName = try Recipe.fetchOne(db, keys: ["name": "Pancakes"])
        let sorted = try Recipe.filter(Recipe.name.like("P%")).order(Recipe.name).limit(20).fetchAll(db)
        let count = try Recipe.fetchCount(db)
        #expect(all == [pancakes] && one == pancakes && byName == pancakes && sorted == [pancakes] && count == 1)
        #expect(one?.steps.map(\.minutes) == [5, 10] && one?.servings == 6 && one?.rating == 4.5)

        try db.create(table: Score.self)
        for (player, points) in [("ann", 3), ("bo", 9), ("cy", 5), ("di", 1)] {
            _ = try Score(id: nil, player: player, points: points).inserted(db)
        }
        let top = try Score.fetchAll(db, Score.table.order(Column<Int>("points").desc).limit(3))
        #expect(top.map(\.player) == ["bo", "cy", "ann"])

        typealias Contact = RecordsArticle.Contact
        typealias Membership = RecordsArticle.Membership
        typealias Product = RecordsArticle.Product
        typealias Dog = RecordsArticle.Dog
        typealias Draft = RecordsArticle.Draft
        #expect(Contact.databasePrimaryKey == ["ID"] && Membership.databasePrimaryKey == ["groupID", "userID"])

        try db.create(table: Product.self)
        _ = try Product(id: nil, name: "Bread", category: .food, price: Decimal(string: "2.40")!).inserted(db)
        _ = try Product(id: nil, name: "Juice", category: .drinks, price: Decimal(string: "12.50")!).inserted(db)
        let food = try Product.filter(Column<String>("category") == "food").fetchAll(db)
        let byPrice = try Product.fetchAll(db, sql: "SELECT * FROM product ORDER BY CAST(price AS NUMERIC) DESC")
        #expect(food.map(\.name) == ["Bread"] && byPrice.map(\.name) == ["Juice", "Bread"])
        #expect(try String.fetchAll(db, sql: "SELECT category || ' ' || price FROM product") == ["food 2.4", "drinks 12.5"])

        try db.create(table: Dog.self)
        let rex = Dog(name: "Rex")
        try rex.insert(db)               // rex.id is set
        rex.name = "Rex II"
        try rex.save(db)                 // updates the same row
        #expect(try rex.id == 1 && Dog.fetchAll(db).map(\.name) == ["Rex II"])

        let drafts = try Draft.fetchAll(db)       // [], and the table now exists
        #expect(try drafts.isEmpty && db.tableExists("draft"))

        let shown = try Recipe.order(Recipe.name).fetchAll(db)
        _ = try Recipe(id: nil, name: "Omelette", servings: 1, steps: [], rating: nil).inserted(db)
        let fresh = try Recipe.order(Recipe.name).fetchAll(db)
        let changes = ListChanges(from: shown, to: fresh)   // inserted: [0]
        let sections = SectionedResults(fresh, by: { $0.name.prefix(1) })
        #expect(changes.inserted == [0] && changes.deleted.isEmpty && changes.moved.isEmpty)
        #expect(sections.sections.map(\.key) == ["O", "P"])

        try db.create(table: Cook.self)
        try db.create(table: Dish.self)
        let ann = try Cook(id: nil, name: "Ann").inserted(db)
        _ = try Dish(id: nil, cookID: ann.id!, title: "Soup").inserted(db)
        let cooks = try Cook.fetchAll(db)
        let dishesPerCook = try Cook.recipes.fetchAll(db, for: cooks)   // one query
        #expect(dishesPerCook.map { $0.map(\.title) } == [["Soup"]])
        #expect(try Dish.cook.fetchAll(db, for: Dish.fetchAll(db)).map { $0?.name } == ["Ann"])
    }

    @Test func recordsArticleMigrations() throws {
        var migrator = Migrator()
        migrator.register("v1: recipes") { db in
            try db.create(table: Recipe.self)
        }
        migrator.register("v2: seed") { db in
            _ = try Recipe.insertAll(db, [Recipe(id: nil, name: "Toast", servings: 1, steps: [], rating: nil)])
        }
        let queue = try DatabaseQueue()
        try migrator.migrate(queue)
        #expect(try queue.read { db in try Recipe.fetchAll(db).map(\.name) } == ["Toast"])
    }

    // MARK: - Importing data (DocC)

    @Test func importingDataArticle() throws {
        let folder = FileManager.default.temporaryDirectory
        let csv = folder.appendingPathComponent("ips.csv")
        try """
            start,end,country
            1.0.0.0,1.0.0.255,AU
            1.0.1.0,1.0.3.255,CN
            """.write(to: csv, atomically: true, encoding: .utf8)

        let db = try Database()
        let result = try db.importFile(csv)          // into a new table "ips"
        print(result.rowCount)                         // 2
        #expect(result.rowCount == 2 && result.tableName == "ips")

        var options = ImportOptions()
        options.mode = .replace            // or .create (fail if the table exists), .append (the default)
        options.progress = { progress in
            print("\(progress.rowCount) rows, \(progress.byteCount) bytes")
        }
        try db.importFile(csv, into: "ranges", options: options)

        let messy = folder.appendingPathComponent("messy.csv")
        try "a,b\n1,2\n3\n4,5\n".write(to: messy, atomically: true, encoding: .utf8)
        var lenient = ImportOptions()
        lenient.skipsBadRecords = true
        let imported = try db.importFile(messy, options: lenient)
        for problem in imported.skippedRecords {
            print(problem)   // …/messy.csv:3:2: expected 2 fields, found 1
        }
        #expect(imported.rowCount == 2 && imported.skippedRecords.map(\.description) == ["\(messy.path):3:2: expected 2 fields, found 1"])

        let output = folder.appendingPathComponent("ranges.json")
        try db.export(sql: "SELECT * FROM ranges WHERE country = ?", arguments: ["AU"],
                      to: output, options: ExportOptions(format: .json))
        #expect(try String(contentsOf: output, encoding: .utf8).contains("\"country\":\"AU\""))
    }

    // MARK: - Concurrency and observation (DocC)

    /// Removes a database file and its WAL companions left by an earlier run.
    private func removeDatabase(atPath path: String) {
        for suffix in ["", "-wal", "-shm", "-journal"] {
            try? FileManager.default.removeItem(atPath: path + suffix)
        }
    }

    @Test func concurrencyAndObservationArticle() async throws {
        // The article's synchronous code, in a synchronous function as a
        // user's would be.
        func synchronousPart() throws -> (DatabasePool, Int) {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("scores.sqlite").path
            removeDatabase(atPath: path)
            let pool = try DatabasePool(path: path)
            try pool.write { db in
                try db.execute(sql: "CREATE TABLE IF NOT EXISTS scores(player TEXT, points INT)")
                try db.execute(sql: "INSERT INTO scores VALUES (?, ?)", arguments: ["ann", 10])
            }
            let total = try pool.read { db in
                try Int.fetchOne(db, sql: "SELECT sum(points) FROM scores") ?? 0
            }
            return (pool, total)
        }
        let (pool, total) = try synchronousPart()
        #expect(total == 10)

        func totalPoints(in pool: DatabasePool) async throws -> Int {
            try await pool.read { db in
                try Int.fetchOne(db, sql: "SELECT sum(points) FROM scores") ?? 0
            }
        }
        #expect(try await totalPoints(in: pool) == 10)

        let leaderboard = ValueObservation { db in
            try Row.fetchAll(db, sql: "SELECT player, sum(points) AS points FROM scores GROUP BY player ORDER BY points DESC")
                .map { "\(try $0["player"] as String): \(try $0["points"] as Int)" }
        }
        let log = ValueLog<[String]>()

        func show(_ observation: ValueObservation<[String]>, in pool: DatabasePool) async throws {
            for try await lines in observation.values(in: pool) {
                print(lines)   // ["ann: 10"], then after each relevant commit
                log.append(lines)
            }
        }

        let task = Task { try await show(leaderboard, in: pool) }
        try await log.wait(for: 1)
        func insertBob() throws {
            try pool.write { db in
                try db.execute(sql: "INSERT INTO scores VALUES (?, ?)", arguments: ["bob", 25])
            }
        }
        try insertBob()
        try await log.wait(for: 2)
        task.cancel()   // stops the tracking
        #expect(log.values == [["ann: 10"], ["bob: 25", "ann: 10"]])

        let called = ValueLog<[String]>()
        let cancellable = leaderboard.start(in: pool, onError: { error in
            print("the leaderboard stopped: \(error)")
        }, onChange: { lines in
            print(lines)
            called.append(lines)
        })
        try await called.wait(for: 1)
        cancellable.cancel()
        #expect(called.values == [["bob: 25", "ann: 10"]])
    }

    @Test func concurrencyArticleTransactionObserver() throws {
        let uploads = UploadQueue()
        let local = try Database()
        try local.add(transactionObserver: uploads)     // held weakly: keep `uploads`
        try local.execute(sql: "CREATE TABLE drafts(id INTEGER PRIMARY KEY, body TEXT)")
        try local.execute(sql: "INSERT INTO drafts(body) VALUES ('hello')")
        print(uploads.pendingTables)                     // ["drafts"]
        #expect(uploads.pendingTables.contains("drafts"))
    }

    @Test func concurrencyArticleTimeLimit() throws {
        let local = try Database()
        try local.execute(sql: "CREATE TABLE drafts(id INTEGER PRIMARY KEY, body TEXT)")
        try local.execute(sql: "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3000) INSERT INTO drafts(body) SELECT x FROM c")
        var messages: [String] = []
        let typed = "SELECT count(*) FROM drafts AS a, drafts AS b, drafts AS c"
        do {
            let count = try local.withTimeLimit(.seconds(2)) {
                try Int.fetchOne(local, sql: typed)
            }
            print(count ?? 0)
        } catch let error as SQLiteError where error.code == .interrupt {
            print(error.message ?? "stopped")  // the statement ran past its time limit of 2.0 seconds and was stopped
            messages.append(error.message ?? "")
        }
        // 27 billion rows: far beyond two seconds on any machine.
        #expect(messages == ["the statement ran past its time limit of 2.0 seconds and was stopped"])
    }

    // MARK: - Getting started (DocC)

    @Test func gettingStarted() throws {
        let db = try Database()
        try db.execute(sql: """
            CREATE TABLE notes(
                id INTEGER PRIMARY KEY,
                title TEXT NOT NULL,
                body TEXT,
                createdAt TEXT NOT NULL
            );
            CREATE INDEX notes_by_date ON notes(createdAt);
            """)

        try db.execute(
            sql: "INSERT INTO notes(title, body, createdAt) VALUES (?, ?, ?)",
            arguments: ["Groceries", "Milk, eggs", Date()])
        let id = db.lastInsertedRowID

        try db.execute(
            sql: "UPDATE notes SET body = :body WHERE id = :id",
            arguments: ["body": "Milk, eggs, bread", "id": id])
        #expect(db.changesCount == 1)

        let titles = try String.fetchAll(db, sql: "SELECT title FROM notes ORDER BY createdAt")
        let note = try Row.fetchOne(db, sql: "SELECT * FROM notes WHERE id = ?", arguments: [id])
        let body: String? = try note?["body"]
        let createdAt: Date? = try note?["createdAt"]
        #expect(titles == ["Groceries"] && body == "Milk, eggs, bread" && createdAt != nil)

        let statement = try db.makeStatement(sql: "INSERT INTO notes(title, createdAt) VALUES (?, ?)")
        try db.transaction {
            for day in 1...7 {
                try statement.execute(arguments: ["Day \(day)", Date(timeIntervalSinceNow: Double(day) * 86_400)])
            }
        }
        #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM notes") == 8)

        try db.transaction {
            for week in 2...4 {
                try statement.execute(binding: "Week \(week)", Date(timeIntervalSinceNow: Double(week) * 604_800))
            }
        }
        #expect(try String.fetchAll(db, sql: "SELECT title FROM notes WHERE title LIKE 'Week%'") == ["Week 2", "Week 3", "Week 4"])

        let rename = try db.makeStatement(sql: "UPDATE notes SET title = :title WHERE title = :old")
        try rename.execute(named: ("title", "Week two"), ("old", "Week 2"))
        #expect(try String.fetchAll(db, sql: "SELECT title FROM notes WHERE title LIKE 'Week%' ORDER BY title") == ["Week 3", "Week 4", "Week two"])

        do {
            _ = try Int.fetchAll(db, sql: "SELECT body FROM notes")
        } catch let error as DatabaseDecodingError {
            print(error)  // cannot read TEXT as Int in column "body" (index 0) of: SELECT body FROM notes
        }
        let bodies = try String?.fetchAll(db, sql: "SELECT body FROM notes ORDER BY id")
        #expect(bodies.first == "Milk, eggs, bread" && bodies.dropFirst().allSatisfy { $0 == nil })
    }

    @Test func gettingStartedWithAQueue() async throws {
        func synchronousPart() throws -> (DatabaseQueue, Int) {
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("notes.sqlite").path
            removeDatabase(atPath: path)
            let queue = try DatabaseQueue(path: path)
            try queue.write { db in
                try db.execute(sql: "CREATE TABLE IF NOT EXISTS notes(id INTEGER PRIMARY KEY, title TEXT NOT NULL)")
            }
            let noteCount = try queue.read { db in
                try Int.fetchOne(db, sql: "SELECT count(*) FROM notes") ?? 0
            }
            return (queue, noteCount)
        }
        let (queue, noteCount) = try synchronousPart()
        #expect(noteCount == 0)

        func addNote(_ title: String, to queue: DatabaseQueue) async throws -> Int {
            try await queue.write { db in
                try db.execute(sql: "INSERT INTO notes(title) VALUES (?)", arguments: [title])
            }
            return try await queue.read { db in
                try Int.fetchOne(db, sql: "SELECT count(*) FROM notes") ?? 0
            }
        }
        #expect(try await addNote("Written from a task", to: queue) == 1)
    }

    // MARK: - The documents match this file

    @Test(arguments: ["README.md", "Sources/Strata/Strata.docc/GettingStarted.md", "Sources/Strata/Strata.docc/TypedQueries.md", "Sources/Strata/Strata.docc/Records.md", "Sources/Strata/Strata.docc/ImportingData.md", "Sources/Strata/Strata.docc/ConcurrencyAndObservation.md"])
    func everySwiftExampleAppearsInThisFile(_ document: String) throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent(document), encoding: .utf8)
        // `@Record` examples are compiled in the macros' test target.
        let macroExamples = root.appendingPathComponent("Tests/StrataMacrosTests/DocumentationMacroTests.swift").path
        let source = try (String(contentsOfFile: #filePath, encoding: .utf8) + "\n" + String(contentsOfFile: macroExamples, encoding: .utf8))
            .split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        let blocks = swiftBlocks(in: text).filter { !$0.hasPrefix("// Package.swift") }
        #expect(!blocks.isEmpty)
        for block in blocks {
            var position = 0
            for line in block.split(separator: "\n").map({ $0.trimmingCharacters(in: .whitespaces) }) where !line.isEmpty {
                guard let found = source[position...].firstIndex(of: line) else {
                    Issue.record("\(document): this example line is not compiled in DocumentationTests.swift: \(line)")
                    break
                }
                position = found + 1
            }
        }
    }
}
