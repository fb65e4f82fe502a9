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

    /// Named values in the order given, names without their prefix; a later
    /// duplicate name wins. Kept in order, not hashed: a dictionary literal
    /// usually lists the names in the statement's order, so binding compares
    /// each name with the parameter at the same position.
    var namedPairs: [(String, (any DatabaseValueConvertible)?)]

    /// Values by parameter name, without the `:`, `@` or `$` prefix.
    public var namedValues: [String: (any DatabaseValueConvertible)?] {
        Dictionary(namedPairs.map { (Self.bareName($0.0), $0.1) }, uniquingKeysWith: { _, later in later })
    }

    /// Positional arguments.
    public init(_ values: [(any DatabaseValueConvertible)?]) {
        self.values = values
        self.namedPairs = []
    }

    /// Named arguments. A key may carry its prefix (`":id"`) or not (`"id"`).
    public init(_ namedValues: [String: (any DatabaseValueConvertible)?]) {
        self.values = []
        self.namedPairs = namedValues.map { ($0.key, $0.value) }
    }

    /// Positional arguments from a sequence of values.
    public init<S: Sequence>(_ sequence: S) where S.Element: DatabaseValueConvertible {
        self.values = sequence.map { $0 }
        self.namedPairs = []
    }

    /// Whether there are no arguments at all.
    public var isEmpty: Bool { values.isEmpty && namedPairs.isEmpty }

    /// Whether the arguments are named.
    public var isNamed: Bool { !namedPairs.isEmpty }

    /// Appends positional arguments or merges named ones (right wins).
    public static func + (lhs: StatementArguments, rhs: StatementArguments) -> StatementArguments {
        var result = lhs
        result.values += rhs.values
        result.namedPairs += rhs.namedPairs
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
        // Stored as given (no copy of the values); prefixes are removed
        // when a name does not match as written.
        self.namedPairs = elements
    }
}

extension StatementArguments: CustomStringConvertible {
    /// The arguments as SQL values: `[1, 'Heat']` or `[id: 1, title: 'Heat']`.
    public var description: String {
        if !namedPairs.isEmpty {
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
    var namedValueCache: [String: (any DatabaseValueConvertible)?]?
    /// The number of distinct names, once known.
    var distinctNameCount = -1

    init(_ arguments: StatementArguments) {
        self.arguments = arguments
    }

    /// Binds the arguments a statement needs, taking positional ones in order.
    mutating func bind(to statement: Statement) throws {
        let parameterCount = statement.parameterCount
        boundStatementCount += 1
        if arguments.isNamed {
            let names = statement.parameterNames
            if boundStatementCount == 1 { firstStatementNames = names }
            if boundStatementCount == 2 { usedNames = Set(firstStatementNames.compactMap { $0 }) }
            if usedNames == nil, try bindInOrder(to: statement, names: names) { return }
            let namedValues = namedValueDictionary()
            for index in 0..<parameterCount {
                guard let name = names[index] else {
                    throw SQLiteError.misuse(
                        "named arguments were given, but parameter \(index + 1) has no name",
                        sql: statement.sql, arguments: arguments)
                }
                guard let value = namedValues[name] else {
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
    /// Binds named arguments listed in the statement's parameter order, the
    /// common case, without hashing a name; false (nothing bound) otherwise.
    private mutating func bindInOrder(to statement: Statement, names: [String?]) throws -> Bool {
        let pairs = arguments.namedPairs
        guard pairs.count == names.count else { return false }
        for index in 0..<names.count where pairs[index].0 != names[index] {
            return false
        }
        // The statement's parameter names are distinct, so the pairs are too.
        for index in 0..<pairs.count {
            try bindValue(pairs[index].1, to: statement, at: Int32(index + 1))
        }
        boundNameCount = pairs.count
        distinctNameCount = pairs.count
        return true
    }

    /// The named arguments by name (a later duplicate wins), made once.
    private mutating func namedValueDictionary() -> [String: (any DatabaseValueConvertible)?] {
        if let namedValueCache { return namedValueCache }
        let dictionary = arguments.namedValues
        namedValueCache = dictionary
        distinctNameCount = dictionary.count
        return dictionary
    }

    func checkAllUsed(sql: String) throws {
        if arguments.isNamed {
            if usedNames == nil && boundNameCount == distinctNameCount { return }
            let unused = Set(arguments.namedPairs.map { StatementArguments.bareName($0.0) }).subtracting(usedNames ?? Set(firstStatementNames.compactMap { $0 }))
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
