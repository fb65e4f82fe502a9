import Foundation
import StrataTestHelpers
import Testing

/// The voting device (`Examples/voting`) against a `strata serve` process:
/// setup, ask, the seed's vote, offline votes, sync and results.
@Suite struct VotingExampleTests {
    /// `strata serve` on a free loopback port, stopped by `stop()`.
    final class ServeProcess {
        let process = Process()
        let url: String

        init() throws {
            let data = try makeTemporaryPath("voting-data")
            let log = try makeTemporaryPath("serve.log")
            _ = FileManager.default.createFile(atPath: log, contents: nil)
            process.executableURL = try CommandLineToolTests.binaryURL()
            process.arguments = ["serve", "--data", data, "--port", "0", "--admin", "admin:secret", "--password-iterations", "1000"]
            process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
            process.standardError = process.standardOutput
            try process.run()
            // The server prints its address once it listens: up to a minute.
            var found: String?
            for _ in 0..<600 where found == nil {
                let text = Self.read(log)
                if let range = text.range(of: #"http://127\.0\.0\.1:[0-9]+"#, options: .regularExpression) { found = String(text[range]) }
                else { Thread.sleep(forTimeInterval: 0.1) }
            }
            guard let found else {
                process.terminate()
                throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "strata serve did not start: \(Self.read(log))"])
            }
            url = found
        }

        /// The log so far. (Through a file handle: Foundation's
        /// `String(contentsOfFile:)` leaks a buffer when the file grows while
        /// it reads, which AddressSanitizer reports.)
        static func read(_ path: String) -> String {
            guard let handle = FileHandle(forReadingAtPath: path) else { return "" }
            defer { try? handle.close() }
            return String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        }

        func stop() {
            process.terminate()
            process.waitUntilExit()
        }
    }

    func voting(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let output = try runProduct("voting", arguments)
        #expect(output.status == 0, "voting \(arguments): \(output.standardError)", sourceLocation: sourceLocation)
        return output.standardOutput
    }

    @Test func onlineAndOfflineVotesAreAllCounted() throws {
        let server = try ServeProcess()
        defer { server.stop() }
        let admin = ["--server", server.url, "--user", "admin", "--password", "secret"]
        // A new database is the server admins' only (CouchDB 3's default):
        // setup opens it, or the seed's devices, which do not sign in,
        // could not vote.
        #expect(try voting(["setup"] + admin) == "created database voting\nopened voting to devices that do not sign in\nsaved tabs-or-spaces\nsaved best-season\nsaved _design/voting\nsaved _design/tally\n")
        // Again: nothing is lost or duplicated.
        #expect(try voting(["setup"] + admin).hasSuffix("_design/tally exists\n"))
        // Anonymous users may not set up.
        let refused = try runProduct("voting", ["setup", "--server", server.url])
        #expect(refused.status == 1 && refused.standardError.contains("401"))

        let asked = try voting(["ask", "--server", server.url])
        #expect(asked.hasPrefix("Tabs or spaces? [tabs-or-spaces]\n  0. Tabs\n  1. Spaces\n")
                || asked.hasPrefix("Which season do you like best? [best-season]\n  0. Spring\n"))

        // The seed's vote, online, three devices.
        for (device, answer) in [("a", 1), ("b", 1), ("c", 0)] {
            #expect(try voting(["vote", "--server", server.url, "--question", "tabs-or-spaces", "--answer", String(answer), "--device", device])
                    == "Thanks for voting\n")
        }
        let wrong = try runProduct("voting", ["vote", "--server", server.url, "--question", "tabs-or-spaces", "--answer", "5"])
        #expect(wrong.status == 1 && wrong.standardError.contains("the server refused the vote"))

        // Two devices vote offline, one of them twice (its vote changes), then sync.
        let phone = try makeTemporaryPath("phone.sqlite")
        let tablet = try makeTemporaryPath("tablet.sqlite")
        _ = try voting(["vote", "--local", phone, "--question", "best-season", "--answer", "1"])
        _ = try voting(["vote", "--local", phone, "--question", "best-season", "--answer", "2"])
        _ = try voting(["vote", "--local", phone, "--question", "tabs-or-spaces", "--answer", "0"])
        _ = try voting(["vote", "--local", tablet, "--question", "best-season", "--answer", "2"])
        #expect(try voting(["results", "--local", phone, "--question", "best-season"]) == "best-season [best-season]\n  2. answer 2: 1\n")
        #expect(try voting(["sync", "--local", phone, "--server", server.url]).hasPrefix("sent 2, received"))
        #expect(try voting(["sync", "--local", tablet, "--server", server.url]).hasPrefix("sent 1, received"))

        #expect(try voting(["results", "--server", server.url]) == """
            Which season do you like best? [best-season]
              0. Spring: 0
              1. Summer: 0
              2. Autumn: 2
              3. Winter: 0
            Tabs or spaces? [tabs-or-spaces]
              0. Tabs: 2
              1. Spaces: 2

            """)
        // The tablet, synced after the phone, counts the same (a Swift view on its local file).
        #expect(try voting(["results", "--local", tablet, "--question", "tabs-or-spaces"]) == "Tabs or spaces? [tabs-or-spaces]\n  0. Tabs: 2\n  1. Spaces: 2\n")
        // A vote offline for an answer the device knows does not exist.
        let bad = try runProduct("voting", ["vote", "--local", tablet, "--question", "best-season", "--answer", "9"])
        #expect(bad.status == 1 && bad.standardError == "voting: best-season has answers 0 to 3\n")
    }
}
