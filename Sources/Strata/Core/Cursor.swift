/// A sequence of results read one at a time from a live statement, with no
/// intermediate array.
///
/// ```swift
/// let rows = try Row.fetchCursor(db, sql: "SELECT start, end, country FROM ips")
/// while let row = try rows.next() {
///     let country: String = try row["country"]
/// }
/// ```
///
/// A cursor is single-pass. It releases its statement (and the read lock it
/// holds) when it reaches the end, when it throws, or when it is released.
/// Do not run other statements' writes on the table you iterate.
public protocol Cursor<Element>: AnyObject {
    /// The type of the cursor's elements.
    associatedtype Element

    /// The next element, or nil at the end.
    ///
    /// - Throws: ``SQLiteError`` or ``DatabaseDecodingError``.
    func next() throws -> Element?
}

extension Cursor {
    /// Calls `body` with each remaining element.
    public func forEach(_ body: (Element) throws -> Void) throws {
        while let element = try next() {
            try body(element)
        }
    }
}

extension Array {
    /// The remaining elements of a cursor.
    public init<C: Cursor>(_ cursor: C) throws where C.Element == Element {
        self.init()
        while let element = try cursor.next() {
            append(element)
        }
    }
}

extension Set {
    /// The remaining elements of a cursor, without duplicates.
    public init<C: Cursor>(_ cursor: C) throws where C.Element == Element {
        self.init()
        while let element = try cursor.next() {
            insert(element)
        }
    }
}

/// A cursor over the rows of a query. Each ``LiveRow`` reads the statement in
/// place and is valid until the next call to ``next()``; ``LiveRow/copy()``
/// keeps one as a ``Row``.
public final class RowCursor: Cursor {
    /// The statement being stepped.
    public let statement: Statement
    // Unchecked: a cursor is stepped by one thread at a time (it is not
    // Sendable), and the dynamic check cost more than the flag's use.
    @usableFromInline
    @exclusivity(unchecked) var isFinished = false

    init(statement: Statement, arguments: StatementArguments) throws {
        self.statement = statement
        try statement.setArguments(arguments)
    }

    deinit {
        if !isFinished { statement.resetQuietly() }
    }

    /// The next row, or nil at the end.
    @inlinable
    public func next() throws -> LiveRow? {
        try statement.stepForCursor(&isFinished) ? LiveRow(cursor: self) : nil
    }

    /// Steps to the next row without making a ``LiveRow``; false at the end.
    @inlinable
    func step() throws -> Bool {
        try statement.stepForCursor(&isFinished)
    }
}

/// A cursor over the first column of a query, read as `Value`.
public final class ValueCursor<Value: DatabaseValueConvertible>: Cursor {
    /// The statement being stepped.
    public let statement: Statement
    @exclusivity(unchecked) private var isFinished = false

    init(statement: Statement, arguments: StatementArguments) throws {
        guard statement.columnCount > 0 else {
            throw SQLiteError.misuse("the statement returns no column to read as \(Value.self)", sql: statement.sql)
        }
        self.statement = statement
        try statement.setArguments(arguments)
    }

    deinit {
        if !isFinished { statement.resetQuietly() }
    }

    /// The next value, or nil at the end.
    ///
    /// - Throws: ``DatabaseDecodingError`` when a value does not fit `Value`.
    public func next() throws -> Value? {
        guard try statement.stepForCursor(&isFinished) else { return nil }
        do {
            return try statement.decodeColumn(Value.self, at: 0)
        } catch {
            isFinished = true
            statement.resetQuietly()
            throw error
        }
    }
}

extension Statement {
    /// Steps for a cursor: true when a row is ready; false at the end, once
    /// the statement is reset so it holds no lock. A failed step has already
    /// reset the statement; the cursor is finished either way.
    @inlinable
    func stepForCursor(_ isFinished: inout Bool) throws -> Bool {
        guard !isFinished else { return false }
        do {
            if try step() { return true }
        } catch {
            isFinished = true
            throw error
        }
        isFinished = true
        resetQuietly()
        return false
    }
}
