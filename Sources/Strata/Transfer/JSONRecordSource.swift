import Foundation

/// Reads JSON objects from a file, one at a time: the elements of a top-level
/// array (`.json`) or one object a line (`.ndjson`). Only the current object
/// is held in memory.
final class JSONRecordSource: ImportRecordSource {
    private let reader: ChunkedFileReader
    private let file: String
    private let isLineDelimited: Bool
    private var chunk: [UInt8] = []
    private var position = 0
    private var line = 1
    private var isAtFileStart = true
    private var sawArrayStart = false
    private var sawArrayEnd = false
    private var objectBytes: [UInt8] = []
    private var keyIndexes: [String: Int] = [:]
    private(set) var columnNames: [String] = []
    let isPositional = false

    var bytesRead: Int { reader.bytesRead }
    var totalBytes: Int? { reader.totalBytes }

    /// SQLite's limit on a table's columns: more distinct keys are refused.
    private let maximumColumns: Int

    init(url: URL, format: DataFormat, maximumColumns: Int) throws {
        self.maximumColumns = maximumColumns
        reader = try ChunkedFileReader(url: url)
        file = url.path
        isLineDelimited = format == .ndjson
    }

    private func nextByte() throws -> UInt8? {
        if position == chunk.count {
            guard let data = try reader.nextChunk() else { return nil }
            chunk = [UInt8](data)
            position = 0
            if isAtFileStart {
                isAtFileStart = false
                if chunk.count >= 3, chunk[0] == 0xEF, chunk[1] == 0xBB, chunk[2] == 0xBF { position = 3 }
                if position == chunk.count { return try nextByte() }
            }
        }
        let byte = chunk[position]
        position += 1
        if byte == UInt8(ascii: "\n") { line += 1 }
        return byte
    }

    private func error(_ message: String, line: Int? = nil) -> ImportError {
        ImportError(file: file, line: line ?? self.line, column: nil, message: message)
    }

    /// For each key, the number of the last object that had it: a key met
    /// twice in one object is an error, not a lost value.
    private var keysSeen: [Int] = []
    private var objectNumber = 0

    func nextRecord(into record: inout ImportRecord) throws -> Bool {
        record.reset()
        guard try readObjectBytes() else { return false }
        objectNumber += 1
        record.line = objectLine
        try objectBytes.withUnsafeBufferPointer { buffer in
            var parser = JSONObjectParser(bytes: buffer, file: file, line: objectLine)
            try parser.parseObject { key, value, bytes in
                let index: Int
                if let known = keyIndexes[key] {
                    index = known
                } else {
                    guard columnNames.count < maximumColumns else {
                        throw ImportError(
                            file: file, line: objectLine, column: nil, columnName: key,
                            message: "the objects have more than \(maximumColumns) distinct keys, the most columns SQLite allows in a table (SQLITE_LIMIT_COLUMN); import fewer keys")
                    }
                    if key.utf8.contains(0) {
                        throw ImportError(
                            file: file, line: objectLine, column: nil, columnName: key,
                            message: "the key holds a NUL character, which SQLite's column names cannot hold")
                    }
                    index = columnNames.count
                    keyIndexes[key] = index
                    columnNames.append(key)
                }
                while record.values.count <= index { record.values.append(.null) }
                while keysSeen.count <= index { keysSeen.append(-1) }
                guard keysSeen[index] != objectNumber else {
                    throw ImportError(
                        file: file, line: objectLine, column: nil, columnName: key,
                        message: "the key \"\(key)\" appears twice in the object; one of its values would be lost")
                }
                keysSeen[index] = objectNumber
                switch value {
                case .text(let start, let end):
                    let offset = record.bytes.count
                    record.bytes.append(contentsOf: bytes[start..<end])
                    record.values[index] = .text(start: offset, end: offset + end - start)
                case .number(let start, let end):
                    let offset = record.bytes.count
                    record.bytes.append(contentsOf: bytes[start..<end])
                    record.values[index] = .number(start: offset, end: offset + end - start)
                default:
                    record.values[index] = value
                }
            }
        }
        return true
    }

    private var objectLine = 0

