import Foundation
import Hummingbird
import NIOCore
import StrataDocuments
import StrataTestHelpers

/// A stand-in for the peers in transcripts/couchdb-replicator.log and
/// pouchdb-replicator.log: an HTTP server, not Strata's, that answers only
/// the calls those logs show a peer answering, in CouchDB 3's shapes, with
/// opaque sequences (`"3-g1AAAA…"`, as a cluster gives them), and without
/// `_bulk_get` when asked (so the replicator must fall back to `open_revs`).
/// Each database's documents are kept in a `DocumentDatabase` the test can
/// look into. Every request is recorded as `METHOD /path?query -> status`.
final class FakePeer: @unchecked Sendable {
    // @unchecked: `databases` and `requests` are only touched under `lock`.
    private let lock = NSLock()
    private var databases: [String: DocumentDatabase] = [:]
    private var requests: [String] = []
    let bulkGet: Bool
    private var task: Task<Void, any Error>?
    private(set) var base = URL(string: "http://127.0.0.1")!

    init(bulkGet: Bool = true) { self.bulkGet = bulkGet }

    /// The database `name`, made when missing.
    func database(_ name: String) throws -> DocumentDatabase {
        try lock.withLock {
            if let db = databases[name] { return db }
            let db = try DocumentDatabase(path: makeTemporaryPath("\(name).sqlite"))
            databases[name] = db
            return db
        }
    }

    func existing(_ name: String) -> DocumentDatabase? { lock.withLock { databases[name] } }

    /// The requests so far, as the transcripts write them.
    var log: [String] { lock.withLock { requests } }

