/// A table, and the queries built on it.
///
/// ```swift
/// let movies = SQLTable("movies")
/// let id = Column<Int64>("id")
/// let title = Column<String>("title")
/// let year = Column<Int>("year")
///
/// let page = movies.select(id, title).filter(year > 1990).order(year.desc, title).limit(20, offset: 40)
/// for row in try page.fetchAll(db) {
///     print(try row[title])
/// }
/// ```
///
/// Every method returns a new query; the table itself never changes. Values
/// are bound, identifiers quoted. The name avoids SwiftUI's `Table`.
public struct SQLTable: SQLLiteralConvertible {
    /// The table's name ("" for a query without FROM).
    public let name: String
    /// The alias the query refers to the table by, if any.
    public let alias: String?

    /// What FROM names: the quoted table (with its alias) or a subquery.
    let source: SQLLiteral?
    var selection: [SQLLiteral] = []
    var isDistinct = false
    var joins: [SQLLiteral] = []
    var predicate: SQLLiteral?
    var grouping: [SQLLiteral] = []
    var havingPredicate: SQLLiteral?
    var ordering: [SQLLiteral] = []
    var limitCount: Int?
    var offsetCount: Int?
    var compounds: [(operator: String, query: SQLLiteral)] = []
    var commonTableExpressions: [SQLLiteral] = []
    var isRecursive = false

    /// A table by name, optionally known under an alias in queries (for
    /// self-joins: `SQLTable("employees", alias: "managers")`).
    public init(_ name: String, alias: String? = nil) {
        self.name = name
        self.alias = alias
        var source = SQLLiteral(sql: quoteIdentifier(name))
        if let alias { source.append(sql: " AS " + quoteIdentifier(alias)) }
        self.source = source
    }

    /// A subquery used as a table: `FROM (SELECT …) AS alias`.
    public init(subquery: SQLTable, alias: String) {
        self.name = alias
        self.alias = alias
        var source = SQLLiteral(sql: "(")
        source.append(subquery.sqlLiteral)
        source.append(sql: ") AS " + quoteIdentifier(alias))
        self.source = source
    }

    private init(selecting columns: [SQLLiteral]) {
        self.name = ""
        self.alias = nil
        self.source = nil
        self.selection = columns
    }

    /// A query without a table: `SELECT 1, 'a'`, as the first part of a
    /// recursive common table expression for example.
    public static func selecting(_ columns: any SQLSelectable...) -> SQLTable {
        SQLTable(selecting: columns.map(\.sqlSelection))
    }

    /// The same table under an alias.
    public func aliased(_ alias: String) -> SQLTable {
        SQLTable(name, alias: alias)
    }

    /// What columns are qualified with: the alias, else the name.
    var qualifier: String { alias ?? name }

    /// A column of this table, qualified: `movies[title]` is
    /// `"movies"."title"`. Use it to tell apart columns of joined tables.
    public subscript<Value>(_ column: SQLExpression<Value>) -> SQLExpression<Value> {
        let name = column.columnName ?? column.sqlLiteral.sql
        return SQLExpression(
            literal: SQLLiteral(sql: quoteIdentifier(qualifier) + "." + quoteIdentifier(name)), columnName: name)
    }

    /// All columns of this table: `"movies".*`.
    public var allColumns: SQLExpression<Row> {
        SQLExpression(literal: SQLLiteral(sql: quoteIdentifier(qualifier) + ".*"))
    }

    // MARK: - Clauses

    /// The columns or expressions to return (all columns by default).
    public func select(_ columns: any SQLSelectable...) -> SQLTable {
        var copy = self
        copy.selection = columns.map(\.sqlSelection)
        copy.isDistinct = false
        return copy
    }

    /// Distinct rows of the given columns: `SELECT DISTINCT …`.
    public func select(distinct columns: any SQLSelectable...) -> SQLTable {
        var copy = self
        copy.selection = columns.map(\.sqlSelection)
        copy.isDistinct = true
        return copy
    }

