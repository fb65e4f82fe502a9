import Foundation

/// A record's columns and values, in coding-key order, ignored columns left
/// out. Nested `Codable` values that are not database values become JSON text.
struct EncodedRecord {
    var columns: [String] = []
    var values: [(any DatabaseValueConvertible)?] = []

    init<Record: DatabaseRecord>(_ record: Record) throws {
        if let generated = Record._generatedColumns {
            var values = RecordValues(collectingCapacity: generated.count)
            _ = try record._encodeGenerated(to: &values)
            columns = generated.map(\.name)
            self.values = values.values
            return
        }
        let storage = EncodingStorage(ignored: Record.databaseIgnoredColumns, tableName: Record.databaseTableName)
        try record.encode(to: RecordEncoder(storage: storage))
        columns = storage.columns
        values = storage.values
    }

    /// The value of a column, named in any case as SQLite allows; nil when
    /// the record has no such column.
    func value(of column: String) -> (any DatabaseValueConvertible)?? {
        guard let index = index(of: column) else { return nil }
        return .some(values[index])
    }

    /// The index of a column, named in any case as SQLite allows.
    func index(of column: String) -> Int? {
        columnIndex(named: column, in: columns)
    }
}

final class EncodingStorage {
    let ignored: Set<String>
    let tableName: String
    var columns: [String] = []
    var values: [(any DatabaseValueConvertible)?] = []

    init(ignored: Set<String>, tableName: String) {
        self.ignored = ignored
        self.tableName = tableName
        columns.reserveCapacity(16)
        values.reserveCapacity(16)
    }

    func append(_ column: String, _ value: (any DatabaseValueConvertible)?) {
        guard ignored.isEmpty || !ignored.contains(column) else { return }
        if let index = columns.firstIndex(of: column) {
            values[index] = value
        } else {
            columns.append(column)
            values.append(value)
        }
    }

    func appendEncodable<T: Encodable>(_ column: String, _ value: T?) throws {
        guard let value else {
            append(column, nil)
            return
        }
        if let optional = value as? any OptionalValue, optional.isNone {
            append(column, nil)
            return
        }
        if let convertible = value as? any DatabaseValueConvertible {
            append(column, convertible)
            return
        }
        guard !ignored.contains(column) else { return }
        append(column, try columnValue(of: value))
    }
}

/// Encodes a record's top-level properties into an ``EncodingStorage``.
struct RecordEncoder: Encoder {
    let storage: EncodingStorage
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(RecordKeyedEncodingContainer<Key>(storage: storage))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        UnsupportedEncodingContainer(storage: storage)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        UnsupportedEncodingContainer(storage: storage)
    }
}

private struct RecordKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let storage: EncodingStorage
    var codingPath: [any CodingKey] { [] }

    mutating func encodeNil(forKey key: Key) throws { storage.append(key.stringValue, nil) }
    mutating func encode(_ value: Bool, forKey key: Key) throws { storage.append(key.stringValue, value) }
    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { storage.append(key.stringValue, value) }
    mutating func encode(_ value: String, forKey key: Key) throws { storage.append(key.stringValue, value) }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { storage.append(key.stringValue, value) }
    mutating func encode(_ value: Double, forKey key: Key) throws { storage.append(key.stringValue, value) }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { storage.append(key.stringValue, value) }
    mutating func encode(_ value: Float, forKey key: Key) throws { storage.append(key.stringValue, value) }
    mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws { storage.append(key.stringValue, value) }
    mutating func encode(_ value: Int, forKey key: Key) throws { storage.append(key.stringValue, value) }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { storage.append(key.stringValue, value) }
    mutating func encode(_ value: Int8, forKey key: Key) throws { storage.append(key.stringValue, value) }
    mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws { storage.append(key.stringValue, value) }
    mutating func encode(_ value: Int16, forKey key: Key) throws { storage.append(key.stringValue, value) }
    mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws { storage.append(key.stringValue, value) }
    mutating func encode(_ value: Int32, forKey key: Key) throws { storage.append(key.stringValue, value) }
    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { storage.append(key.stringValue, value) }
    mutating func encode(_ value: Int64, forKey key: Key) throws { storage.append(key.stringValue, value) }
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { storage.append(key.stringValue, value) }
    mutating func encode(_ value: UInt, forKey key: Key) throws { storage.append(key.stringValue, value) }
    mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws { storage.append(key.stringValue, value) }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { storage.append(key.stringValue, value) }
    mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws { storage.append(key.stringValue, value) }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { storage.append(key.stringValue, value) }
    mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws { storage.append(key.stringValue, value) }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { storage.append(key.stringValue, value) }
    mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { storage.append(key.stringValue, value) }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { storage.append(key.stringValue, value) }
    mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { storage.append(key.stringValue, value) }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try storage.appendEncodable(key.stringValue, value)
    }

    // nil is stored as NULL (the default implementation would skip the key,
    // and an UPDATE would then leave the old value in place).
    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
        try storage.appendEncodable(key.stringValue, value)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(UnsupportedKeyedEncodingContainer<NestedKey>())
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        UnsupportedEncodingContainer(storage: storage)
    }

    mutating func superEncoder() -> any Encoder { RecordEncoder(storage: storage) }
    mutating func superEncoder(forKey key: Key) -> any Encoder { RecordEncoder(storage: storage) }
}

