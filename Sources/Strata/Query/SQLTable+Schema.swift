// The schema builder: CREATE TABLE / INDEX / VIEW, ALTER TABLE, DROP, FTS5.
//
// SQLite accepts no bound parameters in schema statements, so values in
// DEFAULT clauses, CHECK constraints and partial-index WHERE clauses are
// written as SQL literals (`'it''s'`, `42`, `X'00FF'`), quoted by Strata.
//
// See <https://www.sqlite.org/lang_createtable.html>.

/// A schema statement (CREATE, ALTER, DROP); run it with `db.run(_:)`.
public struct SQLSchemaStatement: SQLLiteralConvertible {
    /// The statement's SQL, values written as literals.
    public let sql: String

    /// The statement, with no arguments.
    public var sqlLiteral: SQLLiteral { SQLLiteral(sql: sql) }

    /// `DROP INDEX [IF EXISTS] name`.
    public static func dropIndex(_ name: String, ifExists: Bool = false) -> SQLSchemaStatement {
        SQLSchemaStatement(sql: "DROP INDEX " + (ifExists ? "IF EXISTS " : "") + quoteIdentifier(name))
    }

    /// `DROP VIEW [IF EXISTS] name`.
    public static func dropView(_ name: String, ifExists: Bool = false) -> SQLSchemaStatement {
        SQLSchemaStatement(sql: "DROP VIEW " + (ifExists ? "IF EXISTS " : "") + quoteIdentifier(name))
    }
}

/// How a primary key column gets its values.
public enum SQLPrimaryKey: Sendable {
    /// `PRIMARY KEY`: an INTEGER primary key is the rowid, reused after
    /// deletes.
    case `default`
    /// `PRIMARY KEY AUTOINCREMENT`: rowids are never reused.
    case autoincrement
}

/// What happens to referencing rows when the referenced row is deleted or
/// its key changes.
///
/// See <https://www.sqlite.org/foreignkeys.html#fk_actions>.
public enum SQLForeignKeyAction: String, Sendable {
    /// Nothing special: the constraint is checked at the end of the statement.
    case noAction = "NO ACTION"
    /// The change is refused at once while referencing rows exist.
    case restrict = "RESTRICT"
    /// Referencing columns become NULL.
    case setNull = "SET NULL"
    /// Referencing columns take their default value.
    case setDefault = "SET DEFAULT"
    /// Referencing rows are deleted (or their keys updated) too.
    case cascade = "CASCADE"
}

/// The columns and constraints of a table being created; see
/// ``SQLTable/create(temporary:ifNotExists:withoutRowID:strict:_:)``.
public final class SQLTableDefinition {
    var items: [String] = []

    init() {}

    /// Adds a column. Its declared type comes from `Value` (INTEGER, REAL,
    /// TEXT, BLOB, BOOLEAN) and it is NOT NULL unless `Value` is optional.
    ///
    /// - Parameters:
    ///   - column: the column, as the typed queries name it.
    ///   - primaryKey: make it the primary key (`.autoincrement` for an
    ///     INTEGER key whose values are never reused).
    ///   - unique: add a UNIQUE constraint.
    ///   - check: a CHECK constraint.
    ///   - defaultValue: the DEFAULT value.
    ///   - collate: the collating sequence for comparisons.
    ///   - table: a table this column references (a foreign key).
    ///   - referencedColumn: the referenced column; the parent's primary key
    ///     when nil.
    ///   - onDelete: what a delete of the referenced row does.
    ///   - onUpdate: what a change of the referenced key does.
    public func column<Value>(
        _ column: SQLExpression<Value>, primaryKey: SQLPrimaryKey? = nil, unique: Bool = false,
        check: SQLExpression<Bool>? = nil, defaultValue: Value? = nil, collate: SQLCollation? = nil,
        references table: SQLTable? = nil, _ referencedColumn: SQLExpression<Value>? = nil,
        onDelete: SQLForeignKeyAction? = nil, onUpdate: SQLForeignKeyAction? = nil
    ) where Value: DatabaseValueConvertible {
        items.append(columnDefinition(
            column, primaryKey: primaryKey, unique: unique, check: check,
            defaultLiteral: defaultValue.map { inlineValue($0) }, collate: collate, references: table,
            referencedColumn?.resultColumnName, onDelete: onDelete, onUpdate: onUpdate))
    }

    /// Adds a column whose default is an SQL expression, such as
    /// `CURRENT_TIMESTAMP`.
    public func column<Value>(_ column: SQLExpression<Value>, defaultExpression: SQLLiteral, unique: Bool = false) {
        items.append(columnDefinition(
            column, primaryKey: nil, unique: unique, check: nil,
            defaultLiteral: "(" + inlined(defaultExpression) + ")", collate: nil, references: nil, nil,
            onDelete: nil, onUpdate: nil))
    }

