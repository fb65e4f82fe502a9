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
    /// The current chunk, in a buffer allocated once: reading it byte by
    /// byte through a pointer keeps the parser's inner loop tight.
    private let chunk: UnsafeMutableBufferPointer<UInt8>
    private var chunkCount = 0
    private var position = 0
    private var line = 1
    private var skipLineFeed = false
    private var isAtFileStart = true
    private(set) var columnNames: [String] = []
    let isPositional = true

    var bytesRead: Int { reader.bytesRead }
    var totalBytes: Int? { reader.totalBytes }

    init(url: URL, format: DataFormat, delimiter: UInt8?, hasHeader: Bool, maximumColumns: Int) throws {
        reader = try ChunkedFileReader(url: url)
        chunk = .allocate(capacity: reader.chunkSize)
        file = url.path
        isCSV = format == .csv
        self.delimiter = delimiter ?? (format == .csv ? UInt8(ascii: ",") : UInt8(ascii: "\t"))
        var header = ImportRecord()
        if try nextRecord(into: &header) {
            guard header.values.count <= maximumColumns else {
                throw ImportError(
                    file: file, line: header.line, column: maximumColumns + 1,
                    message: "the \(hasHeader ? "header" : "first line") has \(header.values.count) fields, more than the \(maximumColumns) columns SQLite allows in a table (SQLITE_LIMIT_COLUMN); import fewer columns")
            }
            if hasHeader {
                columnNames = try header.values.enumerated().map { index, value in
                    let name = header.text(value) ?? ""
                    if name.utf8.contains(0) {
                        throw ImportError(
                            file: file, line: header.line, column: index + 1,
                            message: "the header's field holds a NUL character, which SQLite's column names cannot hold")
                    }
                    return name.isEmpty ? "column\(index + 1)" : name
                }
            } else {
                columnNames = (1...header.values.count).map { "column\($0)" }
                pending = header
            }
        }
    }

    deinit {
        chunk.deallocate()
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
        chunkCount = data.copyBytes(to: chunk)
        position = 0
        if isAtFileStart {
            isAtFileStart = false
            if chunkCount >= 3, chunk[0] == 0xEF, chunk[1] == 0xBB, chunk[2] == 0xBF { position = 3 }
        }
        return true
    }

    /// The state of the field being read.
    private struct FieldState {
        var start = 0
        var isQuoted = false
        var hasEscape = false
    }

    /// Ends the current field: unescapes (TSV), validates UTF-8, and appends
    /// its value. A method with inout arguments rather than a closure, so the
    /// compiler checks exclusive access statically, not per field.
    private func endField(_ record: inout ImportRecord, _ field: inout FieldState) throws {
        let end = record.bytes.count
        if !isCSV && field.hasEscape {
            if end - field.start == 2, record.bytes[field.start + 1] == UInt8(ascii: "N") {
                record.bytes.removeSubrange(field.start..<end)
                record.values.append(.null)
                field = FieldState(start: field.start)
                return
            }
            try unescape(&record, from: field.start)
        }
        let fieldEnd = record.bytes.count
        let start = field.start
        if let bad = record.bytes.withUnsafeBufferPointer({ firstInvalidUTF8(UnsafeBufferPointer(rebasing: $0[start..<fieldEnd])) }) {
            throw ImportError(file: file, line: record.line, column: record.values.count + 1,
                              message: "invalid UTF-8 (byte \(bad + 1) of the field)")
        }
        if isCSV && !field.isQuoted && fieldEnd == start {
            record.values.append(.null)
        } else {
            record.values.append(.text(start: start, end: fieldEnd))
        }
        field = FieldState(start: fieldEnd)
    }

    private func readRecord(into record: inout ImportRecord) throws -> Bool {
        var state = State.fieldStart
        var field = FieldState()
        var sawByte = false
        let quote = UInt8(ascii: "\"")
        let lineFeed = UInt8(ascii: "\n")
        let carriageReturn = UInt8(ascii: "\r")
        let backslash = UInt8(ascii: "\\")
        let delimiter = self.delimiter
        let isCSV = self.isCSV
        let base = chunk.baseAddress!
        // The cursor lives in locals while parsing, and is stored back on exit.
        var position = self.position
        var count = chunkCount
        var line = self.line
        defer {
            self.position = position
            self.line = line
        }
        record.line = line

        while true {
            if position == count {
                self.position = position
                let loaded = try loadChunk()
                position = self.position
                count = chunkCount
                guard loaded else {
                    // End of file.
                    if state == .quoted {
                        throw ImportError(file: file, line: record.line, column: record.values.count + 1,
                                          message: "unterminated quoted field")
                    }
                    if !sawByte { return false }
                    try endField(&record, &field)
                    return true
                }
                continue
            }
            if skipLineFeed {
                skipLineFeed = false
                if base[position] == lineFeed {
                    position += 1
                    continue
                }
            }
            let byte = base[position]
            position += 1
            sawByte = true
            if state == .quoteInQuoted && byte != quote {
                // A closing quote: only a delimiter or a line end may follow,
                // handled below as after any field.
                guard byte == delimiter || byte == lineFeed || byte == carriageReturn else {
                    throw ImportError(file: file, line: record.line, column: record.values.count + 1,
                                      message: "unexpected character after a closing quote")
                }
                state = .unquoted
            }
            switch state {
            case .fieldStart, .unquoted:
                if byte == delimiter {
                    try endField(&record, &field)
                    state = .fieldStart
                } else if byte == lineFeed || byte == carriageReturn {
                    line += 1
                    if byte == carriageReturn { skipLineFeed = true }
                    try endField(&record, &field)
                    return true
                } else if byte == quote && isCSV && state == .fieldStart {
                    field.isQuoted = true
                    state = .quoted
                } else {
                    if byte == backslash && !isCSV { field.hasEscape = true }
                    // Copy the run of ordinary bytes at once.
                    var end = position
                    while end < count {
                        let next = base[end]
                        if next == delimiter || next == lineFeed || next == carriageReturn || next == backslash { break }
                        end += 1
                    }
                    record.bytes.append(byte)
                    if end > position {
                        record.bytes.append(contentsOf: UnsafeBufferPointer(start: base + position, count: end - position))
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
                // A doubled quote inside a quoted field.
                record.bytes.append(quote)
                state = .quoted
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
