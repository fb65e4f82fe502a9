import Foundation
import StrataDocuments
import StrataServerTestHelpers
import StrataTestHelpers
import Testing

/// `validate_doc_update` of every design document runs on every write.
@Suite(.serialized) struct ValidationTests {
    static let design = #"""
    {"validate_doc_update": "function(newDoc, oldDoc, userCtx, secObj) { if (!userCtx.name) throw({unauthorized: 'Please sign in to write.'}); if (newDoc.type === 'vote' && typeof newDoc.answer !== 'number') throw({forbidden: 'A vote needs a numeric answer.'}); if (oldDoc && oldDoc.locked && userCtx.roles.indexOf('_admin') < 0) throw({forbidden: 'Locked by ' + secObj.admins.names[0]}); }"}
    """#

    @Test func refusesAnonymousWritesAndAcceptsAnAdmins() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        let admin = "admin:secret"
        #expect(try await server.send("PUT", "/polls", user: admin).0 == 201)
        #expect(try await server.send("PUT", "/polls/_security", json: #"{"admins":{"names":["boss"],"roles":[]},"members":{"names":[],"roles":[]}}"#, user: admin).0 == 200)
        #expect(try await server.send("PUT", "/_users/org.couchdb.user:ana", json: #"{"name":"ana","type":"user","roles":[],"password":"pw"}"#).0 == 201)
        // Before the design document, anyone writes.
        #expect(try await server.send("PUT", "/polls/early", json: #"{"locked":true}"#).0 == 201)
        #expect(try await server.send("PUT", "/polls/_design/rules", json: Self.design, user: admin).0 == 201)

        // Anonymous: 401 on every kind of write, and nothing is written.
        var (status, body) = try await server.send("PUT", "/polls/v1", json: #"{"type":"vote","answer":1}"#)
        #expect(status == 401 && body == .object(["error": .string("unauthorized"), "reason": .string("Please sign in to write.")]))
        #expect(try await server.send("POST", "/polls", json: #"{"type":"vote","answer":1}"#).0 == 401)
        #expect(try await server.send("PUT", "/polls/v1/note.txt", headers: ["Content-Type": "text/plain"], body: Data("hi".utf8)).0 == 401)
        // A signed-in user: a malformed vote is forbidden, a good one written.
        (status, body) = try await server.send("PUT", "/polls/v1", json: #"{"type":"vote","answer":"one"}"#, user: "ana:pw")
        #expect(status == 403 && body?["reason"] == .string("A vote needs a numeric answer."))
        (status, body) = try await server.send("PUT", "/polls/v1", json: #"{"type":"vote","answer":1}"#, user: "ana:pw")
        #expect(status == 201)
        // The old document is given: a locked one only an admin changes.
        let (_, early) = try await server.send("GET", "/polls/early")
        let earlyRev = try #require(early?["_rev"]?.stringValue)
        (status, body) = try await server.send("PUT", "/polls/early", json: #"{"_rev":"\#(earlyRev)","locked":true,"n":2}"#, user: "ana:pw")
        #expect(status == 403 && body?["reason"] == .string("Locked by boss"))
        #expect(try await server.send("DELETE", "/polls/early?rev=\(earlyRev)", user: "ana:pw").0 == 403)
        #expect(try await server.send("PUT", "/polls/early", json: #"{"_rev":"\#(earlyRev)","locked":true,"n":2}"#, user: admin).0 == 201)
        // _bulk_docs: the refused documents get their error, the others are written.
        (status, body) = try await server.send("POST", "/polls/_bulk_docs", json: #"{"docs":[{"_id":"v2","type":"vote","answer":2},{"_id":"v3","type":"vote","answer":"x"}]}"#, user: "ana:pw")
        #expect(status == 201)
        #expect(body?.arrayValue?[0]["ok"] == .bool(true))
        #expect(body?.arrayValue?[1] == .object(["id": .string("v3"), "error": .string("forbidden"), "reason": .string("A vote needs a numeric answer.")]))
        // Replicated writes are validated too.
        (status, _) = try await server.send("POST", "/polls/_bulk_docs", json: #"{"new_edits":false,"docs":[{"_id":"v4","_rev":"1-abc","type":"vote","answer":"x"}]}"#, user: "ana:pw")
        #expect(status == 201)
        #expect(try await server.send("GET", "/polls/v4").0 == 404)
        // Design and local documents are not validated.
        #expect(try await server.send("PUT", "/polls/_local/checkpoint", json: "{}").0 == 201)
        let (_, info) = try await server.send("GET", "/polls")
        #expect(info?["doc_count"] == .int(4))  // early, _design/rules, v1, v2
        // Deleting the design document ends the rules.
        let (_, rules) = try await server.send("GET", "/polls/_design/rules")
        #expect(try await server.send("DELETE", "/polls/_design/rules?rev=\(rules?["_rev"]?.stringValue ?? "")", user: admin).0 == 200)
        #expect(try await server.send("PUT", "/polls/v5", json: #"{"type":"vote","answer":"free"}"#).0 == 201)
    }

    /// Refuses documents marked `bad` and attachments named `evil.txt`; an
    /// update function that saves its request's body.
    static let rules = #"""
    {"validate_doc_update": "function(n) { if (n.bad) throw({forbidden: 'no bad docs'}); if (n._attachments && n._attachments['evil.txt']) throw({forbidden: 'no evil attachments'}); }",
     "updates": {"save": "function(doc, req) { return [JSON.parse(req.body), 'saved']; }"}}
    """#

    @Test func everyDoorIntoADatabaseValidates() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        let admin = "admin:secret"
        for name in ["guarded", "scheduled", "src"] { #expect(try await server.send("PUT", "/\(name)", user: admin).0 == 201) }
        for name in ["guarded", "scheduled"] {
            #expect(try await server.send("PUT", "/\(name)/_design/v", json: Self.rules, user: admin).0 == 201)
        }
        func absent(_ path: String) async throws -> Bool { try await server.send("GET", path, user: admin).0 == 404 }

        // PUT, and POST without an id.
        #expect(try await server.send("PUT", "/guarded/direct", json: #"{"bad":true}"#).1?["reason"] == "no bad docs")
        #expect(try await server.send("POST", "/guarded", json: #"{"bad":true}"#).0 == 403)
        // _bulk_docs, with and without ids, and replicated (new_edits=false).
        let (_, results) = try await server.send("POST", "/guarded/_bulk_docs", json: #"{"docs":[{"bad":true},{"_id":"b1","bad":true},{"_id":"ok1"}]}"#)
        #expect(results?.arrayValue?.map { $0["error"] ?? $0["ok"] ?? .null } == [.string("forbidden"), .string("forbidden"), .bool(true)])
        let (_, replicated) = try await server.send("POST", "/guarded/_bulk_docs", json: #"{"new_edits":false,"docs":[{"_id":"r1","_rev":"1-abc","bad":true}]}"#)
        #expect(replicated?.arrayValue?.first?["error"] == "forbidden")
        #expect(try await absent("/guarded/b1"))
        #expect(try await absent("/guarded/r1"))
        #expect(try await server.send("GET", "/guarded", user: admin).1?["doc_count"] == 2)  // _design/v, ok1
        // An attachment.
        #expect(try await server.send("PUT", "/guarded/att/evil.txt", headers: ["Content-Type": "text/plain"], body: Data("x".utf8)).0 == 403)
        #expect(try await absent("/guarded/att"))
        #expect(try await server.send("PUT", "/guarded/att/fine.txt", headers: ["Content-Type": "text/plain"], body: Data("x".utf8)).0 == 201)
        // An update function's document.
        let (updated, _) = try await server.send("POST", "/guarded/_design/v/_update/save/u1", json: #"{"_id":"u1","bad":true}"#)
        #expect(updated == 403)
        #expect(try await absent("/guarded/u1"))

        // A local replication (it wrote the bad document unchecked).
        #expect(try await server.send("PUT", "/src/evil", json: #"{"bad":true}"#).0 == 201)
        #expect(try await server.send("PUT", "/src/fine", json: #"{"bad":false}"#).0 == 201)
        let (_, answer) = try await server.send("POST", "/_replicate", json: #"{"source":"src","target":"guarded"}"#, user: admin)
        #expect(answer?["history"]?.arrayValue?.first?["doc_write_failures"] == 1, "\(answer?.text ?? "")")
        #expect(try await absent("/guarded/evil"))
        #expect(try await server.send("GET", "/guarded/fine").0 == 200)
        // A `_replicator` job.
        #expect(try await server.send("PUT", "/_replicator/job", json: #"{"source":"src","target":"scheduled"}"#, user: admin).0 == 201)
        #expect(try await eventually { try await server.send("GET", "/_replicator/job", user: admin).1?["_replication_state"] == "completed" })
        #expect(try await absent("/scheduled/evil"))
        #expect(try await server.send("GET", "/scheduled/fine").0 == 200)

        // A design document a replication brings in takes effect at once,
        // though the database's rules were read before it came.
        #expect(try await server.send("PUT", "/copy", user: admin).0 == 201)
        #expect(try await server.send("PUT", "/copy/first", json: #"{"bad":false}"#).0 == 201)
        #expect(try await server.send("POST", "/_replicate", json: #"{"source":"guarded","target":"copy","doc_ids":["_design/v"]}"#, user: admin).0 == 200)
        #expect(try await server.send("PUT", "/copy/later", json: #"{"bad":true}"#).0 == 403)
    }
}
