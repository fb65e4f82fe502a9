import Foundation

/// The columns of a record type, derived from its `Decodable` conformance by
/// decoding it once with a probing decoder that notes each key and type.
struct RecordSchema: Sendable {
    struct Column: Sendable {
        var name: String
        /// The declared SQL type: INTEGER, REAL, TEXT, BLOB, BOOLEAN, or "".
        var declaredType: String
        var isOptional: Bool
        /// Stored as JSON text (a nested Codable value, not a database value).
        var isJSON: Bool
    }

    var columns: [Column]

    private static let cache = Locked<[ObjectIdentifier: RecordSchema]>([:])

    /// The schema of a record type, derived once and cached.
    static func of<T: DatabaseRecord>(_ type: T.Type) throws -> RecordSchema {
        let key = ObjectIdentifier(type)
        if let schema = cache.withLock({ $0[key] }) { return schema }
        if let generated = T._generatedColumns {
            // `@Record` wrote the columns at compile time.
            let schema = RecordSchema(columns: generated.map {
                Column(name: $0.name, declaredType: $0.declaredType, isOptional: $0.isOptional, isJSON: $0.isJSON)
            })
            cache.withLock { $0[key] = schema }
            return schema
        }
        let recorder = SchemaRecorder()
        do {
            _ = try T(from: ProbeDecoder(recorder: recorder))
        } catch var error as RecordError {
            if error.tableName.isEmpty { error.tableName = T.databaseTableName }
            throw error
        } catch {
            throw RecordError(
                kind: .unsupportedType, tableName: T.databaseTableName,
                message: "cannot derive the columns of \(T.self) from its Codable conformance: \(error)")
        }
        let ignored = T.databaseIgnoredColumns
        let schema = RecordSchema(columns: recorder.columns.filter { !ignored.contains($0.name) })
        cache.withLock { $0[key] = schema }
        return schema
    }
}

final class SchemaRecorder {
    var columns: [RecordSchema.Column] = []

    func record(_ name: String, _ type: Any.Type, optional: Bool) {
        guard !columns.contains(where: { $0.name == name }) else { return }
        let storage = columnStorage(of: type)
        columns.append(RecordSchema.Column(
            name: name, declaredType: storage.declaredType, isOptional: optional, isJSON: storage.isJSON))
    }
}

// MARK: - Empty values

/// The empty value of a type (0, "", false, [], a fixed date…), for probing a
/// type's schema and for reading ignored columns.
func emptyValue<T: Decodable>(of type: T.Type) throws -> T {
    if let value = emptyDatabaseValue(of: type) {
        return value
    }
    do {
        return try T(from: ProbeDecoder(recorder: nil))
    } catch {
        // An enum accepts only its raw values: take its first case.
        if let value = firstCaseOfPlainEnum(type) { return value }
        throw error
    }
}

private func emptyDatabaseValue<T>(of type: T.Type) -> T? {
    switch type {
    case is String.Type: return "" as? T
    case is Bool.Type: return false as? T
    case is Double.Type: return 0.0 as? T
    case is Float.Type: return Float(0) as? T
    case is Int.Type: return 0 as? T
    case is Int8.Type: return Int8(0) as? T
    case is Int16.Type: return Int16(0) as? T
    case is Int32.Type: return Int32(0) as? T
    case is Int64.Type: return Int64(0) as? T
    case is UInt.Type: return UInt(0) as? T
    case is UInt8.Type: return UInt8(0) as? T
    case is UInt16.Type: return UInt16(0) as? T
    case is UInt32.Type: return UInt32(0) as? T
    case is UInt64.Type: return UInt64(0) as? T
    case is Date.Type: return Date(timeIntervalSince1970: 0) as? T
    case is Data.Type: return Data() as? T
    case is UUID.Type: return UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)) as? T
    case is URL.Type: return URL(string: "about:blank") as? T
    case is Decimal.Type: return Decimal(0) as? T
    default: break
    }
    if let caseIterable = type as? any CaseIterable.Type, let first = firstCase(of: caseIterable) as? T {
        return first
    }
    if let convertible = type as? any DatabaseValueConvertible.Type {
        for candidate: DatabaseValue in [.integer(0), .text(""), .real(0), .blob(Data()), .null] {
            if let value = convertible.fromDatabaseValue(candidate) as? T { return value }
        }
    }
    return nil
}

private func firstCase<C: CaseIterable>(of type: C.Type) -> Any? {
    type.allCases.first
}

// MARK: - Probing decoder

