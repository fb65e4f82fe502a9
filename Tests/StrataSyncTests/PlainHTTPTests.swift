#if os(Linux)
import Foundation
import Glibc
import Strata
import StrataDocuments
@testable import StrataSync
import StrataTestHelpers
import Testing

/// The client's own HTTP/1.1 for `http://` servers (`PlainHTTPTransport`),
/// against a loopback server that answers byte by byte as the test says:
/// chunks, a kept-alive socket the server closed meanwhile, no answer at
/// all, and cancellation. `strata serve` (every other suite) answers the
/// ordinary way.
@Suite struct PlainHTTPTests {
    @Test func proxiesInTheEnvironmentKeepRequestsOnURLSession() {
        let local = URL(string: "http://127.0.0.1:5984/db")!
        #expect(PlainHTTPTransport.serves(local, environment: [:]))
        #expect(!PlainHTTPTransport.serves(URL(string: "https://example.com/db")!, environment: [:]))
        #expect(!PlainHTTPTransport.serves(local, environment: ["http_proxy": "http://proxy:3128"]))
        #expect(!PlainHTTPTransport.serves(local, environment: ["ALL_PROXY": "socks5://proxy"]))
        #expect(PlainHTTPTransport.serves(local, environment: ["http_proxy": "http://proxy:3128", "no_proxy": "localhost, 127.0.0.1"]))
        #expect(PlainHTTPTransport.serves(URL(string: "http://couch.internal.example/db")!,
                                          environment: ["http_proxy": "http://proxy:3128", "NO_PROXY": ".example"]))
        #expect(PlainHTTPTransport.serves(local, environment: ["http_proxy": "http://proxy:3128", "no_proxy": "*"]))
    }

    @Test func chunksKeptAliveSocketsAndASocketTheServerClosed() async throws {
        // First connection: a chunked answer, then one by its length, then
        // the server closes it. The third request finds it closed and goes
        // on a second connection, which answers and says close.
        let server = try ScriptedServer([
            { connection in
                let first = try connection.readRequest()
                #expect(first.hasPrefix("GET /db/one HTTP/1.1\r\n") && first.contains("\r\nHost: 127.0.0.1:"))
                try connection.write("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{\"a\":\r\n3\r\n 1}\r\n0\r\n\r\n")
                let second = try connection.readRequest()
                #expect(second.hasPrefix("PUT /db/two%2Fthree?rev=1-a HTTP/1.1\r\n") && second.contains("\r\nContent-Length: 9\r\n") && second.hasSuffix("{\"b\":2.5}"))
                try connection.write("HTTP/1.1 201 Created\r\nContent-Length: 11\r\nX-Two: a\r\nx-two: b\r\n\r\n{\"ok\":true}")
            },
            { connection in
                _ = try connection.readRequest()
                try connection.write("HTTP/1.1 404 Object Not Found\r\nConnection: close\r\nContent-Length: 40\r\n\r\n{\"error\":\"not_found\",\"reason\":\"missing\"}")
            },
        ])
        let client = try CouchClient(url: URL(string: "http://127.0.0.1:\(server.port)")!)
        let first = try await client.sendRaw("GET", ["db", "one"])
        #expect(first.status == 200 && (try? JSON(parsing: first.body)) == .object(["a": 1]))
        let second = try await client.sendRaw("PUT", ["db", "two/three"], query: [("rev", "1-a")], body: Data(#"{"b":2.5}"#.utf8))
        #expect(second.status == 201 && second.headers["x-two"] == "a, b")
        // The server has closed the first socket by now; the request must not fail for it.
        #expect(await eventually { server.closedFirst })
        let third = try await client.sendRaw("GET", ["db", "three"])
        #expect(third.status == 404 && CouchClient.error(third).error == "not_found")
        #expect(await eventually { server.accepted == 2 })
        try server.finish()
    }

    @Test func noAnswerWithinTheTimeLimitIsANetworkErrorAndCancellingEndsTheWait() async throws {
        let server = try ScriptedServer([
            { connection in _ = try connection.readRequest(); connection.waitUntilClosedByPeer() },
            { connection in _ = try connection.readRequest(); connection.waitUntilClosedByPeer() },
        ])
        let client = try CouchClient(url: URL(string: "http://127.0.0.1:\(server.port)")!, timeout: 1)
        await #expect {
            _ = try await client.sendRaw("GET", ["slow"])
        } throws: { error in
            (error as? RemoteError)?.error == "network_error" && (error as? RemoteError)?.reason.contains("time limit") == true
        }
        let patient = try CouchClient(url: URL(string: "http://127.0.0.1:\(server.port)")!, timeout: 600)
        let waiting = Task { try await patient.sendRaw("GET", ["slower"]) }
        #expect(await eventually { server.accepted == 2 })
        let cancelled = ContinuousClock.now
        waiting.cancel()
        await #expect(throws: CancellationError.self) { _ = try await waiting.value }
        #expect(ContinuousClock.now - cancelled < .seconds(60))
        try server.finish()
    }
}

