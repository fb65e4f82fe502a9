import Foundation

// Helpers shared by the unit tests and the end-to-end tests, written once.

/// The folder that holds this test process's temporary folders. It is
/// removed when the process exits, so that a test run leaves nothing in
/// the system's temporary directory (a full run writes about a gigabyte).
private let temporaryRoot: URL = {
    let root = FileManager.default.temporaryDirectory
        .appendingPathComponent("strata-tests-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString)", isDirectory: true)
    atexit { try? FileManager.default.removeItem(at: temporaryRoot) }
    return root
}()

/// A path in a new temporary folder, for a database file that does not exist yet.
public func makeTemporaryPath(_ name: String = "test.sqlite") throws -> String {
    let folder = temporaryRoot.appendingPathComponent(UUID().uuidString, isDirectory: true)
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder.appendingPathComponent(name).path
}

/// Writes `text` to a new temporary file named `name`.
public func makeFile(_ name: String, _ text: String) throws -> URL {
    try makeFile(name, Data(text.utf8))
}

/// Writes bytes to a new temporary file named `name`.
public func makeFile(_ name: String, _ data: Data) throws -> URL {
    let url = URL(fileURLWithPath: try makeTemporaryPath(name))
    try data.write(to: url)
    return url
}

/// Values that arrive from other tasks or threads, and a wait for them.
// @unchecked: `items` is only touched under `lock`.
public final class ValueLog<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [Value] = []

    public init() {}

    /// The values so far.
    public var values: [Value] { lock.withLock { items } }

    /// Adds a value.
    public func append(_ value: Value) { lock.withLock { items.append(value) } }

    /// Waits until `count` values have arrived: up to a minute, a limit a
    /// loaded machine does not reach (the callers then check the values).
    public func wait(for count: Int) async throws {
        for _ in 0..<6000 where values.count < count {
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}

/// What a finished process printed and returned.
public struct ProcessOutput: Sendable {
    public var status: Int32
    public var standardOutput: String
    public var standardError: String
}

/// Runs an executable with arguments and, optionally, standard input and a
/// working directory, and waits for it to exit.
public func runExecutable(_ url: URL, _ arguments: [String], input: String? = nil, in folder: URL? = nil) throws -> ProcessOutput {
    let process = Process()
    process.executableURL = url
    process.arguments = arguments
    process.currentDirectoryURL = folder
    let output = Pipe()
    let error = Pipe()
    let standardInput = Pipe()
    process.standardOutput = output
    process.standardError = error
    process.standardInput = standardInput
    try process.run()
    if let input { standardInput.fileHandleForWriting.write(Data(input.utf8)) }
    try standardInput.fileHandleForWriting.close()
    // Standard error is read meanwhile, so a child that writes much to it
    // never blocks on a full pipe while standard output is read.
    let errorData = ValueLog<Data>()
    let errorRead = DispatchSemaphore(value: 0)
    DispatchQueue.global().async {
        errorData.append(error.fileHandleForReading.readDataToEndOfFile())
        errorRead.signal()
    }
    let outputData = output.fileHandleForReading.readDataToEndOfFile()
    errorRead.wait()
    process.waitUntilExit()
    return ProcessOutput(
        status: process.terminationStatus,
        standardOutput: String(decoding: outputData, as: UTF8.self),
        standardError: String(decoding: errorData.values.first ?? Data(), as: UTF8.self))
}

/// ``runExecutable(_:_:input:in:)`` from an async test, on a thread of its
/// own: waiting for the process there never holds one of Swift
/// concurrency's few threads, which a server in the test process (the
/// process's peer) needs to answer it.
public func runExecutable(_ url: URL, _ arguments: [String], input: String? = nil, in folder: URL? = nil) async throws -> ProcessOutput {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
            continuation.resume(with: Result { try runExecutable(url, arguments, input: input, in: folder) as ProcessOutput })
        }
    }
}

/// Waits, on a thread of its own, for `process` to exit (see the async
/// ``runExecutable(_:_:input:in:)``).
public func waitUntilExit(_ process: Process) async {
    await withCheckedContinuation { continuation in
        Thread.detachNewThread {
            process.waitUntilExit()
            continuation.resume()
        }
    }
}

/// The Swift code blocks of a Markdown document, in order.
public func swiftBlocks(in markdown: String) -> [String] {
    var blocks: [String] = []
    var current: [Substring]?
    for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
        if current == nil, line.trimmingCharacters(in: .whitespaces) == "```swift" {
            current = []
        } else if current != nil, line.trimmingCharacters(in: .whitespaces) == "```" {
            blocks.append(current!.joined(separator: "\n"))
            current = nil
        } else {
            current?.append(line)
        }
    }
    return blocks
}

/// The package's root folder, from a source file's `#filePath`
/// (`Tests/<target>/<file>.swift`).
public func packageRoot(from filePath: String) -> URL {
    URL(fileURLWithPath: filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
}

/// A small deterministic generator, so a failure can be replayed.
public struct SplitMix64: RandomNumberGenerator {
    public var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Waits until `condition` holds: up to two minutes, a limit a loaded
/// machine does not reach; answers whether it held.
public func eventually(_ condition: () async throws -> Bool) async rethrows -> Bool {
    for _ in 0..<1200 {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(100))
    }
    return try await condition()
}
