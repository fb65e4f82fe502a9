import Foundation
import Strata
import Testing

/// Columns of an enum with a raw value compare with its cases and bind the
/// raw value, which is what a record stores; the enum needs no conformance
/// beyond `Codable`.
@Suite struct EnumColumnTests {
    struct Film: DatabaseRecord, Equatable {
        enum Genre: String, Codable { case drama, comedy, thriller }
        enum Format: Int, Codable { case film = 35, digital = 4 }
        var id: Int64?
        var title: String
        var genre: Genre
        var format: Format?
        var rerelease: Genre?

        static let databaseTableName = "films"
        static let genre = Column<Genre>("genre")
        static let format = Column<Format?>("format")
        static let rerelease = Column<Genre?>("rerelease")
        static let title = Column<String>("title")
    }

    /// An enum that adopts DatabaseValueConvertible keeps its own value:
    /// the raw-value operators are only the fallback.
    enum Shouting: String, Codable, DatabaseValueConvertible {
        case quiet
        var databaseValue: DatabaseValue { .text(rawValue.uppercased()) }
        static func fromDatabaseValue(_ value: DatabaseValue) -> Shouting? {
            if case .text(let text) = value { return Shouting(rawValue: text.lowercased()) }
            return nil
        }
    }

    func films() throws -> Database {
        let db = try Database()
        try db.create(table: Film.self)
        for film in [
            Film(id: nil, title: "Heat", genre: .thriller, format: .film, rerelease: nil),
            Film(id: nil, title: "Up", genre: .comedy, format: .digital, rerelease: .comedy),
            Film(id: nil, title: "Amour", genre: .drama, format: nil, rerelease: .drama),
        ] {
            _ = try film.inserted(db)
        }
        return db
    }

    func titles(_ db: Database, _ predicate: SQLExpression<Bool>) throws -> [String] {
        try Film.all().filter(predicate).order(Film.title).fetchAll(db).map(\.title)
    }

    @Test func comparesWithCasesAndBindsTheRawValue() throws {
        let db = try films()
        #expect(try titles(db, Film.genre == .thriller) == ["Heat"])
        #expect(try titles(db, .comedy == Film.genre) == ["Up"])
        #expect(try titles(db, Film.genre != .thriller) == ["Amour", "Up"])
        #expect(try titles(db, .thriller != Film.genre) == ["Amour", "Up"])
        #expect(try titles(db, Film.format == .digital) == ["Up"])
        #expect(try titles(db, Film.genre.in([.drama, .comedy])) == ["Amour", "Up"])
        #expect(try titles(db, Film.genre.notIn([Film.Genre.drama])) == ["Heat", "Up"])
        // The SQL binds the raw values: "thriller" and 4.
        let query = Film.all().filter(Film.genre == .thriller && Film.format == .digital)
        #expect(query.sqlLiteral.arguments.map { $0?.databaseValue } == [.text("thriller"), .integer(4)])
    }

    @Test func nullableEnumColumnsCompareWithNilAsIsNull() throws {
        let db = try films()
        #expect(try titles(db, Film.format == nil) == ["Amour"])
        #expect(try titles(db, Film.format != nil) == ["Heat", "Up"])
        #expect(try titles(db, Film.rerelease == .drama) == ["Amour"])
        #expect(try titles(db, Film.rerelease != .drama) == ["Up"])
        #expect(try titles(db, Film.genre == Film.rerelease) == ["Amour", "Up"])
        let heat: Film.Format? = .film
        #expect(try titles(db, Film.format == heat) == ["Heat"])
    }

    @Test func setsEnumColumnsToCasesAndNull() throws {
        let db = try films()
        #expect(try db.run(Film.table.filter(Film.title == "Heat").update(Film.genre <- .drama, Film.format <- nil)) == 1)
        #expect(try db.run(Film.table.filter(Film.title == "Up").update(Film.rerelease <- .thriller)) == 1)
        #expect(try String.fetchAll(db, sql: "SELECT genre || '/' || ifnull(format, 'null') || '/' || ifnull(rerelease, 'null') FROM films ORDER BY id")
            == ["drama/null/null", "comedy/4/thriller", "drama/null/drama"])
    }

    @Test func anEnumThatIsDatabaseValueConvertibleKeepsItsOwnValue() throws {
        let column = Column<Shouting>("mood")
        #expect((column == .quiet).sqlLiteral.arguments.map { $0?.databaseValue } == [.text("QUIET")])
        let update = SQLTable("moods").update(column <- .quiet)
        #expect(update.sqlLiteral.arguments.map { $0?.databaseValue } == [.text("QUIET")])
    }
}