    /// A composite primary key: `PRIMARY KEY (a, b)`.
    public func primaryKey(_ columns: any SQLLiteralConvertible...) {
        items.append("PRIMARY KEY (" + names(columns) + ")")
    }

    /// A UNIQUE constraint on several columns: `UNIQUE (a, b)`.
    public func unique(_ columns: any SQLLiteralConvertible...) {
        items.append("UNIQUE (" + names(columns) + ")")
    }

    /// A table CHECK constraint.
    public func check(_ condition: SQLExpression<Bool>) {
        items.append("CHECK (" + inlined(condition.sqlLiteral) + ")")
    }

    /// A foreign key on several columns.
    public func foreignKey(
        _ columns: [any SQLLiteralConvertible], references table: SQLTable, _ referencedColumns: [any SQLLiteralConvertible],
        onDelete: SQLForeignKeyAction? = nil, onUpdate: SQLForeignKeyAction? = nil
    ) {
        var text = "FOREIGN KEY (" + names(columns) + ") REFERENCES " + quoteIdentifier(table.name)
            + " (" + names(referencedColumns) + ")"
        if let onDelete { text += " ON DELETE " + onDelete.rawValue }
        if let onUpdate { text += " ON UPDATE " + onUpdate.rawValue }
        items.append(text)
    }

    private func names(_ columns: [any SQLLiteralConvertible]) -> String {
        columns.map(\.sqlLiteral.sql).joined(separator: ", ")
    }

    // MARK: - Columns by name, for tables derived from a record type

    /// Adds a column known by name and declared type.
    func column(named name: String, declaredType: String, primaryKey: SQLPrimaryKey? = nil, isNotNull: Bool) {
        items.append(columnDefinition(named: name, declaredType: declaredType, primaryKey: primaryKey, isNotNull: isNotNull))
    }

    /// `PRIMARY KEY (a, b)` of columns known by name.
    func primaryKey(named columns: [String]) {
        items.append("PRIMARY KEY (" + columns.map(quoteIdentifier).joined(separator: ", ") + ")")
    }

    /// `UNIQUE (a, b)` of columns known by name.
    func unique(named columns: [String]) {
        items.append("UNIQUE (" + columns.map(quoteIdentifier).joined(separator: ", ") + ")")
    }

    /// A foreign key of columns known by name; the parent's primary key when
    /// `referencedColumns` is empty.
    func foreignKey(
        named columns: [String], references table: String, _ referencedColumns: [String],
        onDelete: SQLForeignKeyAction?, onUpdate: SQLForeignKeyAction?
    ) {
        var text = "FOREIGN KEY (" + columns.map(quoteIdentifier).joined(separator: ", ") + ") REFERENCES " + quoteIdentifier(table)
        if !referencedColumns.isEmpty { text += " (" + referencedColumns.map(quoteIdentifier).joined(separator: ", ") + ")" }
        if let onDelete { text += " ON DELETE " + onDelete.rawValue }
        if let onUpdate { text += " ON UPDATE " + onUpdate.rawValue }
        items.append(text)
    }
}

/// One typed column's definition, shared by CREATE TABLE and ADD COLUMN.
private func columnDefinition<Value>(
    _ column: SQLExpression<Value>, primaryKey: SQLPrimaryKey?, unique: Bool, check: SQLExpression<Bool>?,
    defaultLiteral: String?, collate: SQLCollation?, references table: SQLTable?, _ referencedColumn: String?,
    onDelete: SQLForeignKeyAction?, onUpdate: SQLForeignKeyAction?
) -> String {
    columnDefinition(
        named: column.resultColumnName, declaredType: declaredType(for: Value.self), primaryKey: primaryKey,
        isNotNull: !isOptionalType(Value.self), unique: unique, check: check, defaultLiteral: defaultLiteral,
        collate: collate, references: table, referencedColumn, onDelete: onDelete, onUpdate: onUpdate)
}

/// One column's definition: the one place its SQL is written, for typed
/// columns and for the columns of a record type.
func columnDefinition(
    named name: String, declaredType type: String, primaryKey: SQLPrimaryKey?, isNotNull: Bool,
    unique: Bool = false, check: SQLExpression<Bool>? = nil, defaultLiteral: String? = nil, collate: SQLCollation? = nil,
    references table: SQLTable? = nil, _ referencedColumn: String? = nil,
    onDelete: SQLForeignKeyAction? = nil, onUpdate: SQLForeignKeyAction? = nil
) -> String {
    var text = quoteIdentifier(name)
    if !type.isEmpty { text += " " + type }
    if let primaryKey {
        text += primaryKey == .autoincrement ? " PRIMARY KEY AUTOINCREMENT" : " PRIMARY KEY"
    }
    if isNotNull { text += " NOT NULL" }
    if unique { text += " UNIQUE" }
    if let check { text += " CHECK (" + inlined(check.sqlLiteral) + ")" }
    if let defaultLiteral { text += " DEFAULT " + defaultLiteral }
    if let collate { text += " COLLATE " + collate.name }
    if let table {
        text += " REFERENCES " + quoteIdentifier(table.name)
        if let referencedColumn { text += " (" + quoteIdentifier(referencedColumn) + ")" }
        if let onDelete { text += " ON DELETE " + onDelete.rawValue }
        if let onUpdate { text += " ON UPDATE " + onUpdate.rawValue }
    }
    return text
}