/// A record must encode itself with a keyed container; anything else is
/// reported when the record is written.
private struct UnsupportedEncodingContainer: UnkeyedEncodingContainer, SingleValueEncodingContainer {
    let storage: EncodingStorage
    var codingPath: [any CodingKey] { [] }
    var count: Int { 0 }

    private func unsupported() -> RecordError {
        RecordError(
            kind: .unsupportedType, tableName: storage.tableName,
            message: "a record must encode its properties with a keyed container (a synthesized Codable conformance does)")
    }

    mutating func encodeNil() throws { throw unsupported() }
    mutating func encode<T: Encodable>(_ value: T) throws { throw unsupported() }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(UnsupportedKeyedEncodingContainer<NestedKey>())
    }
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { self }
    mutating func superEncoder() -> any Encoder { RecordEncoder(storage: storage) }
}

private struct UnsupportedKeyedEncodingContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    var codingPath: [any CodingKey] { [] }
    private func unsupported() -> RecordError {
        RecordError(kind: .unsupportedType, tableName: "", message: "nested keyed containers are not supported in records; store a nested Codable value instead")
    }
    mutating func encodeNil(forKey key: Key) throws { throw unsupported() }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { throw unsupported() }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(UnsupportedKeyedEncodingContainer<NestedKey>())
    }
    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        UnsupportedEncodingContainer(storage: EncodingStorage(ignored: [], tableName: ""))
    }
    mutating func superEncoder() -> any Encoder { RecordEncoder(storage: EncodingStorage(ignored: [], tableName: "")) }
    mutating func superEncoder(forKey key: Key) -> any Encoder { RecordEncoder(storage: EncodingStorage(ignored: [], tableName: "")) }
}

/// A nested value as stored in its column: JSON text with sorted keys, so
/// equal values store equal text.
func jsonText(of value: some Encodable) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    return String(decoding: try encoder.encode(value), as: UTF8.self)
}

/// Lets an encoder see that a generic value is an Optional holding nil (a
/// hand-written `encode(to:)` may call `encode(id, forKey:)` with a nil id),
/// so it is stored as NULL and an assigned key is written back.
protocol OptionalValue {
    var isNone: Bool { get }
}

extension Optional: OptionalValue {
    var isNone: Bool { self == nil }
}

extension String {
    /// Whether two identifiers name the same column, as SQLite compares them.
    func caseInsensitiveEquals(_ other: String) -> Bool {
        identifiersMatch(self, other)
    }
}

extension Array<String> {
    /// Whether the list holds a column name, in any case.
    func containsColumn(_ name: String) -> Bool {
        contains { $0.caseInsensitiveEquals(name) }
    }
}
