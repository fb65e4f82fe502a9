import Foundation
import Strata
@testable import StrataServer
import StrataDocuments
import StrataServerTestHelpers
import StrataTestHelpers
import Testing

/// What a hostile client tried against `strata serve`, each answered
/// without a crash and without a change the server refuses: untrusted
/// statuses and headers from JavaScript, credentials in `_replicator`, the
/// SQL box, cross-site posts, one database's functions spying on another's
/// documents, and CouchDB's `_users` rules.
@Suite(.serialized) struct SecurityTests {
    let admin = "admin:secret"

    /// A public database `pub` with a show function whose status comes from
    /// the query string, and an update function whose header comes from it.
    func publicDatabase(_ server: RunningServer) async throws {
        #expect(try await server.send("PUT", "/pub", user: admin).0 == 201)
        let ddoc = #"""
        {"shows": {"code": "function(doc, req) { return {code: JSON.parse(req.query.c), body: 'hi'}; }"},
         "updates": {"header": "function(doc, req) { var h = {}; h[req.query.name] = req.query.value; return [null, {headers: h, body: 'ok'}]; }"}}
        """#
        #expect(try await server.send("PUT", "/pub/_design/app", json: ddoc, user: admin).0 == 201)
    }

    @Test func aFunctionsStatusOrHeaderHTTPCannotCarryIsItsErrorNotACrash() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        try await publicDatabase(server)
        // Anonymous readers choose the status: every one outside 100–599
        // (and any non-integer) is a 500 that says why.
        for code in ["99999", "-1", "0", "1000", "99", "600", "200.5", "%22200%22"] {
            let (status, body) = try await server.send("GET", "/pub/_design/app/_show/code?c=\(code)")
            #expect(status == 500, "code \(code)")
            #expect(body?["error"] == .string("render_error"))
            #expect(body?["reason"]?.stringValue?.contains("invalid HTTP status") == true, "code \(code)")
        }
        let (ok, _, _) = try await server.sendRaw("GET", "/pub/_design/app/_show/code?c=418")
        #expect(ok == 418)
        // Header names and values that would break the response.
        for (name, value) in [("bad%20name", "x"), ("X-Ok", "a%0D%0ASet-Cookie:%20stolen=1"), ("X-Ok", "nul%00byte"), ("", "x")] {
            let (status, body) = try await server.send("POST", "/pub/_design/app/_update/header?name=\(name)&value=\(value)")
            #expect(status == 500, "\(name): \(value)")
            #expect(body?["error"] == .string("render_error"))
        }
        let (good, _, headers) = try await server.sendRaw("POST", "/pub/_design/app/_update/header?name=X-Fine&value=yes")
        #expect(good == 200 && headers["x-fine"] == "yes")
        // Still up, nothing else changed.
        #expect(try await server.send("GET", "/pub").0 == 200)
    }

    @Test func malformedRequestPartsAreRefusedNotTrappedOn() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        try await publicDatabase(server)
        #expect(try await server.send("PUT", "/pub/doc", json: "{}").0 == 201)
        // A multipart body whose boundary is empty.
        for type in ["multipart/related; boundary=", "multipart/related; boundary=;x=1", "multipart/related; boundary=\"\""] {
            let (status, _) = try await server.send("PUT", "/pub/mp", headers: ["Content-Type": type], body: Data("--\r\n{}\r\n--".utf8))
            #expect(status == 400, "\(type)")
        }
        // COPY to a Destination that names no document.
        for destination in ["?", "?rev=1-abc"] {
            #expect(try await server.send("COPY", "/pub/doc", headers: ["Destination": destination]).0 == 400)
        }
        // A filter named by a design document and nothing after the slash.
        #expect(try await server.send("GET", "/pub/_changes?filter=app/").0 == 400)
        #expect(try await server.send("GET", "/pub").0 == 200)
    }

    @Test func replicationDocumentsAndTheirPasswordsAreForServerAdminsOnly() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        #expect(try await server.send("PUT", "/_users/org.couchdb.user:bob", json: #"{"name":"bob","type":"user","roles":["reader"],"password":"apple"}"#, user: admin).0 == 201)
        // Even a `_security` that lets members in does not open it.
        #expect(try await server.send("PUT", "/_replicator/_security", json: #"{"members":{"roles":["reader"]}}"#, user: admin).0 == 200)
        let job = #"{"_id":"nightly","source":"http://alice:hunter2@127.0.0.1:1/a","target":"b","continuous":false}"#
        #expect(try await server.send("POST", "/_replicator", json: job, user: admin).0 == 201)
        let reads: [(String, String, String?)] = [
            ("GET", "/_replicator/_all_docs?include_docs=true", nil),
            ("GET", "/_replicator/nightly", nil),
            ("GET", "/_replicator/_changes?include_docs=true", nil),
            ("POST", "/_replicator/_find", #"{"selector":{}}"#),
            ("POST", "/_replicator/_bulk_get", #"{"docs":[{"id":"nightly"}]}"#),
            ("GET", "/_replicator", nil),
        ]
        for (method, path, json) in reads {
            for (user, expected) in [(nil, 401), ("bob:apple", 403)] as [(String?, Int)] {
                let (status, data, _) = try await server.sendRaw(method, path, json: json, user: user)
                #expect(status == expected, "\(method) \(path) as \(user ?? "anonymous")")
                #expect(!String(decoding: data, as: UTF8.self).contains("hunter2"))
            }
        }
        let (status, data, _) = try await server.sendRaw("GET", "/_replicator/nightly", user: admin)
        #expect(status == 200 && String(decoding: data, as: UTF8.self).contains("hunter2"))
    }

    @Test func theSQLBoxRunsReadsOnlyWhateverTheSpelling() async throws {
        let folder = URL(fileURLWithPath: try makeTemporaryPath("browse"))
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let queue = try DatabaseQueue(path: folder.appendingPathComponent("app.sqlite").path)
        try await queue.write { db in
            try db.execute(sql: "CREATE TABLE t(x); INSERT INTO t VALUES (1), (2)")
        }
        let copy = folder.appendingPathComponent("stolen.sqlite").path
        let elsewhere = URL(fileURLWithPath: try makeTemporaryPath("attached")).path
        let server = try await RunningServer.start(sqlite: folder)
        defer { server.stop() }
        let path = "/_sqlite/app.sqlite/_query"
        func run(_ sql: String, on server: RunningServer = server) async throws -> (Int, JSON?) {
            try await server.send("POST", path, json: JSON.object(["sql": .string(sql)]).text, user: admin)
        }
        for sql in ["VACUUM INTO '\(copy)'", "vacuum   main\n INTO '\(copy)'", "/* read */ VACUUM INTO '\(copy)'",
                    "ATTACH '\(elsewhere)' AS other", "SELECT 1; ATTACH DATABASE '\(elsewhere)' AS other",
                    "INSERT INTO t VALUES (3)", "CREATE TABLE u(y)", "PRAGMA user_version = 7", "PRAGMA journal_mode = DELETE"] {
            let (status, body) = try await run(sql)
            #expect(status == 403, "\(sql)")
            #expect(body?["reason"]?.stringValue?.contains("not authorized") == true, "\(sql)")
        }
        #expect(!FileManager.default.fileExists(atPath: copy))
        #expect(!FileManager.default.fileExists(atPath: elsewhere))
        // Reads, and pragmas that only report, still run.
        #expect(try await run("SELECT count(*) FROM t").1?["rows"] == [[2]])
        #expect(try await run("PRAGMA table_info(t)").0 == 200)
        #expect(try await run("PRAGMA user_version").0 == 200)
        // Writable: writes to the file itself, never to another file.
        let writable = try await RunningServer.start(sqlite: folder, sqliteWritable: true)
        defer { writable.stop() }
        #expect(try await run("INSERT INTO t VALUES (3)", on: writable).0 == 200)
        #expect(try await run("VACUUM INTO '\(copy)'", on: writable).0 == 403)
        #expect(try await run("ATTACH '\(elsewhere)' AS other", on: writable).0 == 403)
        #expect(!FileManager.default.fileExists(atPath: copy))
        // A page of another site posting a form with the browser's cached
        // Basic credentials is anonymous.
        let (forged, _) = try await writable.send("POST", path, user: admin, headers: ["Content-Type": "text/plain", "Origin": "http://evil.example"],
                                                  body: Data(#"{"sql":"VACUUM INTO '\#(copy)'"}"#.utf8))
        #expect(forged == 401)
        #expect(!FileManager.default.fileExists(atPath: copy))
    }

    @Test func crossSiteFormPostsWriteNothing() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        #expect(try await server.send("PUT", "/private", user: admin).0 == 201)
        #expect(try await server.send("PUT", "/private/_security", json: #"{"members":{"names":["admin"]}}"#, user: admin).0 == 200)
        // CouchDB's 415 for a JSON endpoint given another type, credentials or not.
        for type in ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"] {
            #expect(try await server.send("POST", "/private", user: admin, headers: ["Content-Type": type], body: Data(#"{"_id":"a"}"#.utf8)).0 == 415)
            #expect(try await server.send("POST", "/private/_bulk_docs", user: admin, headers: ["Content-Type": type], body: Data(#"{"docs":[{"_id":"b"}]}"#.utf8)).0 == 415)
        }
        // JSON from another site's page: anonymous, whatever it carries.
        let (status, _) = try await server.send("POST", "/private", json: #"{"_id":"c"}"#, user: admin, headers: ["Origin": "http://evil.example"])
        #expect(status == 401)
        #expect(try await server.send("PUT", "/private/d", json: "{}", user: admin, headers: ["Origin": "null"]).0 == 401)
        // The same request from this server's own page, or from a client that
        // is not a browser, is the admin's.
        #expect(try await server.send("POST", "/private", json: #"{"_id":"e"}"#, user: admin, headers: ["Origin": server.base.absoluteString]).0 == 201)
        #expect(try await server.send("POST", "/private", json: #"{"_id":"f"}"#, user: admin).0 == 201)
        let (_, all) = try await server.send("GET", "/private/_all_docs", user: admin)
        #expect(all?["rows"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["e", "f"])
    }

    /// The attack that worked: database B's functions patched the shared
    /// JavaScript environment, and captured what database A's map function
    /// emitted later in the same process.
    @Test func oneDatabasesFunctionsNeverSeeAnothersDocuments() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        for db in ["alpha", "bravo"] { #expect(try await server.send("PUT", "/\(db)", user: admin).0 == 201) }
        #expect(try await server.send("PUT", "/alpha/payroll", json: #"{"secret":"the-secret-salary"}"#, user: admin).0 == 201)
        #expect(try await server.send("PUT", "/alpha/_design/app", json: #"{"views":{"all":{"map":"function(doc) { emit(doc._id, doc.secret); }"}}}"#, user: admin).0 == 201)
        #expect(try await server.send("PUT", "/bravo/x", json: "{}", user: admin).0 == 201)
        let patch = #"""
        function(doc) {
          if (typeof stolen === 'undefined') {
            stolen = [];
            var realEmit = emit, realStringify = JSON.stringify;
            emit = function(k, v) { stolen.push(realStringify([k, v])); realEmit(k, v); };
            JSON.stringify = function(v) { var t = realStringify(v); stolen.push(t.slice(0, 200)); return t; };
            Object.prototype.toJSON = undefined;
            Object.defineProperty(Object.prototype, 'secret', { set: function(v) { stolen.push(v); }, configurable: true });
          }
          emit(doc._id, null);
        }
        """#
        #expect(try await server.send("PUT", "/bravo/_design/evil", json: JSON.object(["views": ["patch": ["map": .string(patch)]]]).text, user: admin).0 == 201)
        #expect(try await server.send("GET", "/bravo/_design/evil/_view/patch", user: admin).0 == 200)
        // A's index is built after B's functions ran.
        let (status, rows) = try await server.send("GET", "/alpha/_design/app/_view/all", user: admin)
        #expect(status == 200 && rows?["rows"]?.arrayValue?.first?["value"] == .string("the-secret-salary"))
        // B asks what it captured.
        let leak = "function(doc) { emit('stolen', typeof stolen === 'undefined' ? null : stolen.join('|')); }"
        #expect(try await server.send("PUT", "/bravo/_design/leak", json: JSON.object(["views": ["read": ["map": .string(leak)]]]).text, user: admin).0 == 201)
        let (_, data, _) = try await server.sendRaw("GET", "/bravo/_design/leak/_view/read", user: admin)
        let text = String(decoding: data, as: UTF8.self)
        #expect(text.contains("\"stolen\""))
        #expect(!text.contains("the-secret-salary"))
        #expect(!text.contains("payroll"))
    }

    @Test func usersFollowCouchDBsRulesWhateverTheWayIn() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        func signUp(_ body: String, user: String? = nil) async throws -> (Int, String?) {
            let doc = try JSON(parsing: body)
            let id = "org.couchdb.user:" + (doc["name"]?.stringValue ?? "x")
            let (status, answer) = try await server.send("PUT", "/_users/" + (id.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? id), json: body, user: user)
            return (status, answer?["reason"]?.stringValue)
        }
        let refused: [(String, String?, String)] = [
            (#"{"name":"_system","type":"user","roles":[],"password":"x"}"#, nil, "Username may not start with underscore."),
            (#"{"name":"a:b","type":"user","roles":[],"password":"x"}"#, nil, "Character `:` is not allowed in usernames."),
            (#"{"name":"sha","type":"user","roles":[],"password_sha":"abc"}"#, nil, "Users with password_sha must have a salt."),
            (#"{"name":"its","type":"user","roles":[],"password_scheme":"pbkdf2","iterations":"many","derived_key":"ab","salt":"cd"}"#, nil, "iterations must be a number."),
            (#"{"name":"slow","type":"user","roles":[],"password_scheme":"pbkdf2","iterations":10000000,"derived_key":"ab","salt":"cd"}"#, nil, "iterations must be a whole number"),
            (#"{"name":"norole","type":"user","password":"x"}"#, nil, "doc.roles must exist"),
            (#"{"name":"boss","type":"user","roles":["_admin"],"password":"x"}"#, admin, "No system roles (starting with underscore) in users db."),
            (#"{"name":"sneak","type":"user","roles":["_reader"],"password":"x"}"#, admin, "No system roles"),
        ]
        for (body, user, reason) in refused {
            let (status, answer) = try await signUp(body, user: user)
            #expect(status == 403, "\(body)")
            #expect(answer?.hasPrefix(reason) == true, "\(body): \(answer ?? "")")
        }
        // A replication into `_users` is held to the same rules.
        #expect(try await server.send("PUT", "/staging", user: admin).0 == 201)
        #expect(try await server.send("PUT", "/staging/org.couchdb.user:root", json: #"{"name":"root","type":"user","roles":["_admin"],"password_scheme":"pbkdf2","iterations":10,"derived_key":"00","salt":"11"}"#, user: admin).0 == 201)
        let (replicated, report) = try await server.send("POST", "/_replicate", json: #"{"source":"staging","target":"_users"}"#, user: admin)
        let history = report?["history"]?.arrayValue?.first
        #expect(replicated == 200 && history?["docs_written"] == 0 && history?["doc_write_failures"] == 1, "\(report?.text ?? "")")
        #expect(try await server.send("GET", "/_users/org.couchdb.user:root", user: admin).0 == 404)
    }

    @Test func aSessionEndsWithThePasswordOrAccountItWasOpenedWith() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        func signUp(_ name: String, roles: String = "[]") async throws -> String {
            let (status, body) = try await server.send("PUT", "/_users/org.couchdb.user:\(name)", json: #"{"name":"\#(name)","type":"user","roles":\#(roles),"password":"pw"}"#, user: admin)
            #expect(status == 201)
            return try #require(body?["rev"]?.stringValue)
        }
        func signIn(_ name: String) async throws -> String {
            let (_, _, headers) = try await server.sendWithHeaders("POST", "/_session", json: #"{"name":"\#(name)","password":"pw"}"#)
            return try #require(headers["set-cookie"]?.split(separator: ";").first.map(String.init))
        }
        func who(_ cookie: String) async throws -> JSON? {
            try await server.send("GET", "/_session", headers: ["Cookie": cookie]).1?["userCtx"]
        }
        // A password change ends the sessions opened with the old one.
        var rev = try await signUp("ann")
        let annCookie = try await signIn("ann")
        #expect(try await who(annCookie)?["name"] == .string("ann"))
        let (changed, answer) = try await server.send("PUT", "/_users/org.couchdb.user:ann", json: #"{"_rev":"\#(rev)","name":"ann","type":"user","roles":[],"password":"new"}"#, user: "ann:pw")
        #expect(changed == 201)
        rev = try #require(answer?["rev"]?.stringValue)
        #expect(try await who(annCookie)?["name"] == .null)
        // Roles an admin removes are gone from the open session at once.
        var bobRev = try await signUp("bob", roles: #"["editors"]"#)
        let bobCookie = try await signIn("bob")
        #expect(try await who(bobCookie)?["roles"] == ["editors"])
        let (_, doc) = try await server.send("GET", "/_users/org.couchdb.user:bob", user: admin)
        var edited = try #require(doc?.objectValue)
        edited["roles"] = []
        let (demoted, demotion) = try await server.send("PUT", "/_users/org.couchdb.user:bob", json: JSON.object(edited).text, user: admin)
        #expect(demoted == 201)
        bobRev = try #require(demotion?["rev"]?.stringValue)
        #expect(try await who(bobCookie)?["roles"] == [])
        #expect(try await who(bobCookie)?["name"] == .string("bob"))
        // A deleted account's session ends.
        #expect(try await server.send("DELETE", "/_users/org.couchdb.user:bob?rev=\(bobRev)", user: admin).0 == 200)
        #expect(try await who(bobCookie)?["name"] == .null)
    }

    @Test func aNameNobodyHasCostsAsMuchAsAWrongPassword() async throws {
        // Enough rounds that a derivation dwarfs a request: the refusal of a
        // missing name must cost one too (it cost none: a user enumeration).
        let directory = URL(fileURLWithPath: try makeTemporaryPath("couch"))
        var configuration = ServerConfiguration(dataDirectory: directory)
        configuration.passwordIterations = 200_000
        let server = try CouchServer(configuration)
        let users = try server.registry.database(DatabaseRegistry.usersDatabase)
        var doc: JSONObject = ["_id": "org.couchdb.user:real", "name": "real", "type": "user", "roles": []]
        for (key, value) in PasswordHash(password: "pw", iterations: 200_000).userDocumentFields { doc[key] = value }
        try await users.put(doc)
        func median(_ name: String) async throws -> Duration {
            var times: [Duration] = []
            for attempt in 0..<5 {
                let started = ContinuousClock.now
                let user = try await server.authenticator.authenticate(name: name, password: "wrong\(attempt)")
                #expect(user == nil)
                times.append(ContinuousClock.now - started)
            }
            return times.sorted()[2]
        }
        let missing = try await median("nobody"), wrong = try await median("real")
        // Equal work; a busy machine slows both, so the ratio is generous.
        #expect(missing > wrong / 4, "missing \(missing), wrong password \(wrong)")
    }

    @Test func wrongPasswordsDoNotHoldUpOtherRequests() async throws {
        // A user whose hash takes many rounds, and guesses at its password in
        // parallel: each costs one PBKDF2 derivation, one after the other.
        // And one written by an older version, past today's rules, that
        // asks for 100 times those rounds.
        let directory = URL(fileURLWithPath: try makeTemporaryPath("couch"))
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        do {
            let users = try DocumentDatabase(path: directory.appendingPathComponent("_users.couch.sqlite").path)
            var doc: JSONObject = ["_id": "org.couchdb.user:real", "name": "real", "type": "user", "roles": []]
            for (key, value) in PasswordHash(password: "pw", iterations: 100_000).userDocumentFields { doc[key] = value }
            try await users.put(doc)
            try await users.put(["_id": "org.couchdb.user:slow", "name": "slow", "type": "user", "roles": [],
                           "password_scheme": "pbkdf2", "pbkdf2_prf": "sha256", "iterations": 10_000_000,
                           "derived_key": .string(String(repeating: "ab", count: 32)), "salt": "cd"])
        }
        // Lockout off: every guess here must reach the hashing (with it on,
        // the sixth would be refused unhashed; LockoutTests test that).
        let server = try await RunningServer.start(directory: directory, configure: { $0.lockout.mode = .off })
        defer { server.stop() }
        let clock = ContinuousClock()
        let (firstRefusals, refused) = AsyncStream.makeStream(of: Void.self)
        let guessing = Task {
            try await withThrowingTaskGroup(of: ContinuousClock.Instant.self) { group in
                for guess in 0..<16 {
                    group.addTask {
                        let (status, _) = try await server.send("GET", "/_session", user: "real:guess\(guess)")
                        #expect(status == 401)
                        refused.yield()
                        return clock.now
                    }
                }
                return try await group.reduce(into: [ContinuousClock.Instant]()) { $0.append($1) }.max()!
            }
        }
        // Once the first guess is refused the others are still being
        // hashed: plain requests meanwhile are answered before they end.
        var iterator = firstRefusals.makeAsyncIterator()
        await iterator.next()
        var answered: [ContinuousClock.Instant] = []
        for _ in 0..<5 {
            #expect(try await server.send("GET", "/_up").0 == 200)
            answered.append(clock.now)
        }
        let lastRefused = try await guessing.value
        #expect(answered.max()! < lastRefused)

        // A hash asking for more rounds than the server allows is refused
        // without being computed: no dearer than a guess at 100,000 rounds.
        func timeToRefuse(_ user: String) async throws -> Duration {
            let started = clock.now
            #expect(try await server.send("GET", "/_session", user: user).0 == 401)
            return clock.now - started
        }
        let capped = try await timeToRefuse("slow:pw"), guess = try await timeToRefuse("real:guess")
        #expect(capped < guess * 20, "10,000,000 rounds refused in \(capped), a guess at 100,000 in \(guess)")
    }

    @Test func smallerHolesAreClosed() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        // A name too long for a file: CouchDB's 400, and no server path.
        let long = String(repeating: "a", count: 235)
        let (status, body) = try await server.send("PUT", "/\(long)", user: admin)
        #expect(status == 400 && body?["error"] == .string("illegal_database_name"))
        #expect(body?["reason"]?.stringValue?.contains("/tmp") == false)
        let (made, why) = try await server.send("PUT", "/" + String(repeating: "b", count: 234), user: admin)
        #expect(made == 201, "\(why?.text ?? "")")
        // A member who writes a design document lacks a right: 403, not 401.
        #expect(try await server.send("PUT", "/shared", user: admin).0 == 201)
        #expect(try await server.send("PUT", "/_users/org.couchdb.user:mo", json: #"{"name":"mo","type":"user","roles":[],"password":"pw"}"#).0 == 201)
        #expect(try await server.send("PUT", "/shared/_security", json: #"{"members":{"names":["mo"]}}"#, user: admin).0 == 200)
        #expect(try await server.send("PUT", "/shared/_design/d", json: "{}", user: "mo:pw").0 == 403)
        #expect(try await server.send("PUT", "/shared/_design/d", json: "{}").0 == 401)
        // Attachment names starting with `_` are CouchDB's.
        #expect(try await server.send("PUT", "/shared/doc", json: #"{"_attachments":{"_x":{"content_type":"text/plain","data":"aGk="}}}"#, user: admin).0 == 400)
        #expect(try await server.send("PUT", "/shared/doc2/_hidden", user: admin, headers: ["Content-Type": "text/plain"], body: Data("hi".utf8)).0 == 400)
        #expect(try await server.send("GET", "/shared/doc2", user: admin).0 == 404)
        // Parameters of the wrong type are refused, not ignored.
        #expect(try await server.send("PUT", "/shared/doc3", json: "{}", user: admin).0 == 201)
        #expect(try await server.send("GET", "/shared/doc3?open_revs=[1,2]", user: admin).0 == 400)
        for query in ["descending=maybe", "include_docs=2", "keys=%7B%22a%22:1%7D", "conflicts=yes"] {
            #expect(try await server.send("GET", "/shared/_all_docs?\(query)", user: admin).0 == 400, "\(query)")
        }
        #expect(try await server.send("GET", "/shared/_all_docs?descending=true&include_docs=false", user: admin).0 == 200)
        #expect(try await server.send("GET", "/shared/_changes?include_docs=2", user: admin).0 == 400)
        #expect(try await server.send("GET", "/shared/_changes?descending=true", user: admin).0 == 200)
    }

    @Test func requestsThatNeedNoJavaScriptDoNotWaitForFunctionsThatNeverEnd() async throws {
        // A time limit well beyond what the plain requests below take under
        // ThreadSanitizer on a loaded machine (12 s once, with eight
        // functions spinning on two cores).
        let server = try await RunningServer.start(functionTimeLimit: .seconds(40))
        defer { server.stop() }
        try await publicDatabase(server)
        #expect(try await server.send("PUT", "/pub/_design/loop", json: #"{"shows":{"spin":"function(doc, req) { while (true) {} }"}}"#, user: admin).0 == 201)
        #expect(try await server.send("PUT", "/pub/plain", json: #"{"n":1}"#, user: admin).0 == 201)
        let clock = ContinuousClock()
        // Eight functions that spin until their processes are killed.
        let spinning = Task {
            try await withThrowingTaskGroup(of: ContinuousClock.Instant.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        let (status, _) = try await server.send("GET", "/pub/_design/loop/_show/spin")
                        #expect(status == 500)
                        return clock.now
                    }
                }
                return try await group.reduce(into: [ContinuousClock.Instant]()) { $0.append($1) }.min()!
            }
        }
        // Plain reads and writes meanwhile are answered while they spin.
        var answered: [ContinuousClock.Instant] = []
        for i in 0..<5 {
            #expect(try await server.send("GET", "/pub/plain").0 == 200)
            #expect(try await server.send("PUT", "/pub/meanwhile\(i)", json: "{}").0 == 201)
            answered.append(clock.now)
        }
        let firstKilled = try await spinning.value
        #expect(answered.max()! < firstKilled)
    }

    @Test func withoutDuktapeJavaScriptSaysWhatToInstallAndTheRestWorks() async throws {
        let directory = URL(fileURLWithPath: try makeTemporaryPath("couch"))
        var configuration = ServerConfiguration(dataDirectory: directory, admins: ["admin": "secret"])
        configuration.passwordIterations = 1000
        configuration.queryServer = ["/usr/bin/env", "STRATA_DUKTAPE_LIBRARY=/nonexistent/libduktape.so.207",
                                     try RunningServer.strataBinary().path, "query-server"]
        configuration.defaultSecurity = .everyone
        let server = try CouchServer(configuration)
        let running = try await RunningServer.start(server)
        defer { running.stop() }
        try await publicDatabase(running)
        let (status, body) = try await running.send("GET", "/pub/_design/app/_show/code?c=200")
        #expect(status == 500 && body?["error"] == .string("os_process_error"))
        #expect(body?["reason"]?.stringValue?.contains("apt-get install libduktape207") == true)
        #expect(body?["reason"]?.stringValue?.contains("brew install duktape") == true)
        // Everything that needs no JavaScript still works.
        #expect(try await running.send("PUT", "/pub/doc", json: #"{"a":1}"#).0 == 201)
        #expect(try await running.send("GET", "/pub/doc").1?["a"] == 1)
    }
}
