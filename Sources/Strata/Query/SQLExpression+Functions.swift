// Predicates, functions and aggregates on typed expressions.
//
// See <https://www.sqlite.org/lang_expr.html>,
// <https://www.sqlite.org/lang_corefunc.html> and
// <https://www.sqlite.org/lang_aggfunc.html>.

// MARK: - Predicates

extension SQLExpression {
    /// `expression IS NULL`.
    public var isNull: SQLExpression<Bool> {
        makeExpression(SQLLiteral(sql: "("), sqlLiteral, SQLLiteral(sql: " IS NULL)"))
    }

    /// `expression IS NOT NULL`.
    public var isNotNull: SQLExpression<Bool> {
        makeExpression(SQLLiteral(sql: "("), sqlLiteral, SQLLiteral(sql: " IS NOT NULL)"))
    }

    /// `expression IN (?, ?, …)`, each value bound.
    public func `in`<S: Sequence>(_ values: S) -> SQLExpression<Bool> where S.Element: DatabaseValueConvertible {
        membership("IN", values.map { valueLiteral($0) })
    }

    /// `expression NOT IN (?, ?, …)`, each value bound.
    public func notIn<S: Sequence>(_ values: S) -> SQLExpression<Bool> where S.Element: DatabaseValueConvertible {
        membership("NOT IN", values.map { valueLiteral($0) })
    }

    /// `expression IN (SELECT …)`.
    public func `in`(_ subquery: SQLTable) -> SQLExpression<Bool> {
        membership("IN", [subquery.sqlLiteral])
    }

    /// `expression NOT IN (SELECT …)`.
    public func notIn(_ subquery: SQLTable) -> SQLExpression<Bool> {
        membership("NOT IN", [subquery.sqlLiteral])
    }

    func membership(_ op: String, _ items: [SQLLiteral]) -> SQLExpression<Bool> {
        makeExpression(
            SQLLiteral(sql: "("), sqlLiteral, SQLLiteral(sql: " \(op) ("),
            SQLLiteral.joined(items, separator: ", "), SQLLiteral(sql: "))"))
    }
}

extension SQLExpression where Value: DatabaseValueConvertible {
    /// `expression BETWEEN lower AND upper`, bounds included.
    public func between(_ lower: Value, and upper: Value) -> SQLExpression<Bool> {
        makeExpression(
            SQLLiteral(sql: "("), sqlLiteral, SQLLiteral(sql: " BETWEEN "), valueLiteral(lower),
            SQLLiteral(sql: " AND "), valueLiteral(upper), SQLLiteral(sql: ")"))
    }

    /// `expression IS value`: like `=`, but NULL is equal to NULL.
    public func `is`(_ value: Value) -> SQLExpression<Bool> {
        binary(sqlLiteral, "IS", valueLiteral(value))
    }

    /// `expression IS NOT value`.
    public func isNot(_ value: Value) -> SQLExpression<Bool> {
        binary(sqlLiteral, "IS NOT", valueLiteral(value))
    }

    /// `ifnull(expression, value)`: the value when the expression is NULL.
    public func ifNull<Wrapped>(_ value: Wrapped) -> SQLExpression<Wrapped> where Value == Wrapped?, Wrapped: DatabaseValueConvertible {
        function("ifnull", [sqlLiteral, valueLiteral(value)])
    }

    /// `CAST(expression AS type)`, with the declared type Strata uses for
    /// `type` (INTEGER, REAL, TEXT, BLOB).
    public func cast<Other: DatabaseValueConvertible>(as type: Other.Type) -> SQLExpression<Other> {
        makeExpression(SQLLiteral(sql: "CAST("), sqlLiteral, SQLLiteral(sql: " AS \(declaredType(for: Other.self)))"))
    }
}

extension SQLExpression where Value: SQLTextValue {
    /// `expression LIKE pattern [ESCAPE escape]` (ASCII case-insensitive).
    public func like(_ pattern: String, escape: Character? = nil) -> SQLExpression<Bool> {
        var literal = SQLLiteral(sql: "(")
        literal.append(sqlLiteral)
        literal.append(sql: " LIKE ")
        literal.append(value: pattern)
        if let escape {
            literal.append(sql: " ESCAPE ")
            literal.append(value: String(escape))
        }
        literal.append(sql: ")")
        return SQLExpression<Bool>(literal: literal)
    }

