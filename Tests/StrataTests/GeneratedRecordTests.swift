import Foundation
import Strata
import Testing

// A `GeneratedRecord` conformance written out by hand, as `@Record` expands
// it: the core's reading and writing paths without the macro plugin, so the
// sanitizer runs (which build without StrataMacros) cover them too.

struct Track: GeneratedRecord, Equatable {
    var id: Int64?
    var title: String
    var seconds: Int
    var rating: Double?
    var tags: [String]

    init(id: Int64? = nil, title: String, seconds: Int, rating: Double? = nil, tags: [String] = []) {
        self.id = id
        self.title = title
        self.seconds = seconds
        self.rating = rating
        self.tags = tags
    }

    static let databaseTableName = "tracks"

    struct Columns {
        let id = Column<Int64?>("id")
        let title = Column<String>("title")
        let seconds = Column<Int>("seconds")
        let rating = Column<Double?>("rating")
        let tags = Column<[String]>("tags")
    }

    static var columns: Columns { Columns() }

    static var databaseColumns: [RecordColumnDefinition] {
        [
            RecordColumnDefinition("id", Int64?.self),
            RecordColumnDefinition("title", String.self),
            RecordColumnDefinition("seconds", Int.self),
            RecordColumnDefinition("rating", Double?.self),
            RecordColumnDefinition("tags", [String].self),
        ]
    }

    init(row: RecordRow) throws {
        self.id = try row.decode(Int64?.self, 0)
        self.title = try row.decode(String.self, 1)
        self.seconds = try row.decode(Int.self, 2)
        self.rating = try row.decode(Double?.self, 3)
        self.tags = try row.decode([String].self, 4)
    }

    func encodeColumns(into values: inout RecordValues) throws {
        try values.encodePrimaryKey(id)
        try values.encode(title)
        try values.encode(seconds)
        try values.encode(rating)
        try values.encode(tags)
    }

    static var databasePrimaryKey: [String] { ["id"] }

    mutating func didInsert(rowID: Int64, primaryKeyColumn: String) throws {
        try assignRowID(rowID, to: &id, tableName: Self.databaseTableName, column: primaryKeyColumn)
    }
}

@Suite struct GeneratedRecordTests {
    func makeDatabase(tracks count: Int) throws -> Database {
        let db = try Database()
        try db.create(table: Track.self)
        try db.transaction {
            for index in 0..<count {
                var track = Track(title: "t\(index)", seconds: index, rating: index % 3 == 0 ? nil : Double(index) / 2,
                                  tags: index % 2 == 0 ? ["even"] : [])
                try track.insert(db)
                #expect(track.id == Int64(index + 1))
            }
        }
        return db
    }

    @Test func manyRowsAreReadInPlaceWithTheirValues() throws {
        let db = try makeDatabase(tracks: 1_000)
        let tracks = try Track.fetchAll(db)
        #expect(tracks.count == 1_000)
        for (index, track) in tracks.enumerated() {
            #expect(track == Track(id: Int64(index + 1), title: "t\(index)", seconds: index,
                                   rating: index % 3 == 0 ? nil : Double(index) / 2, tags: index % 2 == 0 ? ["even"] : []))
        }
        // The typed columns, through the same path.
        let long = try Track.filter { $0.seconds >= 990 }.order { $0.seconds.desc }.fetchAll(db)
        #expect(long.map(\.seconds) == Array((990..<1_000).reversed()))
    }

    @Test func columnsAreFoundByNameInAnyOrder() throws {
        let db = try makeDatabase(tracks: 3)
        let reordered = try Track.fetchAll(db, sql: "SELECT tags, seconds, rating, title, id FROM tracks ORDER BY id DESC")
        #expect(reordered.map(\.title) == ["t2", "t1", "t0"])
        #expect(reordered.map(\.rating) == [1, 0.5, nil])
        // An optional column the query leaves out reads as nil.
        let partial = try Track.fetchAll(db, sql: "SELECT title, seconds, tags FROM tracks ORDER BY id")
        #expect(partial.map(\.id) == [nil, nil, nil])
        #expect(partial.map(\.seconds) == [0, 1, 2])
        // A cursor and a single record go through the row reader.
        #expect(try Track.fetchOne(db, key: 2)?.title == "t1")
        let cursor = try Track.fetchCursor(db, Track.table)
        var titles: [String] = []
        while let track = try cursor.next() { titles.append(track.title) }
        #expect(titles == ["t0", "t1", "t2"])
    }

    @Test func aRowThatDoesNotFitNamesItsColumnAndKeepsTheData() throws {
        let db = try makeDatabase(tracks: 500)
        // Row 300 holds text where an integer belongs: the error names the
        // column, its index and the SQL; the table is untouched.
        try db.execute(sql: "UPDATE tracks SET seconds = 'long' WHERE id = 300")
        #expect {
            _ = try Track.fetchAll(db)
        } throws: { error in
            let error = error as? DatabaseDecodingError
            return error?.reason == .valueMismatch && error?.column == "seconds" && error?.columnIndex == 2
                && error?.sql?.contains("tracks") == true
        }
        #expect {
            _ = try Track.fetchAll(db, sql: "SELECT id, title, tags FROM tracks")
        } throws: { error in
            let error = error as? DatabaseDecodingError
            return error?.reason == .columnNotFound && error?.column == "seconds"
        }
        try db.execute(sql: "UPDATE tracks SET seconds = 299, tags = '[1' WHERE id = 300")
        #expect {
            _ = try Track.fetchAll(db)
        } throws: { error in
            (error as? DatabaseDecodingError)?.reason == .invalidJSON
        }
        #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM tracks") == 500)
        // The statement is usable again after a failed fetch.
        try db.execute(sql: "UPDATE tracks SET tags = '[]' WHERE id = 300")
        #expect(try Track.fetchAll(db).count == 500)
    }
}