    /// Collects the bytes of the next object into `objectBytes`.
    private func readObjectBytes() throws -> Bool {
        objectBytes.removeAll(keepingCapacity: true)
        // Find the object's opening brace.
        while true {
            guard let byte = try nextByte() else {
                if !isLineDelimited && !sawArrayEnd {
                    throw error(sawArrayStart ? "the JSON array is not closed" : "expected a JSON array of objects")
                }
                return false
            }
            if byte == 32 || byte == 9 || byte == 10 || byte == 13 {
                continue
            }
            if !isLineDelimited {
                if byte == UInt8(ascii: "[") && !sawArrayStart {
                    sawArrayStart = true
                    continue
                }
                if sawArrayStart && !sawArrayEnd && (byte == UInt8(ascii: ",") || byte == UInt8(ascii: "]")) {
                    if byte == UInt8(ascii: "]") { sawArrayEnd = true }
                    continue
                }
            }
            if byte == UInt8(ascii: "{") && (isLineDelimited || (sawArrayStart && !sawArrayEnd)) {
                objectLine = line
                objectBytes.append(byte)
                try readRestOfObject()
                return true
            }
            throw error(sawArrayEnd ? "unexpected text after the JSON array" : "expected a JSON object, found \"\(String(decoding: [byte], as: UTF8.self))\"")
        }
    }

    private func readRestOfObject() throws {
        var nesting = JSONNesting(depth: 1)
        while !nesting.isClosed {
            guard let byte = try nextByte() else {
                throw error("the JSON object is not closed", line: objectLine)
            }
            objectBytes.append(byte)
            nesting.feed(byte)
        }
    }
}

/// Follows a JSON value's nesting byte by byte, through strings and their
/// escapes, to find where an object or array ends.
struct JSONNesting {
    var depth = 0
    private var inString = false
    private var escaped = false

    init(depth: Int = 0) {
        self.depth = depth
    }

    var isClosed: Bool { depth == 0 }

    mutating func feed(_ byte: UInt8) {
        if inString {
            if escaped {
                escaped = false
            } else if byte == UInt8(ascii: "\\") {
                escaped = true
            } else if byte == UInt8(ascii: "\"") {
                inString = false
            }
        } else if byte == UInt8(ascii: "\"") {
            inString = true
        } else if byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[") {
            depth += 1
        } else if byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") {
            depth -= 1
        }
    }
}

/// Parses one JSON object whose bytes are in memory. Top-level values become
/// import values: strings as text, numbers as INTEGER or REAL, booleans as
/// 1 / 0, null as NULL, nested arrays and objects as their JSON text.
struct JSONObjectParser {
    let bytes: UnsafeBufferPointer<UInt8>
    let file: String
    let line: Int
    var index = 0
    /// Decoded strings: values refer to ranges of this storage.
    var storage: [UInt8] = []

    init(bytes: UnsafeBufferPointer<UInt8>, file: String, line: Int) {
        self.bytes = bytes
        self.file = file
        self.line = line
    }

    private func error(_ message: String) -> ImportError {
        ImportError(file: file, line: line, column: nil, message: "invalid JSON: \(message) (byte \(index + 1) of the object)")
    }

    private mutating func skipSpace() {
        while index < bytes.count, [32, 9, 10, 13].contains(bytes[index]) { index += 1 }
    }

    private mutating func expect(_ byte: UInt8) throws {
        skipSpace()
        guard index < bytes.count, bytes[index] == byte else {
            throw error("expected \"\(String(decoding: [byte], as: UTF8.self))\"")
        }
        index += 1
    }

    /// Calls `body` with each key, its value, and the storage text values
    /// refer to.
    mutating func parseObject(_ body: (String, ImportValue, [UInt8]) throws -> Void) throws {
        try expect(UInt8(ascii: "{"))
        skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return
        }
        while true {
            skipSpace()
            let (keyStart, keyEnd) = try parseString()
            let key = String(decoding: storage[keyStart..<keyEnd], as: UTF8.self)
            try expect(UInt8(ascii: ":"))
            skipSpace()
            let value = try parseValue()
            try body(key, value, storage)
            skipSpace()
            guard index < bytes.count else { throw error("the object is not closed") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if bytes[index] == UInt8(ascii: "}") {
                index += 1
                skipSpace()
                guard index == bytes.count else { throw error("unexpected text after the object") }
                return
            }
            throw error("expected \",\" or \"}\"")
        }
    }