/// Decodes any `Decodable` type with empty values, noting (when it has a
/// recorder) each top-level key, its type and whether it is optional.
struct ProbeDecoder: Decoder {
    let recorder: SchemaRecorder?
    var codingPath: [any CodingKey] = []
    /// Notes what the value asks for, to tell a single value from one
    /// stored as JSON.
    var shape: ValueShapeNote?
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(recorder: SchemaRecorder?, codingPath: [any CodingKey] = [], shape: ValueShapeNote? = nil) {
        self.recorder = recorder
        self.codingPath = codingPath
        self.shape = shape
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        shape?.isStructured = true
        return KeyedDecodingContainer(ProbeKeyedContainer<Key>(recorder: recorder, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        shape?.isStructured = true
        return ProbeUnkeyedContainer(codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        ProbeSingleValueContainer(codingPath: codingPath, shape: shape)
    }
}

private struct ProbeKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let recorder: SchemaRecorder?
    var codingPath: [any CodingKey]
    var allKeys: [Key] { [] }

    func contains(_ key: Key) -> Bool { true }

    func decodeNil(forKey key: Key) throws -> Bool {
        // Reached through a custom init(from:) that checks for nil itself.
        recorder?.record(key.stringValue, Any.self, optional: true)
        return true
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        recorder?.record(key.stringValue, type, optional: false)
        do {
            return try emptyValue(of: type)
        } catch {
            throw RecordError(
                kind: .unsupportedType, tableName: "",
                message: "cannot derive the column \"\(key.stringValue)\" from \(type): its init(from:) failed with an empty value (\(error)); make \(type) CaseIterable, or a DatabaseValueConvertible whose fromDatabaseValue accepts 0 or \"\"")
        }
    }

    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        recorder?.record(key.stringValue, type, optional: true)
        return nil
    }

    func decodeIfPresent(_ type: Bool.Type, forKey key: Key) throws -> Bool? { note(key, type) }
    func decodeIfPresent(_ type: String.Type, forKey key: Key) throws -> String? { note(key, type) }
    func decodeIfPresent(_ type: Double.Type, forKey key: Key) throws -> Double? { note(key, type) }
    func decodeIfPresent(_ type: Float.Type, forKey key: Key) throws -> Float? { note(key, type) }
    func decodeIfPresent(_ type: Int.Type, forKey key: Key) throws -> Int? { note(key, type) }
    func decodeIfPresent(_ type: Int8.Type, forKey key: Key) throws -> Int8? { note(key, type) }
    func decodeIfPresent(_ type: Int16.Type, forKey key: Key) throws -> Int16? { note(key, type) }
    func decodeIfPresent(_ type: Int32.Type, forKey key: Key) throws -> Int32? { note(key, type) }
    func decodeIfPresent(_ type: Int64.Type, forKey key: Key) throws -> Int64? { note(key, type) }
    func decodeIfPresent(_ type: UInt.Type, forKey key: Key) throws -> UInt? { note(key, type) }
    func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) throws -> UInt8? { note(key, type) }
    func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) throws -> UInt16? { note(key, type) }
    func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) throws -> UInt32? { note(key, type) }
    func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) throws -> UInt64? { note(key, type) }

    private func note<T>(_ key: Key, _ type: T.Type) -> T? {
        recorder?.record(key.stringValue, type, optional: true)
        return nil
    }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        KeyedDecodingContainer(ProbeKeyedContainer<NestedKey>(recorder: nil, codingPath: codingPath + [key]))
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        ProbeUnkeyedContainer(codingPath: codingPath + [key])
    }

    func superDecoder() throws -> any Decoder { ProbeDecoder(recorder: nil, codingPath: codingPath) }
    func superDecoder(forKey key: Key) throws -> any Decoder { ProbeDecoder(recorder: nil, codingPath: codingPath + [key]) }
}

private struct ProbeUnkeyedContainer: UnkeyedDecodingContainer {
    var codingPath: [any CodingKey]
    var count: Int? { 0 }
    var isAtEnd: Bool { true }
    var currentIndex: Int { 0 }

    private func end() -> DecodingError {
        DecodingError.valueNotFound(Any.self, .init(codingPath: codingPath, debugDescription: "empty"))
    }

    mutating func decodeNil() throws -> Bool { true }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { throw end() }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> { throw end() }
    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { throw end() }
    mutating func superDecoder() throws -> any Decoder { throw end() }
}

private struct ProbeSingleValueContainer: SingleValueDecodingContainer {
    var codingPath: [any CodingKey]
    var shape: ValueShapeNote?

    func decodeNil() -> Bool { false }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        if let shape, shape.singleValueType == nil {
            shape.singleValueType = columnStorage(of: type).isJSON ? nil : type
            if shape.singleValueType == nil { shape.isStructured = true }
        }
        return try emptyValue(of: type)
    }
}
