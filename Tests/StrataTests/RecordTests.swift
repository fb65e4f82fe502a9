import Foundation
import Strata
import StrataTestHelpers
import Testing

/// The seeds' contacts app: a table type that knows its schema.
fileprivate struct Contact: DatabaseRecord, Equatable {
    enum Kind: String, Codable, DatabaseValueConvertible, CaseIterable {
        case friend, colleague
    }

    var id: Int64?
    var name: String
    var email: String
    var phone: String?
    var kind: Kind
    var birthday: Date?
    var avatar: Data?
    var externalID: UUID
    var website: URL?
    var balance: Decimal

    static let databaseTableName = "contacts"
    static let databaseUniqueKeys = [["email"]]
}

/// A record without an `id`: identified by its rowid, no primary key.
fileprivate struct LogLine: DatabaseRecord, Equatable {
    var message: String
    var level: Int
}

/// A record with a composite key.
fileprivate struct Membership: DatabaseRecord, Equatable {
    var groupID: Int64
    var userID: Int64
    var role: String
    static let databasePrimaryKey = ["groupID", "userID"]
}

@Suite struct RecordTests {
    fileprivate func makeContact(_ name: String, email: String) -> Contact {
        Contact(
            id: nil, name: name, email: email, phone: nil, kind: .friend,
            birthday: Date(timeIntervalSince1970: 0), avatar: Data([1, 2]),
            externalID: UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F")!,
            website: URL(string: "https://example.com"), balance: Decimal(string: "12.50")!)
    }