/// A loopback server whose connections each run one closure of the test's,
/// in the order they are accepted, on a thread of their own.
final class ScriptedServer: @unchecked Sendable {
    typealias Script = @Sendable (Connection) throws -> Void
    let port: Int
    private let listener: Int32
    private let state = Locked((accepted: 0, closedFirst: false, errors: [String](), done: 0))
    private let scripts: [Script]

    var accepted: Int { state.value.accepted }
    var closedFirst: Bool { state.value.closedFirst }

    init(_ scripts: [Script]) throws {
        self.scripts = scripts
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(listener, pointer, length) == 0 && listen(listener, 8) == 0 && getsockname(listener, pointer, &length) == 0
            }
        }
        guard bound else { throw DocumentError(.internalError, "could not listen on loopback: errno \(errno)") }
        self.listener = listener
        port = Int(UInt16(bigEndian: address.sin_port))
        let thread = Thread { [self] in self.serve() }
        thread.start()
    }

    private func serve() {
        for (index, script) in scripts.enumerated() {
            let fd = accept(listener, nil, nil)
            guard fd >= 0 else { return }
            state.withLock { $0.accepted += 1 }
            Thread { [self] in
                let connection = Connection(fd: fd)
                do { try script(connection) } catch { state.withLock { $0.errors.append("connection \(index + 1): \(error)") } }
                close(fd)
                state.withLock {
                    if index == 0 { $0.closedFirst = true }
                    $0.done += 1
                }
            }.start()
        }
    }

    /// Fails with what a script threw; stops listening.
    func finish() throws {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        let errors = state.value.errors
        if !errors.isEmpty { throw DocumentError(.internalError, errors.joined(separator: "; ")) }
    }

    struct Connection: Sendable {
        let fd: Int32

        /// One request: its head, and its body by its Content-Length.
        func readRequest() throws -> String {
            var bytes: [UInt8] = []
            var byte: UInt8 = 0
            while !bytes.suffix(4).elementsEqual([13, 10, 13, 10]) {
                guard read(fd, &byte, 1) == 1 else { throw DocumentError(.internalError, "the client closed before a whole request") }
                bytes.append(byte)
            }
            let head = String(decoding: bytes, as: UTF8.self)
            let length = head.components(separatedBy: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
            var body = [UInt8](repeating: 0, count: length)
            var got = 0
            while got < length {
                let count = body.withUnsafeMutableBytes { read(fd, $0.baseAddress! + got, length - got) }
                guard count > 0 else { throw DocumentError(.internalError, "the client closed inside a body") }
                got += count
            }
            return head + String(decoding: body, as: UTF8.self)
        }

        func write(_ text: String) throws {
            let bytes = Array(text.utf8)
            guard bytes.withUnsafeBytes({ Glibc.write(fd, $0.baseAddress, $0.count) }) == bytes.count else {
                throw DocumentError(.internalError, "could not write the answer")
            }
        }

        /// Blocks until the client closes its end (or shuts it down).
        func waitUntilClosedByPeer() {
            var byte: UInt8 = 0
            while read(fd, &byte, 1) > 0 {}
        }
    }
}
#endif
