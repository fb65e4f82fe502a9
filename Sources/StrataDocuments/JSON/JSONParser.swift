import Foundation

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
