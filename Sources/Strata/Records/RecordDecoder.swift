import Foundation

/// What decoding one statement's rows into records shares: the row being
/// decoded and the column indexes by name, resolved on the first row.
///
/// The state is `@exclusivity(unchecked)`: it belongs to one fetch, which
/// decodes one row at a time on one thread, and the dynamic checks were a
/// tenth of the cost of decoding a record.
final class RecordDecodingState {
    let ignored: Set<String>
    /// The row being decoded.
    @exclusivity(unchecked) var row = LiveRow(Row(columnNames: [], values: []))
    @exclusivity(unchecked) private var indexes: [String: Int]?
    /// The keys in the order the type decodes them, learned on the first
    /// row: later rows ask for the same keys in the same order, so a string
    /// comparison usually replaces a dictionary lookup.
    @exclusivity(unchecked) private var orderedKeys: [String] = []
    @exclusivity(unchecked) private var orderedIndexes: [Int?] = []
    @exclusivity(unchecked) private var position = 0
    @exclusivity(unchecked) private var isLearning = true

    /// The current row's live statement state and generation (copied out of
    /// `row`, which keeps them valid), so a read copies no `Row`.
    @exclusivity(unchecked) private var live: UnsafeMutablePointer<LiveStatementState>?
    @exclusivity(unchecked) private var generation: UInt = 0

    init(ignored: Set<String>) {
        self.ignored = ignored
    }

    /// Starts a row.
    func beginRow(_ row: LiveRow) {
        self.row = row
        live = row.live
        generation = row.generation
        if position > 0 { isLearning = false }
        position = 0
    }

    /// The current row's value at `index` as `T`.
    @inline(__always)
    func read<T: DatabaseValueConvertible>(_ type: T.Type, at index: Int) throws -> T {
        if let live, let value = LiveStatementState.value(in: live, T.self, at: index, generation: generation) {
            return value
        }
        // A detached row, or the error.
        return try row.decode(T.self, at: index)
    }

    @inline(__always)
    func index(of column: String) -> Int? {
        let position = self.position
        if position < orderedKeys.count && orderedKeys[position] == column {
            self.position = position + 1
            return orderedIndexes[position]
        }
        return searchIndex(of: column)
    }

    private func searchIndex(of column: String) -> Int? {
        let index = lookUp(column)
        if isLearning {
            orderedKeys.append(column)
            orderedIndexes.append(index)
            position += 1
        }
        return index
    }

    private func lookUp(_ column: String) -> Int? {
        if indexes == nil {
            var map: [String: Int] = [:]
            for (index, name) in row.columnNames.enumerated() where map[name] == nil {
                map[name] = index
            }
            indexes = map
        }
        return indexes?[column] ?? row.index(ofColumn: column)
    }
}

/// The decoder of one fetch's records: one object for all its rows, which
/// also keeps the keyed container it made, so a row costs no allocation and
/// no generic metadata lookup for the container.
@usableFromInline
final class RecordDecodingContext: Decoder {
    let state: RecordDecodingState
    /// The container refers to `state` only, not to this object, so nothing
    /// forms a cycle.
    @exclusivity(unchecked) private var containers = KeyedContainerCache()

    @usableFromInline
    init(ignored: Set<String>) {
        self.state = RecordDecodingState(ignored: ignored)
    }

    init(state: RecordDecodingState) {
        self.state = state
    }

    @usableFromInline
    var codingPath: [any CodingKey] { [] }
    @usableFromInline
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    @usableFromInline
    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        containers.container(for: Key.self) {
            KeyedDecodingContainer(RowKeyedContainer<Key>(state: .passUnretained(state)))
        }
    }

    @usableFromInline
    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch([Any].self, .init(codingPath: [], debugDescription: "a record is decoded from a row's columns, not from a list"))
    }

    @usableFromInline
    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw DecodingError.typeMismatch(Any.self, .init(codingPath: [], debugDescription: "a record is decoded from a row's columns, not from a single value"))
    }
}

extension DatabaseRecord {
    /// Decodes a record from a row: each coding key is read from the column
    /// of the same name.
    ///
    /// - Throws: ``DatabaseDecodingError`` naming the column, the type and
    ///   the SQL when a column is missing, holds NULL for a non-optional
    ///   property, holds a value of the wrong type, or holds invalid JSON.
    public static func decode(from row: LiveRow) throws -> Self {
        try decode(from: row, context: RecordDecodingContext(ignored: databaseIgnoredColumns))
    }

    /// Decodes a record from a copied row, as the live-row form does.
    public static func decode(from row: Row) throws -> Self {
        try decode(from: LiveRow(row))
    }

    @usableFromInline
    static func decode(from row: LiveRow, context: RecordDecodingContext) throws -> Self {
        context.state.beginRow(row)
        return try Self(from: context)
    }
}

