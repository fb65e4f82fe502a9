import Foundation
import StrataSQLite

/// How an import treats the target table.
public enum ImportMode: String, Sendable, CaseIterable {
    /// Create the table from the data; fail if it exists.
    case create
    /// Append to the table, creating it from the data when it is missing.
    case append
    /// Drop the table if it exists, then create it from the data.
    case replace
}

/// How far an import has gone.
public struct ImportProgress: Sendable {
    /// Rows inserted so far.
    public var rowCount: Int
    /// Bytes of the file read so far.
    public var byteCount: Int
    /// The file's size, when known.
    public var totalByteCount: Int?
}

/// Options for ``Database/importFile(_:into:options:)``.
public struct ImportOptions: Sendable {
    /// The file's format; nil takes it from the file's extension.
    public var format: DataFormat?
    /// The CSV field delimiter (`,` by default; `;` is common too).
    public var delimiter: Character?
    /// Whether the first CSV/TSV line names the columns. Default true;
    /// without a header, columns are `column1`, `column2`, …
    public var hasHeader = true
    /// Create, append to, or replace the table. Default `.append`, which
    /// creates the table when it is missing.
    public var mode = ImportMode.append
    /// Declare every created column TEXT instead of inferring INTEGER, REAL
    /// or TEXT from the data.
    public var isAllText = false
    /// Skip records that are malformed or rejected by the table, reporting
    /// each, instead of stopping the import. Default false: the first bad
    /// record stops the import and nothing is imported.
    public var skipsBadRecords = false
    /// Import in one transaction (a savepoint inside an open transaction), so
    /// a failure leaves the database exactly as it was. Default true.
    public var isTransactional = true
    /// How many leading records decide the column types of a created table.
    public var sampleSize = 1000
    /// Called every ``progressInterval`` rows and at the end.
    public var progress: (@Sendable (ImportProgress) -> Void)?
    /// Rows between progress reports.
    public var progressInterval = 10_000

    /// The default options.
    public init() {}
}

/// What an import did.
public struct ImportResult: Sendable {
    /// The table the rows went into.
    public var tableName: String
    /// Rows inserted.
    public var rowCount: Int
    /// Whether the table was created by the import.
    public var createdTable: Bool
    /// Records skipped with ``ImportOptions/skipsBadRecords``, with why.
    public var skippedRecords: [ImportError]
}

extension Database {
    /// Imports a CSV, TSV, JSON or NDJSON file into a table, streaming: the
    /// file is read in chunks and memory stays flat whatever its size.
    ///
    /// ```swift
    /// let result = try db.importFile(URL(fileURLWithPath: "ips.csv"), into: "ips")
    /// print("\(result.rowCount) rows")
    /// ```
    ///
    /// A missing table is created with columns named after the header (CSV,
    /// TSV) or the keys (JSON) and typed INTEGER, REAL or TEXT from the first
    /// ``ImportOptions/sampleSize`` records. An existing table receives the
    /// columns of the same names. One prepared statement serves every row,
    /// inside one transaction by default.
    ///
    /// - Parameters:
    ///   - url: the file.
    ///   - table: the table; by default the file's base name.
    ///   - options: format, mode, error handling, progress.
    /// - Returns: the table, the number of rows, and the skipped records.
    /// - Throws: ``ImportError`` with the file, line and column of a
    ///   malformed record (an unterminated quote, a wrong number of fields,
    ///   invalid UTF-8, invalid JSON) or of a value the table rejects; the
    ///   database is then left as it was.
    @discardableResult
    public func importFile(_ url: URL, into table: String? = nil, options: ImportOptions = ImportOptions()) throws -> ImportResult {
        guard let format = options.format ?? DataFormat(fileExtension: url.pathExtension) else {
            throw ImportError(file: url.path, line: 0, column: nil, message: "unknown file format \"\(url.pathExtension)\"; name it")
        }
        let tableName = table ?? url.deletingPathExtension().lastPathComponent
        var delimiter: UInt8?
        if let character = options.delimiter {
            guard let ascii = character.asciiValue else {
                throw ImportError(file: url.path, line: 0, column: nil, message: "the delimiter must be an ASCII character")
            }
            delimiter = ascii
        }
        // SQLite's limit on a table's columns (2,000 unless the library was
        // built otherwise): the readers refuse a wider file as soon as they
        // see it, instead of building a table SQLite then rejects.
        let maximumColumns = Int(sqlite3_limit(try checkedConnection(), SQLITE_LIMIT_COLUMN, -1))
        let source: any ImportRecordSource
        switch format {
        case .csv, .tsv:
            source = try DelimitedRecordSource(
                url: url, format: format, delimiter: delimiter, hasHeader: options.hasHeader, maximumColumns: maximumColumns)
        case .json, .ndjson:
            source = try JSONRecordSource(url: url, format: format, maximumColumns: maximumColumns)
        }
        var importer = Importer(db: self, source: source, file: url.path, tableName: tableName, options: options)
        if options.isTransactional {
            return try savepoint { try importer.run() }
        }
        return try importer.run()
    }

