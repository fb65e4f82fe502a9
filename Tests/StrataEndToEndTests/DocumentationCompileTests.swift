import Foundation
import StrataTestHelpers
import Testing

/// The README's and the DocC articles' examples compile as a user pastes
/// them, with the Swift compiler run on each document.
@Suite struct DocumentationCompileTests {
    /// Each document's Swift blocks, in order, pasted into a fresh
    /// `main.swift` that imports only Foundation and Strata (and
    /// StrataMacros, with its compiler plugin, where `@Record` appears), type-check with
    /// the Swift 6 language mode: no helper of the tests, no mix of the sync
    /// and async forms in one context.
    @Test(arguments: ["README.md", "Sources/Strata/Strata.docc/GettingStarted.md", "Sources/Strata/Strata.docc/TypedQueries.md", "Sources/Strata/Strata.docc/Records.md", "Sources/Strata/Strata.docc/ImportingData.md", "Sources/Strata/Strata.docc/ConcurrencyAndObservation.md", "Sources/Strata/Strata.docc/Strata.md"])
    func everyDocumentCompilesPastedIntoAFreshFile(_ document: String) throws {
        let text = try String(
            contentsOf: packageRoot(from: #filePath).appendingPathComponent(document), encoding: .utf8)
        let blocks = swiftBlocks(in: text).filter { !$0.hasPrefix("// Package.swift") }
        guard !blocks.isEmpty else { return }
        let usesMacros = blocks.contains { $0.contains("import StrataMacros") }
        // The sanitizer runs build without the macro (Package.swift says
        // why); the plain `swift test` run checks these documents.
        if usesMacros && ProcessInfo.processInfo.environment["STRATA_WITHOUT_MACROS"] != nil { return }
        let program = "import Foundation\nimport Strata\n\n" + blocks.joined(separator: "\n\n") + "\n"
        let (status, diagnostics) = try typeCheck(program.replacingOccurrences(of: "\nimport StrataMacros\n", with: "\n"), macros: usesMacros)
        #expect(status == 0, "\(document) does not compile as pasted:\n\(diagnostics)")
    }

    /// The compiler, not a convention, keeps a cursor's live row on its
    /// task: sending one is an error that says what to send instead, and
    /// its copy (what `fetchAll` returns) crosses freely.
    @Test func aLiveRowCannotBeSentAndItsCopyCan() throws {
        let sendsCopies = """
            import Strata
            func rows(_ queue: DatabaseQueue) async throws -> [Row] {
                let copies = try await queue.read { db in try Row.fetchAll(db, sql: "SELECT 1 AS a") }
                let one = try await queue.read { db in try Row.fetchCursor(db, sql: "SELECT 2 AS a").next()?.copy() }
                return copies + [one].compactMap { $0 }
            }
            """
        let (copyStatus, copyDiagnostics) = try typeCheck(sendsCopies)
        #expect(copyStatus == 0, "copied rows should cross tasks:\n\(copyDiagnostics)")
        #expect(!copyDiagnostics.contains("no 'async' operations"), "the async read should be chosen:\n\(copyDiagnostics)")

        let sendsLiveRow = """
            import Strata
            func send(_ row: LiveRow) async -> Int {
                await Task.detached { row }.value.count
            }
            """
        let (liveStatus, liveDiagnostics) = try typeCheck(sendsLiveRow)
        #expect(liveStatus != 0)
        #expect(liveDiagnostics.contains("send row.copy(), a Row"), "\(liveDiagnostics)")
    }

    /// Type-checks `program` as a `main.swift` in the Swift 6 language mode
    /// against the built Strata module: the compiler's exit status and
    /// diagnostics.
    private func typeCheck(_ program: String, macros: Bool = false) throws -> (Int32, String) {
        let root = packageRoot(from: #filePath)
        let folder = URL(fileURLWithPath: try makeTemporaryPath("main.swift")).deletingLastPathComponent()
        let file = folder.appendingPathComponent("main.swift")
        let products = Bundle.module.bundleURL.deletingLastPathComponent()
        let modules = products.appendingPathComponent("Modules")
        var macroArguments: [String] = []
        if macros {
            // `swift test` builds the plugin for StrataMacrosTests.
            let plugin = products.appendingPathComponent("StrataMacrosPlugin-tool").path
            #expect(FileManager.default.isExecutableFile(atPath: plugin), "no macro plugin at \(plugin)")
            macroArguments = ["-load-plugin-executable", plugin + "#StrataMacrosPlugin"]
        }
        try ((macros ? "import StrataMacros\n" : "") + program).write(to: file, atomically: true, encoding: .utf8)
        let compiler = try #require(findSwiftCompiler(), "no swiftc on PATH")
        let process = Process()
        process.executableURL = compiler
        process.arguments = [
            "-typecheck", "-swift-version", "6", "-I", modules.path,
            "-I", root.appendingPathComponent("Sources/CSQLite").path, file.path,
        ] + macroArguments
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let diagnostics = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, diagnostics)
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
