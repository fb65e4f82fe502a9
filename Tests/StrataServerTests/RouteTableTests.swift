import Foundation
#if canImport(Glibc)
import Glibc
#endif
import HTTPTypes
import NIOCore
import StrataDocuments
@testable import StrataServer
import StrataServerTestHelpers
import StrataTestHelpers
import Testing

/// `strata serve` run in process on a loopback port, asked by a client that
/// sends and reads the bytes as they are (no decompression, no redirects):
/// the route table and the answers it gives where a real CouchDB 3.4.3
/// answered otherwise before (../shared/couchdb/MEASURED-DIFFERENCES.md).
@Suite struct RouteTableTests {
    /// A server on a fresh folder with one admin, new databases open to
    /// everyone, and a client that talks to it.
    static func withServer(_ body: @Sendable (RawHTTPClient) async throws -> Void) async throws {
        try await withServer(configuring: { _ in }, body)
    }

    static func withServer(configuring configure: (inout ServerConfiguration) -> Void,
                           _ body: @Sendable (RawHTTPClient) async throws -> Void) async throws {
        var configuration = ServerConfiguration(dataDirectory: URL(fileURLWithPath: try makeTemporaryPath("couch")), admins: ["admin": "secret"])
        configuration.passwordIterations = 1000
        configuration.defaultSecurity = .everyone
        configure(&configuration)
        let running = try await RunningServer.start(try CouchServer(configuration))
        do {
            try await body(RawHTTPClient(port: running.base.port ?? 0))
        } catch {
            await running.stopped()
            throw error
        }
        await running.stopped()
    }

    @Test func everyPathOfTheTableIsAnswered() async throws {
        try await Self.withServer { (client: RawHTTPClient) async throws in
            #expect(try await client.send(.put, "/db", admin: true).status == .created)
            for path in ["/", "/_up", "/_uuids", "/_session", "/db", "/db/_all_docs", "/db/_design_docs", "/db/_changes", "/db/_index",
                         "/db/_security", "/db/_revs_limit"] {
                #expect(try await client.send(.get, path, admin: true).status == .ok, "\(path)")
            }
            for path in ["/_all_dbs", "/_active_tasks", "/_scheduler/jobs", "/_scheduler/docs", "/_node/_local/_config"] {
                #expect(try await client.send(.get, path).status == .unauthorized, "\(path) needs a server admin")
                #expect(try await client.send(.get, path, admin: true).status == .ok, "\(path)")
            }
        }
    }

    @Test func aPathWithOtherMethodsIs405WithTheTablesList() async throws {
        try await Self.withServer { (client: RawHTTPClient) async throws in
            #expect(try await client.send(.put, "/db", admin: true).status == .created)
            let listing = try await client.send(.delete, "/db/_all_docs")
            #expect(listing.status == .methodNotAllowed && listing.headers[.allow] == "GET,HEAD,POST")
            #expect(listing.json?["error"] == "method_not_allowed")
            // Not a preflight (CORS is off): the document's methods, COPY included.
            let options = try await client.send(.options, "/db/doc")
            #expect(options.status == .methodNotAllowed && options.headers[.allow] == "COPY,DELETE,GET,HEAD,PUT")
            // An update function takes any method but GET, as CouchDB's render.js.
            let update = try await client.send(.get, "/db/_design/d/_update/f/doc")
            #expect(update.status == .methodNotAllowed && update.json?["reason"] == "Update functions do not allow GET")
        }
    }

