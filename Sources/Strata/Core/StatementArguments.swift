import StrataSQLite

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
    public private(set) var values: [(any DatabaseValueConvertible)?] {
        get { positional }
        set { positional = newValue }
    }

    /// ``values``' storage, set by the inlined array-literal initializer so
    /// that the caller's array moves in (no retain of it, no release).
    @usableFromInline
    var positional: [(any DatabaseValueConvertible)?]

    /// Named values in the order given, names as written (with or without
    /// their `:`, `@` or `$` prefix); a later duplicate name wins. Kept in
    /// order, not hashed: a dictionary literal usually lists the names in the
    /// statement's order, so binding compares each name with the parameter at
    /// the same position.
    @usableFromInline
    var namedPairs: [(String, (any DatabaseValueConvertible)?)]

    /// Values by parameter name, without the `:`, `@` or `$` prefix.
    public var namedValues: [String: (any DatabaseValueConvertible)?] {
        Dictionary(namedPairs.map { (Self.bareName($0.0), $0.1) }, uniquingKeysWith: { _, later in later })
    }

    /// Positional arguments.
    @inlinable
    public init(_ values: [(any DatabaseValueConvertible)?]) {
        positional = values
        namedPairs = []
    }

    /// Named arguments. A key may carry its prefix (`":id"`) or not (`"id"`).
    public init(_ namedValues: [String: (any DatabaseValueConvertible)?]) {
        self.positional = []
        self.namedPairs = namedValues.map { ($0.key, $0.value) }
    }

    /// Named arguments in the order given (a later duplicate name wins).
    @usableFromInline
    init(namedPairs: [(String, (any DatabaseValueConvertible)?)]) {
        self.positional = []
        self.namedPairs = namedPairs
    }

    /// Positional arguments from a sequence of values.
    public init<S: Sequence>(_ sequence: S) where S.Element: DatabaseValueConvertible {
        self.positional = sequence.map { $0 }
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
        return String(decoding: name.utf8.dropFirst(), as: UTF8.self)
    }
}

extension StatementArguments: ExpressibleByArrayLiteral {
    /// Positional arguments: `[1, "two", nil]`.
    @inlinable
    public init(arrayLiteral elements: (any DatabaseValueConvertible)?...) {
        positional = elements
        namedPairs = []
    }
}

