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
    // A loop of `db.run(table.insert(a <- 1, b <- 2, …))` makes and
    // destroys an array of setters per row, and the array is destroyed
    // element by element through the setter's value witness. So a setter of
    // a plain column keeps the column as the address of its interned
    // storage (no retain, no release, compared as a number) and a NULL, an
    // integer, a real or a text inline: destroying it releases nothing but
    // a text. The rest (a BLOB, an expression, a column whose storage is
    // not interned) is in a payload.

    /// The setter's value.
    @usableFromInline
    enum Kind: Sendable {
        case null
        case integer(Int64)
        case real(Double)
        case text(String)
        /// A BLOB, an unsigned integer above `Int64.max`, an expression, or
        /// any value set on a column whose storage is not interned.
        case other(Payload)
    }

    /// What a payload holds.
    enum Content: Sendable {
        case value(DatabaseValue)
        /// A value bound as is: an unsigned integer above `Int64.max`, whose
        /// `bind` refuses it rather than storing it as REAL.
        case bound((any DatabaseValueConvertible)?)
        case expression(SQLLiteral)
    }

    @usableFromInline
    final class Payload: Sendable {
        /// The column's name, when its storage is not interned.
        let columnName: String?
        let content: Content

        init(columnName: String?, content: Content) {
            self.columnName = columnName
            self.content = content
        }
    }

    /// The address of the column's storage when it is a plain column's
    /// interned one (never freed, so it needs no retain), else 0.
    @usableFromInline
    let interned: UInt
    @usableFromInline
    let kind: Kind

    @inlinable @inline(__always)
    init(interned column: SQLExpressionStorage, kind: Kind) {
        self.interned = UInt(bitPattern: Unmanaged.passUnretained(column).toOpaque())
        self.kind = kind
    }

    init(column: SQLExpressionStorage, content: Content) {
        guard column.isInterned else {
            self.init(columnName: column.resultColumnName, content: content)
            return
        }
        self.init(interned: column, kind: .other(Payload(columnName: nil, content: content)))
    }

    init(columnName: String, content: Content) {
        self.interned = 0
        self.kind = .other(Payload(columnName: columnName, content: content))
    }

    /// A setter of an expression.
    init(column: SQLExpressionStorage, value: SQLLiteral) {
        self.init(column: column, content: .expression(value))
    }

    /// A setter of an expression, to a column known by name.
    init(columnName: String, value: SQLLiteral) {
        self.init(columnName: columnName, content: .expression(value))
    }

    /// A setter of a value. Inlined into `<-`, so that a plain column and
    /// a NULL, an integer, a real or a text make the setter in place.
    @inlinable @inline(__always)
    init<V: DatabaseValueConvertible>(column: SQLExpressionStorage, bound value: V) {
        let converted = value.databaseValue
        if column.isInterned {
            switch converted {
            case .null:
                self.init(interned: column, kind: .null)
                return
            case .integer(let integer):
                self.init(interned: column, kind: .integer(integer))
                return
            case .real(let real) where !(V.self is any FixedWidthInteger.Type):
                self.init(interned: column, kind: .real(real))
                return
            case .text(let text):
                self.init(interned: column, kind: .text(text))
                return
            default:
                break
            }
        }
        self.init(column: column, converted: converted, original: value)
    }

    /// A setter of a value that needs a payload: a BLOB, an unsigned
    /// integer above `Int64.max`, or a column whose storage is not interned.
    @usableFromInline
    init(column: SQLExpressionStorage, converted: DatabaseValue, original: some DatabaseValueConvertible) {
        if case .real = converted, original is any FixedWidthInteger {
            // An unsigned integer above Int64.max: bound as is, so that
            // binding refuses it.
            self.init(column: column, content: .bound(original))
        } else {
            self.init(column: column, content: .value(converted))
        }
    }

    /// The column's name.
    public var columnName: String {
        if let address = UnsafeRawPointer(bitPattern: interned) {
            return Unmanaged<SQLExpressionStorage>.fromOpaque(address).takeUnretainedValue().resultColumnName
        }
        if case .other(let payload) = kind, let name = payload.columnName { return name }
        return ""
    }

    /// Whether the setter binds a value (it is not an expression).
    var isBound: Bool {
        if case .other(let payload) = kind, case .expression = payload.content { return false }
        return true
    }

    /// The value, bound (`?`), or an expression.
    public var value: SQLLiteral {
        if case .other(let payload) = kind, case .expression(let literal) = payload.content { return literal }
        return valueLiteral(boundValue ?? nil)
    }

    /// The value to bind, for a setter that binds one.
    var boundValue: (any DatabaseValueConvertible)?? {
        switch kind {
        case .null: .some(DatabaseValue.null)
        case .integer(let integer): .some(DatabaseValue.integer(integer))
        case .real(let real): .some(DatabaseValue.real(real))
        case .text(let text): .some(DatabaseValue.text(text))
        case .other(let payload):
            switch payload.content {
            case .value(let value): .some(value)
            case .bound(let value): .some(value)
            case .expression: nil
            }
        }
    }

    /// Binds a setter's value to a parameter, or returns false for an
    /// expression. (Static, given the setter's address: a method call or a
    /// borrowed argument copied the setter out of its array, a retain and
    /// a release per value.)
    @inline(__always)
    static func bind(_ setter: UnsafePointer<SQLSetter>, to sqliteStatement: OpaquePointer, at position: Int32) throws -> Bool {
        switch setter.pointee.kind {
        case .integer(let integer):
            try checkBind(sqlite3_bind_int64(sqliteStatement, position, integer), sqliteStatement)
        case .real(let real):
            try checkBind(sqlite3_bind_double(sqliteStatement, position, real), sqliteStatement)
        case .null:
            try checkBind(sqlite3_bind_null(sqliteStatement, position), sqliteStatement)
        case .text(let text):
            try bindText(text, to: sqliteStatement, at: position)
        case .other(let payload):
            return try bind(payload, to: sqliteStatement, at: position)
        }
        return true
    }

    private static func bind(_ payload: Payload, to sqliteStatement: OpaquePointer, at position: Int32) throws -> Bool {
        switch payload.content {
        case .value(let value):
            try value.bind(to: sqliteStatement, at: position)
        case .bound(let value?):
            try value.bind(to: sqliteStatement, at: position)
        case .bound(nil):
            try checkBind(sqlite3_bind_null(sqliteStatement, position), sqliteStatement)
        case .expression:
            return false
        }
        return true
    }
}

