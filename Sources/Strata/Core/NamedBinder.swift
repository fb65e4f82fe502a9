import StrataSQLite

/// Binds `execute(named:)`'s values one after the other. Names given in the
/// statement's parameter order are matched by comparing each with the name
/// at its position; the first that is not switches to looking names up and
/// keeping track of the parameters bound.
@usableFromInline
struct NamedBinder {
    @usableFromInline
    unowned(unsafe) let statement: Statement
    /// The statement's parameter names, read once per run (each read of
    /// the statement's property would retain the array).
    @usableFromInline
    let names: [String?]
    @usableFromInline
    let sqliteStatement: OpaquePointer
    /// The number of pairs bound so far.
    @usableFromInline
    var count: Int32 = 0
    /// Which parameters have a value, once a name came out of order (nil
    /// while every name matched its position).
    @usableFromInline
    var bound: [Bool]?

    @inlinable
    init(_ statement: Statement) {
        self.statement = statement
        self.names = statement.parameterNames
        self.sqliteStatement = statement.sqliteStatement
    }

    @inlinable @inline(__always)
    mutating func bind<Value: DatabaseValueConvertible>(_ name: String, _ value: Value) throws {
        let position = count + 1
        count = position
        if bound == nil, Int(position) <= names.count, names[Int(position) - 1] == name {
            try value.bind(to: sqliteStatement, at: position)
        } else {
            try value.bind(to: sqliteStatement, at: index(named: name))
        }
    }

    /// The 1-based parameter index `name` binds, noting it bound; throws
    /// for a name the statement lacks or one given twice.
    @usableFromInline
    mutating func index(named name: String) throws -> Int32 {
        if bound == nil {
            // Every earlier pair matched its own position.
            var marks = [Bool](repeating: false, count: statement.parameterCount)
            for index in 0..<min(Int(count) - 1, marks.count) { marks[index] = true }
            bound = marks
        }
        let bare = StatementArguments.bareName(name)
        guard let index = names.firstIndex(where: { $0 == bare }) else {
            statement.resetQuietly()
            throw SQLiteError.misuse("unknown argument name: \(bare)", sql: statement.sql)
        }
        if bound![index] {
            statement.resetQuietly()
            throw SQLiteError.misuse("argument \(bare) given twice", sql: statement.sql)
        }
        bound![index] = true
        return Int32(index + 1)
    }

    /// Throws when a parameter was left without a value.
    @inlinable
    func finish() throws {
        if let bound {
            if !bound.contains(false) { return }
        } else if Int(count) == names.count {
            return
        }
        try missing()
    }

    @usableFromInline
    func missing() throws {
        let unbound = (0..<statement.parameterCount).filter { index in
            bound.map { !$0[index] } ?? (index >= Int(count))
        }
        statement.resetQuietly()
        let names = unbound.map { statement.parameterPrefixedNames[$0] ?? "?\($0 + 1)" }
        throw SQLiteError.misuse(
            "missing argument\(names.count > 1 ? "s" : "") for parameter\(names.count > 1 ? "s" : "") \(names.joined(separator: ", "))",
            sql: statement.sql)
    }
}
