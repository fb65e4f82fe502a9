import Foundation

/// A typed SQL expression: a column, a value, or an expression built from
/// them with operators and functions.
///
/// `Value` is the Swift type of the expression's result; an optional type
/// means the expression may be NULL:
///
/// ```swift
/// let id = Column<Int64>("id")
/// let title = Column<String>("title")
/// let url = Column<String?>("url")              // NULL-able
/// let recent = movies.filter(year > 1990 && url != nil).order(year.desc)
/// ```
///
/// Values in expressions are always bound as parameters; identifiers are
/// always quoted.
public struct SQLExpression<Value>: SQLLiteralConvertible {
    @usableFromInline
    typealias Storage = SQLExpressionStorage

    @usableFromInline
    let storage: Storage

    /// The expression's SQL, to use inside other SQL.
    public var sqlLiteral: SQLLiteral { storage.literal }

    /// The result column's name when the expression is a column or an
    /// aliased expression; used to read it from a row.
    public var columnName: String? { storage.columnName }

    /// The SQL in a select list: `sum("price") AS "total"` for an aliased
    /// expression, the expression itself otherwise.
    public var sqlSelection: SQLLiteral { storage.selection }

    /// A column, by name: `Column<String>("title")`, written `"title"`.
    public init(_ columnName: String) {
        storage = InternedColumns.storage(named: columnName)
    }

    /// A bound value as an expression: `SQLExpression(value: 1)` is `?` with 1.
    public init(value: Value) where Value: DatabaseValueConvertible {
        self.init(literal: valueLiteral(value))
    }

    /// A scalar subquery: `(SELECT max("year") FROM "movies")`.
    public init(subquery: SQLTable) {
        var literal = SQLLiteral(sql: "(")
        literal.append(subquery.sqlLiteral)
        literal.append(sql: ")")
        self.init(literal: literal)
    }

    /// An expression from SQL with bound values, typed by you:
    /// `SQLExpression<Int>(literal: "julianday('now') - julianday(\(date))")`.
    public init(literal: SQLLiteral) {
        self.init(literal: literal, columnName: nil)
    }

    init(literal: SQLLiteral, columnName: String?, selection: SQLLiteral? = nil) {
        storage = Storage(literal: literal, columnName: columnName, selection: selection ?? literal)
    }

    init(storage: Storage) {
        self.storage = storage
    }

    /// The same expression typed as another Swift type, without any SQL
    /// conversion (see ``cast(as:)`` for SQL's CAST).
    public func typed<Other>(as type: Other.Type) -> SQLExpression<Other> {
        SQLExpression<Other>(storage: storage)
    }

    /// The expression under a name in a select list; refer to it by that name
    /// in ORDER BY and read it with `row[expression]`.
    ///
    /// ```swift
    /// let total = sum(price).aliased("total")
    /// let rows = try Row.fetchAll(db, orders.select(customer, total).group(customer).order(total.desc))
    /// ```
    public func aliased(_ name: String) -> SQLExpression<Value> {
        var selection = sqlSelection
        selection.append(sql: " AS " + quoteIdentifier(name))
        return SQLExpression(literal: SQLLiteral(sql: quoteIdentifier(name)), columnName: name, selection: selection)
    }

    /// The name under which SQLite reports this expression as a result
    /// column: the column's or alias's name, else the expression's text.
    @inlinable
    var resultColumnName: String { storage.resultColumnName }
}

/// An expression's parts, behind one reference so that copying an
/// expression (in a loop over columns, say) costs a single retain. Not
/// generic: a plain column's parts do not depend on its Swift type, so one
/// storage serves every `Column<…>("name")` of that name.
@usableFromInline
final class SQLExpressionStorage: Sendable {
    let literal: SQLLiteral
    let columnName: String?
    let selection: SQLLiteral
    @usableFromInline
    let resultColumnName: String
    /// Whether this is the one storage of a plain column's name, kept for
    /// the life of the process (``InternedColumns``): a setter then refers
    /// to it without retaining it, and a cached INSERT recognizes it by
    /// identity.
    @usableFromInline
    let isInterned: Bool

    init(literal: SQLLiteral, columnName: String?, selection: SQLLiteral, isInterned: Bool = false) {
        self.literal = literal
        self.columnName = columnName
        self.selection = selection
        self.resultColumnName = columnName ?? literal.sql
        self.isInterned = isInterned
    }
}

/// The storages of plain columns, one per name, never freed: a name is
/// looked up when a `Column` is made, and the setters that `<-` makes from
/// it then carry a plain reference (no retain, no release, compared by
/// identity) instead of a copy of the name. At most ``limit`` names of up
/// to 256 bytes are kept, so a program that makes names without end (say
/// `Column<Int>("c\(i)")` in a loop) does not grow the table without end;
/// past the limit, a column gets a storage of its own, as other expressions do.
enum InternedColumns {
    static let limit = 10_000
    private static let table = Locked([String: SQLExpressionStorage]())

