import Foundation

// How a record property that is not itself a ``DatabaseValueConvertible``
// is stored: a value that encodes one single value (a `String` or `Int`
// enum, a `struct Email` wrapping a string) is stored as that value, the way
// GRDB stores it; anything else (a struct with keys, an array) as JSON text.

// MARK: - Encoding

/// The column value of a property: its single value when it encodes one,
/// JSON text otherwise.
func columnValue<T: Encodable>(of value: T) throws -> any DatabaseValueConvertible {
    let capture = SingleValueCapture()
    do {
        try value.encode(to: capture)
    } catch is StructuredValue {
        return try jsonText(of: value)
    }
    if let captured = capture.value, !capture.isStructured {
        return captured
    }
    return try jsonText(of: value)
}

/// Thrown to stop encoding as soon as a value turns out to have keys or
/// elements: it is then stored as JSON.
private struct StructuredValue: Error {}

/// An encoder that keeps the single value a type encodes.
private final class SingleValueCapture: Encoder, SingleValueEncodingContainer {
    var value: (any DatabaseValueConvertible)?
    var isStructured = false
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        isStructured = true
        return KeyedEncodingContainer(StructuredKeyedContainer<Key>())
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        isStructured = true
        return StructuredUnkeyedContainer()
    }

    func singleValueContainer() -> any SingleValueEncodingContainer { self }

    func encodeNil() throws { value = DatabaseValue.null }
    func encode(_ value: Bool) throws { self.value = value }
    func encode(_ value: String) throws { self.value = value }
    func encode(_ value: Double) throws { self.value = value }
    func encode(_ value: Float) throws { self.value = value }
    func encode(_ value: Int) throws { self.value = value }
    func encode(_ value: Int8) throws { self.value = value }
    func encode(_ value: Int16) throws { self.value = value }
    func encode(_ value: Int32) throws { self.value = value }
    func encode(_ value: Int64) throws { self.value = value }
    func encode(_ value: UInt) throws { self.value = value }
    func encode(_ value: UInt8) throws { self.value = value }
    func encode(_ value: UInt16) throws { self.value = value }
    func encode(_ value: UInt32) throws { self.value = value }
    func encode(_ value: UInt64) throws { self.value = value }

    func encode<T: Encodable>(_ value: T) throws {
        if let optional = value as? any OptionalValue, optional.isNone {
            self.value = DatabaseValue.null
        } else if let convertible = value as? any DatabaseValueConvertible {
            self.value = convertible
        } else {
            // A wrapper of a wrapper, or of an array: the inner value decides.
            self.value = try columnValue(of: value)
        }
    }
}

private struct StructuredKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    var codingPath: [any CodingKey] { [] }
    mutating func encodeNil(forKey key: Key) throws { throw StructuredValue() }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { throw StructuredValue() }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(StructuredKeyedContainer<NestedKey>())
    }
    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer { StructuredUnkeyedContainer() }
    mutating func superEncoder() -> any Encoder { SingleValueCapture() }
    mutating func superEncoder(forKey key: Key) -> any Encoder { SingleValueCapture() }
}

private struct StructuredUnkeyedContainer: UnkeyedEncodingContainer {
    var codingPath: [any CodingKey] { [] }
    var count: Int { 0 }
    mutating func encodeNil() throws { throw StructuredValue() }
    mutating func encode<T: Encodable>(_ value: T) throws { throw StructuredValue() }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(StructuredKeyedContainer<NestedKey>())
    }
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { self }
    mutating func superEncoder() -> any Encoder { SingleValueCapture() }
}

// MARK: - Decoding

/// Decodes a property that is not a ``DatabaseValueConvertible`` from its
/// column's value: through a single value container when the type asks for
/// one, from JSON text when it asks for keys or elements.
func decodeColumnValue<T: Decodable>(_ type: T.Type, from stored: DatabaseValue) throws -> T {
    do {
        return try T(from: ColumnValueDecoder(value: stored))
    } catch is StructuredValue {
        return try decodeJSON(type, from: stored)
    } catch let error as DecodingError {
        // A single value stored as JSON text by an earlier Strata (`"food"`
        // with its quotes) still reads.
        if case .text(let text) = stored, text.utf8.first == UInt8(ascii: "\""), let value = try? decodeJSON(type, from: stored) {
            return value
        }
        throw error
    }
}

