import StrataSQLite

// INSERT, upsert, UPDATE and DELETE built from typed setters.
//
// See <https://www.sqlite.org/lang_insert.html>,
// <https://www.sqlite.org/lang_upsert.html>,
// <https://www.sqlite.org/lang_update.html>,
// <https://www.sqlite.org/lang_delete.html> and
// <https://www.sqlite.org/lang_returning.html>.

infix operator <- : AssignmentPrecedence

/// A column and the value to store in it: `title <- "Heat"`.
public struct SQLSetter: Sendable {
    @usableFromInline
    enum Content: Sendable {
        /// A value to bind, converted when the setter is made: a plain
        /// insert then binds it without going through an existential.
        case value(DatabaseValue)
        /// A value to bind as is: an unsigned integer above `Int64.max`,
        /// whose `bind` refuses it rather than storing it as REAL.
        case bound((any DatabaseValueConvertible)?)
        case expression(SQLLiteral)
    }

    /// The column's name.
    public let columnName: String
    @usableFromInline
    let content: Content
    /// Whether the content is a value to bind (not an expression). Stored,
    /// though `content` tells it too: reading it copies nothing.
    @usableFromInline
    let isBound: Bool
    /// The value when it is NULL, an INTEGER or a REAL: trivially copyable,
    /// so a plain insert binds it without copying the setter or its content.
    @usableFromInline
    let scalar: Scalar

    @usableFromInline
    enum Scalar: Sendable {
        case none
        case null
        case integer(Int64)
        case real(Double)
    }

    init(columnName: String, value: SQLLiteral) {
        self.columnName = columnName
        self.content = .expression(value)
        self.isBound = false
        self.scalar = .none
    }

    @inlinable
    init<V: DatabaseValueConvertible>(columnName: String, bound value: V) {
        self.columnName = columnName
        self.isBound = true
        let converted = value.databaseValue
        if case .real = converted, value is any FixedWidthInteger {
            // An unsigned integer above Int64.max: bound as is, so that
            // binding refuses it.
            self.content = .bound(value)
            self.scalar = .none
            return
        }
        self.content = .value(converted)
        switch converted {
        case .null: self.scalar = .null
        case .integer(let integer): self.scalar = .integer(integer)
        case .real(let real): self.scalar = .real(real)
        case .text, .blob: self.scalar = .none
        }
    }

    /// The value, bound (`?`), or an expression.
    public var value: SQLLiteral {
        switch content {
        case .value(let value): valueLiteral(value)
        case .bound(let value): valueLiteral(value)
        case .expression(let literal): literal
        }
    }

    /// The value to bind, for a setter that binds one.
    var boundValue: (any DatabaseValueConvertible)?? {
        switch content {
        case .value(let value): .some(value)
        case .bound(let value): .some(value)
        case .expression: nil
        }
    }

    /// Binds a setter's value to a parameter. (Static with a borrowed
    /// setter: a method call copied the setter out of its array.)
    static func bind(_ setter: borrowing SQLSetter, to sqliteStatement: OpaquePointer, at position: Int32) throws {
        switch setter.content {
        case .value(let value):
            try value.bind(to: sqliteStatement, at: position)
        case .bound(let value?):
            try value.bind(to: sqliteStatement, at: position)
        case .bound(nil):
            try checkBind(sqlite3_bind_null(sqliteStatement, position), sqliteStatement)
        case .expression:
            preconditionFailure("an expression setter has no value to bind")
        }
    }
}

/// Sets a column to a value: `title <- "Heat"`.
@inlinable
public func <- <V: DatabaseValueConvertible>(column: SQLExpression<V>, value: V) -> SQLSetter {
    SQLSetter(columnName: column.resultColumnName, bound: value)
}

/// Sets a column to an expression: `year <- year + 1`.
public func <- <V>(column: SQLExpression<V>, value: SQLExpression<V>) -> SQLSetter {
    SQLSetter(columnName: column.resultColumnName, value: value.sqlLiteral)
}

/// Sets a NULL-able column to a non-NULL expression.
public func <- <V>(column: SQLExpression<V?>, value: SQLExpression<V>) -> SQLSetter {
    SQLSetter(columnName: column.resultColumnName, value: value.sqlLiteral)
}

/// `column = column + value`.
public func += <V: SQLNumericValue>(column: SQLExpression<V>, value: V) -> SQLSetter {
    column <- column + value
}