    static func storage(named name: String) -> SQLExpressionStorage {
        table.withLock { table in
            if let storage = table[name] { return storage }
            let quoted = SQLLiteral(sql: quoteIdentifier(name))
            let keep = table.count < limit && name.utf8.count <= 256
            let storage = SQLExpressionStorage(literal: quoted, columnName: name, selection: quoted, isInterned: keep)
            if keep { table[name] = storage }
            return storage
        }
    }
}

/// A column of a table: `Column<Int64>("id")`, `Column<String?>("url")`.
///
/// Columns are expressions (``SQLExpression``) named after a column; an
/// optional `Value` declares a NULL-able column.
public typealias Column<Value> = SQLExpression<Value>

// MARK: - Building blocks

/// An expression of raw SQL made of parts, each a literal.
func makeExpression<Value>(_ parts: SQLLiteralConvertible...) -> SQLExpression<Value> {
    var literal = SQLLiteral(sql: "")
    for part in parts { literal.append(part.sqlLiteral) }
    return SQLExpression<Value>(literal: literal)
}

/// `(lhs op rhs)`.
func binary<Value>(_ lhs: SQLLiteral, _ op: String, _ rhs: SQLLiteral) -> SQLExpression<Value> {
    var literal = SQLLiteral(sql: "(")
    literal.append(lhs)
    literal.append(sql: " \(op) ")
    literal.append(rhs)
    literal.append(sql: ")")
    return SQLExpression<Value>(literal: literal)
}

/// `name(arguments…)`.
func function<Value>(_ name: String, _ arguments: [SQLLiteral]) -> SQLExpression<Value> {
    var literal = SQLLiteral(sql: name + "(")
    literal.append(SQLLiteral.joined(arguments, separator: ", "))
    literal.append(sql: ")")
    return SQLExpression<Value>(literal: literal)
}

/// A bound value as a literal: `?`.
func valueLiteral(_ value: (any DatabaseValueConvertible)?) -> SQLLiteral {
    SQLLiteral(sql: "?", arguments: [value])
}

// MARK: - Declared types

/// The declared SQL type for a Swift type, for CREATE TABLE and CAST:
/// INTEGER, REAL, TEXT, BLOB, BOOLEAN, or "" when unknown.
func declaredType(for type: Any.Type) -> String {
    if let optional = type as? any OptionalProtocol.Type {
        return declaredType(for: optional.wrappedType)
    }
    switch type {
    case is Bool.Type:
        return "BOOLEAN"
    case is any FixedWidthInteger.Type:
        return "INTEGER"
    case is Double.Type, is Float.Type:
        return "REAL"
    case is String.Type, is Date.Type, is UUID.Type, is URL.Type, is Decimal.Type:
        return "TEXT"
    case is Data.Type, is [UInt8].Type:
        return "BLOB"
    default:
        if let rawRepresentable = type as? any RawRepresentable.Type {
            return declaredType(for: rawType(of: rawRepresentable))
        }
        return ""
    }
}

private func rawType<T: RawRepresentable>(of type: T.Type) -> Any.Type {
    T.RawValue.self
}

/// Lets code ask whether a type is an Optional, and of what.
protocol OptionalProtocol {
    static var wrappedType: Any.Type { get }
}

extension Optional: OptionalProtocol {
    static var wrappedType: Any.Type { Wrapped.self }
}

/// Whether a type is an Optional (a NULL-able column).
func isOptionalType(_ type: Any.Type) -> Bool {
    type is any OptionalProtocol.Type
}

// MARK: - Value families

/// Types SQL arithmetic applies to: integers, `Double`, `Float`, and their
/// optionals.
public protocol SQLNumericValue: DatabaseValueConvertible {}
extension Int: SQLNumericValue {}
extension Int8: SQLNumericValue {}
extension Int16: SQLNumericValue {}
extension Int32: SQLNumericValue {}
extension Int64: SQLNumericValue {}
extension UInt8: SQLNumericValue {}
extension UInt16: SQLNumericValue {}
extension UInt32: SQLNumericValue {}
extension Double: SQLNumericValue {}
extension Float: SQLNumericValue {}
extension Optional: SQLNumericValue where Wrapped: SQLNumericValue {}

/// Types SQL string functions apply to: `String` and `String?`.
public protocol SQLTextValue: DatabaseValueConvertible {}
extension String: SQLTextValue {}
extension Optional: SQLTextValue where Wrapped == String {}

// MARK: - Reading from rows

extension RowProtocol {
    /// The value of a typed column or aliased expression of the query:
    /// `let title = try row[title]`.
    ///
    /// - Throws: ``DatabaseDecodingError`` when the row has no such column or
    ///   the value does not fit `Value`.
    @inlinable
    public subscript<Value: DatabaseValueConvertible>(_ expression: SQLExpression<Value>) -> Value {
        get throws { try decode(Value.self, forColumn: expression.resultColumnName) }
    }
}