    /// Imports a CSV file into a table; see ``importFile(_:into:options:)``.
    @discardableResult
    public func importCSV(from url: URL, into table: String, options: ImportOptions = ImportOptions()) throws -> ImportResult {
        var options = options
        options.format = .csv
        return try importFile(url, into: table, options: options)
    }
}

/// One import: creates or maps the table, then inserts every record with one
/// prepared statement.
private struct Importer {
    let db: Database
    let source: any ImportRecordSource
    let file: String
    let tableName: String
    let options: ImportOptions
    var skipped: [ImportError] = []
    var rowCount = 0
    /// For each table column of the INSERT, the source column feeding it.
    var sourceIndexes: [Int] = []
    var insertColumns: [String] = []
    /// Each insert column's affinity: number-like text bound to a column
    /// that converts text is checked to keep every digit, and a canonical
    /// integer is bound as an integer, sparing SQLite the conversion.
    var affinities: [ColumnAffinity] = []
    /// Whether each insert column's affinity turns number-like text into a
    /// number (INTEGER, REAL, NUMERIC), looked up once per value.
    var convertsText: [Bool] = []
    /// The columns of a table this import created, by source column: JSON
    /// keys then map to them exactly, even keys that differ only in case.
    var createdNames: [String]?
    /// The prepared INSERT, released when the import ends.
    var insertStatement: Statement?

    init(db: Database, source: any ImportRecordSource, file: String, tableName: String, options: ImportOptions) {
        self.db = db
        self.source = source
        self.file = file
        self.tableName = tableName
        self.options = options
    }

    mutating func run() throws -> ImportResult {
        let exists = try db.tableExists(tableName)
        var createdTable = false
        switch options.mode {
        case .create where exists:
            throw ImportError(file: file, line: 0, column: nil, message: "table \"\(tableName)\" exists; use the append or replace mode")
        case .replace where exists:
            try db.execute(sql: "DROP TABLE \(quoteIdentifier(tableName))")
        default:
            break
        }

        // Sample the leading records: they decide the columns and types of a
        // new table.
        var sample: [ImportRecord] = []
        var record = ImportRecord()
        let mustCreate = !exists || options.mode == .replace
        while sample.count < (mustCreate ? max(options.sampleSize, 1) : 1) {
            do {
                guard try source.nextRecord(into: &record) else { break }
            } catch let error as ImportError where options.skipsBadRecords && error.line > 0 {
                skipped.append(error)
                continue
            }
            sample.append(record)
        }
        if mustCreate {
            createdNames = try createTable(from: sample)
            createdTable = true
        }
        try prepareInsert()
        defer { insertStatement = nil }

        for sampled in sample {
            try insert(sampled)
        }
        while true {
            do {
                guard try source.nextRecord(into: &record) else { break }
            } catch let error as ImportError where options.skipsBadRecords && error.line > 0 {
                skipped.append(error)
                continue
            }
            try insert(record)
        }
        options.progress?(ImportProgress(rowCount: rowCount, byteCount: source.bytesRead, totalByteCount: source.totalBytes))
        return ImportResult(tableName: tableName, rowCount: rowCount, createdTable: createdTable, skippedRecords: skipped)
    }

