import Foundation
import Strata
import StrataTestHelpers
import Testing

@Suite struct DatabaseSchemaTests {
    func makeCatalog(_ storage: TestStorage) throws -> Database {
        let db = try storage.makeDatabase()
        try db.execute(sql: """
            CREATE TABLE authors(id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL UNIQUE);
            CREATE TABLE books(
                id INTEGER PRIMARY KEY,
                title TEXT NOT NULL DEFAULT 'untitled',
                year INT,
                isbn TEXT
            );
            CREATE TABLE book_authors(
                bookID INTEGER NOT NULL REFERENCES books(id) ON DELETE CASCADE,
                authorID INTEGER NOT NULL REFERENCES authors ON UPDATE SET NULL,
                PRIMARY KEY (bookID, authorID)
            );
            CREATE INDEX books_by_year ON books(year) WHERE year IS NOT NULL;
            CREATE UNIQUE INDEX books_by_isbn ON books(isbn, lower(title));
            CREATE VIEW recent AS SELECT * FROM books WHERE year > 2000;
            """)
        return db
    }

    @Test(arguments: TestStorage.allCases)
    func listsTablesAndViews(_ storage: TestStorage) throws {
        let db = try makeCatalog(storage)
        #expect(try db.tableNames() == ["authors", "book_authors", "books"])  // no sqlite_sequence
        #expect(try db.viewNames() == ["recent"])
        #expect(try db.tableExists("BOOKS"))
        #expect(try db.tableExists("recent"))
        #expect(try !db.tableExists("movies"))
    }

    @Test func describesColumns() throws {
        let db = try makeCatalog(.memory)
        let columns = try db.columns(in: "books")
        #expect(columns.map(\.name) == ["id", "title", "year", "isbn"])
        #expect(columns[0] == ColumnInfo(name: "id", declaredType: "INTEGER", isNotNull: false, defaultValueSQL: nil, primaryKeyIndex: 1, isHidden: false))
        #expect(columns[1] == ColumnInfo(name: "title", declaredType: "TEXT", isNotNull: true, defaultValueSQL: "'untitled'", primaryKeyIndex: 0, isHidden: false))
        #expect(columns[2].declaredType == "INT")
        #expect(try db.columns(in: "book_authors").map(\.primaryKeyIndex) == [1, 2])
        let missing = try #require(throws: SQLiteError.self) { try db.columns(in: "nothing") }
        #expect(missing.message == "no such table: nothing")
    }

    @Test func describesIndexes() throws {
        let db = try makeCatalog(.memory)
        let indexes = try db.indexes(on: "books")
        #expect(indexes.map(\.name) == ["books_by_isbn", "books_by_year"])
        #expect(indexes[0].columns == ["isbn", nil])  // nil: an expression
        #expect(indexes[0].isUnique)
        #expect(!indexes[0].isPartial)
        #expect(indexes[1] == IndexInfo(name: "books_by_year", columns: ["year"], isUnique: false, origin: "c", isPartial: true))
        let authorIndexes = try db.indexes(on: "authors")
        #expect(authorIndexes.count == 1)
        #expect(authorIndexes[0].origin == "u")
        #expect(authorIndexes[0].columns == ["name"])
        expectError(.error) { try db.indexes(on: "nothing") }
    }

    @Test func describesForeignKeys() throws {
        let db = try makeCatalog(.memory)
        let keys = try db.foreignKeys(on: "book_authors")
        #expect(Set(keys) == [
            ForeignKeyInfo(destinationTable: "books", mappings: [.init(origin: "bookID", destination: "id")], onUpdate: "NO ACTION", onDelete: "CASCADE"),
            ForeignKeyInfo(destinationTable: "authors", mappings: [.init(origin: "authorID", destination: nil)], onUpdate: "SET NULL", onDelete: "NO ACTION"),
        ])
        #expect(try db.foreignKeys(on: "books").isEmpty)
        expectError(.error) { try db.foreignKeys(on: "nothing") }
    }
}
