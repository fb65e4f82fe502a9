#if os(Linux)
import Foundation
import Glibc
import Strata

/// HTTP/1.1 over plain TCP, for `http://` servers that no proxy stands in
/// front of: a few kept-alive sockets, each request written and its answer
/// read with blocking calls on a thread of its own.
///
/// FoundationNetworking's `URLSession` drives libcurl through libdispatch
/// sources and semaphores: on Linux a replication spent more of its time
/// there, waking threads, than encoding and writing its documents. This
/// sends the same requests (a `Content-Length` body, the answer read by its
/// length, chunks, or to the end) with a system call or two each.
/// `https://`, and any server behind an `http_proxy`, stay on `URLSession`.
final class PlainHTTPTransport: Sendable {
    let host: String
    let port: Int
    /// The `Host` header: the host (an IPv6 address in brackets) and any
    /// port that is not 80.
    let hostHeader: String
    /// Sockets an answer was read to its end on, ready for the next request.
    private let idle = Locked<[Int32]>([])
    private static let keptAlive = 8

    init(host: String, port: Int?) {
        self.host = host
        self.port = port ?? 80
        let name = host.contains(":") ? "[\(host)]" : host
        self.hostHeader = port.map { $0 == 80 ? name : "\(name):\($0)" } ?? name
    }

    deinit {
        for socket in idle.value { close(socket) }
    }

    /// Whether requests to `url` go through this transport: plain HTTP that
    /// no proxy named in the environment (as libcurl reads it) handles.
    static func serves(_ url: URL, environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        guard url.scheme?.lowercased() == "http", let host = url.host?.lowercased(), !host.isEmpty else { return false }
        let proxy = environment["http_proxy"] ?? environment["ALL_PROXY"] ?? environment["all_proxy"] ?? ""
        if proxy.isEmpty { return true }
        let exempt = (environment["NO_PROXY"] ?? environment["no_proxy"] ?? "")
            .split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
        return exempt.contains { entry in
            if entry == "*" { return true }
            let domain = entry.hasPrefix(".") ? String(entry.dropFirst()) : entry
            return host == domain || host.hasSuffix("." + domain)
        }
    }

