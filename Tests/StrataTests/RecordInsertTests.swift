import Foundation
import Strata
import StrataTestHelpers
import Testing

/// Encodes `nickname` only when it is set, as a hand-written `encode(to:)`
/// may: consecutive inserts then use different column sets.
fileprivate struct Member: DatabaseRecord, Equatable {
    var id: Int?
    var name: String
    var nickname: String?
    var tags: [String] = []
    var scratch = 0
    static let databaseTableName = "members"
    static let databaseIgnoredColumns: Set<String> = ["scratch"]

    enum CodingKeys: String, CodingKey { case id, name, nickname, tags, scratch }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(name, forKey: .name)
        if let nickname { try container.encode(nickname, forKey: .nickname) }
        try container.encode(tags, forKey: .tags)
        try container.encode(scratch, forKey: .scratch)
    }
}

/// Encodes its keys in an order that changes with its content.
fileprivate struct Swapper: DatabaseRecord {
    var id: Int?
    var a: Int
    var b: Int

    enum CodingKeys: String, CodingKey { case id, a, b }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        if a > b {
            try container.encode(b, forKey: .b)
            try container.encode(a, forKey: .a)
        } else {
            try container.encode(a, forKey: .a)
            try container.encode(b, forKey: .b)
        }
    }
}

@Suite struct RecordInsertTests {
    private func makeMembers() throws -> Database {
        let db = try Database()
        try db.execute(sql: "CREATE TABLE members (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, nickname TEXT DEFAULT 'none', tags TEXT)")
        return db
    }

    /// Inserts after the first one bind into the type's cached statement;
    /// every row must hold its own values, with assigned ids written back.
    @Test func repeatedInsertsKeepEachRecordsValues() throws {
        let db = try makeMembers()
        var inserted: [Member] = []
        for index in 0..<5 {
            var member = Member(name: "m\(index)", nickname: "n\(index)", tags: ["t\(index)"], scratch: 9)
            try member.insert(db)
            inserted.append(member)
        }
        #expect(inserted.map(\.id) == [1, 2, 3, 4, 5])
        let fetched = try Member.fetchAll(db, sql: "SELECT * FROM members ORDER BY id")
        #expect(fetched.map(\.name) == ["m0", "m1", "m2", "m3", "m4"])
        #expect(fetched.map(\.nickname) == ["n0", "n1", "n2", "n3", "n4"])
        #expect(fetched.map(\.tags) == [["t0"], ["t1"], ["t2"], ["t3"], ["t4"]])
        #expect(try String.fetchOne(db, sql: "SELECT tags FROM members WHERE id = 2") == #"["t1"]"#)
        // An explicit id is kept and not overwritten by the rowid.
        var explicit = Member(id: 40, name: "x")
        try explicit.insert(db)
        #expect(explicit.id == 40)
    }

    /// A record that leaves a column out must not inherit the previous
    /// record's value for it, and the column's default applies.
    @Test func aRecordEncodingFewerColumnsGetsNoStaleValue() throws {
        let db = try makeMembers()
        var first = Member(name: "a", nickname: "alpha")
        var second = Member(name: "b", nickname: "beta")
        var plain = Member(name: "c", nickname: nil)
        var third = Member(name: "d", nickname: "delta")
        var plainAgain = Member(name: "e", nickname: nil)
        for index in [0, 1, 2, 3, 4] {
            switch index {
            case 0: try first.insert(db)
            case 1: try second.insert(db)
            case 2: try plain.insert(db)
            case 3: try third.insert(db)
            default: try plainAgain.insert(db)
            }
        }
        #expect(try String.fetchAll(db, sql: "SELECT nickname FROM members ORDER BY id") == ["alpha", "beta", "none", "delta", "none"])
        #expect([first.id, second.id, plain.id, third.id, plainAgain.id] == [1, 2, 3, 4, 5])
    }

    @Test func keysInAnotherOrderStillLandInTheirColumns() throws {
        let db = try Database()
        try db.create(table: Swapper.self)
        for (a, b) in [(1, 2), (3, 4), (9, 5), (6, 7), (8, 0)] {
            var record = Swapper(a: a, b: b)
            try record.insert(db)
        }
        #expect(try Int.fetchAll(db, sql: "SELECT a * 10 + b FROM swapper ORDER BY id") == [12, 34, 95, 67, 80])
    }

