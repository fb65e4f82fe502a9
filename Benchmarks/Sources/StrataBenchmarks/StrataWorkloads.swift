import Strata
import StrataMacros

/// The same record, with `@Record`: read by the generated `init(row:)`,
/// written by the generated `encodeColumns(into:)`.
@Record(table: "items", withoutPrimaryKey: true)
struct MacroItem {
    var i0, i1, i2, i3, i4, i5, i6, i7, i8, i9: Int
}

struct StrataItem: DatabaseRecord {
    var i0, i1, i2, i3, i4, i5, i6, i7, i8, i9: Int
    static let databaseTableName = "items"
}

/// The same record, read by a hand-written `init(row:)` by column name.
struct StrataRowItem: DatabaseRecord {
    var i0, i1, i2, i3, i4, i5, i6, i7, i8, i9: Int
    static let databaseTableName = "items"
}

extension StrataRowItem: RowDecodable {
    init(row: LiveRow) throws {
        i0 = try row["i0"]; i1 = try row["i1"]; i2 = try row["i2"]; i3 = try row["i3"]; i4 = try row["i4"]
        i5 = try row["i5"]; i6 = try row["i6"]; i7 = try row["i7"]; i8 = try row["i8"]; i9 = try row["i9"]
    }
}

enum StrataBench {
    static let items = SQLTable("items")
    static let columns = (0..<10).map { Column<Int>("i\($0)") }
    static let createItems = "CREATE TABLE items (i0 INT, i1 INT, i2 INT, i3 INT, i4 INT, i5 INT, i6 INT, i7 INT, i8 INT, i9 INT)"

    static func fetchByIndex(_ path: String) throws -> Int {
        let db = try Database(path: path)
        let rows = try Row.fetchCursor(db, sql: "SELECT * FROM items")
        var sum = 0
        while let row = try rows.next() {
            sum &+= try row[0] as Int
            sum &+= try row[1] as Int
            sum &+= try row[2] as Int
            sum &+= try row[3] as Int
            sum &+= try row[4] as Int
            sum &+= try row[5] as Int
            sum &+= try row[6] as Int
            sum &+= try row[7] as Int
            sum &+= try row[8] as Int
            sum &+= try row[9] as Int
        }
        return sum
    }

    static func fetchByName(_ path: String) throws -> Int {
        let db = try Database(path: path)
        let rows = try Row.fetchCursor(db, sql: "SELECT * FROM items")
        var sum = 0
        while let row = try rows.next() {
            sum &+= try row["i0"] as Int
            sum &+= try row["i1"] as Int
            sum &+= try row["i2"] as Int
            sum &+= try row["i3"] as Int
            sum &+= try row["i4"] as Int
            sum &+= try row["i5"] as Int
            sum &+= try row["i6"] as Int
            sum &+= try row["i7"] as Int
            sum &+= try row["i8"] as Int
            sum &+= try row["i9"] as Int
        }
        return sum
    }

    static func fetchDSL(_ path: String) throws -> Int {
        let db = try Database(path: path)
        let rows = try items.fetchCursor(db)
        var sum = 0
        while let row = try rows.next() {
            for column in columns { sum &+= try row[column] }
        }
        return sum
    }

    static func fetchCodable(_ path: String) throws -> Int {
        let db = try Database(path: path)
        return try StrataItem.fetchAll(db).reduce(0) { $0 &+ $1.i0 &+ $1.i1 &+ $1.i2 &+ $1.i3 &+ $1.i4 &+ $1.i5 &+ $1.i6 &+ $1.i7 &+ $1.i8 &+ $1.i9 }
    }

    static func fetchRowRecords(_ path: String) throws -> Int {
        let db = try Database(path: path)
        return try StrataRowItem.fetchAll(db).reduce(0) { $0 &+ $1.i0 &+ $1.i1 &+ $1.i2 &+ $1.i3 &+ $1.i4 &+ $1.i5 &+ $1.i6 &+ $1.i7 &+ $1.i8 &+ $1.i9 }
    }

    static func fetchMacroRecords(_ path: String) throws -> Int {
        let db = try Database(path: path)
        return try MacroItem.fetchAll(db).reduce(0) { $0 &+ $1.i0 &+ $1.i1 &+ $1.i2 &+ $1.i3 &+ $1.i4 &+ $1.i5 &+ $1.i6 &+ $1.i7 &+ $1.i8 &+ $1.i9 }
    }