    func start() async throws {
        let (ports, continuation) = AsyncStream.makeStream(of: Int.self)
        let app = Application(
            responder: Responder(peer: self),
            configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0), serverName: "CouchDB/3.4.3 (Erlang OTP/25)"),
            onServerRunning: { channel in continuation.yield(channel.localAddress?.port ?? 0) }
        )
        task = Task { try await app.runService() }
        var iterator = ports.makeAsyncIterator()
        guard let port = await iterator.next() else { throw DocumentError(.internalError, "the fake peer did not start") }
        base = URL(string: "http://127.0.0.1:\(port)")!
    }

    func stop() async {
        task?.cancel()
        _ = await task?.result
    }

    // MARK: answering

    struct Responder: HTTPResponder {
        typealias Context = BasicRequestContext
        let peer: FakePeer

        func respond(to request: Request, context: BasicRequestContext) async throws -> Response {
            var request = request
            let body = try await request.collectBody(upTo: 64 << 20)
            let raw = request.uri.path
            let query = request.uri.query ?? ""
            let (status, json) = peer.answer(method: request.method.rawValue, path: raw, query: query, body: Data(buffer: body))
            peer.lock.withLock { peer.requests.append("\(request.method.rawValue) \(raw)\(query.isEmpty ? "" : "?" + query) -> \(status)") }
            var headers: HTTPFields = [:]
            headers[.contentType] = "application/json"
            let text = request.method == .head ? "" : (json?.text ?? "") + "\n"
            return Response(status: .init(code: status), headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
        }
    }

    static func sequence(_ n: Int) -> JSON { .string("\(n)-g1AAAAFakePeer") }
    static func sequence(_ n: ChangeSequence) -> JSON { sequence(n.number ?? 0) }

    static func number(_ since: String?) -> Int {
        guard let since else { return 0 }
        return Int(since.split(separator: "-").first ?? "") ?? 0
    }

    func answer(method: String, path: String, query: String, body: Data) -> (Int, JSON?) {
        let segments = path.split(separator: "/").map { String($0).removingPercentEncoding ?? String($0) }
        var parameters: [String: String] = [:]
        for item in URLComponents(string: "?" + query)?.queryItems ?? [] { parameters[item.name] = item.value ?? "" }
        let notFound: JSON = ["error": "not_found", "reason": "missing"]
        do {
            guard let name = segments.first else {
                return (200, ["couchdb": "Welcome", "version": "3.4.3", "uuid": "0f4f1a2b3c4d5e6f7a8b9c0d1e2f3a4b", "vendor": ["name": "The Apache Software Foundation"]])
            }
            if segments.count == 1 {
                switch method {
                case "PUT":
                    if existing(name) != nil { return (412, ["error": "file_exists", "reason": "The database could not be created, the file already exists."]) }
                    _ = try database(name)
                    return (201, ["ok": true])
                case "GET", "HEAD":
                    guard let db = existing(name) else { return (404, ["error": "not_found", "reason": "Database does not exist."]) }
                    let info = try db.info()
                    return (200, ["db_name": .string(name), "doc_count": .int(info.documentCount), "doc_del_count": .int(info.deletedDocumentCount),
                                  "update_seq": Self.sequence(info.updateSequence), "instance_start_time": "0"])
                default: return (405, ["error": "method_not_allowed", "reason": "Only GET,HEAD,PUT allowed"])
                }
            }
            guard let db = existing(name) else { return (404, ["error": "not_found", "reason": "Database does not exist."]) }
            let rest = Array(segments.dropFirst())
            let input = body.isEmpty ? JSON.null : try JSON(parsing: body)
            switch (method, rest[0]) {
            case ("GET", "_local"), ("PUT", "_local"):
                let id = "_local/" + rest.dropFirst().joined(separator: "/")
                if method == "GET" {
                    guard let doc = try db.localDocument(id: id) else { return (404, notFound) }
                    return (200, .object(doc))
                }
                var doc = input.objectValue ?? JSONObject()
                doc["_id"] = .string(id)
                let written = try db.putLocal(doc)
                return (201, ["ok": true, "id": .string(id), "rev": .string(written.rev)])
            case ("GET", "_changes"):
                let options = ChangesOptions(since: ChangeSequence(Self.number(parameters["since"])), limit: parameters["limit"].flatMap { Int($0) },
                                             style: parameters["style"] == "all_docs" ? .allDocs : .mainOnly)
                let result = try db.changes(options)
                return (200, ["results": .array(result.results.map { change in
                    var o = change.json.objectValue!
                    o["seq"] = Self.sequence(change.seq)
                    return .object(o)
                }), "last_seq": Self.sequence(result.lastSeq), "pending": .int(result.pending ?? 0)])
            case ("POST", "_revs_diff"):
                var asked: [String: [String]] = [:]
                for (id, revs) in input.objectValue ?? JSONObject() { asked[id] = revs.arrayValue?.compactMap(\.stringValue) ?? [] }
                let diff = try db.revisionsDiff(asked)
                return (200, .object(JSONObject(diff.keys.sorted().map { id in
                    (id, JSON.object(["missing": .array(diff[id]!.missing.map(JSON.string))]))
                })))
            case ("POST", "_bulk_get"):
                // CouchDB 1.x, and peers like it, have no _bulk_get.
                guard bulkGet else { return (404, ["error": "not_found", "reason": "missing"]) }
                let asked = (input["docs"]?.arrayValue ?? []).compactMap { item -> (id: String, revisions: [String]?)? in
                    guard let id = item["id"]?.stringValue else { return nil }
                    return (id, item["rev"]?.stringValue.map { [$0] })
                }
                let read = try db.openRevisions(asked, options: DocumentReadOptions(revs: parameters["revs"] == "true", latest: true))
                return (200, ["results": .array(zip(asked, read).map { request, result in
                    let docs: [JSON]
                    switch result {
                    case .success(let revisions): docs = revisions.map { revision in
                        switch revision {
                        case .ok(let doc): return ["ok": .object(doc)]
                        case .missing(let rev): return ["error": ["id": .string(request.id), "rev": .string(rev), "error": "not_found", "reason": "missing"]]
                        }
                    }
                    case .failure: docs = [["error": ["id": .string(request.id), "error": "not_found", "reason": "missing"]]]
                    }
                    return ["id": .string(request.id), "docs": .array(docs)]
                })])
            case ("POST", "_bulk_docs"):
                let documents = (input["docs"]?.arrayValue ?? []).compactMap(\.objectValue)
                let newEdits = input["new_edits"]?.boolValue ?? true
                let results = try db.bulkPut(documents, newEdits: newEdits)
                let failures: [JSON] = zip(documents, results).compactMap { doc, result in
                    guard case .failure(let error) = result else { return nil }
                    return ["id": doc["_id"] ?? .null, "error": .string(error.kind.rawValue), "reason": .string(error.reason)]
                }
                return (201, .array(failures))
            case ("POST", "_ensure_full_commit"):
                return (201, ["ok": true, "instance_start_time": "0"])
            case ("GET", let first) where !first.hasPrefix("_") || first == "_design":
                let id = rest.joined(separator: "/")
                guard let revs = parameters["open_revs"] else {
                    guard let doc = try? db.document(id: id) else { return (404, notFound) }
                    return (200, .object(doc))
                }
                let wanted = revs == "all" ? nil : (try JSON(parsing: Data(revs.utf8))).arrayValue?.compactMap(\.stringValue)
                let read = try db.openRevisions(id: id, revisions: wanted, options: DocumentReadOptions(revs: parameters["revs"] == "true", latest: true))
                return (200, .array(read.map { revision in
                    switch revision {
                    case .ok(let doc): return ["ok": .object(doc)]
                    case .missing(let rev): return ["missing": .string(rev)]
                    }
                }))
            default:
                return (404, ["error": "not_found", "reason": .string("not a call the recorded peers answered: \(method) \(path)")])
            }
        } catch let error as DocumentError {
            return (error.status, error.json)
        } catch {
            return (500, ["error": "unknown_error", "reason": .string("\(error)")])
        }
    }
}
