import Foundation

/// A file format Strata imports and exports.
public enum DataFormat: String, CaseIterable, Sendable {
    /// Comma-separated values, RFC 4180: quoted fields may hold commas,
    /// doubled quotes and line breaks. An empty unquoted field is NULL, a
    /// quoted empty field (`""`) is the empty string.
    case csv
    /// Tab-separated values without quoting. `\t`, `\n`, `\r` and `\\` are
    /// escapes, and `\N` is NULL, as in PostgreSQL's text format.
    case tsv
    /// A JSON array of objects, one object a row.
    case json
    /// Newline-delimited JSON: one object a line.
    case ndjson

    /// The format a file's extension names (`.csv`, `.tsv`, `.tab`, `.json`,
    /// `.ndjson`, `.jsonl`); nil for another extension.
    public init?(fileExtension: String) {
        switch fileExtension.lowercased() {
        case "csv": self = .csv
        case "tsv", "tab": self = .tsv
        case "json": self = .json
        case "ndjson", "jsonl": self = .ndjson
        default: return nil
        }
    }
}

/// Reads a file in chunks, so memory stays flat whatever its size.
final class ChunkedFileReader {
    private let handle: FileHandle
    let chunkSize: Int
    private(set) var bytesRead = 0
    let totalBytes: Int?

    init(url: URL, chunkSize: Int = 1 << 20) throws {
        do {
            handle = try FileHandle(forReadingFrom: url)
        } catch {
            throw ImportError(file: url.path, line: 0, column: nil, message: "cannot open the file: \(error.localizedDescription)")
        }
        self.chunkSize = chunkSize
        totalBytes = (try? FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int) ?? nil
    }

    deinit {
        try? handle.close()
    }

    /// The next chunk; nil at the end of the file.
    func nextChunk() throws -> Data? {
        guard let data = try handle.read(upToCount: chunkSize), !data.isEmpty else { return nil }
        bytesRead += data.count
        return data
    }
}

/// Validates UTF-8 (no overlong forms, no surrogates, nothing above U+10FFFF).
/// Returns the offset of the first invalid byte, or nil when valid.
func firstInvalidUTF8(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
    var index = 0
    let count = bytes.count
    while index < count {
        let byte = bytes[index]
        if byte < 0x80 {
            index += 1
            continue
        }
        let length: Int
        var minimum: UInt32
        var scalar: UInt32
        switch byte {
        case 0xC2...0xDF: length = 2; minimum = 0x80; scalar = UInt32(byte & 0x1F)
        case 0xE0...0xEF: length = 3; minimum = 0x800; scalar = UInt32(byte & 0x0F)
        case 0xF0...0xF4: length = 4; minimum = 0x10000; scalar = UInt32(byte & 0x07)
        default: return index
        }
        guard index + length <= count else { return index }
        for offset in 1..<length {
            let next = bytes[index + offset]
            guard next & 0xC0 == 0x80 else { return index }
            scalar = scalar << 6 | UInt32(next & 0x3F)
        }
        if scalar < minimum || scalar > 0x10FFFF || (0xD800...0xDFFF).contains(scalar) { return index }
        index += length
    }
    return nil
}