    /// A typed query through the generated columns.
    static func fetchMacroQuery(_ path: String) throws -> Int {
        let db = try Database(path: path)
        return try MacroItem.filter { $0.i0 >= 0 }.fetchAll(db)
            .reduce(0) { $0 &+ $1.i0 &+ $1.i1 &+ $1.i2 &+ $1.i3 &+ $1.i4 &+ $1.i5 &+ $1.i6 &+ $1.i7 &+ $1.i8 &+ $1.i9 }
    }

    static func insertMacroRecords(_ path: String, rowCount: Int) throws -> Int {
        let db = try Database(path: path)
        try db.execute(sql: createItems)
        try db.transaction {
            for row in 0..<rowCount {
                var item = MacroItem(i0: row, i1: row + 1, i2: row + 2, i3: row + 3, i4: row + 4, i5: row + 5, i6: row + 6, i7: row + 7, i8: row + 8, i9: row + 9)
                try item.insert(db)
            }
        }
        return rowCount
    }

    static func insertPositional(_ path: String, rowCount: Int) throws -> Int {
        let db = try Database(path: path)
        try db.execute(sql: createItems)
        try db.transaction {
            let statement = try db.makeStatement(sql: "INSERT INTO items VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
            for row in 0..<rowCount {
                try statement.execute(arguments: [row, row + 1, row + 2, row + 3, row + 4, row + 5, row + 6, row + 7, row + 8, row + 9])
            }
        }
        return rowCount
    }

    static func insertBinding(_ path: String, rowCount: Int) throws -> Int {
        let db = try Database(path: path)
        try db.execute(sql: createItems)
        try db.transaction {
            let statement = try db.makeStatement(sql: "INSERT INTO items VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
            for row in 0..<rowCount {
                try statement.execute(binding: row, row + 1, row + 2, row + 3, row + 4, row + 5, row + 6, row + 7, row + 8, row + 9)
            }
        }
        return rowCount
    }

    static func insertNamed(_ path: String, rowCount: Int) throws -> Int {
        let db = try Database(path: path)
        try db.execute(sql: createItems)
        try db.transaction {
            let statement = try db.makeStatement(sql: "INSERT INTO items VALUES (:i0, :i1, :i2, :i3, :i4, :i5, :i6, :i7, :i8, :i9)")
            for row in 0..<rowCount {
                try statement.execute(arguments: ["i0": row, "i1": row + 1, "i2": row + 2, "i3": row + 3, "i4": row + 4,
                                                  "i5": row + 5, "i6": row + 6, "i7": row + 7, "i8": row + 8, "i9": row + 9])
            }
        }
        return rowCount
    }

    static func insertNamedBinding(_ path: String, rowCount: Int) throws -> Int {
        let db = try Database(path: path)
        try db.execute(sql: createItems)
        try db.transaction {
            let statement = try db.makeStatement(sql: "INSERT INTO items VALUES (:i0, :i1, :i2, :i3, :i4, :i5, :i6, :i7, :i8, :i9)")
            for row in 0..<rowCount {
                try statement.execute(named: ("i0", row), ("i1", row + 1), ("i2", row + 2), ("i3", row + 3), ("i4", row + 4),
                                      ("i5", row + 5), ("i6", row + 6), ("i7", row + 7), ("i8", row + 8), ("i9", row + 9))
            }
        }
        return rowCount
    }

    static func insertDSL(_ path: String, rowCount: Int) throws -> Int {
        let db = try Database(path: path)
        try db.execute(sql: createItems)
        let c = columns
        try db.transaction {
            for row in 0..<rowCount {
                try db.run(items.insert(c[0] <- row, c[1] <- row + 1, c[2] <- row + 2, c[3] <- row + 3, c[4] <- row + 4,
                                        c[5] <- row + 5, c[6] <- row + 6, c[7] <- row + 7, c[8] <- row + 8, c[9] <- row + 9))
            }
        }
        return rowCount
    }

    static func insertPrepared(_ path: String, rowCount: Int) throws -> Int {
        let db = try Database(path: path)
        try db.execute(sql: createItems)
        let c = columns
        try db.transaction {
            let insert = try db.prepareInsert(into: items, c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8], c[9])
            for row in 0..<rowCount {
                try insert.run(row, row + 1, row + 2, row + 3, row + 4, row + 5, row + 6, row + 7, row + 8, row + 9)
            }
        }
        return rowCount
    }

    static func insertCodable(_ path: String, rowCount: Int) throws -> Int {
        let db = try Database(path: path)
        try db.execute(sql: createItems)
        try db.transaction {
            for row in 0..<rowCount {
                var item = StrataItem(i0: row, i1: row + 1, i2: row + 2, i3: row + 3, i4: row + 4, i5: row + 5, i6: row + 6, i7: row + 7, i8: row + 8, i9: row + 9)
                try item.insert(db)
            }
        }
        return rowCount
    }
}
