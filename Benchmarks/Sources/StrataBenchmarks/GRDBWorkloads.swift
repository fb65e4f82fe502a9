import GRDB

struct GRDBItem: Codable, FetchableRecord, PersistableRecord {
    var i0, i1, i2, i3, i4, i5, i6, i7, i8, i9: Int
    static let databaseTableName = "items"
}

/// A record read by a hand-written `init(row:)`, by column name.
struct GRDBRowItem: FetchableRecord {
    var i0, i1, i2, i3, i4, i5, i6, i7, i8, i9: Int

    init(row: Row) throws {
        i0 = row["i0"]; i1 = row["i1"]; i2 = row["i2"]; i3 = row["i3"]; i4 = row["i4"]
        i5 = row["i5"]; i6 = row["i6"]; i7 = row["i7"]; i8 = row["i8"]; i9 = row["i9"]
    }
}

enum GRDBBench {
    static let createItems = "CREATE TABLE items (i0 INT, i1 INT, i2 INT, i3 INT, i4 INT, i5 INT, i6 INT, i7 INT, i8 INT, i9 INT)"

    static func fetchByIndex(_ path: String) throws -> Int {
        let queue = try DatabaseQueue(path: path)
        return try queue.inDatabase { db in
            let rows = try Row.fetchCursor(db, sql: "SELECT * FROM items")
            var sum = 0
            while let row = try rows.next() {
                sum &+= row[0] as Int
                sum &+= row[1] as Int
                sum &+= row[2] as Int
                sum &+= row[3] as Int
                sum &+= row[4] as Int
                sum &+= row[5] as Int
                sum &+= row[6] as Int
                sum &+= row[7] as Int
                sum &+= row[8] as Int
                sum &+= row[9] as Int
            }
            return sum
        }
    }

    static func fetchRowRecords(_ path: String) throws -> Int {
        let queue = try DatabaseQueue(path: path)
        return try queue.inDatabase { db in
            try GRDBRowItem.fetchAll(db, sql: "SELECT * FROM items")
                .reduce(0) { $0 &+ $1.i0 &+ $1.i1 &+ $1.i2 &+ $1.i3 &+ $1.i4 &+ $1.i5 &+ $1.i6 &+ $1.i7 &+ $1.i8 &+ $1.i9 }
        }
    }

    static func fetchByName(_ path: String) throws -> Int {
        let queue = try DatabaseQueue(path: path)
        return try queue.inDatabase { db in
            let rows = try Row.fetchCursor(db, sql: "SELECT * FROM items")
            var sum = 0
            while let row = try rows.next() {
                sum &+= row["i0"] as Int
                sum &+= row["i1"] as Int
                sum &+= row["i2"] as Int
                sum &+= row["i3"] as Int
                sum &+= row["i4"] as Int
                sum &+= row["i5"] as Int
                sum &+= row["i6"] as Int
                sum &+= row["i7"] as Int
                sum &+= row["i8"] as Int
                sum &+= row["i9"] as Int
            }
            return sum
        }
    }

    static func fetchDSL(_ path: String) throws -> Int {
        let queue = try DatabaseQueue(path: path)
        let columns = (0..<10).map { Column("i\($0)") }
        return try queue.inDatabase { db in
            let rows = try Row.fetchCursor(db, Table("items").all())
            var sum = 0
            while let row = try rows.next() {
                for column in columns { sum &+= row[column] as Int }
            }
            return sum
        }
    }

    static func fetchCodable(_ path: String) throws -> Int {
        let queue = try DatabaseQueue(path: path)
        return try queue.inDatabase { db in
            try GRDBItem.fetchAll(db).reduce(0) { $0 &+ $1.i0 &+ $1.i1 &+ $1.i2 &+ $1.i3 &+ $1.i4 &+ $1.i5 &+ $1.i6 &+ $1.i7 &+ $1.i8 &+ $1.i9 }
        }
    }

    static func insertPositional(_ path: String, rowCount: Int) throws -> Int {
        let queue = try DatabaseQueue(path: path)
        try queue.inDatabase { db in
            try db.execute(sql: createItems)
            try db.inTransaction {
                let statement = try db.makeStatement(sql: "INSERT INTO items VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
                for row in 0..<rowCount {
                    try statement.execute(arguments: [row, row + 1, row + 2, row + 3, row + 4, row + 5, row + 6, row + 7, row + 8, row + 9])
                }
                return .commit
            }
        }
        return rowCount
    }

    static func insertNamed(_ path: String, rowCount: Int) throws -> Int {
        let queue = try DatabaseQueue(path: path)
        try queue.inDatabase { db in
            try db.execute(sql: createItems)
            try db.inTransaction {
                let statement = try db.makeStatement(sql: "INSERT INTO items VALUES (:i0, :i1, :i2, :i3, :i4, :i5, :i6, :i7, :i8, :i9)")
                for row in 0..<rowCount {
                    try statement.execute(arguments: ["i0": row, "i1": row + 1, "i2": row + 2, "i3": row + 3, "i4": row + 4,
                                                      "i5": row + 5, "i6": row + 6, "i7": row + 7, "i8": row + 8, "i9": row + 9])
                }
                return .commit
            }
        }
        return rowCount
    }

    static func insertCodable(_ path: String, rowCount: Int) throws -> Int {
        let queue = try DatabaseQueue(path: path)
        try queue.inDatabase { db in
            try db.execute(sql: createItems)
            try db.inTransaction {
                for row in 0..<rowCount {
                    try GRDBItem(i0: row, i1: row + 1, i2: row + 2, i3: row + 3, i4: row + 4, i5: row + 5, i6: row + 6, i7: row + 7, i8: row + 8, i9: row + 9).insert(db)
                }
                return .commit
            }
        }
        return rowCount
    }
}
