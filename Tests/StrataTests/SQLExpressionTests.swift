import Foundation
import Strata
import StrataTestHelpers
import Testing

private let id = Column<Int64>("id")
private let title = Column<String>("title")
private let year = Column<Int>("year")
private let rating = Column<Double>("rating")
private let url = Column<String?>("url")
private let likes = Column<Int?>("likes")

/// Expressions: the SQL text they make, and what SQLite does with it.
@Suite struct SQLExpressionTests {
    /// The value of an expression, computed by SQLite on one movie row.
    func evaluate<V: DatabaseValueConvertible>(_ expression: SQLExpression<V>) throws -> V? {
        let db = try Database()
        try db.execute(sql: """
            CREATE TABLE movies(id INTEGER PRIMARY KEY, title TEXT, year INT, rating REAL, url TEXT, likes INT);
            INSERT INTO movies VALUES (7, ' Heat ', 1995, 8.3, NULL, 2);
            """)
        return try V.fetchOne(db, SQLTable("movies").select(expression))
    }

    @Test func comparisonsBindTheirValues() {
        let expression = year > 1990
        #expect(expression.sqlLiteral.sql == "(\"year\" > ?)")
        #expect(expression.sqlLiteral.arguments.map { $0?.databaseValue } == [1990])
        #expect((1990 < year).sqlLiteral.sql == "(? < \"year\")")
        #expect((year == year).sqlLiteral.sql == "(\"year\" = \"year\")")
        #expect((title != "Heat").sqlLiteral.sql == "(\"title\" <> ?)")
        #expect((year >= 1 && year <= 2).sqlLiteral.sql == "((\"year\" >= ?) AND (\"year\" <= ?))")
        #expect((!(year < 1) || rating > 2.5).sqlLiteral.sql == "(NOT (\"year\" < ?) OR (\"rating\" > ?))")
    }

    @Test func comparingWithNilIsIsNull() {
        #expect((url == nil).sqlLiteral.sql == "(\"url\" IS NULL)")
        #expect((url != nil).sqlLiteral.sql == "(\"url\" IS NOT NULL)")
        #expect((url == "x").sqlLiteral.sql == "(\"url\" = ?)")
        #expect((likes == Column<Int>("other")).sqlLiteral.sql == "(\"likes\" = \"other\")")
        #expect(url.is(nil).sqlLiteral.sql == "(\"url\" IS ?)")
    }

    @Test func evaluatesArithmeticAndText() throws {
        #expect(try evaluate(year + 5) == 2000)
        #expect(try evaluate((year - 1985) * 2) == 20)
        #expect(try evaluate(year / 2) == 997)
        #expect(try evaluate(year % 10) == 5)
        #expect(try evaluate(-year) == -1995)
        #expect(try evaluate(rating * 10) == 83)
        #expect(try evaluate(likes + 1) == 3)
        #expect(try evaluate(title.trimmed + "!") == "Heat!")
        #expect(try evaluate(title.trimmed.uppercased) == "HEAT")
        #expect(try evaluate(title.trimmed.lowercased) == "heat")
        #expect(try evaluate(title.length) == 6)
        #expect(try evaluate(title.trimmed(" H")) == "eat")
        #expect(try evaluate(title.substring(from: 2, length: 3)) == "Hea")
        #expect(try evaluate(title.replacing("Heat", with: "Cold")) == " Cold ")
        #expect(try evaluate(title.position(of: "eat")) == 3)
        #expect(try evaluate(rating.rounded()) == 8.0)
        #expect(try evaluate((0 - year).absoluteValue) == 1995)
    }

    @Test func evaluatesPredicates() throws {
        #expect(try evaluate(title.like("%heat%")) == true)
        #expect(try evaluate(title.like("50!%", escape: "!")) == false)
        #expect(try evaluate(title.glob("*Heat*")) == true)
        #expect(try evaluate(title.glob("*heat*")) == false)
        #expect(try evaluate(year.in([1979, 1995])) == true)
        #expect(try evaluate(year.notIn([1979, 1995])) == false)
        #expect(try evaluate(year.in([Int]())) == false)
        #expect(try evaluate(year.between(1990, and: 1999)) == true)
        #expect(try evaluate(url.isNull) == true)
        #expect(try evaluate(likes.isNotNull) == true)
        #expect(try evaluate(url.ifNull("none")) == "none")
        #expect(try evaluate(coalesce(url, Column<String?>("title"))) == " Heat ")
        #expect(try evaluate(coalesce(url, default: "none")) == "none")
        #expect(try evaluate(title.cast(as: Int.self)) == 0)
        #expect(try evaluate(year.cast(as: String.self)) == "1995")
        #expect(try evaluate(title.collating(.nocase) == " HEAT ") == true)
    }

    @Test func evaluatesCase() throws {
        let era = SQLCase(when: year < 1970, then: "classic").when(year < 2000, then: "modern").otherwise("recent")
        #expect(era.sqlLiteral.sql == "CASE WHEN (\"year\" < ?) THEN ? WHEN (\"year\" < ?) THEN ? ELSE ? END")
        #expect(try evaluate(era) == "modern")
        #expect(try evaluate(SQLCase(when: year > 2000, then: "new").end) == nil)
    }

    @Test func typedRawExpressionsBindInterpolatedValues() throws {
        let next = SQLExpression<Int>(literal: "\(year) + \(10)")
        #expect(next.sqlLiteral.sql == "\"year\" + ?")
        #expect(try evaluate(next) == 2005)
        #expect(try evaluate(SQLExpression(value: "constant")) == "constant")
    }

    @Test func hostileStringsStayData() throws {
        let hostile = "Robert'); DROP TABLE movies;--"
        let expression = title == hostile
        #expect(!expression.sqlLiteral.sql.contains("DROP"))
        #expect(try evaluate(title.like(hostile)) == false)
    }

    @Test func identifiersAreQuoted() throws {
        let weird = Column<String>("we\"ird name")
        #expect(weird.sqlLiteral.sql == "\"we\"\"ird name\"")
        let db = try Database()
        try db.run(SQLTable("odd table").create { t in t.column(weird) })
        try db.run(SQLTable("odd table").insert(weird <- "ok"))
        #expect(try String.fetchAll(db, SQLTable("odd table").select(weird)) == ["ok"])
    }
}
