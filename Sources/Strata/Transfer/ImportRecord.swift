/// One value of an imported record.
enum ImportValue {
    case null
    /// Text: a byte range of the record's storage.
    case text(start: Int, end: Int)
    case integer(Int64)
    /// A JSON number that is not an Int64, as written: a byte range of the
    /// record's storage. It is stored as a number only when no digit is lost.
    case number(start: Int, end: Int)
}

/// One record of an imported file, reused from record to record so that
/// reading allocates nothing per row once warm.
struct ImportRecord {
    /// The 1-based line where the record starts.
    var line = 0
    /// Text values' bytes.
    var bytes: [UInt8] = []
    /// The values, by source column.
    var values: [ImportValue] = []

    mutating func reset() {
        bytes.removeAll(keepingCapacity: true)
        values.removeAll(keepingCapacity: true)
    }

    /// The text of a value, for messages and inference.
    func text(_ value: ImportValue) -> String? {
        guard case .text(let start, let end) = value else { return nil }
        return String(decoding: bytes[start..<end], as: UTF8.self)
    }
}

/// A file read one record at a time.
protocol ImportRecordSource: AnyObject {
    /// The source's column names: the CSV header, or the JSON keys seen so
    /// far (more may appear).
    var columnNames: [String] { get }
    /// Whether records carry exactly one value per column (CSV, TSV).
    var isPositional: Bool { get }
    /// Bytes read so far, and the file's size.
    var bytesRead: Int { get }
    var totalBytes: Int? { get }
    /// Reads the next record; false at the end of the file.
    func nextRecord(into record: inout ImportRecord) throws -> Bool
}
