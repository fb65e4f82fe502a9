import Foundation

/// A JSON value exactly as a document holds it: object keys keep their
/// order, numbers keep the text they were written with (no rounding through
/// `Double`, no `1.0` becoming `1`), strings are Unicode text.
///
/// CouchDB hands documents back as they were stored, so the store parses and
/// writes JSON itself instead of going through `JSONSerialization`.
public enum JSON: Sendable, Hashable {
    case null
    case bool(Bool)
    /// A number, as its JSON literal (`12`, `-0.5`, `1e300`).
    case number(String)
    case string(String)
    case array([JSON])
    case object(JSONObject)

    /// A number value from an integer.
    public static func int(_ value: Int) -> JSON { .number(String(value)) }

    /// The string, when this is a string.
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// The object, when this is an object.
    public var objectValue: JSONObject? {
        if case .object(let o) = self { return o }
        return nil
    }

    /// The elements, when this is an array.
    public var arrayValue: [JSON]? {
        if case .array(let a) = self { return a }
        return nil
    }

    /// The number as a `Double`, when this is a number.
    public var doubleValue: Double? {
        if case .number(let n) = self { return Double(n) }
        return nil
    }

    /// The number as an `Int`, when this is a number with an integral value.
    public var intValue: Int? {
        guard case .number(let n) = self else { return nil }
        if let i = Int(n) { return i }
        if let d = Double(n), d.rounded() == d, abs(d) < 9.0e15 { return Int(d) }
        return nil
    }

    /// The Boolean, when this is `true` or `false`.
    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }

    /// The member named `key`, when this is an object that has it.
    public subscript(key: String) -> JSON? {
        objectValue?[key]
    }

    /// The JSON text of the value, compact (no spaces), keys in their order.
    public var text: String {
        String(decoding: utf8(sortingKeys: false), as: UTF8.self)
    }

    /// The JSON text with object keys sorted by their UTF-8 bytes: the form
    /// revision ids are computed over, so that two peers making the same edit
    /// agree.
    public var canonicalText: String {
        String(decoding: utf8(sortingKeys: true), as: UTF8.self)
    }

    /// The JSON text as UTF-8 bytes.
    func utf8(sortingKeys: Bool) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64)
        write(to: &out, sortingKeys: sortingKeys)
        return out
    }

    // Written as bytes, not String appends: documents are serialized on
    // every write and read, and String's append costs several times more.
    func write(to out: inout [UInt8], sortingKeys: Bool) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .number(let n): out.append(contentsOf: n.utf8)
        case .string(let s): JSON.writeString(s, to: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (i, e) in elements.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                e.write(to: &out, sortingKeys: sortingKeys)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let object):
            out.append(UInt8(ascii: "{"))
            var pairs = object.pairs
            if sortingKeys { pairs.sort { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) } }
            for (i, pair) in pairs.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                JSON.writeString(pair.key, to: &out)
                out.append(UInt8(ascii: ":"))
                pair.value.write(to: &out, sortingKeys: sortingKeys)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// A JSON string literal: quotes, backslashes and control characters
    /// escaped, and U+2028 / U+2029 (which JavaScript does not take raw in
    /// a string); runs of other bytes copied at once.
    static func writeString(_ s: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var s = s
        s.withUTF8 { bytes in
            var start = 0
            var i = 0
            func escape(_ text: String, skipping count: Int) {
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<i]))
                out.append(contentsOf: text.utf8)
                i += count
                start = i
            }
            while i < bytes.count {
                let byte = bytes[i]
                switch byte {
                case UInt8(ascii: "\""): escape("\\\"", skipping: 1)
                case UInt8(ascii: "\\"): escape("\\\\", skipping: 1)
                case 0x0A: escape("\\n", skipping: 1)
                case 0x0D: escape("\\r", skipping: 1)
                case 0x09: escape("\\t", skipping: 1)
                case 0x08: escape("\\b", skipping: 1)
                case 0x0C: escape("\\f", skipping: 1)
                case 0..<0x20:
                    let hex = String(byte, radix: 16)
                    escape("\\u" + String(repeating: "0", count: 4 - hex.count) + hex, skipping: 1)
                case 0xE2 where i + 2 < bytes.count && bytes[i + 1] == 0x80 && (bytes[i + 2] == 0xA8 || bytes[i + 2] == 0xA9):
                    escape(bytes[i + 2] == 0xA8 ? "\\u2028" : "\\u2029", skipping: 3)
                default:
                    i += 1
                }
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<bytes.count]))
        }
        out.append(UInt8(ascii: "\""))
    }
}

extension JSON: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .int(value) }
    public init(floatLiteral value: Double) { self = .number(String(value)) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JSON...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSON)...) {
        self = .object(JSONObject(elements.map { (key: $0.0, value: $0.1) }))
    }
}