    /// Creates the table; returns its column names, in the source's order.
    private func createTable(from sample: [ImportRecord]) throws -> [String] {
        guard !source.columnNames.isEmpty else {
            throw ImportError(file: file, line: 0, column: nil, message: "the file has no columns")
        }
        let names = uniqueColumnNames(source.columnNames)
        let columns = names.enumerated().map { index, name in
            quoteIdentifier(name) + " " + (options.isAllText ? "TEXT" : inferType(column: index, in: sample))
        }
        try db.execute(sql: "CREATE TABLE \(quoteIdentifier(tableName)) (\(columns.joined(separator: ", ")))")
        return names
    }

    /// The names made unique as SQLite compares them (ignoring ASCII case):
    /// `a`, `A`, `a` become `a`, `A_2`, `a_3`. Linear: each name's next
    /// suffix is remembered, so a file of 100,000 identical names costs no
    /// more than 100,000 distinct ones.
    private func uniqueColumnNames(_ names: [String]) -> [String] {
        var taken: Set<String> = []
        var nextSuffix: [String: Int] = [:]
        return names.map { name in
            let key = name.lowercased()
            var unique = name
            var uniqueKey = key
            var suffix = nextSuffix[key] ?? 2
            while taken.contains(uniqueKey) {
                unique = "\(name)_\(suffix)"
                uniqueKey = unique.lowercased()
                suffix += 1
            }
            nextSuffix[key] = suffix
            taken.insert(uniqueKey)
            return unique
        }
    }

    /// INTEGER, REAL or TEXT: the type that stores every sampled value of
    /// the column without changing it. Numbers written in a form a number
    /// column would not keep (`007`, `+1`, an integer beyond 64 bits, more
    /// digits than a Double holds) make the column TEXT.
    private func inferType(column: Int, in sample: [ImportRecord]) -> String {
        var sawInteger = false
        var sawReal = false
        var sawLargeInteger = false  // beyond 2^53: a REAL column would round it
        for record in sample where column < record.values.count {
            var bytes: ArraySlice<UInt8>
            switch record.values[column] {
            case .null:
                continue
            case .integer(let value):
                sawInteger = true
                if value.magnitude > 1 << 53 { sawLargeInteger = true }
                continue
            case .text(let start, let end), .number(let start, let end):
                bytes = record.bytes[start..<end]
            }
            switch numberKind(bytes) {
            case .integer(let value):
                sawInteger = true
                if value.magnitude > 1 << 53 { sawLargeInteger = true }
            case .real:
                sawReal = true
            case nil:
                return "TEXT"
            }
        }
        if sawReal { return sawLargeInteger ? "TEXT" : "REAL" }
        if sawInteger { return "INTEGER" }
        return "TEXT"
    }

    private enum NumberKind { case integer(Int64), real }

