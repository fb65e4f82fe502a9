// Operators on typed expressions. Every value operand is bound, never
// spliced into the SQL.

// MARK: - Comparison

private func compare(_ lhs: SQLLiteral, _ op: String, _ rhs: SQLLiteral) -> SQLExpression<Bool> {
    binary(lhs, op, rhs)
}

/// `lhs = rhs`; `IS NULL` when `rhs` is nil.
public func == <V: DatabaseValueConvertible>(lhs: SQLExpression<V>, rhs: V) -> SQLExpression<Bool> {
    if rhs.databaseValue.isNull { return lhs.isNull }
    return compare(lhs.sqlLiteral, "=", valueLiteral(rhs))
}

/// `lhs = rhs`.
public func == <V: DatabaseValueConvertible>(lhs: V, rhs: SQLExpression<V>) -> SQLExpression<Bool> {
    rhs == lhs
}

/// `lhs = rhs`.
public func == <V: DatabaseValueConvertible>(lhs: SQLExpression<V>, rhs: SQLExpression<V>) -> SQLExpression<Bool> {
    compare(lhs.sqlLiteral, "=", rhs.sqlLiteral)
}

/// `lhs = rhs`, a NULL-able expression against a non-NULL one.
public func == <V: DatabaseValueConvertible>(lhs: SQLExpression<V?>, rhs: SQLExpression<V>) -> SQLExpression<Bool> {
    compare(lhs.sqlLiteral, "=", rhs.sqlLiteral)
}

/// `lhs = rhs`, a non-NULL expression against a NULL-able one.
public func == <V: DatabaseValueConvertible>(lhs: SQLExpression<V>, rhs: SQLExpression<V?>) -> SQLExpression<Bool> {
    compare(lhs.sqlLiteral, "=", rhs.sqlLiteral)
}

/// `lhs <> rhs`; `IS NOT NULL` when `rhs` is nil.
public func != <V: DatabaseValueConvertible>(lhs: SQLExpression<V>, rhs: V) -> SQLExpression<Bool> {
    if rhs.databaseValue.isNull { return lhs.isNotNull }
    return compare(lhs.sqlLiteral, "<>", valueLiteral(rhs))
}

/// `lhs <> rhs`.
public func != <V: DatabaseValueConvertible>(lhs: V, rhs: SQLExpression<V>) -> SQLExpression<Bool> {
    rhs != lhs
}

/// `lhs <> rhs`.
public func != <V: DatabaseValueConvertible>(lhs: SQLExpression<V>, rhs: SQLExpression<V>) -> SQLExpression<Bool> {
    compare(lhs.sqlLiteral, "<>", rhs.sqlLiteral)
}

/// `lhs < rhs`.
public func < <V: DatabaseValueConvertible>(lhs: SQLExpression<V>, rhs: V) -> SQLExpression<Bool> {
    compare(lhs.sqlLiteral, "<", valueLiteral(rhs))
}

/// `lhs < rhs`.
public func < <V: DatabaseValueConvertible>(lhs: V, rhs: SQLExpression<V>) -> SQLExpression<Bool> {
    compare(valueLiteral(lhs), "<", rhs.sqlLiteral)
}

/// `lhs < rhs`.
public func < <V: DatabaseValueConvertible>(lhs: SQLExpression<V>, rhs: SQLExpression<V>) -> SQLExpression<Bool> {
    compare(lhs.sqlLiteral, "<", rhs.sqlLiteral)
}

/// `lhs <= rhs`.
public func <= <V: DatabaseValueConvertible>(lhs: SQLExpression<V>, rhs: V) -> SQLExpression<Bool> {
    compare(lhs.sqlLiteral, "<=", valueLiteral(rhs))
}

/// `lhs <= rhs`.
public func <= <V: DatabaseValueConvertible>(lhs: V, rhs: SQLExpression<V>) -> SQLExpression<Bool> {
    compare(valueLiteral(lhs), "<=", rhs.sqlLiteral)
}

/// `lhs <= rhs`.
public func <= <V: DatabaseValueConvertible>(lhs: SQLExpression<V>, rhs: SQLExpression<V>) -> SQLExpression<Bool> {
    compare(lhs.sqlLiteral, "<=", rhs.sqlLiteral)
}

/// `lhs > rhs`.
public func > <V: DatabaseValueConvertible>(lhs: SQLExpression<V>, rhs: V) -> SQLExpression<Bool> {
    compare(lhs.sqlLiteral, ">", valueLiteral(rhs))
}

/// `lhs > rhs`.
public func > <V: DatabaseValueConvertible>(lhs: V, rhs: SQLExpression<V>) -> SQLExpression<Bool> {
    compare(valueLiteral(lhs), ">", rhs.sqlLiteral)
}

/// `lhs > rhs`.
public func > <V: DatabaseValueConvertible>(lhs: SQLExpression<V>, rhs: SQLExpression<V>) -> SQLExpression<Bool> {
    compare(lhs.sqlLiteral, ">", rhs.sqlLiteral)
}

/// `lhs >= rhs`.
public func >= <V: DatabaseValueConvertible>(lhs: SQLExpression<V>, rhs: V) -> SQLExpression<Bool> {
    compare(lhs.sqlLiteral, ">=", valueLiteral(rhs))
}

/// `lhs >= rhs`.
public func >= <V: DatabaseValueConvertible>(lhs: V, rhs: SQLExpression<V>) -> SQLExpression<Bool> {
    compare(valueLiteral(lhs), ">=", rhs.sqlLiteral)
}

