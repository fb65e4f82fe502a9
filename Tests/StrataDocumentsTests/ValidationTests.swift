import Foundation
import StrataDocuments
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
}
