// The baseline: SQLite's C API used directly, as a careful C programmer
// would, through the same C module Strata links.
import Strata
#if canImport(SQLite3)
import SQLite3
#else
import CSQLite
#endif

enum RawC {
    static func open(_ path: String) throws -> OpaquePointer {
        var connection: OpaquePointer?
        guard sqlite3_open_v2(path, &connection, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK,
            let connection
        else { throw BenchmarkError("cannot open \(path)") }
        return connection
    }

    static func exec(_ connection: OpaquePointer, _ sql: String) throws {
        guard sqlite3_exec(connection, sql, nil, nil, nil) == SQLITE_OK else {
            throw BenchmarkError(String(cString: sqlite3_errmsg(connection)))
        }
    }

    static func prepare(_ connection: OpaquePointer, _ sql: String) throws -> OpaquePointer {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(connection, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw BenchmarkError(String(cString: sqlite3_errmsg(connection)))
        }
        return statement
    }

    /// Creates the fetch benchmarks' table of ten INT columns.
    static func makeItems(_ path: String, rowCount: Int) throws {
        let connection = try open(path)
        try exec(connection, "DROP TABLE IF EXISTS items")
        sqlite3_close(connection)
        _ = try insert(path, rowCount: rowCount)
    }

    /// Fetches every row, reading the ten columns; returns their sum.
    static func fetch(_ path: String) throws -> Int {
        let connection = try open(path)
        defer { sqlite3_close(connection) }
        let statement = try prepare(connection, "SELECT * FROM items")
        defer { sqlite3_finalize(statement) }
        var sum = 0
        while sqlite3_step(statement) == SQLITE_ROW {
            for column in 0..<10 { sum &+= Int(sqlite3_column_int64(statement, Int32(column))) }
        }
        return sum
    }

    /// Fetches the rows where `i0 >= 0` (every row), a bound parameter, as a
    /// typed query does; returns the sum of the ten columns.
    static func fetchWhere(_ path: String) throws -> Int {
        let connection = try open(path)
        defer { sqlite3_close(connection) }
        let statement = try prepare(connection, "SELECT * FROM items WHERE i0 >= ?")
        defer { sqlite3_finalize(statement) }
        sqlite3_bind_int64(statement, 1, 0)
        var sum = 0
        while sqlite3_step(statement) == SQLITE_ROW {
            for column in 0..<10 { sum &+= Int(sqlite3_column_int64(statement, Int32(column))) }
        }
        return sum
    }

    /// Inserts rows in one transaction into a new table; returns the row count.
    static func insert(_ path: String, rowCount: Int) throws -> Int {
        let connection = try open(path)
        defer { sqlite3_close(connection) }
        try exec(connection, "CREATE TABLE items (i0 INT, i1 INT, i2 INT, i3 INT, i4 INT, i5 INT, i6 INT, i7 INT, i8 INT, i9 INT)")
        try exec(connection, "BEGIN")
        let statement = try prepare(connection, "INSERT INTO items VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
        for row in 0..<rowCount {
            for column in 0..<10 { sqlite3_bind_int64(statement, Int32(column + 1), Int64(row + column)) }
            guard sqlite3_step(statement) == SQLITE_DONE else { throw BenchmarkError("insert failed") }
            sqlite3_reset(statement)
        }
        sqlite3_finalize(statement)
        try exec(connection, "COMMIT")
        return rowCount
    }
}
