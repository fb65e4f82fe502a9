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

/// A JSON object: members in the order they were written.
public struct JSONObject: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral {
    /// The members, in order.
    public private(set) var pairs: [(key: String, value: JSON)]

    public init() { pairs = [] }

    /// An object of these members; a repeated name keeps its first place
    /// and its last value, as setting it again would.
    public init(_ pairs: [(key: String, value: JSON)]) {
        if pairs.count <= 16 {
            self.pairs = []
            self.pairs.reserveCapacity(pairs.count)
            for pair in pairs { self[pair.key] = pair.value }
            return
        }
        // Large objects (a `_revs_diff` of thousands of ids): names found by
        // hashing, not by a scan per member.
        var places: [String: Int] = [:]
        places.reserveCapacity(pairs.count)
        var members: [(key: String, value: JSON)] = []
        members.reserveCapacity(pairs.count)
        for pair in pairs {
            if let place = places[pair.key] {
                members[place].value = pair.value
            } else {
                places[pair.key] = members.count
                members.append(pair)
            }
        }
        self.pairs = members
    }

    public init(dictionaryLiteral elements: (String, JSON)...) {
        self.init(elements.map { (key: $0.0, value: $0.1) })
    }

    /// The member named `key`; setting `nil` removes it, setting a new key
    /// appends it.
    public subscript(key: String) -> JSON? {
        get { pairs.first { $0.key == key }?.value }
        set {
            if let i = pairs.firstIndex(where: { $0.key == key }) {
                if let newValue { pairs[i].value = newValue } else { pairs.remove(at: i) }
            } else if let newValue {
                pairs.append((key, newValue))
            }
        }
    }

    public var keys: [String] { pairs.map(\.key) }
    public var isEmpty: Bool { pairs.isEmpty }
    public var count: Int { pairs.count }

    public func makeIterator() -> IndexingIterator<[(key: String, value: JSON)]> {
        pairs.makeIterator()
    }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.pairs.count == rhs.pairs.count
            && zip(lhs.pairs, rhs.pairs).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(pairs.count)
        for pair in pairs {
            hasher.combine(pair.key)
            hasher.combine(pair.value)
        }
    }
}

/// Why a JSON text could not be read.
public struct JSONSyntaxError: Error, CustomStringConvertible, Sendable {
    /// What was wrong.
    public var message: String
    /// The byte offset where it was found.
    public var offset: Int
    public var description: String { "invalid JSON at byte \(offset): \(message)" }
}

extension JSON {
    /// Reads one JSON value from `text` (UTF-8); whitespace around it is
    /// allowed, anything else after it is an error.
    public init(parsing text: String) throws {
        try self.init(parsing: Array(text.utf8))
    }

    /// Reads one JSON value from UTF-8 bytes.
    public init(parsing data: Data) throws {
        try self.init(parsing: [UInt8](data))
    }

    /// Reads one JSON value from UTF-8 bytes.
    public init(parsing bytes: [UInt8]) throws {
        var parser = JSONParser(bytes: bytes)
        self = try parser.parseDocument()
    }
}

struct JSONParser {
    let bytes: [UInt8]
    var i = 0
    var depth = 0
    static let maximumDepth = 256

    init(bytes: [UInt8]) { self.bytes = bytes }

    func fail(_ message: String) -> JSONSyntaxError { JSONSyntaxError(message: message, offset: i) }

    mutating func parseDocument() throws -> JSON {
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { i = 3 }
        skipSpace()
        let value = try parseValue()
        skipSpace()
        if i < bytes.count { throw fail("unexpected text after the value") }
        return value
    }

    mutating func skipSpace() {
        while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 { i += 1 }
    }

    mutating func expect(_ literal: String, _ value: JSON) throws -> JSON {
        let lit = Array(literal.utf8)
        guard i + lit.count <= bytes.count, Array(bytes[i..<i + lit.count]) == lit else {
            throw fail("unexpected character")
        }
        i += lit.count
        return value
    }

