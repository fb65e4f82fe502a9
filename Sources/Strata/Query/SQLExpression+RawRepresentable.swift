// Comparisons and assignments of columns whose type is an enum with a raw
// value (`enum Genre: String, Codable`), which records store as that raw
// value: `Movie.filter { $0.genre == .drama }` compiles without the enum
// adopting DatabaseValueConvertible. An enum that does adopt it is bound
// through its own `databaseValue`, as when a record is written (the general
// operators win, these being disfavoured, and these check for it too).

/// The value an enum case is stored as: its raw value, or its
/// `databaseValue` when it adopts DatabaseValueConvertible.
private func storedValue<V: RawRepresentable>(_ value: V) -> any DatabaseValueConvertible where V.RawValue: DatabaseValueConvertible {
    (value as? any DatabaseValueConvertible) ?? value.rawValue
}

private func storedLiteral<V: RawRepresentable>(_ value: V) -> SQLLiteral where V.RawValue: DatabaseValueConvertible {
    valueLiteral(storedValue(value))
}

/// `lhs = rhs.rawValue`.
@_disfavoredOverload
public func == <V: RawRepresentable>(lhs: SQLExpression<V>, rhs: V) -> SQLExpression<Bool> where V.RawValue: DatabaseValueConvertible {
    binary(lhs.sqlLiteral, "=", storedLiteral(rhs))
}

/// `lhs.rawValue = rhs`.
@_disfavoredOverload
public func == <V: RawRepresentable>(lhs: V, rhs: SQLExpression<V>) -> SQLExpression<Bool> where V.RawValue: DatabaseValueConvertible {
    rhs == lhs
}

/// `lhs = rhs.rawValue` on a NULL-able column; `IS NULL` when `rhs` is nil.
@_disfavoredOverload
public func == <V: RawRepresentable>(lhs: SQLExpression<V?>, rhs: V?) -> SQLExpression<Bool> where V.RawValue: DatabaseValueConvertible {
    guard let rhs else { return lhs.isNull }
    return binary(lhs.sqlLiteral, "=", storedLiteral(rhs))
}

/// `lhs = rhs`, two columns of the same enum.
@_disfavoredOverload
public func == <V: RawRepresentable>(lhs: SQLExpression<V>, rhs: SQLExpression<V>) -> SQLExpression<Bool> where V.RawValue: DatabaseValueConvertible {
    binary(lhs.sqlLiteral, "=", rhs.sqlLiteral)
}

/// `lhs = rhs`, a NULL-able enum column against a non-NULL one.
@_disfavoredOverload
public func == <V: RawRepresentable>(lhs: SQLExpression<V?>, rhs: SQLExpression<V>) -> SQLExpression<Bool> where V.RawValue: DatabaseValueConvertible {
    binary(lhs.sqlLiteral, "=", rhs.sqlLiteral)
}

/// `lhs = rhs`, a non-NULL enum column against a NULL-able one.
@_disfavoredOverload
public func == <V: RawRepresentable>(lhs: SQLExpression<V>, rhs: SQLExpression<V?>) -> SQLExpression<Bool> where V.RawValue: DatabaseValueConvertible {
    binary(lhs.sqlLiteral, "=", rhs.sqlLiteral)
}

/// `lhs <> rhs.rawValue`.
@_disfavoredOverload
public func != <V: RawRepresentable>(lhs: SQLExpression<V>, rhs: V) -> SQLExpression<Bool> where V.RawValue: DatabaseValueConvertible {
    binary(lhs.sqlLiteral, "<>", storedLiteral(rhs))
}

/// `lhs.rawValue <> rhs`.
@_disfavoredOverload
public func != <V: RawRepresentable>(lhs: V, rhs: SQLExpression<V>) -> SQLExpression<Bool> where V.RawValue: DatabaseValueConvertible {
    rhs != lhs
}

/// `lhs <> rhs.rawValue` on a NULL-able column; `IS NOT NULL` when `rhs`
/// is nil.
@_disfavoredOverload
public func != <V: RawRepresentable>(lhs: SQLExpression<V?>, rhs: V?) -> SQLExpression<Bool> where V.RawValue: DatabaseValueConvertible {
    guard let rhs else { return lhs.isNotNull }
    return binary(lhs.sqlLiteral, "<>", storedLiteral(rhs))
}

/// `lhs <> rhs`, two columns of the same enum.
@_disfavoredOverload
public func != <V: RawRepresentable>(lhs: SQLExpression<V>, rhs: SQLExpression<V>) -> SQLExpression<Bool> where V.RawValue: DatabaseValueConvertible {
    binary(lhs.sqlLiteral, "<>", rhs.sqlLiteral)
}

extension SQLExpression where Value: RawRepresentable, Value.RawValue: DatabaseValueConvertible {
    /// `expression IN (?, ?, …)`, each case's raw value bound:
    /// `$0.genre.in([.drama, .comedy])`.
    public func `in`(_ values: [Value]) -> SQLExpression<Bool> {
        membership("IN", values.map(storedLiteral))
    }

    /// `expression NOT IN (?, ?, …)`, each case's raw value bound.
    public func notIn(_ values: [Value]) -> SQLExpression<Bool> {
        membership("NOT IN", values.map(storedLiteral))
    }
}

/// Sets an enum column to a case, stored as its raw value:
/// `genre <- .comedy`.
@_disfavoredOverload
public func <- <V: RawRepresentable>(column: SQLExpression<V>, value: V) -> SQLSetter where V.RawValue: DatabaseValueConvertible {
    SQLSetter(column: column.storage, bound: storedValue(value))
}

/// Sets a NULL-able enum column to a case (its raw value) or to NULL.
@_disfavoredOverload
public func <- <V: RawRepresentable>(column: SQLExpression<V?>, value: V?) -> SQLSetter where V.RawValue: DatabaseValueConvertible {
    guard let value else { return SQLSetter(column: column.storage, bound: DatabaseValue.null) }
    return SQLSetter(column: column.storage, bound: storedValue(value))
}