    /// Sends one request and reads its answer. `target` is the path and
    /// query, percent-encoded. Cancelling the task closes the socket, which
    /// ends the blocking calls.
    func request(method: String, target: String, headers: [(String, String)], body: Data?, timeout: TimeInterval) async throws -> CouchClient.Answer {
        var head = "\(method) \(target) HTTP/1.1\r\nHost: \(hostHeader)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if let body { head += "Content-Length: \(body.count)\r\n" } else if method == "POST" || method == "PUT" { head += "Content-Length: 0\r\n" }
        head += "\r\n"
        var bytes = Array(head.utf8)
        if let body { bytes.append(contentsOf: body) }
        let request = bytes
        let exchange = Exchange()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<CouchClient.Answer, any Error>) in
                let thread = Thread { [self] in
                    continuation.resume(with: Result { try self.attempt(request, head: method == "HEAD", timeout: timeout, exchange: exchange) })
                }
                thread.stackSize = 1 << 20
                thread.start()
            }
        } onCancel: {
            exchange.cancel()
        }
    }

    /// The request on a kept-alive socket, or on a new one when that socket
    /// turns out closed before any byte of an answer came back (servers
    /// close idle connections); on a new socket, its first failure is the
    /// answer.
    private func attempt(_ request: [UInt8], head: Bool, timeout: TimeInterval, exchange: Exchange) throws -> CouchClient.Answer {
        if let socket = idle.withLock({ $0.popLast() }) {
            do {
                return try run(socket, request, head: head, timeout: timeout, on: exchange)
            } catch is StaleConnection {
                // Closed while idle: a new socket below.
            }
        }
        let socket = try openSocket(timeout: timeout)
        do {
            return try run(socket, request, head: head, timeout: timeout, on: exchange)
        } catch is StaleConnection {
            throw RemoteError(status: 0, error: "network_error", reason: "\(host):\(port) closed the connection without an answer")
        }
    }

    /// A kept-alive socket the server had closed: nothing was answered.
    private struct StaleConnection: Error {}

    private func run(_ socket: Int32, _ request: [UInt8], head: Bool, timeout: TimeInterval, on exchange: Exchange) throws -> CouchClient.Answer {
        guard exchange.begin(socket) else {
            close(socket)
            throw CancellationError()
        }
        var keep = false
        defer {
            if exchange.end() || !keep { close(socket) } else { giveBack(socket) }
        }
        setTimeout(socket, timeout)
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 16)
        defer { chunk.deallocate() }
        var reader = Reader(socket: socket, chunk: chunk)
        do {
            try writeAll(socket, request)
            let answer = try reader.answer(head: head)
            keep = answer.keepAlive
            return CouchClient.Answer(status: answer.status, body: answer.body, headers: answer.headers)
        } catch let error as Reader.Failure {
            if exchange.cancelled { throw CancellationError() }
            if reader.received == 0 && error.beforeAnswer { throw StaleConnection() }
            throw RemoteError(status: 0, error: "network_error", reason: "\(host):\(port): \(error.reason)")
        }
    }

    private func giveBack(_ socket: Int32) {
        let extra: Int32? = idle.withLock {
            guard $0.count < Self.keptAlive else { return socket }
            $0.append(socket)
            return nil
        }
        if let extra { close(extra) }
    }

    private func setTimeout(_ socket: Int32, _ timeout: TimeInterval) {
        let seconds = max(timeout, 0.001)
        var limit = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - seconds.rounded(.down)) * 1_000_000))
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
    }

    private func openSocket(timeout: TimeInterval) throws -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var found: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &found)
        guard status == 0, let first = found else {
            throw RemoteError(status: 0, error: "network_error", reason: "could not find \(host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(first) }
        var lastError: Int32 = 0
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let address = next {
            next = address.pointee.ai_next
            let fd = socket(address.pointee.ai_family, address.pointee.ai_socktype, address.pointee.ai_protocol)
            guard fd >= 0 else { lastError = errno; continue }
            setTimeout(fd, timeout)
            var on: Int32 = 1
            // A request is written at once and its answer awaited: Nagle's
            // wait for an acknowledgement would only delay it.
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &on, socklen_t(MemoryLayout<Int32>.size))
            if connect(fd, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 { return fd }
            lastError = errno
            close(fd)
        }
        throw RemoteError(status: 0, error: "network_error", reason: "could not connect to \(host):\(port): \(String(cString: strerror(lastError)))")
    }

    private func writeAll(_ socket: Int32, _ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let count = bytes.withUnsafeBytes { send(socket, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            let failure = errno
            if count < 0 && failure == EINTR { continue }
            guard count > 0 else { throw Reader.Failure(reason: "could not send the request (\(String(cString: strerror(failure))))", beforeAnswer: true) }
            sent += count
        }
    }

    /// One socket's request: cancellation shuts the socket down, which ends
    /// a blocking read or write at once.
    private final class Exchange: Sendable {
        private struct State {
            var socket: Int32?
            var cancelled = false
        }
        private let state = Locked(State())

        var cancelled: Bool { state.withLock { $0.cancelled } }

        /// Records the socket in use; false when already cancelled.
        func begin(_ socket: Int32) -> Bool {
            state.withLock {
                guard !$0.cancelled else { return false }
                $0.socket = socket
                return true
            }
        }

        /// Forgets the socket; true when the exchange was cancelled (the
        /// socket is then closed, not kept).
        func end() -> Bool {
            state.withLock {
                $0.socket = nil
                return $0.cancelled
            }
        }

        func cancel() {
            state.withLock {
                $0.cancelled = true
                if let socket = $0.socket { shutdown(socket, Int32(SHUT_RDWR)) }
            }
        }
    }

    /// Reads one answer from a socket: its status line and headers, then its
    /// body by its length, its chunks, or to the end of the connection.
    private struct Reader {
        struct Failure: Error {
            let reason: String
            /// Whether nothing of the answer had come yet.
            var beforeAnswer = false
        }

        struct Answer {
            var status: Int
            var headers: [String: String]
            var body: Data
            var keepAlive: Bool
        }

        let socket: Int32
        /// Where each read lands before it joins `buffer`: raw memory, so
        /// that a read neither allocates nor fills bytes it then drops (in
        /// a debug build, appending 64 KB of zeros element by element cost
        /// more than the request).
        let chunk: UnsafeMutableRawBufferPointer
        var buffer: [UInt8] = []
        var start = 0
        var received = 0
        var ended = false

        init(socket: Int32, chunk: UnsafeMutableRawBufferPointer) {
            self.socket = socket
            self.chunk = chunk
        }

        /// Reads more bytes into the buffer; false at the end of the stream.
        mutating func fill() throws -> Bool {
            if start > 65_536 && start * 2 > buffer.count {
                buffer.removeSubrange(0..<start)
                start = 0
            }
            while true {
                let count = recv(socket, chunk.baseAddress!, chunk.count, 0)
                let failure = errno
                if count < 0 && failure == EINTR { continue }
                if count < 0 {
                    let timedOut = failure == EAGAIN || failure == EWOULDBLOCK
                    throw Failure(reason: timedOut ? "no answer within the time limit" : "the connection failed (\(String(cString: strerror(failure))))",
                                  beforeAnswer: !timedOut)
                }
                if count == 0 {
                    ended = true
                    return false
                }
                buffer.append(contentsOf: UnsafeBufferPointer(start: chunk.baseAddress!.assumingMemoryBound(to: UInt8.self), count: count))
                received += count
                return true
            }
        }

        /// The bytes up to the next CRLF CRLF (excluded), or nil at the end.
        mutating func headerBlock() throws -> [UInt8]? {
            var searched = start
            while true {
                if buffer.count - start >= 4 {
                    var index = max(start, searched - 3)
                    while index + 3 < buffer.count {
                        if buffer[index] == 13 && buffer[index + 1] == 10 && buffer[index + 2] == 13 && buffer[index + 3] == 10 {
                            let block = Array(buffer[start..<index])
                            start = index + 4
                            return block
                        }
                        index += 1
                    }
                    searched = buffer.count
                }
                guard try fill() else { return nil }
            }
        }

        /// The next line (without its CRLF).
        mutating func line() throws -> String {
            while true {
                if let end = buffer[start...].firstIndex(of: 10) {
                    var lineEnd = end
                    if lineEnd > start && buffer[lineEnd - 1] == 13 { lineEnd -= 1 }
                    let text = String(decoding: buffer[start..<lineEnd], as: UTF8.self)
                    start = end + 1
                    return text
                }
                guard try fill() else { throw Failure(reason: "the answer ended inside its chunked body") }
            }
        }

        /// Exactly `count` bytes.
        mutating func bytes(_ count: Int) throws -> ArraySlice<UInt8> {
            while buffer.count - start < count {
                guard try fill() else { throw Failure(reason: "the answer ended \(count - (buffer.count - start)) bytes before its length") }
            }
            let slice = buffer[start..<(start + count)]
            start += count
            return slice
        }

        mutating func answer(head: Bool) throws -> Answer {
            while true {
                guard let block = try headerBlock() else {
                    throw Failure(reason: "the connection closed before an answer", beforeAnswer: received == 0)
                }
                let lines = String(decoding: block, as: UTF8.self).components(separatedBy: "\r\n")
                let statusParts = lines[0].split(separator: " ", maxSplits: 2)
                guard statusParts.count >= 2, statusParts[0].hasPrefix("HTTP/"), let status = Int(statusParts[1]) else {
                    throw Failure(reason: "not an HTTP answer: \(lines[0].prefix(100))")
                }
                var headers: [String: String] = [:]
                for line in lines.dropFirst() {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    let name = line[..<colon].lowercased()
                    let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                    headers[name] = headers[name].map { $0 + ", " + value } ?? value
                }
                // 100 Continue and other interim answers: the real one follows.
                if (100..<200).contains(status) && status != 101 { continue }
                let connection = headers["connection"]?.lowercased() ?? ""
                var keepAlive = statusParts[0] == "HTTP/1.0" ? connection.contains("keep-alive") : !connection.contains("close")
                var body = Data()
                if head || status == 204 || status == 304 {
                } else if headers["transfer-encoding"]?.lowercased().contains("chunked") == true {
                    while true {
                        let sizeLine = try line()
                        guard let size = Int(sizeLine.split(separator: ";").first?.trimmingCharacters(in: .whitespaces) ?? "", radix: 16), size >= 0 else {
                            throw Failure(reason: "a chunk's size is not hexadecimal: \(sizeLine.prefix(40))")
                        }
                        if size == 0 {
                            while try !line().isEmpty {}  // trailers, then the blank line
                            break
                        }
                        body.append(contentsOf: try bytes(size))
                        _ = try bytes(2)
                    }
                } else if let length = headers["content-length"].flatMap({ Int($0) }) {
                    body = Data(try bytes(length))
                } else {
                    while try fill() {}
                    body = Data(buffer[start...])
                    start = buffer.count
                    keepAlive = false
                }
                if start != buffer.count { keepAlive = false }  // more than one answer came: do not trust the socket
                if ended { keepAlive = false }
                return Answer(status: status, headers: headers, body: body, keepAlive: keepAlive)
            }
        }
    }
}
#endif