    /// Whether text is a number written canonically (`-12`, `0`, `3.25`,
    /// `1e-5`) that a number column stores exactly. `007`, `+1`, `1.` and
    /// ` 1` stay text, so no digits are lost.
    private func numberKind(_ bytes: ArraySlice<UInt8>) -> NumberKind? {
        var index = bytes.startIndex
        let end = bytes.endIndex
        func digits() -> Int {
            let start = index
            while index < end, bytes[index] >= 48, bytes[index] <= 57 { index += 1 }
            return index - start
        }
        if index < end, bytes[index] == UInt8(ascii: "-") { index += 1 }
        let integerStart = index
        let integerDigits = digits()
        guard integerDigits > 0 else { return nil }
        if integerDigits > 1 && bytes[integerStart] == 48 { return nil }
        if index < end, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { return nil }
        }
        if index < end, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < end, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard digits() > 0 else { return nil }
        }
        guard index == end else { return nil }
        let number = bytes.withUnsafeBufferPointer { NumericText($0) }
        guard let number else { return nil }
        if number.isIntegerForm {
            // Beyond 64 bits: no number column keeps every digit.
            return number.integer.map { .integer($0) }
        }
        return number.exactDouble == nil ? nil : .real
    }

    private mutating func prepareInsert() throws {
        let tableColumns = try db.columns(in: tableName).filter { !$0.isHidden }
        var byName: [String: String] = [:]
        for column in tableColumns { byName[column.name.lowercased()] = byName[column.name.lowercased()] ?? column.name }
        insertColumns = []
        sourceIndexes = []
        if source.isPositional && source.columnNames.isEmpty {
            throw ImportError(file: file, line: 0, column: nil, message: "the file has no columns")
        }
        if let createdNames, source.isPositional {
            // A table made from this file: its columns are the file's, in order.
            insertColumns = createdNames
            sourceIndexes = Array(createdNames.indices)
        } else if source.isPositional {
            var fedBy: [String: String] = [:]
            for (index, name) in source.columnNames.enumerated() {
                guard let column = byName[name.lowercased()] else {
                    throw ImportError(file: file, line: 1, column: index + 1, columnName: name,
                                      message: "the table \"\(tableName)\" has no column \"\(name)\"")
                }
                if let other = fedBy[column.lowercased()] {
                    throw ImportError(
                        file: file, line: 1, column: index + 1, columnName: name,
                        message: "the fields \"\(other)\" and \"\(name)\" both name the column \"\(column)\" (SQLite's column names ignore case); rename one")
                }
                fedBy[column.lowercased()] = name
                insertColumns.append(column)
                sourceIndexes.append(index)
            }
        } else {
            // JSON: every column of the table; keys are matched as they come.
            insertColumns = tableColumns.map(\.name)
        }
        let declaredTypes = Dictionary(tableColumns.map { ($0.name.lowercased(), $0.declaredType) }, uniquingKeysWith: { first, _ in first })
        affinities = insertColumns.map { ColumnAffinity(declaredType: declaredTypes[$0.lowercased()] ?? "") }
        convertsText = affinities.map(\.convertsText)
        let sql = parameterizedInsert(into: tableName, columns: insertColumns)
        let prepared = try db.makeStatement(sql: sql)
        insertStatement = prepared
    }

    /// For JSON sources: the source column feeding each insert column,
    /// extended with the keys that appeared since the last record (each key
    /// is mapped once: linear in the number of keys).
    private mutating func refreshJSONMapping(for record: ImportRecord) throws {
        let names = source.columnNames
        if mappedKeyCount < 0 {
            sourceIndexes = Array(repeating: -1, count: insertColumns.count)
            mappedKeyCount = 0
            for (index, column) in insertColumns.enumerated() {
                if exactPositions[column] == nil { exactPositions[column] = index }
                if caseFoldedPositions[column.lowercased()] == nil { caseFoldedPositions[column.lowercased()] = index }
            }
        }
        var sources = sourceIndexes
        for sourceIndex in mappedKeyCount..<names.count {
            let name = names[sourceIndex]
            // A key of the file the table was made from feeds the column made
            // for it; any other key the column of its name, in any case.
            let column: Int?
            if let createdNames, sourceIndex < createdNames.count {
                column = exactPositions[createdNames[sourceIndex]]
            } else {
                column = exactPositions[name] ?? caseFoldedPositions[name.lowercased()]
            }
            guard let column else {
                throw ImportError(file: file, line: record.line, column: nil, columnName: name,
                                  message: "the table \"\(tableName)\" has no column \"\(name)\"")
            }
            if sources[column] >= 0 {
                throw ImportError(
                    file: file, line: record.line, column: nil, columnName: name,
                    message: "the keys \"\(names[sources[column]])\" and \"\(name)\" both name the column \"\(insertColumns[column])\" (SQLite's column names ignore case); one of the values would be lost")
            }
            sources[column] = sourceIndex
        }
        sourceIndexes = sources
        mappedKeyCount = names.count
    }

    /// The keys of the source mapped so far; -1 before the first record.
    private var mappedKeyCount = -1
    /// Each insert column's index by its exact name, and by its name
    /// lower-cased (the first column of that name).
    private var exactPositions: [String: Int] = [:]
    private var caseFoldedPositions: [String: Int] = [:]

    private mutating func insert(_ record: ImportRecord) throws {
        do {
            try insertOrThrow(record)
        } catch let error as ImportError where options.skipsBadRecords {
            skipped.append(error)
        }
    }

    private mutating func insertOrThrow(_ record: ImportRecord) throws {
        if source.isPositional {
            guard record.values.count == source.columnNames.count else {
                throw ImportError(
                    file: file, line: record.line, column: min(record.values.count, source.columnNames.count) + 1,
                    message: "expected \(source.columnNames.count) fields, found \(record.values.count)")
            }
        } else if mappedKeyCount != source.columnNames.count {
            try refreshJSONMapping(for: record)
        }
        guard let prepared = insertStatement else { return }
        let statement = prepared.sqliteStatement
        try prepared.prepareForBinding()
        let bindCode = try record.bytes.withUnsafeBufferPointer { bytes -> Int32 in
            for (parameter, sourceIndex) in sourceIndexes.enumerated() {
                let value: ImportValue = sourceIndex >= 0 && sourceIndex < record.values.count ? record.values[sourceIndex] : .null
                let index = Int32(parameter + 1)
                let code: Int32
                switch value {
                case .null:
                    code = sqlite3_bind_null(statement, index)
                case .text(let start, let end), .number(let start, let end):
                    let base = bytes.baseAddress! + start
                    if !convertsText[parameter] {
                        code = bindText(base, count: end - start, statement, index)
                    } else if let integer = canonicalInteger(base, count: end - start),
                        integer.magnitude <= 1 << 53 || affinities[parameter] != .real
                    {
                        // The common case, bound as the integer SQLite would make of it.
                        code = sqlite3_bind_int64(statement, index, integer)
                    } else {
                        code = try bindNumberLike(
                            UnsafeBufferPointer(start: base, count: end - start), affinity: affinities[parameter],
                            to: statement, at: index, parameter: parameter, line: record.line)
                    }
                case .integer(let integer):
                    if options.isAllText {
                        code = bindNumberText(String(integer), statement, index)
                    } else {
                        if affinities[parameter] == .real && Int64(exactly: Double(integer)) != integer {
                            throw inexact(String(integer), storedAs: "the REAL \(Double(integer))", parameter: parameter, line: record.line)
                        }
                        code = sqlite3_bind_int64(statement, index, integer)
                    }
                }
                if code != SQLITE_OK { return code }
            }
            return SQLITE_OK
        }
        do {
            guard bindCode == SQLITE_OK else {
                prepared.resetQuietly()
                throw SQLiteError.fromConnection(db.sqliteConnection, code: bindCode, sql: prepared.sql)
            }
            // The statement's own run: an error carries the SQL, and the
            // statement is reset for the next record.
            try prepared.run()
        } catch let error as SQLiteError {
            // Bytes, not Characters: a name may begin with a combining mark.
            let columnName = insertColumns.first { column in
                error.message.map { $0.utf8.reversed().starts(with: ".\(column)".utf8.reversed()) } == true
            }
            // A field's position in its line, for CSV and TSV; a JSON
            // object's keys have no fixed position.
            let column = columnName.flatMap { name in insertColumns.firstIndex(of: name) }
                .flatMap { source.isPositional && sourceIndexes[$0] >= 0 ? sourceIndexes[$0] + 1 : nil }
            throw ImportError(
                file: file, line: record.line, column: column, columnName: columnName,
                message: "the table rejected the record: \(error.message ?? "SQLite error \(error.code.rawValue)")",
                underlyingError: error)
        }
        rowCount += 1
        if rowCount % max(options.progressInterval, 1) == 0 {
            options.progress?(ImportProgress(rowCount: rowCount, byteCount: source.bytesRead, totalByteCount: source.totalBytes))
        }
    }
}