/// `lhs >= rhs`.
public func >= <V: DatabaseValueConvertible>(lhs: SQLExpression<V>, rhs: SQLExpression<V>) -> SQLExpression<Bool> {
    compare(lhs.sqlLiteral, ">=", rhs.sqlLiteral)
}

// MARK: - Boolean logic

/// `lhs AND rhs`.
public func && (lhs: SQLExpression<Bool>, rhs: SQLExpression<Bool>) -> SQLExpression<Bool> {
    binary(lhs.sqlLiteral, "AND", rhs.sqlLiteral)
}

/// `lhs OR rhs`.
public func || (lhs: SQLExpression<Bool>, rhs: SQLExpression<Bool>) -> SQLExpression<Bool> {
    binary(lhs.sqlLiteral, "OR", rhs.sqlLiteral)
}

/// `NOT operand`.
public prefix func ! (operand: SQLExpression<Bool>) -> SQLExpression<Bool> {
    makeExpression(SQLLiteral(sql: "NOT "), operand.sqlLiteral)
}

// MARK: - Arithmetic

/// `lhs + rhs`.
public func + <V: SQLNumericValue>(lhs: SQLExpression<V>, rhs: SQLExpression<V>) -> SQLExpression<V> {
    binary(lhs.sqlLiteral, "+", rhs.sqlLiteral)
}

/// `lhs + rhs`.
public func + <V: SQLNumericValue>(lhs: SQLExpression<V>, rhs: V) -> SQLExpression<V> {
    binary(lhs.sqlLiteral, "+", valueLiteral(rhs))
}

/// `lhs + rhs`.
public func + <V: SQLNumericValue>(lhs: V, rhs: SQLExpression<V>) -> SQLExpression<V> {
    binary(valueLiteral(lhs), "+", rhs.sqlLiteral)
}

/// `lhs - rhs`.
public func - <V: SQLNumericValue>(lhs: SQLExpression<V>, rhs: SQLExpression<V>) -> SQLExpression<V> {
    binary(lhs.sqlLiteral, "-", rhs.sqlLiteral)
}

/// `lhs - rhs`.
public func - <V: SQLNumericValue>(lhs: SQLExpression<V>, rhs: V) -> SQLExpression<V> {
    binary(lhs.sqlLiteral, "-", valueLiteral(rhs))
}

/// `lhs - rhs`.
public func - <V: SQLNumericValue>(lhs: V, rhs: SQLExpression<V>) -> SQLExpression<V> {
    binary(valueLiteral(lhs), "-", rhs.sqlLiteral)
}

/// `lhs * rhs`.
public func * <V: SQLNumericValue>(lhs: SQLExpression<V>, rhs: SQLExpression<V>) -> SQLExpression<V> {
    binary(lhs.sqlLiteral, "*", rhs.sqlLiteral)
}

/// `lhs * rhs`.
public func * <V: SQLNumericValue>(lhs: SQLExpression<V>, rhs: V) -> SQLExpression<V> {
    binary(lhs.sqlLiteral, "*", valueLiteral(rhs))
}

/// `lhs * rhs`.
public func * <V: SQLNumericValue>(lhs: V, rhs: SQLExpression<V>) -> SQLExpression<V> {
    binary(valueLiteral(lhs), "*", rhs.sqlLiteral)
}

/// `lhs / rhs` (integer division for integers, as in SQLite).
public func / <V: SQLNumericValue>(lhs: SQLExpression<V>, rhs: SQLExpression<V>) -> SQLExpression<V> {
    binary(lhs.sqlLiteral, "/", rhs.sqlLiteral)
}

/// `lhs / rhs`.
public func / <V: SQLNumericValue>(lhs: SQLExpression<V>, rhs: V) -> SQLExpression<V> {
    binary(lhs.sqlLiteral, "/", valueLiteral(rhs))
}

/// `lhs / rhs`.
public func / <V: SQLNumericValue>(lhs: V, rhs: SQLExpression<V>) -> SQLExpression<V> {
    binary(valueLiteral(lhs), "/", rhs.sqlLiteral)
}

/// `lhs % rhs`.
public func % <V: SQLNumericValue>(lhs: SQLExpression<V>, rhs: SQLExpression<V>) -> SQLExpression<V> {
    binary(lhs.sqlLiteral, "%", rhs.sqlLiteral)
}

/// `lhs % rhs`.
public func % <V: SQLNumericValue>(lhs: SQLExpression<V>, rhs: V) -> SQLExpression<V> {
    binary(lhs.sqlLiteral, "%", valueLiteral(rhs))
}

/// `-operand`.
public prefix func - <V: SQLNumericValue>(operand: SQLExpression<V>) -> SQLExpression<V> {
    makeExpression(SQLLiteral(sql: "-"), operand.sqlLiteral)
}

// MARK: - Text

/// `lhs || rhs`: string concatenation.
public func + <V: SQLTextValue>(lhs: SQLExpression<V>, rhs: SQLExpression<V>) -> SQLExpression<V> {
    binary(lhs.sqlLiteral, "||", rhs.sqlLiteral)
}

/// `lhs || rhs`: string concatenation.
public func + <V: SQLTextValue>(lhs: SQLExpression<V>, rhs: V) -> SQLExpression<V> {
    binary(lhs.sqlLiteral, "||", valueLiteral(rhs))
}

/// `lhs || rhs`: string concatenation.
public func + <V: SQLTextValue>(lhs: V, rhs: SQLExpression<V>) -> SQLExpression<V> {
    binary(valueLiteral(lhs), "||", rhs.sqlLiteral)
}