    /// `expression GLOB pattern` (case-sensitive, `*` and `?` wildcards).
    public func glob(_ pattern: String) -> SQLExpression<Bool> {
        binary(sqlLiteral, "GLOB", valueLiteral(pattern))
    }

    /// `lower(expression)`.
    public var lowercased: SQLExpression<Value> { function("lower", [sqlLiteral]) }
    /// `upper(expression)`.
    public var uppercased: SQLExpression<Value> { function("upper", [sqlLiteral]) }
    /// `length(expression)`, in characters.
    public var length: SQLExpression<Int?> { function("length", [sqlLiteral]) }
    /// `trim(expression)`: without leading and trailing spaces.
    public var trimmed: SQLExpression<Value> { function("trim", [sqlLiteral]) }

    /// `trim(expression, characters)`.
    public func trimmed(_ characters: String) -> SQLExpression<Value> {
        function("trim", [sqlLiteral, valueLiteral(characters)])
    }

    /// `substr(expression, start, length)`; `start` counts from 1.
    public func substring(from start: Int, length: Int? = nil) -> SQLExpression<Value> {
        function("substr", [sqlLiteral, valueLiteral(start)] + (length.map { [valueLiteral($0)] } ?? []))
    }

    /// `replace(expression, target, replacement)`.
    public func replacing(_ target: String, with replacement: String) -> SQLExpression<Value> {
        function("replace", [sqlLiteral, valueLiteral(target), valueLiteral(replacement)])
    }

    /// `instr(expression, part)`: the 1-based position of `part`, 0 when absent.
    public func position(of part: String) -> SQLExpression<Int?> {
        function("instr", [sqlLiteral, valueLiteral(part)])
    }

    /// `expression COLLATE name`.
    public func collating(_ collation: SQLCollation) -> SQLExpression<Value> {
        makeExpression(sqlLiteral, SQLLiteral(sql: " COLLATE " + collation.name))
    }
}

extension SQLExpression where Value: SQLNumericValue {
    /// `abs(expression)`.
    public var absoluteValue: SQLExpression<Value> { function("abs", [sqlLiteral]) }

    /// `round(expression, digits)`.
    public func rounded(_ digits: Int = 0) -> SQLExpression<Double?> {
        function("round", [sqlLiteral, valueLiteral(digits)])
    }
}

/// `coalesce(a, b, …)`: the first non-NULL expression.
public func coalesce<Value>(_ first: SQLExpression<Value?>, _ rest: SQLExpression<Value?>..., default value: Value) -> SQLExpression<Value> where Value: DatabaseValueConvertible {
    function("coalesce", [first.sqlLiteral] + rest.map(\.sqlLiteral) + [valueLiteral(value)])
}

/// `coalesce(a, b, …)`: the first non-NULL expression, NULL when all are.
public func coalesce<Value>(_ first: SQLExpression<Value?>, _ rest: SQLExpression<Value?>...) -> SQLExpression<Value?> {
    function("coalesce", [first.sqlLiteral] + rest.map(\.sqlLiteral))
}

/// A collating sequence for `COLLATE`.
public struct SQLCollation: Hashable, Sendable {
    /// The collation's name.
    public let name: String
    /// A collation by name, such as one added with `Database.add(collation:)`.
    public init(_ name: String) { self.name = name }
    /// Byte-wise comparison (SQLite's default).
    public static let binary = SQLCollation("BINARY")
    /// ASCII case-insensitive comparison.
    public static let nocase = SQLCollation("NOCASE")
    /// Like binary, ignoring trailing spaces.
    public static let rtrim = SQLCollation("RTRIM")
}

// MARK: - CASE

/// `CASE WHEN … THEN … ELSE … END`.
///
/// ```swift
/// let era = SQLCase(when: year < 1970, then: "classic")
///     .when(year < 2000, then: "modern")
///     .otherwise("recent")
/// ```
public struct SQLCase<Value: DatabaseValueConvertible>: Sendable {
    var branches: [(condition: SQLLiteral, result: SQLLiteral)]

    /// The first branch.
    public init(when condition: SQLExpression<Bool>, then result: Value) {
        branches = [(condition.sqlLiteral, valueLiteral(result))]
    }

    /// The first branch, with an expression as result.
    public init(when condition: SQLExpression<Bool>, then result: SQLExpression<Value>) {
        branches = [(condition.sqlLiteral, result.sqlLiteral)]
    }

    /// Another branch.
    public func when(_ condition: SQLExpression<Bool>, then result: Value) -> SQLCase {
        var copy = self
        copy.branches.append((condition.sqlLiteral, valueLiteral(result)))
        return copy
    }

