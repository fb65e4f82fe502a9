import Foundation

/// Options for exporting query results; see ``Database/export(sql:arguments:to:options:)-(_,_,URL,_)``.
public struct ExportOptions: Sendable {
    /// The output format.
    public var format: DataFormat
    /// Whether CSV and TSV output starts with a line of column names.
    public var includesHeader = true
    /// The CSV field delimiter (`,` by default).
    public var delimiter: Character?
    /// Called with the number of rows written, every ``progressInterval``
    /// rows and at the end.
    public var progress: (@Sendable (Int) -> Void)?
    /// Rows between progress reports.
    public var progressInterval = 10_000

    /// Options for a format.
    public init(format: DataFormat) {
        self.format = format
    }
}

extension Database {
    /// Writes the rows of a query to a file, replacing it once the export
    /// succeeded (a failed export leaves an existing file untouched).
    ///
    /// Values are written so that importing the file into a table of the same
    /// schema gives the same rows: in CSV, NULL is an empty field and the
    /// empty string is `""`; in TSV, NULL is `\N`; in JSON, NULL is `null`,
    /// numbers are numbers. BLOBs are written as base64 text.
    ///
    /// - Returns: the number of rows written.
    @discardableResult
    public func export(sql: String, arguments: StatementArguments = [], to url: URL, options: ExportOptions) throws -> Int {
        let temporary = url.deletingLastPathComponent()
            .appendingPathComponent(".\(url.lastPathComponent).strata-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: temporary.path, contents: nil) else {
            throw SQLiteError(code: .cantOpen, message: "cannot create \(temporary.path)")
        }
        do {
            let handle = try FileHandle(forWritingTo: temporary)
            let count: Int
            do {
                count = try export(sql: sql, arguments: arguments, to: handle, options: options)
                try handle.close()
            } catch {
                try? handle.close()
                throw error
            }
            // rename(2) replaces the destination atomically.
            guard rename(temporary.path, url.path) == 0 else {
                throw SQLiteError(code: .cantOpen, message: "cannot write \(url.path): \(String(cString: strerror(errno)))")
            }
            return count
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
    }

    /// Writes the rows of a table to a file. See ``export(sql:arguments:to:options:)-(_,_,URL,_)``.
    @discardableResult
    public func export(table: String, to url: URL, options: ExportOptions) throws -> Int {
        try export(sql: "SELECT * FROM \(quoteIdentifier(table))", to: url, options: options)
    }

    /// Writes the rows of a query to a file handle (standard output, a pipe).
    @discardableResult
    public func export(sql: String, arguments: StatementArguments = [], to handle: FileHandle, options: ExportOptions) throws -> Int {
        try export(cachedStatement(sql: sql), arguments: arguments, to: handle, options: options)
    }

    /// Writes the rows of a prepared statement to a file handle.
    @discardableResult
    public func export(_ statement: Statement, arguments: StatementArguments = [], to handle: FileHandle, options: ExportOptions) throws -> Int {
        let writer = ExportWriter(handle: handle, options: options, columns: statement.columnNames)
        let rows = try Row.fetchCursor(statement, arguments: arguments)
        try writer.begin()
        var count = 0
        while let row = try rows.next() {
            try writer.write(row.databaseValues)
            count += 1
            if count % max(options.progressInterval, 1) == 0 { options.progress?(count) }
        }
        try writer.end()
        options.progress?(count)
        return count
    }
}

/// Writes rows in a format, through a 64 KB buffer.
final class ExportWriter {
    private let handle: FileHandle
    private let format: DataFormat
    private let includesHeader: Bool
    private let delimiter: UInt8
    private let columns: [String]
    private var buffer: [UInt8] = []
    private var rowCount = 0
    private var hasFlushed = false

    init(handle: FileHandle, options: ExportOptions, columns: [String]) {
        self.handle = handle
        self.format = options.format
        self.includesHeader = options.includesHeader
        self.delimiter = options.delimiter?.asciiValue ?? (options.format == .tsv ? 9 : UInt8(ascii: ","))
        self.columns = columns
        buffer.reserveCapacity(1 << 16)
    }