/// `column = column + expression`.
public func += <V: SQLNumericValue>(column: SQLExpression<V>, value: SQLExpression<V>) -> SQLSetter {
    column <- column + value
}

/// `column = column || value`.
public func += <V: SQLTextValue>(column: SQLExpression<V>, value: V) -> SQLSetter {
    column <- column + value
}

/// `column = column - value`.
public func -= <V: SQLNumericValue>(column: SQLExpression<V>, value: V) -> SQLSetter {
    column <- column - value
}

/// `column = column * value`.
public func *= <V: SQLNumericValue>(column: SQLExpression<V>, value: V) -> SQLSetter {
    column <- column * value
}

/// `column = column / value`.
public func /= <V: SQLNumericValue>(column: SQLExpression<V>, value: V) -> SQLSetter {
    column <- column / value
}

/// What INSERT does when it would break a constraint: `INSERT OR …`.
///
/// See <https://www.sqlite.org/lang_conflict.html>.
public enum SQLConflictResolution: String, Sendable {
    /// Undo the statement and fail (SQLite's default).
    case abort = "ABORT"
    /// Undo the whole transaction and fail.
    case rollback = "ROLLBACK"
    /// Fail, keeping the statement's earlier changes.
    case fail = "FAIL"
    /// Skip the row.
    case ignore = "IGNORE"
    /// Delete the rows in the way, then insert.
    case replace = "REPLACE"
}

/// The excluded row of an upsert: `excluded(likes)` is the value the INSERT
/// tried to write.
public func excluded<V>(_ column: SQLExpression<V>) -> SQLExpression<V> {
    SQLExpression(literal: SQLLiteral(sql: "excluded." + quoteIdentifier(column.resultColumnName)))
}

/// An INSERT statement; run it with `db.run(_:)`, which returns the new rowid.
public struct SQLInsert: SQLLiteralConvertible {
    let tableName: String
    let resolution: SQLConflictResolution?
    let setters: [SQLSetter]
    var upsertClause: SQLLiteral?
    var returning: [SQLLiteral] = []

    /// An upsert: on a conflict with the given columns (a UNIQUE or PRIMARY
    /// KEY constraint), update the existing row instead. With no setters,
    /// every inserted column except the conflict columns takes the new value.
    ///
    /// ```swift
    /// try db.run(tally.insert(word <- "heat", count <- 1).onConflict(word, update: count += 1))
    /// ```
    public func onConflict(_ columns: any SQLLiteralConvertible..., update setters: SQLSetter...) -> SQLInsert {
        var copy = self
        let conflictNames = Set(columns.map(\.sqlLiteral.sql))
        let updates = setters.isEmpty
            ? self.setters.filter { !conflictNames.contains(quoteIdentifier($0.columnName)) }.map { setter in
                SQLSetter(columnName: setter.columnName, value: SQLLiteral(sql: "excluded." + quoteIdentifier(setter.columnName)))
            }
            : setters
        var clause = SQLLiteral(sql: " ON CONFLICT (")
        clause.append(SQLLiteral.joined(columns.map(\.sqlLiteral), separator: ", "))
        clause.append(sql: ") DO UPDATE SET ")
        clause.append(assignments(updates))
        copy.upsertClause = clause
        return copy
    }

    /// On a conflict with the given columns (or any, when none are given),
    /// keep the existing row and insert nothing.
    public func onConflictDoNothing(_ columns: any SQLLiteralConvertible...) -> SQLInsert {
        var copy = self
        var clause = SQLLiteral(sql: " ON CONFLICT")
        if !columns.isEmpty {
            clause.append(sql: " (")
            clause.append(SQLLiteral.joined(columns.map(\.sqlLiteral), separator: ", "))
            clause.append(sql: ")")
        }
        clause.append(sql: " DO NOTHING")
        copy.upsertClause = clause
        return copy
    }

    /// `RETURNING columns`: fetch the inserted rows with `Row.fetchAll(db, insert)`.
    public func returning(_ columns: any SQLSelectable...) -> SQLInsert {
        var copy = self
        copy.returning = columns.map(\.sqlSelection)
        return copy
    }

    /// Whether the insert only binds values to columns (no conflict clause,
    /// upsert, RETURNING or SQL expression).
    var isPlain: Bool {
        guard resolution == nil, upsertClause == nil, returning.isEmpty, !setters.isEmpty else { return false }
        for index in 0..<setters.count where !setters[index].isBound {
            return false
        }
        return true
    }

