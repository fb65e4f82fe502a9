import Foundation
import Strata
import StrataTestHelpers
import Testing

@Suite struct SQLLiteralTests {
    @Test func bindsEveryInterpolatedValue() {
        let likes = 3
        let id: Int64? = 7
        let title = "Robert'); DROP TABLE movies;--"
        let literal: SQLLiteral = "UPDATE movies SET likes = \(likes) WHERE id = \(id) AND title = \(title)"
        #expect(literal.sql == "UPDATE movies SET likes = ? WHERE id = ? AND title = ?")
        #expect(literal.arguments.map { $0?.databaseValue } == [3, 7, "Robert'); DROP TABLE movies;--"])
        #expect(literal.description == literal.sql)
    }

    @Test func quotesIdentifiersOnlyWhenAsked() {
        let table = "order"
        let literal: SQLLiteral = "SELECT * FROM \(identifier: table) WHERE \(identifier: "a\"b") IN \(list: [1, 2, 3])"
        #expect(literal.sql == "SELECT * FROM \"order\" WHERE \"a\"\"b\" IN (?, ?, ?)")
        #expect(literal.arguments.count == 3)
        #expect(quoteIdentifier("movies") == "\"movies\"")
    }

    @Test func bindsNilAsNull() throws {
        let db = try Database()
        let missing: String? = nil
        #expect(try Bool.fetchOne(db, literal: "SELECT \(missing) IS NULL") == true)
    }

    @Test(arguments: TestStorage.allCases)
    func runsAndFetchesThroughEveryLiteralEntryPoint(_ storage: TestStorage) throws {
        let db = try storage.makeDatabase()
        let name = "it's"
        try db.execute(literal: "CREATE TABLE \(identifier: "my table")(id INTEGER PRIMARY KEY, name TEXT)")
        try db.execute(literal: "INSERT INTO \(identifier: "my table")(name) VALUES (\(name)), (\("other"))")
        #expect(try String.fetchAll(db, literal: "SELECT name FROM \(identifier: "my table") ORDER BY id") == [name, "other"])
        #expect(try Row.fetchOne(db, literal: "SELECT * FROM \(identifier: "my table") WHERE name = \(name)")?["id"] as Int? == 1)
        #expect(try Row.fetchAll(db, literal: "SELECT * FROM \(identifier: "my table")").count == 2)
        let cursor = try Row.fetchCursor(db, literal: "SELECT name FROM \(identifier: "my table") WHERE id > \(1)")
        #expect(try cursor.next()?["name"] as String? == "other")
    }

    @Test func embedsTypedExpressionsWithTheirArguments() throws {
        let db = try Database()
        let year = Column<Int>("year")
        let literal: SQLLiteral = "SELECT \(year + 10) FROM (SELECT \(2000) AS year) WHERE \(year > 1990) AND 1 = \(1)"
        #expect(literal.sql == "SELECT (\"year\" + ?) FROM (SELECT ? AS year) WHERE (\"year\" > ?) AND 1 = ?")
        #expect(try Int.fetchOne(db, literal: literal) == 2010)
    }
}
