import Foundation
import StrataSQLite

/// Encodes a record straight into the parameters of its type's prepared
/// INSERT, for the common case: the record encodes the statement's columns,
/// in the statement's order, with a keyed container. Each value is bound
/// where it is encoded (an `Int` with one `sqlite3_bind_int64`), with no
/// array of existentials in between.
///
/// Anything else — another key, another order, a missing key, a nested or
/// unkeyed container — marks the encoding as not matching, and the caller
/// falls back to ``EncodedRecord`` and a statement for the columns actually
/// encoded. A value that cannot be bound throws as it would there.
///
/// One encoder serves every insert of a type on a connection. Its state is
/// `@exclusivity(unchecked)`: a connection is used by one thread at a time,
/// and an encoding does not re-enter itself.
final class RecordBindingEncoder: Encoder {
    let statement: Statement
    let sqliteStatement: OpaquePointer
    let columns: [String]
    let ignored: Set<String>
    /// The index of the single-column primary key in `columns`, if any.
    let primaryKeyIndex: Int?
    /// The next column expected.
    @exclusivity(unchecked) private(set) var position = 0
    /// Whether the encoding strayed from `columns`.
    @exclusivity(unchecked) private(set) var isMismatched = false
    /// Whether the primary key was encoded as nil (SQLite assigns one).
    @exclusivity(unchecked) private(set) var primaryKeyIsNull = false
    @exclusivity(unchecked) private var containers = KeyedContainerCache()

    init(statement: Statement, columns: [String], ignored: Set<String>, primaryKey: [String]) {
        self.statement = statement
        self.sqliteStatement = statement.sqliteStatement
        self.columns = columns
        self.ignored = ignored
        self.primaryKeyIndex = primaryKey.count == 1 ? columns.firstIndex { $0.caseInsensitiveEquals(primaryKey[0]) } : nil
    }

    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// Starts a record.
    func begin() throws {
        try statement.prepareForBinding()
        position = 0
        isMismatched = false
        primaryKeyIsNull = false
    }

    /// Whether every column was bound, in order.
    var isComplete: Bool { !isMismatched && position == columns.count }

    /// The parameter for `column`, or nil when the column is ignored or the
    /// encoding no longer matches.
    @inline(__always)
    func parameter(for column: String) -> Int32? {
        if isMismatched { return nil }
        if position < columns.count && columns[position] == column {
            position += 1
            return Int32(truncatingIfNeeded: position)
        }
        if !ignored.isEmpty && ignored.contains(column) { return nil }
        isMismatched = true
        return nil
    }

    @inline(__always)
    func bind<T: DatabaseValueConvertible>(_ value: T, column: String) throws {
        guard let parameter = parameter(for: column) else { return }
        try value.bind(to: sqliteStatement, at: parameter)
    }

    func bindNull(column: String) throws {
        guard let parameter = parameter(for: column) else { return }
        if Int(parameter) - 1 == primaryKeyIndex { primaryKeyIsNull = true }
        try checkBind(sqlite3_bind_null(sqliteStatement, parameter), sqliteStatement)
    }

    @inline(__always)
    func bindOptional<T: DatabaseValueConvertible>(_ value: T?, column: String) throws {
        if let value { try bind(value, column: column) } else { try bindNull(column: column) }
    }

    func bindEncodable<T: Encodable>(_ value: T, column: String) throws {
        if let optional = value as? any OptionalValue, optional.isNone {
            try bindNull(column: column)
            return
        }
        if let convertible = value as? any DatabaseValueConvertible {
            try bind(convertible, column: column)
            return
        }
        // No encoding for a column that is not bound.
        if isMismatched || (!ignored.isEmpty && ignored.contains(column)) {
            _ = parameter(for: column)
            return
        }
        try bind(try columnValue(of: value), column: column)
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        containers.container(for: Key.self) {
            KeyedEncodingContainer(BindingKeyedContainer<Key>(encoder: .passUnretained(self)))
        }
    }

    /// A record encoded another way than with one keyed container: the
    /// general path encodes it again and reports what is wrong.
    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        isMismatched = true
        return RecordEncoder(storage: EncodingStorage(ignored: [], tableName: "")).unkeyedContainer()
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        isMismatched = true
        return RecordEncoder(storage: EncodingStorage(ignored: [], tableName: "")).singleValueContainer()
    }
}