    /// The values a plain insert binds, for an error to name.
    var boundArguments: StatementArguments {
        StatementArguments(setters.map { $0.boundValue ?? nil })
    }

    /// The INSERT statement.
    public var sqlLiteral: SQLLiteral {
        var literal: SQLLiteral
        if setters.isEmpty {
            literal = SQLLiteral(sql: "INSERT" + (resolution.map { " OR " + $0.rawValue } ?? "") + " INTO " + quoteIdentifier(tableName))
            literal.append(sql: " DEFAULT VALUES")
        } else {
            literal = SQLLiteral(sql: insertHead(into: tableName, columns: setters.map(\.columnName), conflictResolution: resolution?.rawValue))
            literal.append(sql: " VALUES (")
            literal.append(SQLLiteral.joined(setters.map(\.value), separator: ", "))
            literal.append(sql: ")")
        }
        if let upsertClause { literal.append(upsertClause) }
        appendReturning(returning, to: &literal)
        return literal
    }
}

/// An UPDATE statement; `db.run(_:)` returns the number of changed rows.
public struct SQLUpdate: SQLLiteralConvertible {
    let tableName: String
    let setters: [SQLSetter]
    let predicate: SQLLiteral?
    var returning: [SQLLiteral] = []

    /// `RETURNING columns`: fetch the updated rows with `Row.fetchAll(db, update)`.
    public func returning(_ columns: any SQLSelectable...) -> SQLUpdate {
        var copy = self
        copy.returning = columns.map(\.sqlSelection)
        return copy
    }

    /// The UPDATE statement.
    public var sqlLiteral: SQLLiteral {
        var literal = SQLLiteral(sql: "UPDATE " + quoteIdentifier(tableName) + " SET ")
        literal.append(assignments(setters))
        if let predicate {
            literal.append(sql: " WHERE ")
            literal.append(predicate)
        }
        appendReturning(returning, to: &literal)
        return literal
    }
}

/// A DELETE statement; `db.run(_:)` returns the number of deleted rows.
public struct SQLDelete: SQLLiteralConvertible {
    let tableName: String
    let predicate: SQLLiteral?
    var returning: [SQLLiteral] = []

    /// `RETURNING columns`: fetch the deleted rows with `Row.fetchAll(db, delete)`.
    public func returning(_ columns: any SQLSelectable...) -> SQLDelete {
        var copy = self
        copy.returning = columns.map(\.sqlSelection)
        return copy
    }

    /// The DELETE statement.
    public var sqlLiteral: SQLLiteral {
        var literal = SQLLiteral(sql: "DELETE FROM " + quoteIdentifier(tableName))
        if let predicate {
            literal.append(sql: " WHERE ")
            literal.append(predicate)
        }
        appendReturning(returning, to: &literal)
        return literal
    }
}

private func assignments(_ setters: [SQLSetter]) -> SQLLiteral {
    SQLLiteral.joined(setters.map { setter in
        var literal = SQLLiteral(sql: quoteIdentifier(setter.columnName) + " = ")
        literal.append(setter.value)
        return literal
    }, separator: ", ")
}

private func appendReturning(_ columns: [SQLLiteral], to literal: inout SQLLiteral) {
    guard !columns.isEmpty else { return }
    literal.append(sql: " RETURNING ")
    literal.append(SQLLiteral.joined(columns, separator: ", "))
}

extension SQLTable {
    /// `INSERT INTO table (columns) VALUES (values)`.
    ///
    /// ```swift
    /// let rowID = try db.run(movies.insert(title <- "Heat", year <- 1995))
    /// ```
    public func insert(_ setters: SQLSetter...) -> SQLInsert {
        SQLInsert(tableName: name, resolution: nil, setters: setters)
    }

    /// `INSERT INTO table …` from an array of setters.
    public func insert(_ setters: [SQLSetter]) -> SQLInsert {
        SQLInsert(tableName: name, resolution: nil, setters: setters)
    }

    /// `INSERT OR REPLACE`, `INSERT OR IGNORE`, …
    public func insert(or resolution: SQLConflictResolution, _ setters: SQLSetter...) -> SQLInsert {
        SQLInsert(tableName: name, resolution: resolution, setters: setters)
    }

    /// `UPDATE table SET … WHERE <the query's filter>`: every row the query's
    /// filters select.
    ///
    /// ```swift
    /// let changed = try db.run(movies.filter(id == 7).update(likes <- 3, watched <- true))
    /// ```
    public func update(_ setters: SQLSetter...) -> SQLUpdate {
        SQLUpdate(tableName: name, setters: setters, predicate: whereClause)
    }