/// Reads a record's properties from the state's current row. A container
/// kept beyond its record's `init(from:)` reads whatever row is current.
///
/// The state is held unretained: the standard library copies the container
/// for every property, and a retained reference cost a retain and a release
/// each time. The decoding context owns the state and outlives the
/// container, which is only used while its record's `init(from:)` runs.
private struct RowKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let unmanagedState: Unmanaged<RecordDecodingState>
    private var state: RecordDecodingState { unmanagedState.takeUnretainedValue() }

    init(state: Unmanaged<RecordDecodingState>) {
        self.unmanagedState = state
    }

    var codingPath: [any CodingKey] { [] }
    private var row: LiveRow { state.row }

    var allKeys: [Key] { row.columnNames.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool {
        state.index(of: key.stringValue) != nil
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        guard let index = state.index(of: key.stringValue) else { return true }
        return try row.databaseValue(at: index).isNull
    }

    // Inlined into each concrete `decode` so the read is specialized for the
    // type: a generic read would look up `Optional<T>`'s metadata per value.
    @inline(__always)
    private func value<T: DatabaseValueConvertible & Decodable>(_ type: T.Type, _ key: Key) throws -> T {
        try unmanagedState._withUnsafeGuaranteedRef { state in
            guard let index = state.index(of: key.stringValue) else {
                if state.ignored.contains(key.stringValue) { return try emptyValue(of: type) }
                throw DatabaseDecodingError(
                    reason: .columnNotFound, column: key.stringValue, columnIndex: nil, type: T.self, sql: state.row.sql)
            }
            return try state.read(T.self, at: index)
        }
    }

    @inline(__always)
    private func optionalValue<T: DatabaseValueConvertible & Decodable>(_ type: T.Type, _ key: Key) throws -> T? {
        try unmanagedState._withUnsafeGuaranteedRef { state in
            guard let index = state.index(of: key.stringValue) else { return nil }
            return try state.read(T?.self, at: index)
        }
    }

    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try value(type, key) }
    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { try optionalValue(type, key) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try value(type, key) }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { try optionalValue(type, key) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try value(type, key) }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { try optionalValue(type, key) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try value(type, key) }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { try optionalValue(type, key) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try value(type, key) }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { try optionalValue(type, key) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try value(type, key) }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { try optionalValue(type, key) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try value(type, key) }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { try optionalValue(type, key) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try value(type, key) }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { try optionalValue(type, key) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try value(type, key) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { try optionalValue(type, key) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try value(type, key) }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { try optionalValue(type, key) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try value(type, key) }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { try optionalValue(type, key) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try value(type, key) }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { try optionalValue(type, key) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try value(type, key) }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { try optionalValue(type, key) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try value(type, key) }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { try optionalValue(type, key) }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        guard let index = state.index(of: key.stringValue) else {
            if state.ignored.contains(key.stringValue) { return try emptyValue(of: type) }
            throw DatabaseDecodingError(
                reason: .columnNotFound, column: key.stringValue, columnIndex: nil, type: T.self, sql: row.sql)
        }
        return try decodeColumn(type, at: index, key: key)
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let index = state.index(of: key.stringValue), try !row.databaseValue(at: index).isNull else {
            return nil
        }
        return try decodeColumn(type, at: index, key: key)
    }

    /// A database value is read directly; any other Decodable from its
    /// single value, or from JSON text when it has keys or elements.
    private func decodeColumn<T: Decodable>(_ type: T.Type, at index: Int, key: Key) throws -> T {
        if let convertible = type as? any DatabaseValueConvertible.Type {
            return try decodeConvertible(convertible, at: index) as! T
        }
        return try decodeStoredColumn(
            T.self, from: row.databaseValue(at: index), column: key.stringValue, columnIndex: index, sql: row.sql)
    }

    private func decodeConvertible<V: DatabaseValueConvertible>(_ type: V.Type, at index: Int) throws -> V {
        try row.decode(V.self, at: index)
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        throw DecodingError.typeMismatch(type, .init(codingPath: [key], debugDescription: "nested containers are not supported in records; store a nested Codable value instead"))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch([Any].self, .init(codingPath: [key], debugDescription: "nested containers are not supported in records; store a nested Codable value instead"))
    }

    func superDecoder() throws -> any Decoder { RecordDecodingContext(state: state) }
    func superDecoder(forKey key: Key) throws -> any Decoder { RecordDecodingContext(state: state) }
}

/// A short description of a JSON decoding failure, without the data.
private func jsonProblem(_ error: any Error) -> String {
    switch error {
    case DecodingError.dataCorrupted(let context): return "data corrupted: " + context.debugDescription
    case DecodingError.keyNotFound(let key, _): return "missing key \"\(key.stringValue)\""
    case DecodingError.typeMismatch(let type, let context): return "expected \(type) at \(context.codingPath.map(\.stringValue).joined(separator: "."))"
    case DecodingError.valueNotFound(let type, let context): return "missing \(type) at \(context.codingPath.map(\.stringValue).joined(separator: "."))"
    default: return "\(error)"
    }
}

/// A stored value as `T`: its single value, or JSON text when `T` has keys
/// or elements. A failure names the column; text that starts as JSON and
/// does not parse is `.invalidJSON`, with the parser's words.
func decodeStoredColumn<T: Decodable>(
    _ type: T.Type, from stored: DatabaseValue, column: String, columnIndex: Int, sql: String
) throws -> T {
    do {
        return try decodeColumnValue(T.self, from: stored)
    } catch {
        var isJSON = false
        if case .text(let text) = stored, let first = text.first { isJSON = first == "{" || first == "[" }
        var failure = DatabaseDecodingError(
            reason: isJSON ? .invalidJSON : .valueMismatch, column: column, columnIndex: columnIndex,
            type: T.self, value: stored, sql: sql)
        failure.detail = jsonProblem(error)
        throw failure
    }
}
