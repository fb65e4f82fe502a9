import Foundation
import StrataDocuments
import StrataServerTestHelpers
import StrataTestHelpers
import Testing

/// The seed's voting device: its design document stored verbatim, its
/// update handler run by `strata query-server`, and its calls answered as
/// CouchDB answers them (transcripts/real-voting.txt).
@Suite(.serialized) struct UpdateHandlerTests {
    func makeVoting(_ server: RunningServer) async throws {
        let admin = "admin:secret"
        #expect(try await server.send("PUT", "/voting", user: admin).0 == 201)
        #expect(try await server.send("PUT", "/voting/q1", json: SeedVoting.question).0 == 201)
        #expect(try await server.send("PUT", "/voting/_design/voting", json: SeedVoting.design, user: admin).0 == 201)
    }

    @Test func theSeedsCallsAreAnsweredAsCouchDBAnswersThem() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        try await makeVoting(server)
        // chooseQuestion: _all_docs, an id not starting with "_", then the document.
        let (_, listing) = try await server.send("GET", "/voting/_all_docs")
        let ids = listing?["rows"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
        #expect(ids == ["_design/voting", "q1"])
        let (status, question) = try await server.send("GET", "/voting/q1")
        #expect(status == 200 && question?["answers"]?.arrayValue?.count == 2)
        // The vote, as the seed posts it.
        let (voteStatus, body, headers) = try await server.sendRaw("POST", "/voting/_design/voting/_update/addvote/q1",
                                                                  json: #"{"answer":"1","uid":"device-7"}"#)
        #expect(voteStatus == 201)
        #expect(headers["x-couch-id"] == "q1")
        let newRev = try #require(headers["x-couch-update-newrev"])
        #expect(newRev.hasPrefix("2-") && newRev.count == 34)
        // The answer is toJSON(doc): the document the function saw, with the vote.
        let answered = try JSON(parsing: body)
        #expect(answered["answers"]?.arrayValue?[1]["votes"] == .array([.string("device-7")]))
        let (_, stored) = try await server.send("GET", "/voting/q1")
        #expect(stored?["_rev"]?.stringValue == newRev)
        #expect(stored?["answers"]?.arrayValue?[1]["votes"] == .array([.string("device-7")]))
        #expect(stored?["answers"]?.arrayValue?[0]["votes"] == .array([]))
    }

    @Test func errorsAreCouchDBs() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        try await makeVoting(server)
        let admin = "admin:secret"
        var (status, body) = try await server.send("GET", "/voting/_design/voting/_update/addvote/q1")
        #expect(status == 405 && body == .object(["error": .string("method_not_allowed"), "reason": .string("Update functions do not allow GET")]))
        (status, body) = try await server.send("POST", "/voting/_design/voting/_update/nofn/q1", json: "{}")
        #expect(status == 404 && body == .object(["error": .string("not_found"), "reason": .string("missing json key: nofn")]))
        // The transcript's handler: a code and json of its own, no document.
        let vote = #"""
        {"updates": {
          "vote": "function(doc, req) { if (!doc) return [null, {code: 404, json: {error: 'not_found', reason: 'no poll'}}]; if (req.query.choice === 'bad') throw({forbidden: 'unknown choice'}); return [null, {code: 202, headers: {'X-Poll': doc._id}, body: 'seen ' + req.method + ' ' + req.id + ' by ' + (req.userCtx.name || 'nobody') + ' in ' + req.userCtx.db}]; }",
          "closed": "function(doc, req) { throw(['error', 'poll_closed', 'voting has ended']); }"
        }}
        """#
        #expect(try await server.send("PUT", "/voting/_design/app", json: vote, user: admin).0 == 201)
        (status, body) = try await server.send("POST", "/voting/_design/app/_update/vote/nosuch", json: "{}")
        #expect(status == 404 && body == .object(["error": .string("not_found"), "reason": .string("no poll")]))
        (status, body) = try await server.send("POST", "/voting/_design/app/_update/vote/q1?choice=bad", json: "{}")
        #expect(status == 403 && body == .object(["error": .string("forbidden"), "reason": .string("unknown choice")]))
        // A function's own error name comes through the engine unchanged.
        (status, body) = try await server.send("POST", "/voting/_design/app/_update/closed/q1", json: "{}")
        #expect(status == 500 && body == .object(["error": .string("poll_closed"), "reason": .string("voting has ended")]), "\(String(describing: body))")
        let (seenStatus, seen, headers) = try await server.sendRaw("PUT", "/voting/_design/app/_update/vote/q1", json: "{}", user: admin)
        #expect(seenStatus == 202 && headers["x-poll"] == "q1")
        #expect(String(decoding: seen, as: UTF8.self) == "seen PUT q1 by admin in voting")
        let (_, info) = try await server.send("GET", "/voting")
        #expect(info?["doc_count"] == .int(3))
    }

    /// The request object as CouchDB builds it, and CommonJS modules kept
    /// in the design document.
    @Test func functionsGetCouchDBsRequestAndModules() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        try await makeVoting(server)
        let design = #"""
        {"lib": {"text": "exports.shout = function (s) { return s.toUpperCase() + '!'; };",
                 "util": "var text = require('./text'); exports.greet = function (name) { return text.shout('hello ' + name); };"},
         "updates": {"echo": "function(doc, req) { var util = require('lib/util'); log('echo called'); return [null, {json: {greeting: util.greet(req.form.name || req.query.name), id: req.id, method: req.method, path: req.path, query: req.query, user: req.userCtx, form: req.form, body: req.body, peer: req.peer, uuid: req.uuid.length, db: req.info.db_name, members: req.secObj.members || null, isArray: isArray([1]), sum: sum([1, 2, 3]), ct: req.headers['Content-Type']}}]; }"}}
        """#
        #expect(try await server.send("PUT", "/voting/_design/app", json: design, user: "admin:secret").0 == 201)
        let (status, body) = try await server.send("POST", "/voting/_design/app/_update/echo/q1?name=ana", user: "admin:secret",
                                                   headers: ["Content-Type": "application/x-www-form-urlencoded"], body: Data("name=bob+b&x=1".utf8))
        #expect(status == 200)
        #expect(body?["greeting"] == .string("HELLO BOB B!"))
        #expect(body?["id"] == .string("q1") && body?["method"] == .string("POST"))
        #expect(body?["path"] == .array(["voting", "_design", "app", "_update", "echo", "q1"].map(JSON.string)))
        #expect(body?["query"] == .object(["name": .string("ana")]))
        #expect(body?["user"] == .object(["name": .string("admin"), "roles": .array([.string("_admin")]), "db": .string("voting")]))
        #expect(body?["form"] == .object(["name": .string("bob b"), "x": .string("1")]))
        #expect(body?["body"] == .string("name=bob+b&x=1"))
        #expect(body?["peer"] == .string("127.0.0.1") && body?["uuid"] == .int(32) && body?["db"] == .string("voting"))
        #expect(body?["isArray"] == .bool(true) && body?["sum"] == .int(6))
        #expect(body?["ct"] == .string("application/x-www-form-urlencoded"))
        // A require of a path that is not there is the function's error.
        let broken = #"{"updates": {"bad": "function(doc, req) { require('lib/nothing'); return [null, 'x']; }"}}"#
        #expect(try await server.send("PUT", "/voting/_design/broken", json: broken, user: "admin:secret").0 == 201)
        let (badStatus, bad) = try await server.send("POST", "/voting/_design/broken/_update/bad", json: "{}")
        #expect(badStatus == 500 && bad?["error"] == .string("invalid_require_path"))
    }

    /// 100 devices vote at once on one question: every call answers 201
    /// and every vote is in the document (CouchDB would answer 409 to all
    /// but one of the racing calls).
    @Test func concurrentVotesAreAllCounted() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        try await makeVoting(server)
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for device in 0..<100 {
                group.addTask {
                    try await server.send("POST", "/voting/_design/voting/_update/addvote/q1", json: #"{"answer":"\#(device % 2)","uid":"device-\#(device)"}"#).0
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses.allSatisfy { $0 == 201 }, "\(statuses.filter { $0 != 201 })")
        let (_, stored) = try await server.send("GET", "/voting/q1")
        let votes = (stored?["answers"]?.arrayValue ?? []).flatMap { $0["votes"]?.arrayValue ?? [] }.compactMap(\.stringValue)
        #expect(votes.count == 100)
        #expect(Set(votes) == Set((0..<100).map { "device-\($0)" }))
        #expect(stored?["_rev"]?.stringValue?.hasPrefix("101-") == true)
    }

    /// A function that never ends is stopped at the time limit and one
    /// that allocates without end at the memory limit; both answer 500
    /// with CouchDB's error body, and the server goes on serving.
    @Test func runawayFunctionsAreStopped() async throws {
        let server = try await RunningServer.start(functionTimeLimit: .seconds(2))
        defer { server.stop() }
        try await makeVoting(server)
        let runaway = #"""
        {"updates": {
          "loop": "function(doc, req) { while (true) {} }",
          "grow": "function(doc, req) { var s = 'x', kept = []; while (true) { s = s + s; kept.push(s); } }"
        }}
        """#
        #expect(try await server.send("PUT", "/voting/_design/runaway", json: runaway, user: "admin:secret").0 == 201)
        let started = ContinuousClock.now
        var (status, body) = try await server.send("POST", "/voting/_design/runaway/_update/loop/q1", json: "{}")
        #expect(status == 500 && body?["error"] == .string("os_process_error"), "\(String(describing: body))")
        #expect(ContinuousClock.now - started < .seconds(60))
        (status, body) = try await server.send("POST", "/voting/_design/runaway/_update/grow/q1", json: "{}")
        #expect(status == 500 && body?["error"]?.stringValue != nil && body?["reason"]?.stringValue != nil, "\(String(describing: body))")
        // Still serving, functions included.
        (status, _) = try await server.send("POST", "/voting/_design/voting/_update/addvote/q1", json: #"{"answer":"0","uid":"after"}"#)
        #expect(status == 201)
        let (_, stored) = try await server.send("GET", "/voting/q1")
        #expect(stored?["answers"]?.arrayValue?[0]["votes"] == .array([.string("after")]))
    }
}
