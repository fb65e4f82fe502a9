import Foundation
import Strata
import StrataDocuments

/// The SQLite files of the folder `strata serve --sqlite DIR` names, for the
/// table browser of `/_utils` (server admins only):
///
/// - `GET /_sqlite`: the files, with their sizes;
/// - `GET /_sqlite/{file}`: its tables and views, with row counts, columns
///   and the SQL that made them;
/// - `GET /_sqlite/{file}/{table}?limit&skip&sort&descending&column&value`:
///   a page of rows, sorted by a column, filtered by a column's value (the
///   value is bound, never spliced into the SQL);
/// - `POST /_sqlite/{file}/_query` `{"sql": "…"}`: a query on a read-only
///   connection (unless `--sqlite-writable`), stopped after the time limit;
///   SQLite's own message on an error;
/// - `?format=csv|json|ndjson|tsv` on a table or a query: the whole result,
///   written by ``Database/export(sql:arguments:to:options:)``.
struct SQLiteBrowser: Sendable {
    let directory: URL
    let writable: Bool
    let timeLimit: Duration

    static let extensions: Set<String> = ["sqlite", "sqlite3", "db"]

    /// The files, by name.
    func files() -> [JSON] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { Self.extensions.contains(($0 as NSString).pathExtension.lowercased()) }.sorted().map { name in
            let size = (try? FileManager.default.attributesOfItem(atPath: directory.appendingPathComponent(name).path)[.size] as? Int) ?? 0
            return .object(["name": .string(name), "size": .int(size)])
        }
    }

    /// Opens a file of the folder (never a path outside it).
    func open(_ name: String, readOnly: Bool = true) throws -> DatabaseQueue {
        guard !name.contains("/"), !name.hasPrefix("."), Self.extensions.contains((name as NSString).pathExtension.lowercased()),
              FileManager.default.fileExists(atPath: directory.appendingPathComponent(name).path) else {
            throw DocumentError(.notFound, "No SQLite file named \(name)")
        }
        var configuration = Configuration()
        configuration.isReadOnly = readOnly
        configuration.createsMissingFile = false
        return try DatabaseQueue(location: .path(directory.appendingPathComponent(name).path), configuration: configuration)
    }

    /// Tables and views with their row counts, columns and SQL.
    func schema(_ name: String) throws -> JSON {
        let queue = try open(name)
        return try queue.read { db in
            let objects = try Row.fetchAll(db, sql: "SELECT type, name, sql FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' ORDER BY type, name")
            var tables: [JSON] = []
            for object in objects {
                let table: String = try object["name"]
                let columns = try Row.fetchAll(db, sql: "SELECT name, type, \"notnull\", pk FROM pragma_table_info(?)", arguments: [table]).map { column -> JSON in
                    .object(["name": .string(try column["name"]), "type": .string(try column["type"]),
                             "notnull": .bool(try column["notnull"] as Int != 0), "pk": .int(try column["pk"])])
                }
                let count = try db.withTimeLimit(timeLimit) {
                    try Int.fetchOne(db, sql: "SELECT count(*) FROM \(quoteIdentifier(table))") ?? 0
                }
                tables.append(.object(["name": .string(table), "type": .string(try object["type"]), "rows": .int(count),
                                       "sql": .string(try object["sql"] as String? ?? ""), "columns": .array(columns)]))
            }
            return .object(["file": .string(name), "writable": .bool(writable), "tables": .array(tables)])
        }
    }

    /// The SQL of a table page; the filter's value is an argument. With a
    /// value but no column, a row matches when any of its columns equals it.
    func tableQuery(_ db: Database, table: String, sort: String?, descending: Bool, column: String?, value: String?, filters: [SQLiteTableFilter] = []) throws -> (sql: String, arguments: StatementArguments) {
        let known = try String.fetchAll(db, sql: "SELECT name FROM pragma_table_info(?)", arguments: [table])
        guard !known.isEmpty else { throw DocumentError(.notFound, "No table or view named \(table)") }
        var sql = "SELECT * FROM \(quoteIdentifier(table))"
        var arguments: [(any DatabaseValueConvertible)?] = []
        var conditions: [String] = []
        if let column, !column.isEmpty {
            guard known.contains(column) else { throw DocumentError(.badRequest, "No column named \(column) in \(table)") }
            conditions.append("\(quoteIdentifier(column)) = ?")
            arguments = [value ?? ""]
        } else if let value, !value.isEmpty {
            // Any column: the rows where one of them equals the value.
            conditions.append("(" + known.map { "\(quoteIdentifier($0)) = ?1" }.joined(separator: " OR ") + ")")
            arguments = [value]
        }
        // Filters combine with AND, each value bound after those above (a
        // `?` after `?1` is numbered 2).
        for filter in filters {
            guard known.contains(filter.column) else { throw DocumentError(.badRequest, "No column named \(filter.column) in \(table)") }
            let (condition, argument) = filter.condition()
            conditions.append(condition)
            if let argument { arguments.append(argument) }
        }
        if !conditions.isEmpty { sql += " WHERE " + conditions.joined(separator: " AND ") }
        if let sort, !sort.isEmpty {
            guard known.contains(sort) else { throw DocumentError(.badRequest, "No column named \(sort) in \(table)") }
            sql += " ORDER BY \(quoteIdentifier(sort))\(descending ? " DESC" : "")"
        }
        return (sql, StatementArguments(arguments))
    }

    /// A page of a table's rows.
    func rows(_ name: String, table: String, limit: Int, skip: Int, sort: String?, descending: Bool, column: String?, value: String?, filters: [SQLiteTableFilter] = []) throws -> JSON {
        let queue = try open(name)
        return try queue.read { db in
            let (sql, arguments) = try tableQuery(db, table: table, sort: sort, descending: descending, column: column, value: value, filters: filters)
            return try db.withTimeLimit(timeLimit) {
                let total = try Int.fetchOne(db, sql: "SELECT count(*) FROM (\(sql))", arguments: arguments) ?? 0
                let statement = try db.makeStatement(sql: sql + " LIMIT ? OFFSET ?")
                let rows = try Row.fetchAll(statement, arguments: StatementArguments(arguments.values + [limit as (any DatabaseValueConvertible)?, skip]))
                return .object(["columns": .array(statement.columnNames.map(JSON.string)), "rows": .array(rows.map(Self.json)),
                                "total_rows": .int(total), "offset": .int(skip)])
            }
        }
    }

    /// Runs the statements of `sql` and answers the last one's rows.
    func query(_ name: String, sql: String) throws -> JSON {
        let queue = try open(name, readOnly: !writable)
        let started = ContinuousClock.now
        return try queue.writeWithoutTransaction { db in
            // SQLite's authorizer, not the read-only flag alone: that flag
            // lets VACUUM INTO and ATTACH write other files.
            try db.restricting(to: restriction) { try db.withTimeLimit(timeLimit) {
                let statements = try db.allStatements(sql: sql)
                var columns: [String] = []
                var rows: [Row] = []
                var ran = 0
                while let statement = try statements.next() {
                    columns = statement.columnNames
                    rows = try Row.fetchAll(statement)
                    ran += 1
                }
                guard ran > 0 else { throw DocumentError(.badRequest, "The SQL box is empty") }
                return .object(["columns": .array(columns.map(JSON.string)), "rows": .array(rows.map(Self.json)),
                                "changes": .int(db.changesCount),
                                "elapsed_ms": Self.number((ContinuousClock.now - started) / .milliseconds(1))])
            } }
        }
    }

    /// What the SQL box may run: reads, or (`--sqlite-writable`) writes to
    /// the file itself, never anything that reaches another file.
    var restriction: StatementRestriction { writable ? .thisFile : .reads }

    /// A table or a query, exported whole in `format`.
    func export(_ name: String, table: String?, sql: String?, sort: String?, descending: Bool, column: String?, value: String?, filters: [SQLiteTableFilter] = [], format: DataFormat) throws -> Data {
        let queue = try open(name, readOnly: !writable || table != nil)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("strata-export-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        try queue.writeWithoutTransaction { db in
            try db.restricting(to: table == nil ? restriction : .reads) { try db.withTimeLimit(timeLimit) {
                if let table {
                    let (query, arguments) = try tableQuery(db, table: table, sort: sort, descending: descending, column: column, value: value, filters: filters)
                    try db.export(sql: query, arguments: arguments, to: file, options: ExportOptions(format: format))
                } else {
                    try db.export(sql: sql ?? "", to: file, options: ExportOptions(format: format))
                }
            } }
        }
        return try Data(contentsOf: file)
    }

    static func number(_ value: Double) -> JSON { value.isFinite ? .number(String(value)) : .string(String(value)) }

    static func json(_ row: Row) -> JSON {
        .array(row.databaseValues.map { value in
            switch value {
            case .null: .null
            case .integer(let n): .int(Int(n))
            case .real(let d): number(d)
            case .text(let s): .string(s)
            case .blob(let data): .object(["blob": .string(data.base64EncodedString()), "bytes": .int(data.count)])
            }
        })
    }
}