    @Test func derivesColumnTypesFromPropertyTypes() throws {
        #expect(try Contact.createTableSQL() == """
            CREATE TABLE "contacts" ("id" INTEGER PRIMARY KEY, "name" TEXT NOT NULL, "email" TEXT NOT NULL, "phone" TEXT, "kind" TEXT NOT NULL, "birthday" TEXT, "avatar" BLOB, "externalID" TEXT NOT NULL, "website" TEXT, "balance" TEXT NOT NULL, UNIQUE ("email"))
            """)
        #expect(try LogLine.createTableSQL() == #"CREATE TABLE "logLine" ("message" TEXT NOT NULL, "level" INTEGER NOT NULL)"#)
        #expect(LogLine.databasePrimaryKey.isEmpty)
        #expect(try Membership.createTableSQL() == """
            CREATE TABLE "membership" ("groupID" INTEGER NOT NULL, "userID" INTEGER NOT NULL, "role" TEXT NOT NULL, PRIMARY KEY ("groupID", "userID"))
            """)
    }

    @Test(arguments: TestStorage.allCases)
    func contactsFlow(_ storage: TestStorage) throws {
        let db = try storage.makeDatabase()
        try db.create(table: Contact.self)
        var ada = makeContact("Ada", email: "ada@example.com")
        try ada.insert(db)
        let fetched = try #require(try Contact.fetchOne(db, key: ada.id!))
        #expect(fetched == ada)
        #expect(try Contact.fetchOne(db, key: 999) == nil)  // a missing id gives nil
        #expect(try Contact.fetchOne(db, keys: ["email": "ada@example.com"])?.name == "Ada")

        // A constraint violation is a typed error with SQLite's message.
        var twin = makeContact("Twin", email: "ada@example.com")
        let error = try #require(throws: SQLiteError.self) { try twin.insert(db) }
        #expect(error.code == .constraintUnique)
        #expect(error.message == "UNIQUE constraint failed: contacts.email")
        #expect(twin.id == nil)
    }

    @Test func recordsWithoutAKeyOrWithACompositeKey() throws {
        let db = try Database()
        try db.create(table: LogLine.self)
        try db.create(table: Membership.self)
        _ = try LogLine.insertAll(db, [LogLine(message: "start", level: 1), LogLine(message: "stop", level: 2)])
        #expect(try LogLine.fetchAll(db) == [LogLine(message: "start", level: 1), LogLine(message: "stop", level: 2)])
        #expect(throws: RecordError.self) { try LogLine(message: "start", level: 1).delete(db) }

        var membership = Membership(groupID: 1, userID: 2, role: "member")
        try membership.insert(db)
        membership.role = "admin"
        try membership.update(db)
        #expect(try Membership.fetchOne(db, keys: ["groupID": 1, "userID": 2])?.role == "admin")
        try membership.upsert(db)
        #expect(try membership.exists(db))
        #expect(try membership.delete(db))
        #expect(throws: RecordError.self) { try Membership.fetchOne(db, key: 1) }
    }

    @Test func rowsThatDoNotFitTheTypeThrowNamingColumnTypeAndSQL() throws {
        let db = try Database()
        try db.create(table: Note.self)
        try db.execute(sql: """
            INSERT INTO notes VALUES (1, 'ok', 'text', 'Helvetica', 12, '2023-01-01 00:00:00.000', '2023-01-01 00:00:00.000', '[]');
            """)
        // A missing column.
        let missing = try #require(throws: DatabaseDecodingError.self) {
            try Note.fetchAll(db, sql: "SELECT id, title FROM notes")
        }
        #expect(missing.reason == .columnNotFound)
        #expect(missing.column == "text")
        #expect(missing.sql == "SELECT id, title FROM notes")
        // NULL for a non-optional property.
        let null = try #require(throws: DatabaseDecodingError.self) {
            try Note.fetchAll(db, sql: "SELECT id, NULL AS title, text, fontName, fontSize, creationDate, modificationDate, images FROM notes")
        }
        #expect(null.reason == .unexpectedNull && null.column == "title" && null.typeName == "String")
        // A value of the wrong type.
        let wrong = try #require(throws: DatabaseDecodingError.self) {
            try Note.fetchAll(db, sql: "SELECT id, title, text, fontName, 'large' AS fontSize, creationDate, modificationDate, images FROM notes")
        }
        #expect(wrong.reason == .valueMismatch && wrong.column == "fontSize" && wrong.typeName == "Double")
        // Malformed JSON.
        try db.execute(sql: "UPDATE notes SET images = '[{\"frameX\": 1' WHERE id = 1")
        let json = try #require(throws: DatabaseDecodingError.self) { try Note.fetchAll(db) }
        #expect(json.reason == .invalidJSON && json.column == "images" && json.typeName == "Array<ImageDescriptor>")
        #expect(json.description.contains("cannot read Array<ImageDescriptor> from invalid JSON in column \"images\""))
        #expect(json.sql == "SELECT * FROM \"notes\"")
    }

    @Test func readsSubsetsAndExtraColumns() throws {
        let db = try Database()
        try db.create(table: Contact.self)
        var ada = makeContact("Ada", email: "ada@example.com")
        ada.phone = "555"
        try ada.insert(db)
        // Extra columns are ignored; optional properties may be left out of the query.
        let rows = try Contact.fetchAll(db, sql: "SELECT *, 42 AS extra FROM contacts")
        #expect(rows == [ada])
        let cursor = try Contact.fetchCursor(db, Contact.table.filter(Column<String>("name") == "Ada"))
        #expect(try cursor.next()?.phone == "555")
        #expect(try cursor.next() == nil)
    }
}

/// A SwiftyDB-style model class.
final class Dog: DatabaseRecord {
    var id: Int64?
    var name: String
    var birthDate: Date?
    var owner: String? = nil  // outside the coding keys: never stored

    enum CodingKeys: String, CodingKey {
        case id, name, birthDate
    }

    init(name: String) {
        self.name = name
    }

    static let databaseTableName = "dogs"
}

@Suite struct ClassRecordTests {
    @Test func storesAFinalClass() throws {
        let db = try Database()
        try db.create(table: Dog.self)
        #expect(try db.columns(in: "dogs").map(\.name) == ["id", "name", "birthDate"])
        let rex = Dog(name: "Rex")
        rex.owner = "Ann"
        try rex.insert(db)
        #expect(rex.id == 1)
        rex.name = "Rex II"
        try rex.update(db)
        let fetched = try #require(try Dog.fetchOne(db, key: 1))
        #expect(fetched.name == "Rex II")
        #expect(fetched.owner == nil)
        #expect(try fetched.delete(db))
    }
}

/// The user's documents name the key column `ID`.
fileprivate struct Person: DatabaseRecord, Equatable {
    var id: Int64?
    var name: String
    enum CodingKeys: String, CodingKey {
        case id = "ID"
        case name
    }
}

/// A class whose key property is renamed by its coding keys.
fileprivate final class Gadget: DatabaseRecord {
    var identifier: Int?
    var label: String
    var isSelected = false  // not stored
    enum CodingKeys: String, CodingKey {
        case identifier = "gadget_id"
        case label
    }
    static let databasePrimaryKey = ["gadget_id"]
    init(label: String) { self.label = label }
}

@Suite struct RecordKeyTests {
    @Test(arguments: TestStorage.allCases)
    func findsAnUpperCaseIDColumnAsThePrimaryKey(_ storage: TestStorage) throws {
        #expect(Person.databasePrimaryKey == ["ID"])
        #expect(try Person.createTableSQL() == #"CREATE TABLE "person" ("ID" INTEGER PRIMARY KEY, "name" TEXT NOT NULL)"#)
        let db = try storage.makeDatabase()
        try db.create(table: Person.self)
        var ann = Person(id: nil, name: "Ann")
        try ann.insert(db)
        #expect(ann.id == 1)
        var bob = Person(id: nil, name: "Bob")
        try bob.save(db)
        #expect(bob.id == 2)
        ann.name = "Ann B."
        try ann.save(db)
        try ann.save(db)
        #expect(try Person.fetchAll(db, sql: "SELECT * FROM person ORDER BY ID") == [ann, bob])
        #expect(try Person.fetchOne(db, key: 2) == bob)
        #expect(try ann.delete(db))
    }

    @Test func saveRefusesARecordWithoutAPrimaryKey() throws {
        let db = try Database()
        try db.execute(sql: "CREATE TABLE logLine(message TEXT NOT NULL, level INTEGER NOT NULL)")
        var line = LogLineForSave(message: "start", level: 1)
        let error = try #require(throws: RecordError.self) { try line.save(db) }
        #expect(error.kind == .missingPrimaryKey)
        #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM logLine") == 0)
    }

    @Test func aClassRecordKeepsItsIdentityWhenInserted() throws {
        let db = try Database()
        try db.create(table: Dog.self)
        let rex = Dog(name: "Rex")
        rex.owner = "Ann"
        // Through the protocol's mutating insert, as generic code calls it.
        var handle = rex
        try insertAnyRecord(&handle, db)
        #expect(handle === rex)
        #expect(rex.id == 1)
        #expect(rex.owner == "Ann")  // a property outside the coding keys is untouched
        // Saving the object the app holds updates its row, never adds one;
        // a `let` is enough for a class.
        rex.name = "Rex II"
        try rex.save(db)
        try saveAnyRecord(&handle, db)
        let fido = Dog(name: "Fido")
        try fido.insert(db)
        #expect(fido.id == 2)
        try db.execute(sql: "DELETE FROM dogs WHERE id = 2")
        #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM dogs") == 1)
        #expect(try String.fetchOne(db, sql: "SELECT name FROM dogs") == "Rex II")
    }

    @Test func aClassWithARenamedKeyGetsItsIdToo() throws {
        let db = try Database()
        try db.create(table: Gadget.self)
        let gadget = Gadget(label: "clock")
        gadget.isSelected = true
        var handle = gadget
        try insertAnyRecord(&handle, db)
        #expect(handle === gadget && gadget.identifier == 1 && gadget.isSelected)
        try saveAnyRecord(&handle, db)
        #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM gadget") == 1)
    }
}

fileprivate struct LogLineForSave: DatabaseRecord {
    var message: String
    var level: Int
    static let databaseTableName = "logLine"
}

/// Generic code reaches the protocol's mutating methods, whatever the type.
fileprivate func insertAnyRecord<Record: DatabaseRecord>(_ record: inout Record, _ db: Database) throws {
    try record.insert(db)
}

fileprivate func saveAnyRecord<Record: DatabaseRecord>(_ record: inout Record, _ db: Database) throws {
    try record.save(db)
}