    mutating func parseValue() throws -> JSON {
        guard i < bytes.count else { throw fail("unexpected end of text") }
        switch bytes[i] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): return try expect("true", .bool(true))
        case UInt8(ascii: "f"): return try expect("false", .bool(false))
        case UInt8(ascii: "n"): return try expect("null", .null)
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw fail("unexpected character")
        }
    }

    mutating func enter() throws {
        depth += 1
        if depth > JSONParser.maximumDepth { throw fail("nested more than \(JSONParser.maximumDepth) levels") }
    }

    mutating func parseObject() throws -> JSON {
        try enter()
        i += 1
        var members: [(key: String, value: JSON)] = []
        skipSpace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "}") {
            i += 1
            depth -= 1
            return .object(JSONObject())
        }
        while true {
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { throw fail("expected a member name") }
            let key = try parseString()
            skipSpace()
            guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { throw fail("expected ':'") }
            i += 1
            skipSpace()
            let value = try parseValue()
            members.append((key, value))
            skipSpace()
            guard i < bytes.count else { throw fail("unexpected end of text") }
            if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
            if bytes[i] == UInt8(ascii: "}") { i += 1; break }
            throw fail("expected ',' or '}'")
        }
        depth -= 1
        return .object(JSONObject(members))
    }

    mutating func parseArray() throws -> JSON {
        try enter()
        i += 1
        var elements: [JSON] = []
        skipSpace()
        if i < bytes.count, bytes[i] == UInt8(ascii: "]") {
            i += 1
            depth -= 1
            return .array(elements)
        }
        while true {
            skipSpace()
            elements.append(try parseValue())
            skipSpace()
            guard i < bytes.count else { throw fail("unexpected end of text") }
            if bytes[i] == UInt8(ascii: ",") { i += 1; continue }
            if bytes[i] == UInt8(ascii: "]") { i += 1; break }
            throw fail("expected ',' or ']'")
        }
        depth -= 1
        return .array(elements)
    }

    mutating func parseNumber() throws -> JSON {
        let start = i
        if bytes[i] == UInt8(ascii: "-") { i += 1 }
        func digits(_ p: inout JSONParser) -> Int {
            let s = p.i
            while p.i < p.bytes.count, p.bytes[p.i] >= 0x30, p.bytes[p.i] <= 0x39 { p.i += 1 }
            return p.i - s
        }
        guard i < bytes.count else { throw fail("a number needs digits") }
        if bytes[i] == UInt8(ascii: "0") {
            i += 1
        } else if digits(&self) == 0 {
            throw fail("a number needs digits")
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            i += 1
            if digits(&self) == 0 { throw fail("a fraction needs digits") }
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            i += 1
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            if digits(&self) == 0 { throw fail("an exponent needs digits") }
        }
        return .number(String(decoding: bytes[start..<i], as: UTF8.self))
    }

    mutating func hex4() throws -> UInt32 {
        guard i + 4 <= bytes.count else { throw fail("\\u needs four hex digits") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let c = bytes[i]
            let d: UInt32
            switch c {
            case 0x30...0x39: d = UInt32(c - 0x30)
            case 0x41...0x46: d = UInt32(c - 0x41 + 10)
            case 0x61...0x66: d = UInt32(c - 0x61 + 10)
            default: throw fail("\\u needs four hex digits")
            }
            v = v * 16 + d
            i += 1
        }
        return v
    }

    mutating func parseString() throws -> String {
        i += 1
        // Most strings have no escape: find the closing quote and make the
        // string from the bytes as they are.
        var j = i
        var ascii = true
        let plain: Bool = bytes.withUnsafeBufferPointer { buffer in
            while j < buffer.count {
                let c = buffer[j]
                if c == UInt8(ascii: "\"") { return true }
                if c == UInt8(ascii: "\\") || c < 0x20 { return false }
                if c >= 0x80 { ascii = false }
                j += 1
            }
            return false
        }
        if plain {
            let text: String
            if ascii {
                text = String(decoding: bytes[i..<j], as: UTF8.self)
            } else {
                guard let valid = String(validating: bytes[i..<j], as: UTF8.self) else { throw fail("a string is not valid UTF-8") }
                text = valid
            }
            i = j + 1
            return text
        }
        var out: [UInt8] = []
        out.reserveCapacity(j - i + 16)
        var start = i
        while true {
            guard i < bytes.count else { throw fail("unterminated string") }
            let c = bytes[i]
            if c == UInt8(ascii: "\"") {
                out.append(contentsOf: bytes[start..<i])
                i += 1
                break
            }
            if c < 0x20 { throw fail("control character in a string") }
            if c != UInt8(ascii: "\\") { i += 1; continue }
            out.append(contentsOf: bytes[start..<i])
            i += 1
            guard i < bytes.count else { throw fail("unterminated string") }
            let e = bytes[i]
            i += 1
            switch e {
            case UInt8(ascii: "\""): out.append(0x22)
            case UInt8(ascii: "\\"): out.append(0x5C)
            case UInt8(ascii: "/"): out.append(0x2F)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try hex4()
                if scalar >= 0xD800, scalar < 0xDC00 {
                    if i + 1 < bytes.count, bytes[i] == UInt8(ascii: "\\"), bytes[i + 1] == UInt8(ascii: "u") {
                        i += 2
                        let low = try hex4()
                        if low >= 0xDC00, low < 0xE000 {
                            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                        } else {
                            scalar = 0xFFFD
                        }
                    } else {
                        scalar = 0xFFFD
                    }
                } else if scalar >= 0xDC00, scalar < 0xE000 {
                    scalar = 0xFFFD
                }
                out.append(contentsOf: Array(String(Unicode.Scalar(scalar) ?? "\u{FFFD}").utf8))
            default: throw fail("invalid escape")
            }
            start = i
        }
        guard let s = String(validating: out, as: UTF8.self) else {
            throw fail("a string is not valid UTF-8")
        }
        return s
    }
}

// MARK: - Collation

extension JSON {
    /// The rank of the value's type in CouchDB's collation:
    /// null < false < true < numbers < strings < arrays < objects.
    var collationRank: Int {
        switch self {
        case .null: return 0
        case .bool(let b): return b ? 2 : 1
        case .number: return 3
        case .string: return 4
        case .array: return 5
        case .object: return 6
        }
    }

    /// Orders two values as CouchDB's view collation does: the same order
    /// as ``viewCollate(_:_:)`` (strings as ICU's root collation orders
    /// them, not by code point).
    public static func collate(_ a: JSON, _ b: JSON) -> Int {
        viewCollate(a, b)
    }
}

// JSON values written as Swift literals: `["_id": "q1", "votes": [], "open": true, "count": 3]`.
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