/// A value as an SQL literal: `NULL`, `42`, `4.5`, `'it''s'`, `X'00FF'`.
func inlineValue(_ value: (any DatabaseValueConvertible)?) -> String {
    let databaseValue = value?.databaseValue ?? .null
    if case .real(let double) = databaseValue {
        // Keep a decimal point or exponent so SQLite reads a REAL back.
        let text = String(double)
        return double.isFinite ? text : (double > 0 ? "9e999" : (double < 0 ? "-9e999" : "NULL"))
    }
    return databaseValue.description
}

/// The literal's SQL with each `?` parameter replaced by its value as an SQL
/// literal, for schema statements, which take no parameters. `?` inside
/// quoted strings and identifiers is left alone.
func inlined(_ literal: SQLLiteral) -> String {
    var result = ""
    var arguments = literal.arguments.makeIterator()
    var quote: Character?
    for character in literal.sql {
        if let open = quote {
            if character == open { quote = nil }
            result.append(character)
        } else if character == "'" || character == "\"" || character == "`" {
            quote = character
            result.append(character)
        } else if character == "[" {
            quote = "]"
            result.append(character)
        } else if character == "?", let argument = arguments.next() {
            result += inlineValue(argument)
        } else {
            result.append(character)
        }
    }
    return result
}

extension SQLTable {
    /// `CREATE TABLE`, its columns and constraints defined in the closure.
    ///
    /// ```swift
    /// try db.run(movies.create(ifNotExists: true) { t in
    ///     t.column(id, primaryKey: .autoincrement)
    ///     t.column(title, check: title.length > 0)
    ///     t.column(year)
    ///     t.column(directorID, references: directors, id, onDelete: .cascade)
    /// })
    /// ```
    public func create(
        temporary: Bool = false, ifNotExists: Bool = false, withoutRowID: Bool = false, strict: Bool = false,
        _ define: (SQLTableDefinition) -> Void
    ) -> SQLSchemaStatement {
        let definition = SQLTableDefinition()
        define(definition)
        var sql = "CREATE " + (temporary ? "TEMPORARY " : "") + "TABLE " + (ifNotExists ? "IF NOT EXISTS " : "")
        sql += quoteIdentifier(name) + " (" + definition.items.joined(separator: ", ") + ")"
        var options: [String] = []
        if withoutRowID { options.append("WITHOUT ROWID") }
        if strict { options.append("STRICT") }
        if !options.isEmpty { sql += " " + options.joined(separator: ", ") }
        return SQLSchemaStatement(sql: sql)
    }

    /// `CREATE [UNIQUE] INDEX … ON table (terms) [WHERE condition]`. Terms
    /// may be columns, expressions, or `column.desc`.
    ///
    /// - Parameters:
    ///   - terms: the indexed columns or expressions, in order.
    ///   - indexName: the index's name; by default
    ///     `index_<table>_on_<columns>`.
    ///   - unique: make it a UNIQUE index.
    ///   - ifNotExists: do nothing when an index of that name exists.
    ///   - condition: index only the rows where it holds (a partial index).
    public func createIndex(
        _ terms: any SQLOrderingTerm..., name indexName: String? = nil, unique: Bool = false,
        ifNotExists: Bool = false, where condition: SQLExpression<Bool>? = nil
    ) -> SQLSchemaStatement {
        let termSQL = terms.map { inlined($0.sqlLiteral) }
        let defaultName = "index_\(name)_on_" + termSQL.joined(separator: "_")
            .filter { $0.isLetter || $0.isNumber || $0 == "_" }
        var sql = "CREATE " + (unique ? "UNIQUE " : "") + "INDEX " + (ifNotExists ? "IF NOT EXISTS " : "")
        sql += quoteIdentifier(indexName ?? defaultName) + " ON " + quoteIdentifier(name)
        sql += " (" + termSQL.joined(separator: ", ") + ")"
        if let condition { sql += " WHERE " + inlined(condition.sqlLiteral) }
        return SQLSchemaStatement(sql: sql)
    }