extension StatementArguments: ExpressibleByDictionaryLiteral {
    /// Named arguments: `["id": 1, "title": "Heat"]`.
    @inlinable
    public init(dictionaryLiteral elements: (String, (any DatabaseValueConvertible)?)...) {
        self.positional = []
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
            let first = nextPositionalIndex
            try arguments.values.withUnsafeBufferPointer { values in
                for index in 0..<parameterCount {
                    try Self.bindInPlace(UnsafeRawPointer(values.baseAddress! + first + index), to: sqliteStatement, at: Int32(index + 1))
                }
            }
            nextPositionalIndex += parameterCount
        }
    }

    /// Binds named arguments listed in the statement's parameter order, the
    /// common case, without hashing a name; false (nothing bound) otherwise.
    private mutating func bindInOrder(to statement: Statement, names: [String?]) throws -> Bool {
        let sqliteStatement = statement.sqliteStatement
        // Through the buffer, so reading a pair's name or calling its value
        // copies neither out of the array.
        let count = try arguments.namedPairs.withUnsafeBufferPointer { pairs -> Int? in
            guard pairs.count == names.count else { return nil }
            // A tuple's first element is at its start: loading the name
            // alone does not copy the value beside it.
            let base = UnsafeRawPointer(pairs.baseAddress!)
            let stride = MemoryLayout<(String, (any DatabaseValueConvertible)?)>.stride
            for index in 0..<names.count where base.load(fromByteOffset: index * stride, as: String.self) != names[index] {
                return nil
            }
            // The statement's parameter names are distinct, so the pairs are too.
            let valueOffset = MemoryLayout<(String, (any DatabaseValueConvertible)?)>.offset(of: \(String, (any DatabaseValueConvertible)?).1)!
            for index in 0..<pairs.count {
                try Self.bindInPlace(base + index * stride + valueOffset, to: sqliteStatement, at: Int32(index + 1))
            }
            return pairs.count
        }
        guard let count else { return false }
        boundNameCount = count
        distinctNameCount = count
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

    /// Throws when arguments were left over once every statement was bound.
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

    /// Binds the `(any DatabaseValueConvertible)?` stored at `element`
    /// without copying it: a copy of an existential goes through its type's
    /// value witnesses and cost as much as the binding itself. An optional
    /// existential is the existential itself (its payload in place) with nil
    /// as an extra inhabitant: a null type metadata pointer after the
    /// three-word value buffer. Tested with NULLs and every kind of value.
    /// The layout is checked once per process (``optionalExistentialLayoutIsKnown``);
    /// were it ever different, values are copied out as usual.
    @inline(__always)
    private static func bindInPlace(_ element: UnsafeRawPointer, to sqliteStatement: OpaquePointer, at position: Int32) throws {
        guard optionalExistentialLayoutIsKnown else {
            let value = element.assumingMemoryBound(to: (any DatabaseValueConvertible)?.self).pointee
            if let value {
                try value.bind(to: sqliteStatement, at: position)
            } else {
                try checkBind(sqlite3_bind_null(sqliteStatement, position), sqliteStatement)
            }
            return
        }
        let metadata = element.load(fromByteOffset: existentialMetadataOffset, as: UInt.self)
        if metadata == 0 {
            try checkBind(sqlite3_bind_null(sqliteStatement, position), sqliteStatement)
        } else if metadata == typeMetadata(of: Int.self) {
            // The commonest values, bound by their own type's `bind` read
            // where they are (an existential keeps a value this small in
            // its buffer): no copy of the existential, no witness call.
            try element.load(as: Int.self).bind(to: sqliteStatement, at: position)
        } else if metadata == typeMetadata(of: String.self) {
            try bindText(element.assumingMemoryBound(to: String.self).pointee, to: sqliteStatement, at: position)
        } else if metadata == typeMetadata(of: Double.self) {
            try element.load(as: Double.self).bind(to: sqliteStatement, at: position)
        } else if metadata == typeMetadata(of: Int64.self) {
            try checkBind(sqlite3_bind_int64(sqliteStatement, position, element.load(as: Int64.self)), sqliteStatement)
        } else {
            try element.assumingMemoryBound(to: (any DatabaseValueConvertible).self).pointee
                .bind(to: sqliteStatement, at: position)
        }
    }

    /// The address of a type's metadata, as an existential holds it.
    @inline(__always)
    private static func typeMetadata(of type: Any.Type) -> UInt {
        UInt(bitPattern: unsafeBitCast(type, to: UnsafeRawPointer.self))
    }

    /// Binds every value, in order, to the statement's first parameters.
    static func bindPositional(_ values: UnsafeBufferPointer<(any DatabaseValueConvertible)?>, to sqliteStatement: OpaquePointer) throws {
        guard let first = values.baseAddress else { return }
        let base = UnsafeRawPointer(first)
        let stride = MemoryLayout<(any DatabaseValueConvertible)?>.stride
        for index in 0..<values.count {
            try bindInPlace(base + index * stride, to: sqliteStatement, at: Int32(index + 1))
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

/// Where an existential keeps its type metadata pointer: after its
/// three-word inline value buffer.
private let existentialMetadataOffset = 3 * MemoryLayout<UnsafeRawPointer>.stride

/// Whether `(any DatabaseValueConvertible)?` has the layout
/// `ArgumentConsumer.bindInPlace` relies on: the size of the existential,
/// nil as a null metadata pointer, a value as the existential itself.
private let optionalExistentialLayoutIsKnown: Bool = {
    guard MemoryLayout<(any DatabaseValueConvertible)?>.size == MemoryLayout<any DatabaseValueConvertible>.size,
        MemoryLayout<any DatabaseValueConvertible>.size == existentialMetadataOffset + 2 * MemoryLayout<UnsafeRawPointer>.stride
    else { return false }
    let samples: [(any DatabaseValueConvertible)?] = [nil, 42, "text"]
    return samples.withUnsafeBufferPointer { buffer in
        let raw = UnsafeRawPointer(buffer.baseAddress!)
        let stride = MemoryLayout<(any DatabaseValueConvertible)?>.stride
        guard (0..<(stride / MemoryLayout<UInt>.stride)).allSatisfy({ raw.load(fromByteOffset: $0 * MemoryLayout<UInt>.stride, as: UInt.self) == 0 }) else {
            return false
        }
        let int = (raw + stride).assumingMemoryBound(to: (any DatabaseValueConvertible).self).pointee
        let text = (raw + 2 * stride).assumingMemoryBound(to: (any DatabaseValueConvertible).self).pointee
        return (raw + stride).load(fromByteOffset: existentialMetadataOffset, as: UInt.self) != 0
            && int.databaseValue == .integer(42) && text.databaseValue == .text("text")
    }
}()