    /// Rows where the predicate is true; several filters are joined by AND.
    public func filter(_ predicate: SQLExpression<Bool>) -> SQLTable {
        var copy = self
        if let existing = copy.predicate {
            copy.predicate = (SQLExpression<Bool>(literal: existing) && predicate).sqlLiteral
        } else {
            copy.predicate = predicate.sqlLiteral
        }
        return copy
    }

    /// Rows where a NULL-able predicate is true (NULL counts as false).
    public func filter(_ predicate: SQLExpression<Bool?>) -> SQLTable {
        filter(predicate.typed(as: Bool.self))
    }

    /// Groups rows by the expressions, keeping groups where `having` is true.
    public func group(_ expressions: any SQLLiteralConvertible..., having: SQLExpression<Bool>? = nil) -> SQLTable {
        var copy = self
        copy.grouping = expressions.map(\.sqlLiteral)
        copy.havingPredicate = having?.sqlLiteral
        return copy
    }

    /// Sorts by the terms, in order: `order(year.desc, title)`. Replaces an
    /// earlier order.
    public func order(_ terms: any SQLOrderingTerm...) -> SQLTable {
        order(terms)
    }

    /// ``order(_:)`` with the terms in an array.
    func order(_ terms: [any SQLOrderingTerm]) -> SQLTable {
        var copy = self
        copy.ordering = terms.map(\.sqlLiteral)
        return copy
    }

    /// At most `count` rows, after skipping `offset`: for paging,
    /// `limit(20, offset: 40)` is the third page of twenty.
    public func limit(_ count: Int, offset: Int? = nil) -> SQLTable {
        var copy = self
        copy.limitCount = count
        copy.offsetCount = offset
        return copy
    }

    // MARK: - Joins

    /// `JOIN other ON condition`: rows that have a match in both tables.
    public func join(_ other: SQLTable, on condition: SQLExpression<Bool>) -> SQLTable {
        adding(join: "JOIN", other, condition)
    }

    /// `LEFT JOIN other ON condition`: every row of this table, with NULLs
    /// where `other` has no match.
    public func leftJoin(_ other: SQLTable, on condition: SQLExpression<Bool>) -> SQLTable {
        adding(join: "LEFT JOIN", other, condition)
    }

    /// `CROSS JOIN other`: every pair of rows.
    public func crossJoin(_ other: SQLTable) -> SQLTable {
        adding(join: "CROSS JOIN", other, nil)
    }

    private func adding(join kind: String, _ other: SQLTable, _ condition: SQLExpression<Bool>?) -> SQLTable {
        var copy = self
        var clause = SQLLiteral(sql: kind + " ")
        clause.append(other.source ?? SQLLiteral(sql: quoteIdentifier(other.name)))
        if let condition {
            clause.append(sql: " ON ")
            clause.append(condition.sqlLiteral)
        }
        copy.joins.append(clause)
        return copy
    }

    // MARK: - Compound queries

    /// `UNION`: rows of either query, without duplicates.
    public func union(_ other: SQLTable) -> SQLTable { compound("UNION", other) }
    /// `UNION ALL`: rows of both queries, duplicates kept.
    public func unionAll(_ other: SQLTable) -> SQLTable { compound("UNION ALL", other) }
    /// `INTERSECT`: rows in both queries.
    public func intersect(_ other: SQLTable) -> SQLTable { compound("INTERSECT", other) }
    /// `EXCEPT`: rows of this query not in the other.
    public func except(_ other: SQLTable) -> SQLTable { compound("EXCEPT", other) }

    private func compound(_ op: String, _ other: SQLTable) -> SQLTable {
        var copy = self
        if other.ordering.isEmpty && other.limitCount == nil && other.commonTableExpressions.isEmpty && other.compounds.isEmpty {
            copy.compounds.append((op, other.coreLiteral))
        } else {
            // A member of a compound SELECT cannot have its own ORDER BY or
            // LIMIT: keep them by making it a subquery.
            var wrapped = SQLLiteral(sql: "SELECT * FROM (")
            wrapped.append(other.sqlLiteral)
            wrapped.append(sql: ")")
            copy.compounds.append((op, wrapped))
        }
        return copy
    }

    // MARK: - Common table expressions

