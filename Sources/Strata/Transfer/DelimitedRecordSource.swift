import Foundation

/// Reads CSV (RFC 4180) or TSV records from a file, chunk by chunk. A record
/// may span chunks and, in CSV, lines.
final class DelimitedRecordSource: ImportRecordSource {
    private enum State {
        case fieldStart, unquoted, quoted, quoteInQuoted
    }

    private let reader: ChunkedFileReader
    private let file: String
    private let delimiter: UInt8
    /// CSV: double quotes delimit fields. TSV: no quoting, backslash escapes.
    private let isCSV: Bool
    private var chunk: [UInt8] = []
    private var position = 0
    private var line = 1
    private var skipLineFeed = false
    private var isAtFileStart = true
    private(set) var columnNames: [String] = []
    let isPositional = true

    var bytesRead: Int { reader.bytesRead }
    var totalBytes: Int? { reader.totalBytes }

    init(url: URL, format: DataFormat, delimiter: UInt8?, hasHeader: Bool) throws {
        reader = try ChunkedFileReader(url: url)
        file = url.path
        isCSV = format == .csv
        self.delimiter = delimiter ?? (format == .csv ? UInt8(ascii: ",") : UInt8(ascii: "\t"))
        var header = ImportRecord()
        if try nextRecord(into: &header) {
            if hasHeader {
                columnNames = header.values.enumerated().map { index, value in
                    let name = header.text(value) ?? ""
                    return name.isEmpty ? "column\(index + 1)" : name
                }
            } else {
                columnNames = (1...header.values.count).map { "column\($0)" }
                pending = header
            }
        }
    }

    /// The first record, read to count the columns of a headerless file.
    private var pending: ImportRecord?

    func nextRecord(into record: inout ImportRecord) throws -> Bool {
        if let pending {
            record = pending
            self.pending = nil
            return true
        }
        while true {
            record.reset()
            guard try readRecord(into: &record) else { return false }
            // Skip blank lines: one empty, unquoted field.
            if record.values.count == 1, case .null = record.values[0] { continue }
            if !isCSV, record.values.count == 1, case .text(let start, let end) = record.values[0], start == end { continue }
            return true
        }
    }

    private func loadChunk() throws -> Bool {
        guard let data = try reader.nextChunk() else { return false }
        chunk = [UInt8](data)
        position = 0
        if isAtFileStart {
            isAtFileStart = false
            if chunk.count >= 3, chunk[0] == 0xEF, chunk[1] == 0xBB, chunk[2] == 0xBF { position = 3 }
        }
        return true
    }

    private func readRecord(into record: inout ImportRecord) throws -> Bool {
        var state = State.fieldStart
        var fieldStart = 0
        var fieldQuoted = false
        var fieldHasEscape = false
        var sawByte = false
        let quote = UInt8(ascii: "\"")
        let lineFeed = UInt8(ascii: "\n")
        let carriageReturn = UInt8(ascii: "\r")
        let backslash = UInt8(ascii: "\\")
        record.line = line

        func endField(_ record: inout ImportRecord) throws {
            let end = record.bytes.count
            if !isCSV && fieldHasEscape {
                if end - fieldStart == 2, record.bytes[fieldStart + 1] == UInt8(ascii: "N") {
                    record.bytes.removeSubrange(fieldStart..<end)
                    record.values.append(.null)
                    fieldHasEscape = false
                    return
                }
                try unescape(&record, from: fieldStart)
            }
            let fieldEnd = record.bytes.count
            if let bad = record.bytes.withUnsafeBufferPointer({ firstInvalidUTF8(UnsafeBufferPointer(rebasing: $0[fieldStart..<fieldEnd])) }) {
                throw ImportError(file: file, line: record.line, column: record.values.count + 1,
                                  message: "invalid UTF-8 (byte \(bad + 1) of the field)")
            }
            if isCSV && !fieldQuoted && fieldEnd == fieldStart {
                record.values.append(.null)
            } else {
                record.values.append(.text(start: fieldStart, end: fieldEnd))
            }
            fieldStart = fieldEnd
            fieldQuoted = false
            fieldHasEscape = false
        }

        while true {
            if position == chunk.count {
                guard try loadChunk() else {
                    // End of file.
                    if state == .quoted {
                        throw ImportError(file: file, line: record.line, column: record.values.count + 1,
                                          message: "unterminated quoted field")
                    }
                    if !sawByte { return false }
                    try endField(&record)
                    return true
                }
            }
            if skipLineFeed {
                skipLineFeed = false
                if chunk[position] == lineFeed {
                    position += 1
                    continue
                }
            }
            let byte = chunk[position]
            position += 1
            sawByte = true
            switch state {
            case .fieldStart, .unquoted:
                if byte == delimiter {
                    try endField(&record)
                    state = .fieldStart
                } else if byte == lineFeed || byte == carriageReturn {
                    line += 1
                    if byte == carriageReturn { skipLineFeed = true }
                    try endField(&record)
                    return true
                } else if byte == quote && isCSV && state == .fieldStart {
                    fieldQuoted = true
                    state = .quoted
                } else {
                    if byte == backslash && !isCSV { fieldHasEscape = true }
                    // Copy the run of ordinary bytes at once.
                    var end = position
                    while end < chunk.count {
                        let next = chunk[end]
                        if next == delimiter || next == lineFeed || next == carriageReturn || next == backslash { break }
                        end += 1
                    }
                    record.bytes.append(byte)
                    if end > position {
                        record.bytes.append(contentsOf: chunk[position..<end])
                        position = end
                    }
                    state = .unquoted
                }
            case .quoted:
                if byte == quote {
                    state = .quoteInQuoted
                } else {
                    if byte == lineFeed { line += 1 }
                    record.bytes.append(byte)
                }
            case .quoteInQuoted:
                if byte == quote {
                    record.bytes.append(quote)
                    state = .quoted
                } else if byte == delimiter {
                    try endField(&record)
                    state = .fieldStart
                } else if byte == lineFeed || byte == carriageReturn {
                    line += 1
                    if byte == carriageReturn { skipLineFeed = true }
                    try endField(&record)
                    return true
                } else {
                    throw ImportError(file: file, line: record.line, column: record.values.count + 1,
                                      message: "unexpected character after a closing quote")
                }
            }
        }
    }

    /// Replaces TSV escapes (`\t`, `\n`, `\r`, `\\`) in the field's bytes.
    private func unescape(_ record: inout ImportRecord, from start: Int) throws {
        var output: [UInt8] = []
        var index = start
        let bytes = record.bytes
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\\"), index + 1 < bytes.count {
                switch bytes[index + 1] {
                case UInt8(ascii: "t"): output.append(9)
                case UInt8(ascii: "n"): output.append(10)
                case UInt8(ascii: "r"): output.append(13)
                case UInt8(ascii: "\\"): output.append(UInt8(ascii: "\\"))
                default:
                    output.append(byte)
                    output.append(bytes[index + 1])
                }
                index += 2
            } else {
                output.append(byte)
                index += 1
            }
        }
        record.bytes.replaceSubrange(start..<bytes.count, with: output)
    }
}