    private mutating func parseValue() throws -> ImportValue {
        guard index < bytes.count else { throw error("missing value") }
        switch bytes[index] {
        case UInt8(ascii: "\""):
            let (start, end) = try parseString()
            return .text(start: start, end: end)
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            let start = index
            try skipComposite()
            let offset = storage.count
            storage.append(contentsOf: bytes[start..<index])
            return .text(start: offset, end: storage.count)
        case UInt8(ascii: "t"):
            try literal("true")
            return .integer(1)
        case UInt8(ascii: "f"):
            try literal("false")
            return .integer(0)
        case UInt8(ascii: "n"):
            try literal("null")
            return .null
        default:
            return try parseNumber()
        }
    }

    private mutating func literal(_ word: String) throws {
        for byte in word.utf8 {
            guard index < bytes.count, bytes[index] == byte else { throw error("unknown literal") }
            index += 1
        }
    }

    private mutating func parseNumber() throws -> ImportValue {
        let start = index
        var isInteger = true
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") { index += 1 }
        while index < bytes.count {
            let byte = bytes[index]
            if byte >= 48 && byte <= 57 {
                index += 1
            } else if byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E")
                || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") {
                isInteger = false
                index += 1
            } else {
                break
            }
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        if isInteger, let integer = Int64(text) { return .integer(integer) }
        guard !text.isEmpty, Double(text) != nil else { throw error("invalid number \"\(text)\"") }
        // Kept as written: the importer stores it as a number only when the
        // number keeps every digit.
        let offset = storage.count
        storage.append(contentsOf: bytes[start..<index])
        return .number(start: offset, end: storage.count)
    }

    private mutating func skipComposite() throws {
        var nesting = JSONNesting()
        repeat {
            guard index < bytes.count else { throw error("unclosed array or object") }
            nesting.feed(bytes[index])
            index += 1
        } while !nesting.isClosed
    }

    /// Decodes a string into `storage`, returning its range there.
    private mutating func parseString() throws -> (Int, Int) {
        guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw error("expected a string") }
        index += 1
        let start = storage.count
        while true {
            guard index < bytes.count else { throw error("unterminated string") }
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                if let bad = storage.withUnsafeBufferPointer({ firstInvalidUTF8(UnsafeBufferPointer(rebasing: $0[start...])) }) {
                    throw error("invalid UTF-8 at byte \(bad + 1) of a string")
                }
                return (start, storage.count)
            case UInt8(ascii: "\\"):
                guard index < bytes.count else { throw error("unterminated escape") }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): storage.append(34)
                case UInt8(ascii: "\\"): storage.append(92)
                case UInt8(ascii: "/"): storage.append(47)
                case UInt8(ascii: "b"): storage.append(8)
                case UInt8(ascii: "f"): storage.append(12)
                case UInt8(ascii: "n"): storage.append(10)
                case UInt8(ascii: "r"): storage.append(13)
                case UInt8(ascii: "t"): storage.append(9)
                case UInt8(ascii: "u"):
                    var scalar = try parseHex4()
                    if (0xD800...0xDBFF).contains(scalar) {
                        guard index + 1 < bytes.count, bytes[index] == 92, bytes[index + 1] == UInt8(ascii: "u") else {
                            throw error("unpaired surrogate")
                        }
                        index += 2
                        let low = try parseHex4()
                        guard (0xDC00...0xDFFF).contains(low) else { throw error("unpaired surrogate") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    } else if (0xDC00...0xDFFF).contains(scalar) {
                        throw error("unpaired surrogate")
                    }
                    storage.append(contentsOf: String(Character(Unicode.Scalar(scalar)!)).utf8)
                default:
                    throw error("invalid escape")
                }
            default:
                guard byte >= 0x20 else { throw error("control character in a string") }
                storage.append(byte)
            }
        }
    }

    private mutating func parseHex4() throws -> UInt32 {
        guard index + 4 <= bytes.count, let value = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16) else {
            throw error("invalid \\u escape")
        }
        index += 4
        return value
    }
}
