import ArgumentParser
import Foundation
import Strata

/// The repository's `Examples/Data` folder, where the examples' shipped data
/// lives (found from this source file's location, so `swift run` works from
/// any directory of the checkout).
package func exampleDataURL(_ name: String) -> URL {
    URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()
        .deletingLastPathComponent()
        .appendingPathComponent("Data")
        .appendingPathComponent(name)
}

/// Whether standard error is a terminal, where progress lines belong.
package var standardErrorIsTerminal: Bool { isatty(STDERR_FILENO) == 1 }

/// Writes one line to standard error.
package func printError(_ message: String) {
    FileHandle.standardError.write(Data((message.replacingOccurrences(of: "\n", with: " ") + "\n").utf8))
}

/// Runs an example command's work; an error becomes one line on standard
/// error and exit code 1.
package func reportingErrors<T>(_ name: String, _ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch let error as ExitCode {
        throw error
    } catch {
        printError("\(name): \(error)")
        throw ExitCode.failure
    }
}

/// Opens the example's database file, creating it when missing.
package func openDatabase(_ path: String) throws -> DatabaseQueue {
    try DatabaseQueue(path: path)
}

/// Reads a text file line by line, in chunks, without holding it in memory.
package final class LineReader {
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    private var start = 0
    private var isAtEnd = false
    /// The number of the line last returned, from 1.
    package private(set) var lineNumber = 0

    package init(url: URL) throws {
        handle = try FileHandle(forReadingFrom: url)
    }

    deinit {
        try? handle.close()
    }

    /// The next line without its line break; nil at the end.
    package func nextLine() throws -> String? {
        while true {
            if let newline = buffer[start...].firstIndex(of: 10) {
                var end = newline
                if end > start, buffer[end - 1] == 13 { end -= 1 }
                let line = String(decoding: buffer[start..<end], as: UTF8.self)
                start = newline + 1
                lineNumber += 1
                return line
            }
            if isAtEnd {
                guard start < buffer.count else { return nil }
                let line = String(decoding: buffer[start...], as: UTF8.self)
                start = buffer.count
                lineNumber += 1
                return line
            }
            buffer.removeSubrange(0..<start)
            start = 0
            if let data = try handle.read(upToCount: 1 << 20), !data.isEmpty {
                buffer.append(contentsOf: data)
            } else {
                isAtEnd = true
            }
        }
    }
}
