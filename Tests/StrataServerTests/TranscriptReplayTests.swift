import Foundation
import StrataDocuments
import StrataServerTestHelpers
import StrataTestHelpers
import Testing

/// Replays the request sequences real replicators sent (CouchDB 3.4.3's,
/// PouchDB's one-shot and live) against `strata serve`, building each body
/// as the replicator does from the answers before it, and checks that every
/// answer has the status and the shape that replicator needs.
@Suite(.serialized) struct TranscriptReplayTests {
    @Test(arguments: ["couchdb-replicator.log", "pouchdb-replicator.log", "pouchdb-live-sync.log"])
    func replicatorGetsTheAnswersItNeeds(_ transcript: String) async throws {
        let lines = try Transcript.requests(Transcripts.text(transcript))
        #expect(lines.count > 20)
        let server = try await RunningServer.start()
        defer { server.stop() }
        let replayer = Replayer(server: server)
        for line in lines { try await replayer.replay(line) }
        try await replayer.finish()
        #expect(replayer.checked >= lines.filter { $0.method != "===" }.count)
    }
}

enum Transcript {
    struct Request {
        var method: String
        var path: String
        var status: Int

        var segments: [String] { path.split(separator: "?")[0].split(separator: "/").map { String($0).removingPercentEncoding ?? String($0) } }
        var database: String { segments.first ?? "" }
        var query: String { path.split(separator: "?", maxSplits: 1).dropFirst().first.map(String.init) ?? "" }
    }

    /// The `METHOD /path -> STATUS` lines, in order, and a `===` request
    /// where the log starts a new replication.
    static func requests(_ text: String) -> [Request] {
        text.split(separator: "\n").compactMap { line in
            if line.hasPrefix("===") { return Request(method: "===", path: "", status: 0) }
            let words = line.split(separator: " ")
            guard words.count == 4, words[2] == "->", let status = Int(words[3]),
                  ["GET", "PUT", "POST", "HEAD", "DELETE"].contains(String(words[0])) else { return nil }
            return Request(method: String(words[0]), path: String(words[1]), status: status)
        }
    }
}

/// Plays the replicator's part: each body is built from earlier answers,
/// as the replicator built it.
final class Replayer: @unchecked Sendable {
    // @unchecked: used by one test task at a time; longpolls run as child
    // tasks that only hand their answers back through `pending`.
    let server: RunningServer
    let admin = "admin:secret"
    var checked = 0
    /// The last `_changes` results read from each database.
    var changes: [String: [JSON]] = [:]
    /// The last `_revs_diff` answer: which database was asked, and the
    /// database whose changes the request listed.
    var revsDiff: (target: String, source: String?, answer: JSON)?
    /// The documents the last `_bulk_get` returned, and from where.
    var fetched: (source: String, docs: [JSON])?
    /// The last answer to a GET of each `_local` or plain document path.
    var lastRead: [String: JSON] = [:]
    /// Longpolls waiting for a change, by database.
    var pending: [String: Task<(Int, JSON?), any Error>] = [:]
    /// The documents of a source that is not on this server (CouchDB's push
    /// reads them from its own database), each with a revision history.
    let pushSource: [JSON] = (1...6).map { i in
        let hash = String(repeating: String(i), count: 32)
        return .object(["_id": .string("vote\(i)"), "_rev": .string("1-\(hash)"), "n": .int(i),
                        "_revisions": .object(["start": .int(1), "ids": .array([.string(hash)])])])
    }
    var pushOffered = 0
    var writes = 0

    init(server: RunningServer) { self.server = server }