private func decodeJSON<T: Decodable>(_ type: T.Type, from stored: DatabaseValue) throws -> T {
    let data: Data
    switch stored {
    case .text(let text): data = Data(text.utf8)
    case .blob(let blob): data = blob
    default:
        throw DecodingError.typeMismatch(T.self, .init(codingPath: [], debugDescription: "expected JSON text, found \(stored.storageClassName)"))
    }
    return try JSONDecoder().decode(T.self, from: data)
}

private struct ColumnValueDecoder: Decoder, SingleValueDecodingContainer {
    let value: DatabaseValue
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> { throw StructuredValue() }
    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw StructuredValue() }
    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    func decodeNil() -> Bool { value.isNull }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if let convertible = type as? any DatabaseValueConvertible.Type {
            if let decoded = convertible.fromDatabaseValue(value) as? T { return decoded }
            throw DecodingError.typeMismatch(T.self, .init(codingPath: [], debugDescription: "cannot read \(value.storageClassName) as \(T.self)"))
        }
        return try decodeColumnValue(type, from: value)
    }
}

// MARK: - Schema

/// How a property of type `T` is stored: its declared type, and whether as
/// JSON text. Found by decoding an empty value of `T` and noting what it asks
/// for.
func columnStorage(of type: Any.Type) -> (declaredType: String, isJSON: Bool) {
    if type is any DatabaseValueConvertible.Type {
        return (declaredType(for: type), false)
    }
    if type is any RawRepresentable.Type {
        let declared = declaredType(for: type)
        if !declared.isEmpty { return (declared, false) }
    }
    guard let decodable = type as? any Decodable.Type else { return ("TEXT", true) }
    return probeStorage(of: decodable)
}

private func probeStorage<T: Decodable>(of type: T.Type) -> (declaredType: String, isJSON: Bool) {
    let note = ValueShapeNote()
    _ = try? T(from: ProbeDecoder(recorder: nil, shape: note))
    if let single = note.singleValueType, !note.isStructured {
        return (declaredType(for: single), false)
    }
    return ("TEXT", true)
}

/// What the outermost level of a probed value asked for.
final class ValueShapeNote {
    var singleValueType: Any.Type?
    var isStructured = false
}

/// The first case of an enum without associated values, for probing a
/// record that holds one (an enum's synthesized `init(from:)` accepts only
/// its raw values, which Strata cannot guess).
///
/// Such an enum is stored as its case index, and index 0 is its first case;
/// the check reads the type's metadata (kind `Enum`, no payload cases), laid
/// out as Swift's stable ABI specifies (`include/swift/ABI/Metadata.h`).
func firstCaseOfPlainEnum<T>(_ type: T.Type) -> T? {
    guard _isPOD(T.self), MemoryLayout<T>.size <= 4 else { return nil }
    let metadata = unsafeBitCast(T.self as Any.Type, to: UnsafeRawPointer.self)
    let enumKind = 0x201
    guard metadata.load(as: Int.self) == enumKind else { return nil }
    guard let descriptor = metadata.load(fromByteOffset: MemoryLayout<Int>.size, as: UnsafeRawPointer?.self) else {
        return nil
    }
    // TargetEnumDescriptor: flags, parent, name, access function, fields
    // (5 × 32 bits), then the payload case count (low 24 bits) and the count
    // of cases without payload.
    let payloadCases = descriptor.load(fromByteOffset: 20, as: UInt32.self) & 0x00FF_FFFF
    let emptyCases = descriptor.load(fromByteOffset: 24, as: UInt32.self)
    guard payloadCases == 0, emptyCases > 0 else { return nil }
    return withUnsafeTemporaryAllocation(byteCount: max(MemoryLayout<T>.size, 1), alignment: MemoryLayout<T>.alignment) { buffer in
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
        return buffer.baseAddress!.load(as: T.self)
    }
}