extension Importer {
    /// Binds text to a column that turns number-like text into a number,
    /// after checking that the number keeps every digit written.
    @inline(never)
    fileprivate func bindNumberLike(
        _ text: UnsafeBufferPointer<UInt8>, affinity: ColumnAffinity, to statement: OpaquePointer, at index: Int32,
        parameter: Int, line: Int
    ) throws -> Int32 {
        guard let base = text.baseAddress else { return bindText(text, statement, index) }
        // The common decimal (`-12.5`, `3.25e-3`): a Double keeps it, and
        // SQLite converts it as it would.
        if isShortDecimal(base, count: text.count) {
            return bindText(text, statement, index)
        }
        // Not a number to SQLite: stored as the text it is.
        guard let number = NumericText(text) else { return bindText(text, statement, index) }
        let (isExact, storedAs) = number.storedExactly(in: affinity)
        guard isExact else {
            throw inexact(String(decoding: text, as: UTF8.self), storedAs: storedAs, parameter: parameter, line: line)
        }
        if let integer = number.integer {
            return affinity == .real ? sqlite3_bind_double(statement, index, Double(integer)) : sqlite3_bind_int64(statement, index, integer)
        }
        if number.digits.count <= 15 {
            return bindText(text, statement, index)
        }
        return sqlite3_bind_double(statement, index, number.exactDouble ?? .nan)
    }

