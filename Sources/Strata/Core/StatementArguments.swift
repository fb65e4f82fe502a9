/// The values bound to a statement's parameters.
///
/// Positional arguments fill `?` and `?NNN` parameters, from an array literal;
/// named arguments fill `:name`, `@name` and `$name` parameters, from a
/// dictionary literal whose keys are the names without their prefix:
///
/// ```swift
/// try db.execute(sql: "INSERT INTO movies(title, year) VALUES (?, ?)", arguments: ["Heat", 1995])
/// try db.execute(sql: "UPDATE movies SET likes = :likes WHERE id = :id", arguments: ["likes": 3, "id": 7])
/// ```
///
/// A wrong number of positional arguments, a missing name or a name the
/// statement does not use is a thrown ``SQLiteError`` (code `.misuse`), never a
/// crash and never a silent NULL.
///
/// See <https://www.sqlite.org/lang_expr.html#varparam>.
public struct StatementArguments: Sendable {
    /// Values for the parameters in order.
    public private(set) var values: [(any DatabaseValueConvertible)?]

    /// Values by parameter name, without the `:`, `@` or `$` prefix.
    public private(set) var namedValues: [String: (any DatabaseValueConvertible)?]

    /// Positional arguments.
    public init(_ values: [(any DatabaseValueConvertible)?]) {
        self.values = values
        self.namedValues = [:]
    }

    /// Named arguments. A key may carry its prefix (`":id"`) or not (`"id"`).
    public init(_ namedValues: [String: (any DatabaseValueConvertible)?]) {
        self.values = []
        self.namedValues = [:]
        for (key, value) in namedValues {
            self.namedValues[Self.bareName(key)] = value
        }
    }

    /// Positional arguments from a sequence of values.
    public init<S: Sequence>(_ sequence: S) where S.Element: DatabaseValueConvertible {
        self.values = sequence.map { $0 }
        self.namedValues = [:]
    }

    /// Whether there are no arguments at all.
    public var isEmpty: Bool { values.isEmpty && namedValues.isEmpty }

    /// Whether the arguments are named.
    public var isNamed: Bool { !namedValues.isEmpty }

    /// Appends positional arguments or merges named ones (right wins).
    public static func + (lhs: StatementArguments, rhs: StatementArguments) -> StatementArguments {
        var result = lhs
        result.values += rhs.values
        result.namedValues.merge(rhs.namedValues) { _, new in new }
        return result
    }

    static func bareName(_ name: String) -> String {
        guard let first = name.utf8.first, first == 58 || first == 64 || first == 36 else { return name }
        return String(name.dropFirst())
    }
}

extension StatementArguments: ExpressibleByArrayLiteral {
    /// Positional arguments: `[1, "two", nil]`.
    public init(arrayLiteral elements: (any DatabaseValueConvertible)?...) {
        self.init(elements)
    }
}

extension StatementArguments: ExpressibleByDictionaryLiteral {
    /// Named arguments: `["id": 1, "title": "Heat"]`.
    public init(dictionaryLiteral elements: (String, (any DatabaseValueConvertible)?)...) {
        self.values = []
        self.namedValues = [:]
        for (key, value) in elements {
            namedValues[Self.bareName(key)] = value
        }
    }
}

extension StatementArguments: CustomStringConvertible {
    /// The arguments as SQL values: `[1, 'Heat']` or `[id: 1, title: 'Heat']`.
    public var description: String {
        if !namedValues.isEmpty {
            let items = namedValues.sorted { $0.key < $1.key }.map { key, value in
                "\(key): \((value?.databaseValue ?? .null).description)"
            }
            return "[" + items.joined(separator: ", ") + "]"
        }
        return "[" + values.map { ($0?.databaseValue ?? .null).description }.joined(separator: ", ") + "]"
    }
}

// MARK: - Binding

/// Where a script is in its arguments: positional values are consumed
/// statement after statement; named values serve every statement.
struct ArgumentConsumer {
    let arguments: StatementArguments
    var nextPositionalIndex = 0
    /// Named arguments bound so far: a count while one statement is bound
    /// (its parameter names are distinct), the names themselves once a
    /// script binds a second statement.
    var boundNameCount = 0
    var boundStatementCount = 0
    var usedNames: Set<String>?
    var firstStatementNames: [String?] = []

    init(_ arguments: StatementArguments) {
        self.arguments = arguments
    }

    /// Binds the arguments a statement needs, taking positional ones in order.
    mutating func bind(to statement: Statement) throws {
        let parameterCount = statement.parameterCount
        boundStatementCount += 1
        if arguments.isNamed {
            if boundStatementCount == 1 { firstStatementNames = statement.parameterNames }
            if boundStatementCount == 2 { usedNames = Set(firstStatementNames.compactMap { $0 }) }
            for index in 0..<parameterCount {
                guard let name = statement.parameterNames[index] else {
                    throw SQLiteError.misuse(
                        "named arguments were given, but parameter \(index + 1) has no name",
                        sql: statement.sql, arguments: arguments)
                }
                guard let value = arguments.namedValues[name] else {
                    throw SQLiteError.misuse(
                        "missing argument for parameter \(statement.parameterPrefixedNames[index] ?? name)",
                        sql: statement.sql, arguments: arguments)
                }
                if usedNames != nil {
                    usedNames!.insert(name)
                } else {
                    boundNameCount += 1
                }
                try bindValue(value, to: statement, at: Int32(index + 1))
            }
        } else {
            let available = arguments.values.count - nextPositionalIndex
            guard parameterCount <= available else {
                throw SQLiteError.misuse(
                    "wrong number of arguments: the statement expects \(parameterCount), got \(available)",
                    sql: statement.sql, arguments: arguments)
            }
            let sqliteStatement = statement.sqliteStatement
            try arguments.values.withUnsafeBufferPointer { values in
                for index in 0..<parameterCount {
                    // Calling through the optional binds the value in place,
                    // without copying the existential out of the array.
                    let position = Int32(index + 1)
                    if try values[nextPositionalIndex + index]?.bind(to: sqliteStatement, at: position) == nil {
                        try checkBind(sqlite3_bind_null(sqliteStatement, position), sqliteStatement)
                    }
                }
            }
            nextPositionalIndex += parameterCount
        }
    }

    /// Throws when arguments were left over once every statement was bound.
    func checkAllUsed(sql: String) throws {
        if arguments.isNamed {
            if usedNames == nil && boundNameCount == arguments.namedValues.count { return }
            let unused = Set(arguments.namedValues.keys).subtracting(usedNames ?? Set(firstStatementNames.compactMap { $0 }))
            if !unused.isEmpty {
                throw SQLiteError.misuse(
                    "unknown argument name\(unused.count > 1 ? "s" : ""): \(unused.sorted().joined(separator: ", "))",
                    sql: sql, arguments: arguments)
            }
        } else if nextPositionalIndex != arguments.values.count {
            throw SQLiteError.misuse(
                "wrong number of arguments: the SQL expects \(nextPositionalIndex), got \(arguments.values.count)",
                sql: sql, arguments: arguments)
        }
    }

    private func bindValue(_ value: (any DatabaseValueConvertible)?, to statement: Statement, at index: Int32) throws {
        if let value {
            try value.bind(to: statement.sqliteStatement, at: index)
        } else {
            try checkBind(sqlite3_bind_null(statement.sqliteStatement, index), statement.sqliteStatement)
        }
    }
}