/// The encoder is held unretained: the encoder caches its container, so a
/// strong reference back would be a cycle, and the standard library copies
/// the container for every property. A container is only used while its
/// record's `encode(to:)` runs, which the encoder outlives.
private struct BindingKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: Unmanaged<RecordBindingEncoder>
    var codingPath: [any CodingKey] { [] }

    private var target: RecordBindingEncoder { encoder.takeUnretainedValue() }

    /// Runs `body` with the encoder, without retaining it.
    @inline(__always)
    private func with<Result>(_ body: (RecordBindingEncoder) throws -> Result) rethrows -> Result {
        try encoder._withUnsafeGuaranteedRef(body)
    }

    mutating func encodeNil(forKey key: Key) throws { try with { try $0.bindNull(column: key.stringValue) } }
    mutating func encode(_ value: Bool, forKey key: Key) throws { try with { try $0.bind(value, column: key.stringValue) } }
    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { try with { try $0.bindOptional(value, column: key.stringValue) } }
    mutating func encode(_ value: String, forKey key: Key) throws { try with { try $0.bind(value, column: key.stringValue) } }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { try with { try $0.bindOptional(value, column: key.stringValue) } }
    mutating func encode(_ value: Double, forKey key: Key) throws { try with { try $0.bind(value, column: key.stringValue) } }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { try with { try $0.bindOptional(value, column: key.stringValue) } }
    mutating func encode(_ value: Float, forKey key: Key) throws { try with { try $0.bind(value, column: key.stringValue) } }
    mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws { try with { try $0.bindOptional(value, column: key.stringValue) } }
    mutating func encode(_ value: Int, forKey key: Key) throws { try with { try $0.bind(value, column: key.stringValue) } }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { try with { try $0.bindOptional(value, column: key.stringValue) } }
    mutating func encode(_ value: Int8, forKey key: Key) throws { try with { try $0.bind(value, column: key.stringValue) } }
    mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws { try with { try $0.bindOptional(value, column: key.stringValue) } }
    mutating func encode(_ value: Int16, forKey key: Key) throws { try with { try $0.bind(value, column: key.stringValue) } }
    mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws { try with { try $0.bindOptional(value, column: key.stringValue) } }
    mutating func encode(_ value: Int32, forKey key: Key) throws { try with { try $0.bind(value, column: key.stringValue) } }
    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { try with { try $0.bindOptional(value, column: key.stringValue) } }
    mutating func encode(_ value: Int64, forKey key: Key) throws { try with { try $0.bind(value, column: key.stringValue) } }
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { try with { try $0.bindOptional(value, column: key.stringValue) } }
    mutating func encode(_ value: UInt, forKey key: Key) throws { try with { try $0.bind(value, column: key.stringValue) } }
    mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws { try with { try $0.bindOptional(value, column: key.stringValue) } }
    mutating func encode(_ value: UInt8, forKey key: Key) throws { try with { try $0.bind(value, column: key.stringValue) } }
    mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws { try with { try $0.bindOptional(value, column: key.stringValue) } }
    mutating func encode(_ value: UInt16, forKey key: Key) throws { try with { try $0.bind(value, column: key.stringValue) } }
    mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws { try with { try $0.bindOptional(value, column: key.stringValue) } }
    mutating func encode(_ value: UInt32, forKey key: Key) throws { try with { try $0.bind(value, column: key.stringValue) } }
    mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { try with { try $0.bindOptional(value, column: key.stringValue) } }
    mutating func encode(_ value: UInt64, forKey key: Key) throws { try with { try $0.bind(value, column: key.stringValue) } }
    mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { try with { try $0.bindOptional(value, column: key.stringValue) } }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try with { try $0.bindEncodable(value, column: key.stringValue) }
    }

    // nil is bound as NULL, as the general encoder stores it.
    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
        if let value {
            try with { try $0.bindEncodable(value, column: key.stringValue) }
        } else {
            try with { try $0.bindNull(column: key.stringValue) }
        }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        target.markMismatched()
        return RecordEncoder(storage: EncodingStorage(ignored: [], tableName: "")).container(keyedBy: NestedKey.self)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        target.markMismatched()
        return RecordEncoder(storage: EncodingStorage(ignored: [], tableName: "")).unkeyedContainer()
    }

    mutating func superEncoder() -> any Encoder {
        target.markMismatched()
        return RecordEncoder(storage: EncodingStorage(ignored: [], tableName: ""))
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        target.markMismatched()
        return RecordEncoder(storage: EncodingStorage(ignored: [], tableName: ""))
    }
}

extension RecordBindingEncoder {
    func markMismatched() {
        isMismatched = true
    }
}
