/// SQL text with its values kept apart, built by string interpolation.
///
/// Every interpolated value becomes a `?` parameter with the value bound to
/// it, so quotes in the data can never change the SQL:
///
/// ```swift
/// let title = "Robert'); DROP TABLE movies;--"
/// try db.execute(literal: "UPDATE movies SET likes = \(3) WHERE title = \(title)")
/// // UPDATE movies SET likes = ? WHERE title = ?   with [3, "Robert'); DROP TABLE movies;--"]
/// ```
///
/// Identifiers are never taken from a plain interpolation; quote them
/// explicitly with `\(identifier: name)`. Expressions and queries of the typed
/// query API can be interpolated too, with their own arguments.
public struct SQLLiteral: Sendable {
    /// The SQL text, with `?` where values go.
    public private(set) var sql: String
    /// The values for the `?` parameters, in order.
    public private(set) var arguments: [(any DatabaseValueConvertible)?]

    /// SQL text with no values. Use ``init(stringInterpolation:)`` (a string
    /// literal with interpolations) to bind values.
    public init(sql: String, arguments: [(any DatabaseValueConvertible)?] = []) {
        self.sql = sql
        self.arguments = arguments
    }

    /// The arguments as ``StatementArguments``.
    public var statementArguments: StatementArguments {
        StatementArguments(arguments)
    }

    /// Appends another literal, with its arguments.
    public mutating func append(_ other: SQLLiteral) {
        sql += other.sql
        arguments += other.arguments
    }

    /// Appends raw SQL text.
    mutating func append(sql text: String) {
        sql += text
    }

    /// Appends a bound value.
    mutating func append(value: (any DatabaseValueConvertible)?) {
        sql += "?"
        arguments.append(value)
    }

    /// The literals joined with a separator (`, `, ` AND `, …).
    static func joined(_ literals: [SQLLiteral], separator: String) -> SQLLiteral {
        var result = SQLLiteral(sql: "")
        for (index, literal) in literals.enumerated() {
            if index > 0 { result.append(sql: separator) }
            result.append(literal)
        }
        return result
    }
}

extension SQLLiteral: ExpressibleByStringInterpolation {
    /// SQL text without values: `"SELECT * FROM movies"`.
    public init(stringLiteral value: String) {
        self.init(sql: value)
    }

    /// SQL text with bound values: `"SELECT * FROM movies WHERE id = \(id)"`.
    public init(stringInterpolation: StringInterpolation) {
        self = stringInterpolation.literal
    }

    /// Builds an ``SQLLiteral`` from an interpolated string.
    public struct StringInterpolation: StringInterpolationProtocol {
        var literal = SQLLiteral(sql: "")

        /// Starts an empty literal.
        public init(literalCapacity: Int, interpolationCount: Int) {
            literal.sql.reserveCapacity(literalCapacity + interpolationCount)
        }

        /// Appends SQL text as written.
        public mutating func appendLiteral(_ text: String) {
            literal.append(sql: text)
        }

        /// Appends a `?` and binds the value (NULL for nil).
        public mutating func appendInterpolation<Value: DatabaseValueConvertible>(_ value: Value?) {
            literal.append(value: value)
        }

        /// Appends an identifier, quoted: `\(identifier: "order")` gives `"order"`.
        public mutating func appendInterpolation(identifier: String) {
            literal.append(sql: quoteIdentifier(identifier))
        }

        /// Appends a typed expression, query or other SQL with its arguments.
        public mutating func appendInterpolation(_ sql: some SQLLiteralConvertible) {
            literal.append(sql.sqlLiteral)
        }

        /// Appends a list of values as `(?, ?, ?)`, for `IN`.
        public mutating func appendInterpolation<Value: DatabaseValueConvertible>(list values: [Value]) {
            literal.append(sql: "(")
            for (index, value) in values.enumerated() {
                if index > 0 { literal.append(sql: ", ") }
                literal.append(value: value)
            }
            literal.append(sql: ")")
        }
    }
}

extension SQLLiteral: CustomStringConvertible {
    /// The SQL text (the arguments are not shown: they may be private).
    public var description: String { sql }
}

/// Something that can be written as SQL with bound values: a literal, a
/// typed expression, a query, an insert, …
public protocol SQLLiteralConvertible: Sendable {
    /// The SQL and its arguments.
    var sqlLiteral: SQLLiteral { get }
}

extension SQLLiteral: SQLLiteralConvertible {
    /// The literal itself.
    public var sqlLiteral: SQLLiteral { self }
}