    /// `DELETE FROM table WHERE <the query's filter>`; every row when the
    /// query has no filter.
    public func delete() -> SQLDelete {
        SQLDelete(tableName: name, predicate: whereClause)
    }
}

extension Database {
    /// Runs an INSERT and returns the new row's rowid.
    ///
    /// - Throws: ``SQLiteError``, such as a constraint error.
    @discardableResult
    public func run(_ insert: SQLInsert) throws -> Int64 {
        if insert.isPlain {
            try runPlain(insert)
        } else {
            let literal = insert.sqlLiteral
            try execute(sql: literal.sql, arguments: literal.statementArguments)
        }
        return lastInsertedRowID
    }

    /// The common case: reuses the prepared INSERT for this table and these
    /// columns without building its SQL again, and binds each setter's value
    /// where it is.
    private func runPlain(_ insert: SQLInsert) throws {
        let setters = insert.setters
        let statement: Statement
        let cache = typedInserts
        if let last = cache.last, last.tableName == insert.tableName, !last.statement.isBusy,
            Self.setters(setters, match: last.columns)
        {
            // The table of the previous insert, found without hashing its name.
            statement = last.statement
        } else if let cached = cache.statements[insert.tableName],
            !cached.statement.isBusy,
            Self.setters(setters, match: cached.columns)
        {
            statement = cached.statement
            cache.last = (insert.tableName, cached.columns, statement)
        } else {
            statement = try makeStatement(sql: insert.sqlLiteral.sql)
            let columns = setters.map(\.columnName)
            cache.statements[insert.tableName] = (columns, statement)
            cache.last = (insert.tableName, columns, statement)
        }
        try statement.prepareForBinding()
        let sqliteStatement = statement.sqliteStatement
        for index in 0..<setters.count {
            let position = Int32(truncatingIfNeeded: index + 1)
            switch setters[index].scalar {
            case .integer(let integer):
                try checkBind(sqlite3_bind_int64(sqliteStatement, position, integer), sqliteStatement)
            case .real(let real):
                try checkBind(sqlite3_bind_double(sqliteStatement, position, real), sqliteStatement)
            case .null:
                try checkBind(sqlite3_bind_null(sqliteStatement, position), sqliteStatement)
            case .none:
                try SQLSetter.bind(setters[index], to: sqliteStatement, at: position)
            }
        }
        // An error names the values, as `execute(arguments:)` does.
        try statement.runBound { insert.boundArguments }
    }

    private static func setters(_ setters: [SQLSetter], match columns: [String]) -> Bool {
        guard setters.count == columns.count else { return false }
        for index in 0..<columns.count where setters[index].columnName != columns[index] {
            return false
        }
        return true
    }

    /// Runs many INSERTs in one savepoint (all or nothing), reusing one
    /// prepared statement while the columns stay the same, and returns how
    /// many rows were inserted.
    ///
    /// ```swift
    /// try db.run(rows.map { movies.insert(title <- $0.title, year <- $0.year) })
    /// ```
    @discardableResult
    public func run(_ inserts: [SQLInsert]) throws -> Int {
        try savepoint {
            var count = 0
            for insert in inserts {
                let literal = insert.sqlLiteral
                try execute(sql: literal.sql, arguments: literal.statementArguments)
                count += changesCount
            }
            return count
        }
    }
}

/// The prepared INSERT of typed queries (`db.run(table.insert(…))`), by
/// table name, with its columns: kept on the connection, under this type's
/// identifier.
///
/// Its state is `@exclusivity(unchecked)`: a connection is used by one
/// thread at a time, and the dynamic checks were a measurable part of an
/// insert.
final class TypedInsertStatements {
    @exclusivity(unchecked) var statements: [String: (columns: [String], statement: Statement)] = [:]
    /// The entry the latest insert used, compared before `statements` is
    /// hashed: a loop of inserts goes to one table.
    @exclusivity(unchecked) var last: (tableName: String, columns: [String], statement: Statement)?
}

extension Database {
    /// The connection's typed INSERT statements.
    var typedInserts: TypedInsertStatements {
        let key = ObjectIdentifier(TypedInsertStatements.self)
        if let cache = layerCache[key] {
            // Only this type is stored under its own identifier.
            return unsafeDowncast(cache, to: TypedInsertStatements.self)
        }
        let cache = TypedInsertStatements()
        layerCache[key] = cache
        return cache
    }
}
