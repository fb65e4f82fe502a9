import Foundation
import StrataTestHelpers
import Testing

/// The README's and the DocC articles' examples compile as a user pastes
/// them, with the Swift compiler run on each document.
@Suite struct DocumentationCompileTests {
    /// Each document's Swift blocks, in order, pasted into a fresh
    /// `main.swift` that imports only Foundation and Strata, type-check with
    /// the Swift 6 language mode: no helper of the tests, no mix of the sync
    /// and async forms in one context.
    @Test(arguments: ["README.md", "Sources/Strata/Strata.docc/GettingStarted.md", "Sources/Strata/Strata.docc/TypedQueries.md", "Sources/Strata/Strata.docc/Records.md", "Sources/Strata/Strata.docc/ImportingData.md", "Sources/Strata/Strata.docc/ConcurrencyAndObservation.md", "Sources/Strata/Strata.docc/Strata.md"])
    func everyDocumentCompilesPastedIntoAFreshFile(_ document: String) throws {
        let root = packageRoot(from: #filePath)
        let text = try String(contentsOf: root.appendingPathComponent(document), encoding: .utf8)
        let blocks = swiftBlocks(in: text).filter { !$0.hasPrefix("// Package.swift") }
        guard !blocks.isEmpty else { return }
        let program = "import Foundation\nimport Strata\n\n" + blocks.joined(separator: "\n\n") + "\n"
        let folder = URL(fileURLWithPath: try makeTemporaryPath("main.swift")).deletingLastPathComponent()
        let file = folder.appendingPathComponent("main.swift")
        try program.write(to: file, atomically: true, encoding: .utf8)
        let modules = Bundle.module.bundleURL.deletingLastPathComponent().appendingPathComponent("Modules")
        let compiler = try #require(findSwiftCompiler(), "no swiftc on PATH")
        let process = Process()
        process.executableURL = compiler
        process.arguments = [
            "-typecheck", "-swift-version", "6", "-I", modules.path,
            "-I", root.appendingPathComponent("Sources/CSQLite").path, file.path,
        ]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let diagnostics = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(document) does not compile as pasted:\n\(diagnostics)")
    }

    private func findSwiftCompiler() -> URL? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for folder in path.split(separator: ":").map(String.init) + ["/opt/swift/usr/bin", "/usr/bin"] {
            let candidate = URL(fileURLWithPath: folder).appendingPathComponent("swiftc")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }
}