    /// Adds a common table expression: `WITH name(columns) AS (definition)`.
    /// Refer to it in the query with `SQLTable(name)`.
    ///
    /// ```swift
    /// let n = SQLTable("n")
    /// let x = Column<Int>("x")
    /// let counting = SQLTable.selecting(SQLExpression(value: 1)).unionAll(n.select(x + 1).filter(x < 10))
    /// let numbers = try Int.fetchAll(db, n.with("n", columns: ["x"], as: counting, recursive: true).select(x))
    /// ```
    public func with(_ name: String, columns: [String]? = nil, as definition: SQLTable, recursive: Bool = false) -> SQLTable {
        var copy = self
        var literal = SQLLiteral(sql: quoteIdentifier(name))
        if let columns {
            literal.append(sql: "(" + columns.map(quoteIdentifier).joined(separator: ", ") + ")")
        }
        literal.append(sql: " AS (")
        literal.append(definition.sqlLiteral)
        literal.append(sql: ")")
        copy.commonTableExpressions.append(literal)
        copy.isRecursive = copy.isRecursive || recursive
        return copy
    }

    // MARK: - SQL

    /// The SELECT statement.
    public var sqlLiteral: SQLLiteral {
        var literal = SQLLiteral(sql: "")
        if !commonTableExpressions.isEmpty {
            literal.append(sql: isRecursive ? "WITH RECURSIVE " : "WITH ")
            literal.append(SQLLiteral.joined(commonTableExpressions, separator: ", "))
            literal.append(sql: " ")
        }
        literal.append(coreLiteral)
        for (op, query) in compounds {
            literal.append(sql: " \(op) ")
            literal.append(query)
        }
        if !ordering.isEmpty {
            literal.append(sql: " ORDER BY ")
            literal.append(SQLLiteral.joined(ordering, separator: ", "))
        }
        if let limitCount {
            literal.append(sql: " LIMIT ")
            literal.append(value: limitCount)
            if let offsetCount {
                literal.append(sql: " OFFSET ")
                literal.append(value: offsetCount)
            }
        }
        return literal
    }

    /// SELECT … FROM … WHERE … GROUP BY … HAVING …, without order and limit.
    var coreLiteral: SQLLiteral {
        var literal = SQLLiteral(sql: isDistinct ? "SELECT DISTINCT " : "SELECT ")
        literal.append(selection.isEmpty ? SQLLiteral(sql: "*") : SQLLiteral.joined(selection, separator: ", "))
        if let source {
            literal.append(sql: " FROM ")
            literal.append(source)
        }
        for join in joins {
            literal.append(sql: " ")
            literal.append(join)
        }
        if let predicate {
            literal.append(sql: " WHERE ")
            literal.append(predicate)
        }
        if !grouping.isEmpty {
            literal.append(sql: " GROUP BY ")
            literal.append(SQLLiteral.joined(grouping, separator: ", "))
            if let havingPredicate {
                literal.append(sql: " HAVING ")
                literal.append(havingPredicate)
            }
        }
        return literal
    }

    /// The WHERE clause for UPDATE and DELETE. A query with joins, grouping,
    /// an order or a limit selects its rows by rowid through a subquery, so
    /// `movies.order(year).limit(1).delete()` deletes one row, not all.
    var whereClause: SQLLiteral? {
        if joins.isEmpty && grouping.isEmpty && ordering.isEmpty && limitCount == nil {
            return predicate
        }
        var rows = self
        rows.selection = [SQLLiteral(sql: quoteIdentifier(qualifier) + ".rowid")]
        rows.isDistinct = false
        var literal = SQLLiteral(sql: "rowid IN (")
        literal.append(rows.sqlLiteral)
        literal.append(sql: ")")
        return literal
    }
}

/// Something a select list accepts: a typed expression (possibly aliased).
public protocol SQLSelectable: Sendable {
    /// The SQL in a select list.
    var sqlSelection: SQLLiteral { get }
}

extension SQLExpression: SQLSelectable {}

/// `EXISTS (query)`.
public func exists(_ query: SQLTable) -> SQLExpression<Bool> {
    makeExpression(SQLLiteral(sql: "EXISTS ("), query.sqlLiteral, SQLLiteral(sql: ")"))
}