/// Sets a column to a value: `title <- "Heat"`.
@inlinable
public func <- <V: DatabaseValueConvertible>(column: SQLExpression<V>, value: V) -> SQLSetter {
    SQLSetter(column: column.storage, bound: value)
}

/// Sets a column to an expression: `year <- year + 1`.
public func <- <V>(column: SQLExpression<V>, value: SQLExpression<V>) -> SQLSetter {
    SQLSetter(column: column.storage, value: value.sqlLiteral)
}

/// Sets a NULL-able column to a non-NULL expression.
public func <- <V>(column: SQLExpression<V?>, value: SQLExpression<V>) -> SQLSetter {
    SQLSetter(column: column.storage, value: value.sqlLiteral)
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

    /// Inlined into `insert(_:)`, so that the caller's array of setters
    /// moves into the insert (no retain of it, no release).
    @usableFromInline
    init(tableName: String, resolution: SQLConflictResolution?, setters: [SQLSetter]) {
        self.tableName = tableName
        self.resolution = resolution
        self.setters = setters
    }

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

    /// Whether the insert has no conflict clause, upsert or RETURNING,
    /// and sets at least one column: it may then be a plain insert, if no
    /// setter is an SQL expression.
    var mayBePlain: Bool {
        resolution == nil && upsertClause == nil && returning.isEmpty && !setters.isEmpty
    }

    /// Whether the insert only binds values to columns (no conflict clause,
    /// upsert, RETURNING or SQL expression).
    var isPlain: Bool {
        guard mayBePlain else { return false }
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
    @inlinable
    public func insert(_ setters: SQLSetter...) -> SQLInsert {
        SQLInsert(tableName: name, resolution: nil, setters: setters)
    }

    /// `INSERT INTO table …` from an array of setters.
    @inlinable
    public func insert(_ setters: [SQLSetter]) -> SQLInsert {
        SQLInsert(tableName: name, resolution: nil, setters: setters)
    }

    /// `INSERT OR REPLACE`, `INSERT OR IGNORE`, …
    @inlinable
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
        if try !insert.mayBePlain || !runPlain(insert) {
            let literal = insert.sqlLiteral
            try execute(sql: literal.sql, arguments: literal.statementArguments)
        }
        return lastInsertedRowID
    }

    /// The common case: reuses the prepared INSERT for this table and these
    /// columns without building its SQL again, and binds each setter's value
    /// where it is. Returns false, having run nothing, when a setter is an
    /// SQL expression.
    private func runPlain(_ insert: SQLInsert) throws -> Bool {
        try insert.setters.withUnsafeBufferPointer { setters in
            let cache = typedInserts
            if let last = cache.last, ExactString.same(last.tableName, insert.tableName), !last.statement.isBusy {
                // The table of the previous insert, found without hashing
                // its name; its columns are compared as the values are bound.
                switch try last.bind(setters) {
                case .bound:
                    // An error names the values, as `execute(arguments:)` does.
                    try last.run(insert)
                    return true
                case .expression:
                    return false
                case .otherColumns:
                    break
                }
            }
            let entry: TypedInsertStatement
            if let cached = cache.statements[ExactString(insert.tableName)], !cached.statement.isBusy, cached.columns.match(setters) {
                entry = cached
            } else {
                guard insert.isPlain else { return false }
                let statement = try makeStatement(sql: insert.sqlLiteral.sql)
                entry = TypedInsertStatement(tableName: insert.tableName, columns: TypedInsertColumns(setters), statement: statement)
                cache.statements[ExactString(insert.tableName)] = entry
            }
            cache.last = entry
            guard try entry.bind(setters) == .bound else { return false }
            try entry.run(insert)
            return true
        }
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
    /// By table name, compared in bytes (``ExactString``).
    @exclusivity(unchecked) var statements: [ExactString: TypedInsertStatement] = [:]
    /// The entry the latest insert used, compared before `statements` is
    /// hashed: a loop of inserts goes to one table.
    @exclusivity(unchecked) var last: TypedInsertStatement?

    func removeAll() {
        statements.removeAll()
        last = nil
    }
}

/// A cached typed INSERT: its table, its columns and its statement. A class,
/// so that reading the latest one costs one retain, not one per field.
final class TypedInsertStatement {
    let tableName: String
    let columns: TypedInsertColumns
    let statement: Statement

    init(tableName: String, columns: TypedInsertColumns, statement: Statement) {
        self.tableName = tableName
        self.columns = columns
        self.statement = statement
    }

    /// Runs the statement, its values bound; an error names the insert's
    /// values, as `execute(arguments:)` does. (A method, so that the
    /// statement is read from `self` without a retain.)
    @inline(never)
    func run(_ insert: SQLInsert) throws {
        try statement.runBound { insert.boundArguments }
    }

    enum BindOutcome {
        /// Every value is bound.
        case bound
        /// A setter is an SQL expression: the insert is not a plain one.
        case expression
        /// The setters set other columns than the statement's.
        case otherColumns
    }

    /// Binds the setters' values, comparing each setter's column with the
    /// statement's as it goes (one pass over the setters, not two).
    @inline(__always)
    func bind(_ setters: UnsafeBufferPointer<SQLSetter>) throws -> BindOutcome {
        guard setters.count == columns.names.count, let first = setters.baseAddress else { return .otherColumns }
        try statement.prepareForBinding()
        let sqliteStatement = statement.sqliteStatement
        return try columns.interned.withUnsafeBufferPointer { interned in
            for index in 0..<setters.count {
                let setter = first + index
                guard columns.column(index, of: interned, isSetBy: setter) else { return .otherColumns }
                guard try SQLSetter.bind(setter, to: sqliteStatement, at: Int32(truncatingIfNeeded: index + 1)) else {
                    return .expression
                }
            }
            return .bound
        }
    }
}

/// The columns of a cached typed INSERT, in order: each by name, and by
/// address when its storage is interned, so that setters of plain columns
/// are matched with one comparison each.
struct TypedInsertColumns {
    let names: [String]
    let interned: [UInt]

    init(_ setters: UnsafeBufferPointer<SQLSetter>) {
        names = setters.map(\.columnName)
        interned = setters.map(\.interned)
    }

    /// Whether the setters set these columns, in this order.
    func match(_ setters: UnsafeBufferPointer<SQLSetter>) -> Bool {
        guard setters.count == names.count, let first = setters.baseAddress else { return false }
        return interned.withUnsafeBufferPointer { interned in
            (0..<setters.count).allSatisfy { column($0, of: interned, isSetBy: first + $0) }
        }
    }

    /// Whether `setter` sets the column at `index` (`interned` is
    /// ``interned``, read in place).
    @inline(__always)
    func column(_ index: Int, of interned: UnsafeBufferPointer<UInt>, isSetBy setter: UnsafePointer<SQLSetter>) -> Bool {
        let address = setter.pointee.interned, cached = interned[index]
        // Each interned storage is the only one of its name.
        if address == cached && address != 0 { return true }
        if address != 0 && cached != 0 { return false }
        return setter.pointee.columnName == names[index]
    }
}

extension Database {
    /// The connection's typed INSERT statements: a stored property of the
    /// connection rather than an entry of its layer cache, whose lookup
    /// (a retain, a release and a key comparison) was a tenth of what a
    /// typed insert added to SQLite's own work.
    var typedInserts: TypedInsertStatements { typedInsertStatements }
}