    func begin() throws {
        switch format {
        case .csv, .tsv:
            guard includesHeader else { return }
            for (index, column) in columns.enumerated() {
                if index > 0 { buffer.append(delimiter) }
                format == .csv ? appendCSVField(column, quoteEmpty: false) : appendTSVField(column)
            }
            buffer.append(10)
        case .json:
            append("[")
        case .ndjson:
            break
        }
    }

    func write(_ values: [DatabaseValue]) throws {
        switch format {
        case .csv, .tsv:
            for (index, value) in values.enumerated() {
                if index > 0 { buffer.append(delimiter) }
                switch value {
                case .null:
                    if format == .tsv { append("\\N") }
                case .integer(let integer):
                    append(String(integer))
                case .real(let real):
                    append(String(real))
                case .text(let text):
                    format == .csv ? appendCSVField(text, quoteEmpty: true) : appendTSVField(text)
                case .blob(let data):
                    append(data.base64EncodedString())
                }
            }
            buffer.append(10)
        case .json, .ndjson:
            if format == .json { append(rowCount == 0 ? "\n" : ",\n") }
            buffer.append(UInt8(ascii: "{"))
            for (index, value) in values.enumerated() {
                if index > 0 { buffer.append(UInt8(ascii: ",")) }
                appendJSONString(columns[index])
                buffer.append(UInt8(ascii: ":"))
                switch value {
                case .null: append("null")
                case .integer(let integer): append(String(integer))
                case .real(let real): append(real.isFinite ? String(real) : "null")
                case .text(let text): appendJSONString(text)
                case .blob(let data): appendJSONString(data.base64EncodedString())
                }
            }
            buffer.append(UInt8(ascii: "}"))
            if format == .ndjson { buffer.append(10) }
        }
        rowCount += 1
        if buffer.count >= 1 << 16 { try flush() }
    }

    func end() throws {
        if format == .json { append(rowCount == 0 ? "]\n" : "\n]\n") }
        try flush()
    }

    private func flush() throws {
        guard !buffer.isEmpty else { return }
        if !hasFlushed {
            hasFlushed = true
            // Text that begins with U+FEFF would be taken for a byte order
            // mark and dropped on reading: lead with a real one, which
            // readers drop instead (found by FuzzCSV).
            let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]
            if buffer.starts(with: byteOrderMark) { buffer.insert(contentsOf: byteOrderMark, at: 0) }
        }
        try handle.write(contentsOf: buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    private func append(_ text: String) {
        buffer.append(contentsOf: text.utf8)
    }

    /// Quotes a CSV field when it holds the delimiter, a quote or a line
    /// break, or (for values) when it is empty, to tell it from NULL.
    private func appendCSVField(_ text: String, quoteEmpty: Bool) {
        let needsQuotes = (quoteEmpty && text.isEmpty)
            || text.utf8.contains { $0 == delimiter || $0 == 34 || $0 == 10 || $0 == 13 }
        guard needsQuotes else {
            append(text)
            return
        }
        buffer.append(34)
        for byte in text.utf8 {
            if byte == 34 { buffer.append(34) }
            buffer.append(byte)
        }
        buffer.append(34)
    }

    private func appendTSVField(_ text: String) {
        for byte in text.utf8 {
            switch byte {
            case 9: append("\\t")
            case 10: append("\\n")
            case 13: append("\\r")
            case 92: append("\\\\")
            default: buffer.append(byte)
            }
        }
    }

    private func appendJSONString(_ text: String) {
        buffer.append(34)
        for byte in text.utf8 {
            switch byte {
            case 34: append("\\\"")
            case 92: append("\\\\")
            case 10: append("\\n")
            case 13: append("\\r")
            case 9: append("\\t")
            case 0..<32: append(String(format: "\\u%04x", byte))
            default: buffer.append(byte)
            }
        }
        buffer.append(34)
    }
}