    /// The result when no branch matches.
    public func otherwise(_ result: Value) -> SQLExpression<Value> {
        build(else: valueLiteral(result))
    }

    /// The expression, NULL when no branch matches.
    public var end: SQLExpression<Value?> {
        build(else: nil).typed(as: Value?.self)
    }

    private func build(else elseLiteral: SQLLiteral?) -> SQLExpression<Value> {
        var literal = SQLLiteral(sql: "CASE")
        for branch in branches {
            literal.append(sql: " WHEN ")
            literal.append(branch.condition)
            literal.append(sql: " THEN ")
            literal.append(branch.result)
        }
        if let elseLiteral {
            literal.append(sql: " ELSE ")
            literal.append(elseLiteral)
        }
        literal.append(sql: " END")
        return SQLExpression(literal: literal)
    }
}

// MARK: - Aggregates

/// `count(*)`: the number of rows.
public func count() -> SQLExpression<Int> {
    SQLExpression(literal: SQLLiteral(sql: "count(*)"))
}

/// `count(expression)`: the number of non-NULL values.
public func count<Value>(_ expression: SQLExpression<Value>) -> SQLExpression<Int> {
    function("count", [expression.sqlLiteral])
}

/// `count(DISTINCT expression)`: the number of distinct non-NULL values.
public func count<Value>(distinct expression: SQLExpression<Value>) -> SQLExpression<Int> {
    makeExpression(SQLLiteral(sql: "count(DISTINCT "), expression.sqlLiteral, SQLLiteral(sql: ")"))
}

/// `sum(expression)`: NULL when there is no non-NULL value.
public func sum<Value: SQLNumericValue>(_ expression: SQLExpression<Value>) -> SQLExpression<Value?> {
    function("sum", [expression.sqlLiteral])
}

/// `total(expression)`: the sum as a REAL, 0.0 when there is no value.
public func total<Value: SQLNumericValue>(_ expression: SQLExpression<Value>) -> SQLExpression<Double> {
    function("total", [expression.sqlLiteral])
}

/// `avg(expression)`: NULL when there is no non-NULL value.
public func average<Value: SQLNumericValue>(_ expression: SQLExpression<Value>) -> SQLExpression<Double?> {
    function("avg", [expression.sqlLiteral])
}

/// `min(expression)`: NULL when there is no non-NULL value.
public func min<Value>(_ expression: SQLExpression<Value>) -> SQLExpression<Value?> {
    function("min", [expression.sqlLiteral])
}

/// `max(expression)`: NULL when there is no non-NULL value.
public func max<Value>(_ expression: SQLExpression<Value>) -> SQLExpression<Value?> {
    function("max", [expression.sqlLiteral])
}

/// `group_concat(expression, separator)`: the values joined, NULL when none.
public func groupConcat<Value>(_ expression: SQLExpression<Value>, separator: String = ",") -> SQLExpression<String?> {
    function("group_concat", [expression.sqlLiteral, valueLiteral(separator)])
}

// MARK: - Ordering

/// A term of ORDER BY: an expression with a direction.
public struct SQLOrdering: SQLOrderingTerm {
    /// The term's SQL: `"year" DESC NULLS LAST`.
    public let sqlLiteral: SQLLiteral

    /// NULLs before other values.
    public var nullsFirst: SQLOrdering {
        SQLOrdering(sqlLiteral: SQLLiteral(sql: sqlLiteral.sql + " NULLS FIRST", arguments: sqlLiteral.arguments))
    }

    /// NULLs after other values.
    public var nullsLast: SQLOrdering {
        SQLOrdering(sqlLiteral: SQLLiteral(sql: sqlLiteral.sql + " NULLS LAST", arguments: sqlLiteral.arguments))
    }
}

/// Something ORDER BY accepts: an expression (ascending) or an
/// ``SQLOrdering``.
public protocol SQLOrderingTerm: SQLLiteralConvertible {}

extension SQLExpression: SQLOrderingTerm {
    /// Ascending order.
    public var asc: SQLOrdering {
        SQLOrdering(sqlLiteral: SQLLiteral(sql: sqlLiteral.sql + " ASC", arguments: sqlLiteral.arguments))
    }

    /// Descending order.
    public var desc: SQLOrdering {
        SQLOrdering(sqlLiteral: SQLLiteral(sql: sqlLiteral.sql + " DESC", arguments: sqlLiteral.arguments))
    }
}