    /// A failed insert on the fast path reports SQLite's error with the
    /// record's values, leaves the table as it was, and the next insert works.
    @Test func aConstraintErrorNamesTheValuesAndLosesNothing() throws {
        let db = try makeMembers()
        var first = Member(name: "same")
        try first.insert(db)
        var second = Member(name: "other")
        try second.insert(db)
        var duplicate = Member(name: "same", nickname: "dup")
        let error = try #require(throws: SQLiteError.self) { try duplicate.insert(db) }
        #expect(error.code == .constraintUnique)
        #expect(error.message?.contains("members.name") == true)
        #expect(error.arguments?.description.contains("'same'") == true)
        #expect(duplicate.id == nil)
        var next = Member(name: "next")
        try next.insert(db)
        #expect(next.id == 3)
        #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM members") == 3)
    }

    /// While a cursor steps the cached INSERT's table, inserts still work.
    @Test func insertsDuringAFetchUseAnotherStatement() throws {
        let db = try makeMembers()
        for name in ["a", "b"] {
            var member = Member(name: name)
            try member.insert(db)
        }
        let cursor = try Member.fetchCursor(db, Member.table.order(Column<Int>("id")))
        while let member = try cursor.next(), member.id! <= 2 {
            var copy = Member(name: member.name + "2")
            try copy.insert(db)
        }
        #expect(try String.fetchAll(db, sql: "SELECT name FROM members ORDER BY id") == ["a", "b", "a2", "b2"])
    }
}

/// Counts its `init(row:)` calls, to show which path a fetch took.
fileprivate struct Tally: DatabaseRecord, Equatable {
    nonisolated(unsafe) static var rowInitializations = 0
    var id: Int64?
    var label: String
    var weight: Double?
}

extension Tally: RowDecodable {
    init(row: LiveRow) throws {
        Tally.rowInitializations += 1
        id = try row["id"]
        label = try row["label"]
        weight = try row["weight"]
    }
}

@Suite(.serialized) struct RowDecodableTests {
    @Test func fetchesOnTheTypeUseInitRow() throws {
        let db = try Database()
        try db.create(table: Tally.self)
        for (label, weight) in [("a", 1.5), ("b", nil), ("c", 3.0)] as [(String, Double?)] {
            _ = try Tally(id: nil, label: label, weight: weight).inserted(db)
        }
        let before = Tally.rowInitializations
        let all = try Tally.fetchAll(db)
        #expect(all.map(\.label) == ["a", "b", "c"] && all.map(\.weight) == [1.5, nil, 3.0])
        let heavy = try Tally.fetchAll(db, Tally.table.filter(Column<Double?>("weight") > 1.0).order(Column<String>("label").desc))
        #expect(heavy.map(\.label) == ["c", "a"])
        #expect(try Tally.fetchAll(db, sql: "SELECT * FROM tally WHERE label = ?", arguments: ["b"]).map(\.id) == [2])
        #expect(try Tally.fetchOne(db, Tally.table.filter(Column<String>("label") == "c"))?.id == 3)
        #expect(try Tally.fetchOne(db, sql: "SELECT * FROM tally WHERE id = 99") == nil)
        #expect(Tally.rowInitializations - before == 3 + 2 + 1 + 1)
        // Every other fetch path reads with init(row:) too.
        #expect(try Tally.fetchOne(db, key: 1) == all[0])
        let cursor = try Tally.fetchCursor(db, Tally.table.order(Column<Int64>("id")))
        var labels: [String] = []
        while let tally = try cursor.next() { labels.append(tally.label) }
        #expect(labels == ["a", "b", "c"])
        #expect(Tally.rowInitializations - before == 7 + 1 + 3)
        // Decoding with Decodable explicitly still works and agrees.
        let row = try #require(try Row.fetchOne(db, sql: "SELECT * FROM tally WHERE id = 3"))
        #expect(try Tally.decode(from: row) == all[2])
    }

    @Test func aRowThatDoesNotFitThrowsFromInitRow() throws {
        let db = try Database()
        try db.create(table: Tally.self)
        try db.execute(sql: "INSERT INTO tally (label, weight) VALUES ('x', 'heavy')")
        let error = try #require(throws: DatabaseDecodingError.self) { try Tally.fetchAll(db) }
        #expect(error.column == "weight")
        #expect(throws: DatabaseDecodingError.self) { try Tally.fetchAll(db, sql: "SELECT id, weight FROM tally") }
    }
}