    /// CouchDB reads `+` as a space in paths and query strings
    /// (`mochiweb_util:unquote`).
    @Test func aPlusInAPathOrAQueryIsASpace() async throws {
        try await Self.withServer { (client: RawHTTPClient) async throws in
            #expect(try await client.send(.put, "/db", admin: true).status == .created)
            let created = try await client.send(.put, "/db/a+b", json: #"{"x":1}"#)
            #expect(created.status == .created && created.json?["id"] == "a b")
            #expect(created.headers[.location] == "http://localhost/db/a%20b")
            #expect(try await client.send(.get, "/db/a%20b").status == .ok)
            #expect(try await client.send(.get, "/db/a%2Bb").status == .notFound)
            let rows = try await client.send(.get, #"/db/_all_docs?key="a+b""#).json?["rows"]?.arrayValue
            #expect(rows?.map { $0["id"] } == ["a b"])
        }
    }

    /// `Location` is absolute and names the database, as CouchDB's
    /// `absolute_uri` writes it.
    @Test func locationIsTheDocumentsAbsoluteURL() async throws {
        try await Self.withServer { (client: RawHTTPClient) async throws in
            let db = try await client.send(.put, "/probe%2Fsub", admin: true)
            #expect(db.status == .created && db.headers[.location] == "http://localhost/probe%2Fsub")
            #expect(try await client.send(.put, "/db", admin: true).status == .created)
            #expect(try await client.send(.put, "/db/newdoc", json: "{}").headers[.location] == "http://localhost/db/newdoc")
            let posted = try await client.send(.post, "/db", json: #"{"_id":"posted"}"#)
            #expect(posted.headers[.location] == "http://localhost/db/posted")
            let rev = try await client.send(.get, "/db/newdoc").json?["_rev"]?.stringValue ?? ""
            let attached = try await client.send(.put, "/db/newdoc/file.bin?rev=\(rev)", body: "bytes", contentType: "application/octet-stream")
            #expect(attached.status == .created && attached.headers[.location] == "http://localhost/db/newdoc/file.bin")
            let design = try await client.send(.put, "/db/_design/app", json: #"{"views":{}}"#, admin: true)
            #expect(design.headers[.location] == "http://localhost/db/_design/app")
            // A local document gets its Location and ETag too.
            let local = try await client.send(.put, "/db/_local/loc2", json: #"{"x":1}"#)
            #expect(local.status == .created && local.headers[.location] == "http://localhost/db/_local/loc2")
            #expect(local.headers[.eTag] == "\"0-1\"")
        }
    }

    @Test func idsThatStartWithAnUnderscoreAreIllegal() async throws {
        try await Self.withServer { (client: RawHTTPClient) async throws in
            #expect(try await client.send(.put, "/db", admin: true).status == .created)
            let refused = try await client.send(.put, "/db/_foo", json: "{}")
            #expect(refused.status == .badRequest && refused.json?["error"] == "illegal_docid")
            #expect(refused.json?["reason"] == "Only reserved document ids may start with underscore.")
        }
    }

    /// `_node/{node}/_config` shows the settings Strata has, under
    /// CouchDB's names, to server admins.
    @Test func theConfigurationReadsAsCouchDBs() async throws {
        try await Self.withServer(configuring: { $0.cors = CORSConfiguration(origins: ["http://app.example"], credentials: true) }) { client in
            let single = try await client.send(.get, "/_node/_local/_config/couchdb/single_node", admin: true)
            #expect(single.status == .ok && single.json == "true")
            #expect(try await client.send(.get, "/_node/nonode@nohost/_config/cors/origins", admin: true).json == "http://app.example")
            #expect(try await client.send(.get, "/_node/_local/_config/chttpd/enable_cors", admin: true).json == "true")
            let section = try await client.send(.get, "/_node/_local/_config/chttpd_auth", admin: true).json
            #expect(section?["timeout"] == "600")
            let unknown = try await client.send(.get, "/_node/_local/_config/couchdb/no_such_key", admin: true)
            #expect(unknown.status == .notFound && unknown.json?["reason"] == "unknown_config_value")
            #expect(try await client.send(.get, "/_node/elsewhere@host/_config", admin: true).status == .notFound)
            #expect(try await client.send(.get, "/_node/_local/_config/couchdb/single_node").status == .unauthorized)
        }
    }

    @Test func databasesInformationForSomeOrAll() async throws {
        try await Self.withServer { (client: RawHTTPClient) async throws in
            #expect(try await client.send(.put, "/db", admin: true).status == .created)
            let some = try await client.send(.post, "/_dbs_info", json: #"{"keys":["db","nope"]}"#, admin: true)
            #expect(some.status == .ok)
            let rows = some.json?.arrayValue ?? []
            #expect(rows.count == 2 && rows.first?["info"]?["db_name"] == "db")
            #expect(rows.last == .object(["key": "nope", "error": "not_found"]))
            let all = try await client.send(.get, "/_dbs_info", admin: true).json?.arrayValue?.compactMap { $0["key"]?.stringValue }
            #expect(all == ["_replicator", "_users", "db"])
        }
    }

    @Test func uuidsAreNeverCached() async throws {
        try await Self.withServer { (client: RawHTTPClient) async throws in
            let answer = try await client.send(.get, "/_uuids?count=3")
            #expect(answer.headers[.cacheControl] == "no-cache" && answer.headers[.eTag] != nil)
            #expect(answer.json?["uuids"]?.arrayValue?.count == 3)
        }
    }
}

/// Sends requests to a server on a loopback port over a socket of its own
/// (`Connection: close`, `Host: localhost`, which the Location headers
/// the tests expect name) and reads the answer's bytes as they came: a
/// gzip-encoded body stays gzip, which URLSession would decode.
struct RawHTTPClient: Sendable {
    let port: Int

    struct Answer {
        let status: HTTPResponse.Status
        let headers: HTTPFields
        let body: ByteBuffer
        var json: JSON? { try? JSON(parsing: Array(body.readableBytesView)) }
    }

    func send(_ method: HTTPRequest.Method, _ uri: String, json: String? = nil, body: String? = nil, data: Data? = nil, contentType: String? = nil,
              admin: Bool = false, headers: HTTPFields = [:]) async throws -> Answer {
        var headers = headers
        if admin { headers[.authorization] = "Basic " + Data("admin:secret".utf8).base64EncodedString() }
        if json != nil { headers[.contentType] = "application/json" }
        if let contentType { headers[.contentType] = contentType }
        let bytes = data ?? (json ?? body).map { Data($0.utf8) } ?? Data()
        var request = "\(method.rawValue) \(uri) HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n"
        if !bytes.isEmpty || [.put, .post].contains(method) { request += "Content-Length: \(bytes.count)\r\n" }
        for field in headers { request += "\(field.name.rawName): \(field.value)\r\n" }
        let answer = try await Self.exchange(port: port, Array((request + "\r\n").utf8) + Array(bytes))
        return try Self.parse(answer)
    }

    /// Writes `request` and reads until the server closes, on a thread of
    /// its own (a blocking read must not hold one of Swift's cooperative
    /// threads, which the server's handlers run on).
    static func exchange(port: Int, _ request: [UInt8]) async throws -> [UInt8] {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[UInt8], any Error>) in
            Thread {
                continuation.resume(with: Result { try blockingExchange(port: port, request) })
            }.start()
        }
    }

    static func blockingExchange(port: Int, _ request: [UInt8]) throws -> [UInt8] {
        #if canImport(Glibc)
        let socketType = Int32(SOCK_STREAM.rawValue)
        #else
        let socketType = SOCK_STREAM
        #endif
        let handle = socket(AF_INET, socketType, 0)
        guard handle >= 0 else { throw DocumentError(.internalError, "socket(): errno \(errno)") }
        defer { close(handle) }
        // A server that never answers fails the test instead of hanging it.
        var limit = timeval(tv_sec: 120, tv_usec: 0)
        setsockopt(handle, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(handle, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw DocumentError(.internalError, "connect() to port \(port): errno \(errno)") }
        var sent = 0
        while sent < request.count {
            let written = request[sent...].withUnsafeBytes { write(handle, $0.baseAddress, $0.count) }
            guard written > 0 else { throw DocumentError(.internalError, "write(): errno \(errno)") }
            sent += written
        }
        var answer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(handle, $0.baseAddress, $0.count) }
            if count == 0 { break }
            guard count > 0 else { throw DocumentError(.internalError, "read(): errno \(errno) after \(answer.count) bytes") }
            answer += chunk[..<count]
        }
        return answer
    }

    /// The status, headers and body of an HTTP/1.1 answer (a chunked body
    /// joined).
    static func parse(_ answer: [UInt8]) throws -> Answer {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        guard let end = (0...max(0, answer.count - 4)).first(where: { answer[$0..<min($0 + 4, answer.count)].elementsEqual(separator) }) else {
            throw DocumentError(.internalError, "an answer without the end of its headers: \(String(decoding: answer, as: UTF8.self))")
        }
        let lines = String(decoding: answer[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusLine = lines.first?.split(separator: " ") ?? []
        guard statusLine.count >= 2, let code = Int(statusLine[1]) else { throw DocumentError(.internalError, "no status line: \(lines.first ?? "")") }
        var headers = HTTPFields()
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":"), let name = HTTPField.Name(String(line[..<colon])) else { continue }
            headers.append(HTTPField(name: name, value: line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        var body = Array(answer[(end + 4)...])
        if headers[.transferEncoding]?.lowercased() == "chunked" {
            var joined: [UInt8] = []
            var index = 0
            while let lineEnd = (index..<max(index, body.count - 1)).first(where: { body[$0] == 13 && body[$0 + 1] == 10 }),
                  let size = Int(String(decoding: body[index..<lineEnd], as: UTF8.self).split(separator: ";").first ?? "", radix: 16), size > 0 {
                joined += body[(lineEnd + 2)..<(lineEnd + 2 + size)]
                index = lineEnd + 2 + size + 2
            }
            body = joined
        }
        return Answer(status: HTTPResponse.Status(code: code), headers: headers, body: ByteBuffer(bytes: body))
    }
}