    func replay(_ request: Transcript.Request) async throws {
        if request.method == "===" {
            // A new replication: the replicator starts from what it reads anew.
            changes = [:]
            revsDiff = nil
            fetched = nil
            return
        }
        let segments = request.segments
        let db = request.database
        let last = segments.last ?? ""
        let what = "\(request.method) \(request.path)"

        // Longpolls wait for a change that a later request makes: they run
        // beside the replay, as the replicator ran them.
        if request.query.contains("feed=longpoll") {
            let path = request.path
            pending[db] = Task { [server, admin] in try await server.send("GET", path, user: admin) }
            return
        }
        if ["_revs_diff", "_bulk_get", "_bulk_docs"].contains(last) {
            // Built from another database's feed: that longpoll has its change by now.
            for (name, task) in pending where name != db { _ = try await settle(name, task) }
        }

        switch (request.method, segments.count, last) {
        case ("GET", 0, _):
            let (status, body) = try await server.send("GET", "/")
            expect(status == 200 && body?["uuid"]?.stringValue?.count == 32, what, body)
        case ("GET", 1, _), ("HEAD", 1, _):
            let (status, body) = try await server.send(request.method, request.path, user: admin)
            expect(status == request.status, what, status)
            if request.method == "GET", status == 200 {
                expect(body?["update_seq"] != nil && body?["instance_start_time"]?.stringValue != nil, "\(what): db info the replicator accepts", body)
            }
        case ("PUT", 1, _):
            let (status, _) = try await server.send("PUT", request.path, user: admin)
            expect(status == request.status, what, status)
        case ("GET", _, "_changes"):
            let (status, body) = try await server.send("GET", request.path, user: admin)
            expect(status == 200, what, status)
            try record(db, changesAnswer: body, what: what)
        case ("POST", _, "_revs_diff"):
            let (source, listing) = revsDiffRequest(target: db)
            let (status, body) = try await server.send("POST", request.path, json: listing.text, user: admin)
            expect(status == 200 && body?.objectValue != nil, what, body)
            for (_, entry) in body?.objectValue ?? JSONObject() {
                expect(entry["missing"]?.arrayValue != nil, "\(what): missing revisions listed", entry)
            }
            revsDiff = (db, source, body ?? .object([:]))
        case ("POST", _, "_bulk_get"):
            let wanted = bulkGetRequest(source: db)
            let (status, body) = try await server.send("POST", request.path, json: JSON.object(["docs": .array(wanted)]).text, user: admin)
            expect(status == 200, what, status)
            let results = body?["results"]?.arrayValue ?? []
            expect(results.count == wanted.count, "\(what): one result a document asked", body)
            var docs: [JSON] = []
            for result in results {
                let doc = result["docs"]?.arrayValue?.first?["ok"]
                expect(doc?["_revisions"]?["ids"]?.arrayValue?.isEmpty == false, "\(what): the revision's history for new_edits=false", result)
                if let doc { docs.append(doc) }
            }
            fetched = (db, docs)
        case ("POST", _, "_bulk_docs"):
            let (docs, replicated) = bulkDocsRequest(target: db)
            var body: JSONObject = ["docs": .array(docs)]
            if replicated { body["new_edits"] = .bool(false) }
            let (status, answer) = try await server.send("POST", request.path, json: JSON.object(body).text, user: admin)
            expect(status == 201, what, status)
            if replicated { expect(answer == .array([]), "\(what): new_edits=false answers only errors", answer) }
        case ("POST", _, "_ensure_full_commit"):
            let (status, body) = try await server.send("POST", request.path, json: "", user: admin)
            let (_, info) = try await server.send("GET", "/\(db)", user: admin)
            expect(status == 201 && body?["ok"] == .bool(true), what, body)
            // CouchDB's replicator checkpoints only when this matches the db info's.
            expect(body?["instance_start_time"] == info?["instance_start_time"], "\(what): instance_start_time as in the db info", body)
        case ("GET", _, _) where segments.count >= 2 && segments[1] == "_local":
            let (status, body) = try await server.send("GET", request.path, user: admin)
            expect(status == request.status, what, status)
            if status == 200 { expect(body?["_rev"]?.stringValue?.hasPrefix("0-") == true, "\(what): a local rev", body) }
            lastRead[request.path] = status == 200 ? body : nil
        case ("PUT", _, _) where segments.count >= 2 && segments[1] == "_local":
            var checkpoint: JSONObject = ["session_id": .string(UUID().uuidString), "source_last_seq": .string(String(writes)),
                                          "history": .array([]), "replicator": .string("replay")]
            if let rev = lastRead[request.path]?["_rev"] { checkpoint["_rev"] = rev }
            let (status, body) = try await server.send("PUT", request.path, json: JSON.object(checkpoint).text, user: admin)
            expect(status == 201 && body?["ok"] == .bool(true), what, body)
        case ("GET", _, _) where request.query.contains("open_revs="):
            // The logged rev was CouchDB's run's; ask for this server's leaf.
            let id = segments.dropFirst().joined(separator: "/")
            let (_, current) = try await server.send("GET", "/\(db)/\(id)", user: admin)
            let rev = try #require(current?["_rev"]?.stringValue)
            let openRevs = JSON.array([.string(rev)]).text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let path = "/\(db)/\(id)?revs=true&open_revs=\(openRevs)&latest=true"
            let (status, data, headers) = try await server.sendRaw("GET", path, user: admin, headers: ["Accept": "multipart/mixed"])
            expect(status == 200, what, status)
            // A JSON answer here makes CouchDB's replicator abort (open_doc_revs_failed).
            expect(headers["content-type"]?.hasPrefix("multipart/mixed") == true, "\(what): multipart/mixed", headers["content-type"])
            let text = String(decoding: data, as: UTF8.self)
            expect(text.contains(#""_revisions""#) && text.contains(rev), "\(what): the revision with its history", text)
        case ("PUT", _, _) where request.query.contains("new_edits=false"):
            // CouchDB's replicator writes design documents one at a time.
            let id = segments.dropFirst().joined(separator: "/")
            let hash = String(repeating: "d", count: 32)
            let doc: JSON = .object(["_id": .string(id), "_rev": .string("1-\(hash)"), "views": .object([:]),
                                     "_revisions": .object(["start": .int(1), "ids": .array([.string(hash)])])])
            let (status, body) = try await server.send("PUT", request.path, json: doc.text, user: admin)
            // The recorded peer refused these (409), which left CouchDB
            // retrying; a CouchDB-compatible server stores them.
            expect(status == 201 && body?["ok"] == .bool(true), what, body)
        case ("GET", _, _):
            let (status, body) = try await server.send("GET", request.path, user: admin)
            expect(status == request.status, what, status)
            lastRead[request.path] = body
        case ("PUT", _, _):
            writes += 1
            var doc = lastRead[request.path]?.objectValue ?? JSONObject()
            doc["n"] = .int(writes)
            if segments.count >= 2, segments[1] == "_design" { doc["views"] = .object([:]) }
            let (status, body) = try await server.send("PUT", request.path, json: JSON.object(doc).text, user: admin)
            expect(status == request.status, what, body)
        default:
            Issue.record("the replay does not know \(what)")
        }
        checked += 1
    }

    /// Wakes the longpolls still waiting (the transcript ends while they
    /// wait) with one write each, then checks their answers.
    func finish() async throws {
        for (db, task) in pending {
            _ = try await server.send("PUT", "/\(db)/wake-\(UUID().uuidString)", json: "{}", user: admin)
            _ = try await settle(db, task)
        }
    }

    func settle(_ db: String, _ task: Task<(Int, JSON?), any Error>) async throws -> (Int, JSON?) {
        pending[db] = nil
        checked += 1
        let (status, body) = try await task.value
        expect(status == 200, "longpoll on \(db)", status)
        try record(db, changesAnswer: body, what: "longpoll on \(db)")
        expect(body?["results"]?.arrayValue?.isEmpty == false, "a longpoll answers once a change comes", body)
        return (status, body)
    }

    func record(_ db: String, changesAnswer body: JSON?, what: String) throws {
        let results = body?["results"]?.arrayValue
        expect(results != nil && body?["last_seq"] != nil, "\(what): results and last_seq", body)
        for change in results ?? [] {
            expect(change["seq"] != nil && change["id"]?.stringValue != nil && change["changes"]?.arrayValue?.first?["rev"] != nil,
                   "\(what): seq, id and changes", change)
        }
        if let results, !results.isEmpty { changes[db] = results }
    }

    /// `{id: [revs]}` from the other database's feed, or the next slice of
    /// the off-server source when no other database is here.
    func revsDiffRequest(target: String) -> (String?, JSON) {
        if let (source, results) = changes.first(where: { $0.key != target }) {
            var listing = JSONObject()
            for change in results {
                guard let id = change["id"]?.stringValue else { continue }
                listing[id] = .array(change["changes"]?.arrayValue?.compactMap { $0["rev"] } ?? [])
            }
            return (source, .object(listing))
        }
        let slice = pushSource[min(pushOffered, pushSource.count - 1)..<min(pushOffered + 2, pushSource.count)]
        pushOffered += 2
        var listing = JSONObject()
        for doc in slice { listing[doc["_id"]!.stringValue!] = .array([doc["_rev"]!]) }
        return (nil, .object(listing))
    }

    /// What the last `_revs_diff` found missing, when it listed this
    /// database's changes; otherwise this database's last feed.
    func bulkGetRequest(source: String) -> [JSON] {
        if let diff = revsDiff, diff.source == source, let missing = diff.answer.objectValue, !missing.isEmpty {
            return missing.flatMap { id, entry in
                (entry["missing"]?.arrayValue ?? []).map { JSON.object(["id": .string(id), "rev": $0]) }
            }
        }
        return (changes[source] ?? []).compactMap { change in
            guard let id = change["id"], let rev = change["changes"]?.arrayValue?.first?["rev"] else { return nil }
            return .object(["id": id, "rev": rev])
        }
    }

    /// The documents fetched from another database (replicated, with
    /// new_edits=false), the off-server source's missing ones, or, for
    /// the transcript's own setup, a new document.
    func bulkDocsRequest(target: String) -> ([JSON], Bool) {
        if let fetched, fetched.source != target {
            self.fetched = nil
            return (fetched.docs, true)
        }
        if let diff = revsDiff, diff.target == target, diff.source == nil {
            let missing = Set(diff.answer.objectValue?.keys ?? [])
            return (pushSource.filter { missing.contains($0["_id"]?.stringValue ?? "") }, true)
        }
        writes += 1
        return ([.object(["_id": .string("bulk\(writes)"), "n": .int(writes)])], false)
    }

    func expect(_ condition: Bool, _ what: String, _ detail: Any?, sourceLocation: SourceLocation = #_sourceLocation) {
        if !condition { Issue.record("\(what): \(String(describing: detail))", sourceLocation: sourceLocation) }
    }
}
