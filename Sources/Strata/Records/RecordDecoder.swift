import Foundation

/// What decoding one statement's rows into records shares: the column
/// indexes by name, resolved on the first row.
final class RecordDecodingContext {
    let ignored: Set<String>
    private var indexes: [String: Int]?
    /// The keys in the order the type decodes them, learned on the first
    /// row: later rows ask for the same keys in the same order, so a string
    /// comparison usually replaces a dictionary lookup.
    private var orderedKeys: [String] = []
    private var orderedIndexes: [Int?] = []
    private var position = 0
    private var isLearning = true

    init(ignored: Set<String>) {
        self.ignored = ignored
    }

    /// Starts a row.
    func beginRow() {
        if position > 0 { isLearning = false }
        position = 0
    }

    func index(of column: String, in row: Row) -> Int? {
        if position < orderedKeys.count && orderedKeys[position] == column {
            let index = orderedIndexes[position]
            position += 1
            return index
        }
        let index = lookUp(column, in: row)
        if isLearning {
            orderedKeys.append(column)
            orderedIndexes.append(index)
            position += 1
        }
        return index
    }

    private func lookUp(_ column: String, in row: Row) -> Int? {
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

extension DatabaseRecord {
    /// Decodes a record from a row: each coding key is read from the column
    /// of the same name.
    ///
    /// - Throws: ``DatabaseDecodingError`` naming the column, the type and
    ///   the SQL when a column is missing, holds NULL for a non-optional
    ///   property, holds a value of the wrong type, or holds invalid JSON.
    public static func decode(from row: Row) throws -> Self {
        try decode(from: row, context: RecordDecodingContext(ignored: databaseIgnoredColumns))
    }

    static func decode(from row: Row, context: RecordDecodingContext) throws -> Self {
        context.beginRow()
        return try Self(from: RowDecoder(row: row, context: context))
    }
}

private struct RowDecoder: Decoder {
    let row: Row
    let context: RecordDecodingContext
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(RowKeyedContainer<Key>(row: row, context: context))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch([Any].self, .init(codingPath: [], debugDescription: "a record is decoded from a row's columns, not from a list"))
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw DecodingError.typeMismatch(Any.self, .init(codingPath: [], debugDescription: "a record is decoded from a row's columns, not from a single value"))
    }
}

private struct RowKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let row: Row
    let context: RecordDecodingContext
    var codingPath: [any CodingKey] { [] }

    var allKeys: [Key] { row.columnNames.compactMap { Key(stringValue: $0) } }

    func contains(_ key: Key) -> Bool {
        context.index(of: key.stringValue, in: row) != nil
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        guard let index = context.index(of: key.stringValue, in: row) else { return true }
        return try row.databaseValue(at: index).isNull
    }

    private func value<T: DatabaseValueConvertible & Decodable>(_ type: T.Type, _ key: Key) throws -> T {
        guard let index = context.index(of: key.stringValue, in: row) else {
            if context.ignored.contains(key.stringValue) { return try emptyValue(of: type) }
            throw DatabaseDecodingError(
                reason: .columnNotFound, column: key.stringValue, columnIndex: nil, type: T.self, sql: row.sql)
        }
        return try row.decode(T.self, at: index)
    }

    private func optionalValue<T: DatabaseValueConvertible & Decodable>(_ type: T.Type, _ key: Key) throws -> T? {
        guard let index = context.index(of: key.stringValue, in: row) else { return nil }
        return try row.decode(T?.self, at: index)
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
        guard let index = context.index(of: key.stringValue, in: row) else {
            if context.ignored.contains(key.stringValue) { return try emptyValue(of: type) }
            throw DatabaseDecodingError(
                reason: .columnNotFound, column: key.stringValue, columnIndex: nil, type: T.self, sql: row.sql)
        }
        return try decodeColumn(type, at: index, key: key)
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let index = context.index(of: key.stringValue, in: row), try !row.databaseValue(at: index).isNull else {
            return nil
        }
        return try decodeColumn(type, at: index, key: key)
    }

    /// A database value is read directly; any other Decodable from JSON text.
    private func decodeColumn<T: Decodable>(_ type: T.Type, at index: Int, key: Key) throws -> T {
        if let convertible = type as? any DatabaseValueConvertible.Type {
            return try decodeConvertible(convertible, at: index) as! T
        }
        let stored = try row.databaseValue(at: index)
        let data: Data
        switch stored {
        case .text(let text): data = Data(text.utf8)
        case .blob(let blob): data = blob
        default:
            throw DatabaseDecodingError.mismatch(stored, type: T.self, column: key.stringValue, columnIndex: index, sql: row.sql)
        }
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch {
            var failure = DatabaseDecodingError(
                reason: .invalidJSON, column: key.stringValue, columnIndex: index, type: T.self, value: stored, sql: row.sql)
            failure.detail = jsonProblem(error)
            throw failure
        }
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

    func superDecoder() throws -> any Decoder { RowDecoder(row: row, context: context) }
    func superDecoder(forKey key: Key) throws -> any Decoder { RowDecoder(row: row, context: context) }
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