    /// `DROP TABLE [IF EXISTS] table`.
    public func drop(ifExists: Bool = false) -> SQLSchemaStatement {
        SQLSchemaStatement(sql: "DROP TABLE " + (ifExists ? "IF EXISTS " : "") + quoteIdentifier(name))
    }

    /// `ALTER TABLE table RENAME TO newName`.
    public func rename(to newName: String) -> SQLSchemaStatement {
        SQLSchemaStatement(sql: "ALTER TABLE " + quoteIdentifier(name) + " RENAME TO " + quoteIdentifier(newName))
    }

    /// `ALTER TABLE table RENAME COLUMN old TO new`.
    public func renameColumn<Value>(_ column: SQLExpression<Value>, to newColumn: SQLExpression<Value>) -> SQLSchemaStatement {
        SQLSchemaStatement(sql: "ALTER TABLE " + quoteIdentifier(name) + " RENAME COLUMN "
            + quoteIdentifier(column.resultColumnName) + " TO " + quoteIdentifier(newColumn.resultColumnName))
    }

    /// `ALTER TABLE table ADD COLUMN …`. A NOT NULL column (non-optional
    /// `Value`) needs a default value, as SQLite requires.
    public func addColumn<Value: DatabaseValueConvertible>(
        _ column: SQLExpression<Value>, check: SQLExpression<Bool>? = nil, defaultValue: Value? = nil,
        collate: SQLCollation? = nil, references table: SQLTable? = nil, _ referencedColumn: SQLExpression<Value>? = nil,
        onDelete: SQLForeignKeyAction? = nil, onUpdate: SQLForeignKeyAction? = nil
    ) -> SQLSchemaStatement {
        SQLSchemaStatement(sql: "ALTER TABLE " + quoteIdentifier(name) + " ADD COLUMN " + columnDefinition(
            column, primaryKey: nil, unique: false, check: check, defaultLiteral: defaultValue.map { inlineValue($0) },
            collate: collate, references: table, referencedColumn?.resultColumnName, onDelete: onDelete,
            onUpdate: onUpdate))
    }

    /// `CREATE VIEW name AS query`, this table's name being the view's.
    public func createView(as query: SQLTable, temporary: Bool = false, ifNotExists: Bool = false) -> SQLSchemaStatement {
        SQLSchemaStatement(sql: "CREATE " + (temporary ? "TEMPORARY " : "") + "VIEW " + (ifNotExists ? "IF NOT EXISTS " : "")
            + quoteIdentifier(name) + " AS " + inlined(query.sqlLiteral))
    }
}

// MARK: - Full-text search

extension SQLTable {
    /// `CREATE VIRTUAL TABLE table USING fts5(columns…)`: a full-text index.
    ///
    /// ```swift
    /// let search = SQLTable("notes_search")
    /// try db.run(search.createFTS5(title, body, tokenizer: "porter unicode61"))
    /// let hits = try search.match("heat").order(search.rank).fetchAll(db)
    /// ```
    ///
    /// See <https://www.sqlite.org/fts5.html>.
    public func createFTS5(
        _ columns: SQLExpression<String>..., tokenizer: String? = nil, ifNotExists: Bool = false
    ) -> SQLSchemaStatement {
        var arguments = columns.map { quoteIdentifier($0.resultColumnName) }
        if let tokenizer { arguments.append("tokenize = " + inlineValue(tokenizer)) }
        return SQLSchemaStatement(sql: "CREATE VIRTUAL TABLE " + (ifNotExists ? "IF NOT EXISTS " : "")
            + quoteIdentifier(name) + " USING fts5(" + arguments.joined(separator: ", ") + ")")
    }

    /// Rows of a full-text table that match an FTS5 query: `table MATCH ?`.
    public func match(_ query: String) -> SQLTable {
        filter(SQLExpression<Bool>(literal: SQLLiteral(sql: quoteIdentifier(qualifier) + " MATCH ?", arguments: [query])))
    }

    /// The relevance of each row of a full-text query, lower is better; sort
    /// by it with `order(rank)`.
    public var rank: SQLExpression<Double> {
        SQLExpression(literal: SQLLiteral(sql: quoteIdentifier(qualifier) + ".\"rank\""), columnName: "rank")
    }

    /// `bm25(table, weights…)`: the BM25 relevance, lower is better, with
    /// optional per-column weights.
    public func bm25(_ weights: Double...) -> SQLExpression<Double> {
        function("bm25", [SQLLiteral(sql: quoteIdentifier(qualifier))] + weights.map { valueLiteral($0) })
    }
}

extension SQLExpression where Value: SQLTextValue {
    /// `column MATCH query`: rows of a full-text table whose column matches.
    public func match(_ query: String) -> SQLExpression<Bool> {
        binary(sqlLiteral, "MATCH", valueLiteral(query))
    }
}
