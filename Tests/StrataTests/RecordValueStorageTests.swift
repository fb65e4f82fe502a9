import Foundation
import Strata
import StrataTestHelpers
import Testing

/// Enums and single-value types inside records are stored as plain column
/// values, with no conformance beyond `Codable`; structured values as JSON.
fileprivate struct Product: DatabaseRecord, Equatable {
    enum Category: String, Codable { case food, drinks, tools }
    enum Priority: Int, Codable { case low = 1, high = 9 }
    /// The README's enum: convertible, not CaseIterable, no "" case.
    enum Mood: String, Codable, DatabaseValueConvertible { case happy, sad }
    /// A single-value wrapper, as people write them for validated strings.
    struct Email: Codable, Equatable {
        var address: String
        init(_ address: String) { self.address = address }
        init(from decoder: any Decoder) throws { address = try decoder.singleValueContainer().decode(String.self) }
        func encode(to encoder: any Encoder) throws {
            var container = encoder.singleValueContainer()
            try container.encode(address)
        }
    }
    struct Dimensions: Codable, Equatable { var width: Double; var height: Double }

    var id: Int64?
    var name: String
    var category: Category
    var priority: Priority
    var mood: Mood
    var supplier: Email
    var backup: Category?
    var size: Dimensions
}

/// A record whose enum has associated values: no empty value can be made.
fileprivate struct Drawing: DatabaseRecord {
    enum Shape: Codable { case circle(radius: Double), square(side: Double) }
    var id: Int64?
    var shape: Shape
}

@Suite struct RecordValueStorageTests {
    fileprivate func makeProduct(_ name: String, _ category: Product.Category) -> Product {
        Product(
            id: nil, name: name, category: category, priority: .high, mood: .sad,
            supplier: .init("sales@example.com"), backup: nil, size: .init(width: 2, height: 3))
    }

    @Test func derivesTheTableOfARecordWithEnumsAndWrappers() throws {
        #expect(try Product.createTableSQL() == """
            CREATE TABLE "product" ("id" INTEGER PRIMARY KEY, "name" TEXT NOT NULL, "category" TEXT NOT NULL, "priority" INTEGER NOT NULL, "mood" TEXT NOT NULL, "supplier" TEXT NOT NULL, "backup" TEXT, "size" TEXT NOT NULL)
            """)
    }

    @Test(arguments: TestStorage.allCases)
    func storesRawValuesAndSingleValuesPlain(_ storage: TestStorage) throws {
        let db = try storage.makeDatabase()
        try db.create(table: Product.self)
        // The first insert prepares the statement, the second binds into it:
        // both paths store the same values.
        var bread = makeProduct("bread", .food)
        var saw = makeProduct("saw", .tools)
        saw.backup = .drinks
        try bread.insert(db)
        try saw.insert(db)
        let rows = try Row.fetchAll(db, sql: "SELECT category, typeof(priority) AS p, priority, mood, supplier, backup, size FROM product ORDER BY id")
        #expect(try rows.map { try $0.decode(String.self, forColumn: "category") } == ["food", "tools"])
        #expect(try rows.map { try $0.decode(String.self, forColumn: "p") } == ["integer", "integer"])
        #expect(try rows.map { try $0.decode(Int.self, forColumn: "priority") } == [9, 9])
        #expect(try rows.map { try $0.decode(String.self, forColumn: "mood") } == ["sad", "sad"])
        #expect(try rows.map { try $0.decode(String.self, forColumn: "supplier") } == ["sales@example.com", "sales@example.com"])
        #expect(try rows.map { try $0.decode(String?.self, forColumn: "backup") } == [nil, "drinks"])
        #expect(try rows[0].decode(String.self, forColumn: "size") == #"{"height":3,"width":2}"#)

        // Filtering on the plain value finds the row; records read back whole.
        let food = try Product.fetchAll(db, Product.table.filter(Column<String>("category") == "food"))
        #expect(food == [bread])
        #expect(try Product.fetchAll(db) == [bread, saw])

        // Update and save keep the plain form too.
        saw.category = .drinks
        try saw.update(db)
        #expect(try String.fetchOne(db, sql: "SELECT category FROM product WHERE id = ?", arguments: [saw.id]) == "drinks")
    }

    @Test func readsValuesStoredAsJSONTextByEarlierVersions() throws {
        let db = try Database()
        try db.create(table: Product.self)
        try db.execute(sql: """
            INSERT INTO product VALUES (1, 'old', '"food"', 1, 'happy', '"a@example.com"', NULL, '{"width":1,"height":1}')
            """)
        let product = try #require(try Product.fetchOne(db, key: 1))
        #expect(product.category == .food && product.priority == .low)
        // A string wrapper cannot tell quotes it was given from quotes an
        // earlier version added: such rows read as stored (see the Records
        // article for the one-line migration).
        #expect(product.supplier == .init(#""a@example.com""#))
    }

    @Test func anUnknownRawValueThrowsNamingTheColumn() throws {
        let db = try Database()
        try db.create(table: Product.self)
        try db.execute(sql: "INSERT INTO product VALUES (1, 'x', 'toys', 1, 'happy', 'a@example.com', NULL, '{\"width\":1,\"height\":1}')")
        let error = try #require(throws: DatabaseDecodingError.self) { try Product.fetchAll(db) }
        #expect(error.column == "category")
        #expect(error.reason == .valueMismatch)
        #expect(error.typeName == "Category")
    }

    @Test func explainsATypeWhoseColumnsCannotBeDerivedNamingTheTable() throws {
        let error = try #require(throws: RecordError.self) { try Drawing.createTableSQL() }
        #expect(error.kind == .unsupportedType)
        #expect(error.tableName == "drawing")
        #expect(error.description.hasPrefix("drawing: "))
        #expect(error.description.contains("\"shape\""))
        #expect(error.description.contains("Shape"))
    }
}