    /// The error for a value a column would change.
    fileprivate func inexact(_ value: String, storedAs: String, parameter: Int, line: Int) -> ImportError {
        let sourceIndex = sourceIndexes[parameter]
        let shown = value.count > 60 ? String(value.prefix(60)) + "…" : value
        return ImportError(
            file: file, line: line, column: source.isPositional && sourceIndex >= 0 ? sourceIndex + 1 : nil,
            columnName: insertColumns[parameter],
            message: "the value \(shown) would be stored as \(storedAs), losing digits; keep it exactly as text: import with --text (ImportOptions.isAllText) into a new table, or into a TEXT column")
    }
}

/// Whether text is a plain decimal with a point or an exponent, at most 15
/// significant digits and a two-digit exponent: a number any Double keeps
/// exactly as written. Checked without allocating, for the import's hot path.
private func isShortDecimal(_ text: UnsafePointer<UInt8>, count: Int) -> Bool {
    var index = 0
    if index < count, text[index] == UInt8(ascii: "-") { index += 1 }
    var significant = 0
    var sawDigit = false
    var sawPoint = false
    var leadingZeros = true
    while index < count {
        let byte = text[index]
        if byte >= 48 && byte <= 57 {
            sawDigit = true
            if byte != 48 { leadingZeros = false }
            if !leadingZeros { significant += 1 }
        } else if byte == UInt8(ascii: "."), !sawPoint {
            sawPoint = true
        } else {
            break
        }
        index += 1
    }
    guard sawDigit, significant <= 15 else { return false }
    var sawExponent = false
    if index < count, text[index] == UInt8(ascii: "e") || text[index] == UInt8(ascii: "E") {
        index += 1
        if index < count, text[index] == UInt8(ascii: "-") || text[index] == UInt8(ascii: "+") { index += 1 }
        let start = index
        while index < count, text[index] >= 48, text[index] <= 57 { index += 1 }
        guard index > start, index - start <= 2 else { return false }
        sawExponent = true
    }
    // Trailing zeros after the point count as significant above; that only
    // sends more values to the exact check.
    return index == count && (sawPoint || sawExponent)
}

/// Binds text, SQLITE_STATIC: the bytes stay put until the step.
private func bindText(_ text: UnsafeBufferPointer<UInt8>, _ statement: OpaquePointer, _ index: Int32) -> Int32 {
    guard let base = text.baseAddress else { return sqlite3_bind_text(statement, index, "", 0, nil) }
    return bindText(base, count: text.count, statement, index)
}

@inline(__always)
private func bindText(_ base: UnsafePointer<UInt8>, count: Int, _ statement: OpaquePointer, _ index: Int32) -> Int32 {
    base.withMemoryRebound(to: CChar.self, capacity: max(count, 1)) {
        sqlite3_bind_text(statement, index, $0, Int32(count), nil)
    }
}

/// The value of text that is an integer written canonically (`-12`, `0`,
/// no leading zeros or signs, at most 18 digits); nil otherwise.
private func canonicalInteger(_ text: UnsafePointer<UInt8>, count: Int) -> Int64? {
    var index = 0
    var negative = false
    if count > 0 && text[0] == UInt8(ascii: "-") {
        negative = true
        index = 1
    }
    let digits = count - index
    guard digits > 0 && digits <= 18 else { return nil }
    if digits > 1 && text[index] == UInt8(ascii: "0") { return nil }
    var value: Int64 = 0
    while index < count {
        let digit = text[index] &- 48
        guard digit < 10 else { return nil }
        value = value * 10 + Int64(digit)
        index += 1
    }
    if negative && value == 0 { return nil }  // "-0" stays text-converted by SQLite
    return negative ? -value : value
}

private func bindNumberText(_ text: String, _ statement: OpaquePointer, _ index: Int32) -> Int32 {
    sqlite3_bind_text(statement, index, text, -1, sqliteTransient)
}
