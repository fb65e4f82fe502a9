import Foundation
import Strata
import StrataTestHelpers
import Testing

private let authors = SQLTable("authors")
private let books = SQLTable("books")
private let id = Column<Int64>("id")
private let name = Column<String>("name")
private let title = Column<String>("title")
private let year = Column<Int?>("year")
private let isbn = Column<String?>("isbn")
private let authorID = Column<Int64>("authorID")
private let bookID = Column<Int64>("bookID")
private let pages = Column<Int>("pages")

@Suite struct SQLTableSchemaTests {
    @Test(arguments: TestStorage.allCases)
    func createsTablesWithColumnAndTableConstraints(_ storage: TestStorage) throws {
        let db = try storage.makeDatabase()
        let createAuthors = authors.create(ifNotExists: true) { t in
            t.column(id, primaryKey: .autoincrement)
            t.column(name, unique: true, check: name.length > 0, collate: .nocase)
        }
        #expect(createAuthors.sql == """
            CREATE TABLE IF NOT EXISTS "authors" ("id" INTEGER PRIMARY KEY AUTOINCREMENT NOT NULL, "name" TEXT NOT NULL UNIQUE CHECK ((length("name") > 0)) COLLATE NOCASE)
            """)
        try db.run(createAuthors)
        try db.run(createAuthors)  // IF NOT EXISTS
        try db.run(books.create { t in
            t.column(id, primaryKey: .default)
            t.column(title, defaultValue: "it's untitled")
            t.column(year, check: year > 0)
            t.column(isbn)
            t.column(pages, defaultValue: 0)
        })
        let bookAuthors = SQLTable("book_authors")
        try db.run(bookAuthors.create(withoutRowID: true) { t in
            t.column(bookID, references: books, id, onDelete: .cascade)
            t.column(authorID, references: authors, id, onDelete: .restrict, onUpdate: .cascade)
            t.primaryKey(bookID, authorID)
        })

        let columns = try db.columns(in: "books")
        #expect(columns.map(\.declaredType) == ["INTEGER", "TEXT", "INTEGER", "TEXT", "INTEGER"])
        #expect(columns.map(\.isNotNull) == [true, true, false, false, true])
        #expect(columns[1].defaultValueSQL == "'it''s untitled'")
        #expect(try db.columns(in: "book_authors").map(\.primaryKeyIndex) == [1, 2])
        #expect(Set(try db.foreignKeys(on: "book_authors").map(\.onDelete)) == ["CASCADE", "RESTRICT"])

        // The constraints hold.
        try db.run(authors.insert(name <- "Austen"))
        expectError(.constraintUnique) { try db.run(authors.insert(name <- "AUSTEN")) }  // NOCASE
        expectError(.constraintCheck) { try db.run(authors.insert(name <- "")) }
        expectError(.constraintCheck) { try db.run(books.insert(year <- -1)) }
        try db.run(books.insert(year <- 1813))
        #expect(try String.fetchOne(db, books.select(title)) == "it's untitled")
        try db.run(bookAuthors.insert(bookID <- 1, authorID <- 1))
        expectError(.constraintForeignKey) { try db.run(bookAuthors.insert(bookID <- 1, authorID <- 99)) }
        expectError(.constraint) { try db.run(authors.delete()) }  // RESTRICT
        try db.run(books.delete())  // CASCADE removes the join row
        #expect(try bookAuthors.fetchCount(db) == 0)
    }

    @Test func createsTableLevelConstraints() throws {
        let db = try Database()
        let editions = SQLTable("editions")
        let number = Column<Int>("number")
        let publishedAt = Column<String>("publishedAt")
        try db.run(books.create { t in
            t.column(id, primaryKey: .default)
            t.column(title)
        })
        let create = editions.create { t in
            t.column(bookID)
            t.column(number)
            t.column(isbn)
            t.column(publishedAt, defaultExpression: "CURRENT_DATE")
            t.primaryKey(bookID, number)
            t.unique(isbn, number)
            t.check(number > 0)
            t.foreignKey([bookID], references: books, [id], onDelete: .cascade, onUpdate: .noAction)
        }
        #expect(create.sql == """
            CREATE TABLE "editions" ("bookID" INTEGER NOT NULL, "number" INTEGER NOT NULL, "isbn" TEXT, "publishedAt" TEXT NOT NULL DEFAULT (CURRENT_DATE), PRIMARY KEY ("bookID", "number"), UNIQUE ("isbn", "number"), CHECK (("number" > 0)), FOREIGN KEY ("bookID") REFERENCES "books" ("id") ON DELETE CASCADE ON UPDATE NO ACTION)
            """)
        try db.run(create)
        try db.run(books.insert(id <- 1, title <- "Emma"))
        try db.run(editions.insert(bookID <- 1, number <- 1, isbn <- "A"))
        #expect(try String.fetchOne(db, editions.select(publishedAt))?.count == 10)  // YYYY-MM-DD
        expectError(.constraintPrimaryKey) { try db.run(editions.insert(bookID <- 1, number <- 1, isbn <- "B")) }
        expectError(.constraintCheck) { try db.run(editions.insert(bookID <- 1, number <- 0)) }
        expectError(.constraintForeignKey) { try db.run(editions.insert(bookID <- 2, number <- 1)) }
        try db.run(books.insert(id <- 2, title <- "Persuasion"))
        expectError(.constraintUnique) { try db.run(editions.insert(bookID <- 2, number <- 1, isbn <- "A")) }
        try db.run(books.filter(id == 1).delete())
        #expect(try editions.fetchCount(db) == 0)
    }

    @Test func createsTemporaryAndStrictTables() throws {
        let db = try Database()
        let scratch = SQLTable("scratch")
        let statement = scratch.create(temporary: true, strict: true) { t in
            t.column(id, primaryKey: .default)
            t.column(Column<Int>("count"))
        }
        #expect(statement.sql == "CREATE TEMPORARY TABLE \"scratch\" (\"id\" INTEGER PRIMARY KEY NOT NULL, \"count\" INTEGER NOT NULL) STRICT")
        try db.run(statement)
        expectError(.constraintDataType) { try db.execute(sql: "INSERT INTO scratch(count) VALUES ('many')") }
        #expect(try db.tableNames().isEmpty)  // temporary tables live in `temp`
    }

    @Test func createsUniquePartialAndExpressionIndexes() throws {
        let db = try Database()
        try db.run(books.create { t in
            t.column(id, primaryKey: .default)
            t.column(title)
            t.column(year)
            t.column(isbn)
        })
        let unique = books.createIndex(isbn, unique: true, where: isbn != nil)
        #expect(unique.sql == "CREATE UNIQUE INDEX \"index_books_on_isbn\" ON \"books\" (\"isbn\") WHERE (\"isbn\" IS NOT NULL)")
        try db.run(unique)
        let recent = books.createIndex(year.desc, name: "recent_books", ifNotExists: true, where: year > 2000)
        #expect(recent.sql == "CREATE INDEX IF NOT EXISTS \"recent_books\" ON \"books\" (\"year\" DESC) WHERE (\"year\" > 2000)")
        try db.run(recent)
        try db.run(books.createIndex(title.lowercased, name: "books_by_lower_title"))
        let indexes = try db.indexes(on: "books")
        #expect(indexes.map(\.name) == ["books_by_lower_title", "index_books_on_isbn", "recent_books"])
        #expect(indexes[0].columns == [nil])
        #expect(indexes[1].isUnique && indexes[1].isPartial)
        try db.run(books.insert(title <- "A", isbn <- nil))
        try db.run(books.insert(title <- "B", isbn <- nil))  // partial: NULLs are not indexed
        try db.run(books.insert(title <- "C", isbn <- "123"))
        expectError(.constraintUnique) { try db.run(books.insert(title <- "D", isbn <- "123")) }
        try db.run(SQLSchemaStatement.dropIndex("recent_books"))
        try db.run(SQLSchemaStatement.dropIndex("recent_books", ifExists: true))
        #expect(try db.indexes(on: "books").count == 2)
    }

    @Test func altersRenamesAndDropsTables() throws {
        let db = try Database()
        try db.run(books.create { t in
            t.column(id, primaryKey: .default)
            t.column(title)
        })
        try db.run(books.insert(title <- "Emma"))
        try db.run(books.addColumn(pages, defaultValue: 100))
        try db.run(books.addColumn(isbn))
        #expect(try Int.fetchOne(db, books.select(pages)) == 100)
        let name = Column<String>("name")
        try db.run(books.renameColumn(title, to: name))
        #expect(try String.fetchOne(db, books.select(name)) == "Emma")
        try db.run(books.rename(to: "novels"))
        #expect(try db.tableNames() == ["novels"])
        try db.run(SQLTable("novels").drop())
        try db.run(SQLTable("novels").drop(ifExists: true))
        expectError(.error) { try db.run(SQLTable("novels").drop()) }
        #expect(try db.tableNames().isEmpty)
    }

    @Test func createsViews() throws {
        let db = try Database()
        try db.run(books.create { t in
            t.column(id, primaryKey: .default)
            t.column(title)
            t.column(year)
        })
        try db.run([1811, 1813, 1815].map { (published: Int) in books.insert(title <- "Book \(published)", year <- published) })
        let recent = SQLTable("recent_books")
        let create = recent.createView(as: books.select(title).filter(year > 1812))
        #expect(create.sql == "CREATE VIEW \"recent_books\" AS SELECT \"title\" FROM \"books\" WHERE (\"year\" > 1812)")
        try db.run(create)
        let recentTitles = try String.fetchAll(db, recent.select(title).order(title))
        #expect(recentTitles == ["Book 1813", "Book 1815"])
        try db.run(SQLSchemaStatement.dropView("recent_books"))
        #expect(try db.viewNames().isEmpty)
    }

    @Test func inlinesValuesSafelyInSchemaStatements() throws {
        let db = try Database()
        let note = Column<String>("note")
        let statement = SQLTable("t").create { t in
            t.column(note, check: note != "it's ? \"odd\"", defaultValue: "x'); DROP TABLE t;--")
        }
        #expect(statement.sql == """
            CREATE TABLE "t" ("note" TEXT NOT NULL CHECK (("note" <> 'it''s ? "odd"')) DEFAULT 'x''); DROP TABLE t;--')
            """)
        try db.run(statement)
        try db.execute(sql: "INSERT INTO t DEFAULT VALUES")
        #expect(try String.fetchOne(db, sql: "SELECT note FROM t") == "x'); DROP TABLE t;--")
        expectError(.constraintCheck) { try db.execute(sql: "INSERT INTO t VALUES (?)", arguments: ["it's ? \"odd\""]) }
    }

    @Test func searchesFullTextWithFTS5() throws {
        let db = try Database()
        let search = SQLTable("notes_search")
        let body = Column<String>("body")
        let create = search.createFTS5(title, body, tokenizer: "porter unicode61")
        #expect(create.sql == "CREATE VIRTUAL TABLE \"notes_search\" USING fts5(\"title\", \"body\", tokenize = 'porter unicode61')")
        try db.run(create)
        try db.run([
            search.insert(title <- "Groceries", body <- "milk, eggs and bread for the week"),
            search.insert(title <- "Movies", body <- "watch Heat again; heat is the best heist movie"),
            search.insert(title <- "Heating", body <- "call the plumber about the boiler"),
        ])
        let hits = try String.fetchAll(db, search.select(title).match("heat").order(search.rank))
        #expect(hits == ["Movies", "Heating"])  // porter stems "heating" to "heat"
        #expect(try String.fetchAll(db, search.select(title).filter(title.match("heat"))) == ["Heating"])
        let ranked = try Row.fetchAll(db, search.select(title, search.bm25(10, 1).aliased("score")).match("heat OR milk").order(Column<Double>("score")))
        #expect(ranked.count == 3)
        #expect(try ranked.map { try $0[Column<Double>("score")] } == ranked.map { try $0[Column<Double>("score")] }.sorted())
        expectError(.error) { try Row.fetchAll(db, search.match("AND AND")) }  // a malformed FTS5 query
    }
}
