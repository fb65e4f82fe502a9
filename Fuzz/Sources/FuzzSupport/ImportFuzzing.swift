import Foundation
import Strata

/// Imports `bytes` as a file of `format` into a fresh in-memory database and
/// checks what a user relies on, whatever the bytes:
///
/// - the import succeeds, or throws an ``ImportError`` (never another error,
///   never a crash) that names a line of the file and prints no control
///   character, and leaves no table behind;
/// - a successful import's row count is the table's;
/// - CSV and TSV imported as text survive an export and a second import
///   unchanged.
///
/// Anything else stops the fuzzer with the input that broke it.
public func fuzzImport(_ bytes: UnsafeRawBufferPointer, format: DataFormat) {
    let input = Data(bytes)
    let url = scratchFile("input." + format.rawValue)
    do {
        try input.write(to: url)
    } catch {
        fatalError("cannot write the fuzzer's scratch file \(url.path): \(error)")
    }
    let db = try! Database()
    var options = ImportOptions()
    options.format = format
    options.mode = .create
    options.isAllText = format == .csv || format == .tsv
    let result: ImportResult
    do {
        result = try db.importFile(url, into: "fuzz", options: options)
    } catch let error as ImportError {
        check(error, input: input)
        require(!(try! db.tableExists("fuzz")), "a failed import left its table: \(error)")
        return
    } catch {
        fatalError("the import threw \(type(of: error)), not an ImportError: \(error)")
    }
    let count = try! Int.fetchOne(db, sql: "SELECT count(*) FROM fuzz")!
    require(count == result.rowCount, "the import reported \(result.rowCount) rows, the table holds \(count)")
    if options.isAllText {
        checkRoundTrip(db, format: format, options: options)
    }
}

/// An import error names a real line and prints only printable text.
private func check(_ error: ImportError, input: Data) {
    // Lines end with LF, CRLF or a lone CR, as the readers count them.
    var lines = 1
    for (index, byte) in input.enumerated() {
        if byte == UInt8(ascii: "\n") || (byte == UInt8(ascii: "\r") && (index + 1 == input.count || input[input.startIndex + index + 1] != UInt8(ascii: "\n"))) {
            lines += 1
        }
    }
    require(error.line >= 0 && error.line <= lines, "line \(error.line) of a file of \(lines) lines: \(error)")
    if let column = error.column { require(column >= 1, "column \(column): \(error)") }
    require(
        !error.description.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) },
        "a control character in the error: \(error.description.debugDescription)")
}

/// A text table exported and imported again holds the same rows.
private func checkRoundTrip(_ db: Database, format: DataFormat, options: ImportOptions) {
    let exported = scratchFile("export." + format.rawValue)
    do {
        _ = try db.export(table: "fuzz", to: exported, options: ExportOptions(format: format))
        try db.importFile(exported, into: "again", options: options)
    } catch {
        fatalError("exporting and importing again failed: \(error)")
    }
    let before = try! Row.fetchAll(db, sql: "SELECT * FROM fuzz")
    let after = try! Row.fetchAll(db, sql: "SELECT * FROM again")
    require(
        before.map(\.databaseValues) == after.map(\.databaseValues) && before.first?.columnNames == after.first?.columnNames,
        "the export did not import back the same: \(before.prefix(3)) became \(after.prefix(3))")
}

/// A file in this process's scratch folder, in memory when /dev/shm exists.
public func scratchFile(_ name: String) -> URL {
    let base = FileManager.default.fileExists(atPath: "/dev/shm") ? "/dev/shm" : NSTemporaryDirectory()
    let folder = URL(fileURLWithPath: base).appendingPathComponent("strata-fuzz-\(getpid())")
    try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder.appendingPathComponent(name)
}

/// Stops the fuzzer with `message` when `condition` is false; unlike
/// `precondition`, the message survives an optimized build.
func require(_ condition: Bool, _ message: @autoclosure () -> String) {
    if !condition { fatalError(message()) }
}
