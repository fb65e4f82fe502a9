import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import StrataTestHelpers
import Testing

/// A large attachment goes into `strata serve` and comes back out a chunk at
/// a time: the server's memory does not grow with the attachment's size.
@Suite struct AttachmentStreamingTests {
    #if os(Linux)
    /// The most memory the server process has held (Linux's VmHWM), in bytes.
    static func peakMemory(of pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") })
        let kilobytes = try #require(Int(line.split(separator: " ").dropFirst().first ?? ""))
        return kilobytes * 1024
    }

    @Test func a64MegabyteAttachmentGoesInAndOutInBoundedMemory() async throws {
        let server = try VotingExampleTests.ServeProcess()
        defer { server.stop() }
        let pid = server.process.processIdentifier
        func request(_ method: String, _ path: String, type: String? = nil) throws -> URLRequest {
            var request = URLRequest(url: try #require(URL(string: server.url + path)))
            request.httpMethod = method
            request.setValue("Basic " + Data("admin:secret".utf8).base64EncodedString(), forHTTPHeaderField: "Authorization")
            if let type { request.setValue(type, forHTTPHeaderField: "Content-Type") }
            request.timeoutInterval = 300
            return request
        }
        func status(_ response: URLResponse) -> Int { (response as? HTTPURLResponse)?.statusCode ?? 0 }

        // Ordinary requests first, so that the baseline is a working server's.
        var (_, response) = try await URLSession.shared.data(for: try request("PUT", "/files"))
        #expect(status(response) == 201)
        var put = try request("PUT", "/files/small", type: "application/json")
        put.httpBody = Data(#"{"n":1}"#.utf8)
        (_, response) = try await URLSession.shared.data(for: put)
        #expect(status(response) == 201)
        let baseline = try Self.peakMemory(of: pid)

        let size = 64 << 20
        var generator = SplitMix64(seed: 64)
        let bytes = Data((0..<size / 8).flatMap { _ in withUnsafeBytes(of: generator.next()) { Array($0) } })
        let file = URL(fileURLWithPath: try makeTemporaryPath("big.bin"))
        try bytes.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let upload = try request("PUT", "/files/doc/big.bin", type: "application/octet-stream")
        let (answer, uploaded) = try await URLSession.shared.upload(for: upload, fromFile: file)
        #expect(status(uploaded) == 201, "\(String(decoding: answer, as: UTF8.self))")

        let (content, downloaded) = try await URLSession.shared.data(for: try request("GET", "/files/doc/big.bin"))
        #expect(status(downloaded) == 200)
        #expect((downloaded as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Type") == "application/octet-stream")
        #expect(content.count == size && content == bytes)

        // HEAD: the headers, with the size, and no body.
        let (none, head) = try await URLSession.shared.data(for: try request("HEAD", "/files/doc/big.bin"))
        #expect(status(head) == 200 && none.isEmpty)
        #expect((head as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Length") == String(size))

        let growth = try Self.peakMemory(of: pid) - baseline
        #expect(growth < 32 << 20, "the server's peak memory grew by \(growth >> 20) MB for a \(size >> 20) MB attachment")
    }
    #endif
}
