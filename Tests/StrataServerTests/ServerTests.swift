import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import StrataDocuments
import StrataServer
import StrataServerTestHelpers
import StrataTestHelpers
import Testing

@Suite(.serialized) struct ServerTests {
    @Test func documentsOverHTTPAsCouchDBAnswers() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        var (status, body) = try await server.send("GET", "/")
        #expect(status == 200 && body?["couchdb"] == .string("Welcome"))
        (status, body) = try await server.send("PUT", "/voting", user: "admin:secret")
        #expect(status == 201)
        (status, body) = try await server.send("PUT", "/voting", user: "admin:secret")
        #expect(status == 412 && body?["error"] == .string("file_exists"))
        (status, body) = try await server.send("PUT", "/Bad", user: "admin:secret")
        #expect(status == 400 && body?["error"] == .string("illegal_database_name"))
        (status, body) = try await server.send("PUT", "/voting/q1", json: #"{"question":"Tabs?"}"#)
        #expect(status == 201)
        let rev = try #require(body?["rev"]?.stringValue)
        (status, body) = try await server.send("PUT", "/voting/q1", json: #"{"question":"stale"}"#)
        #expect(status == 409 && body?["error"] == .string("conflict"))
        (status, body) = try await server.send("PUT", "/voting/q1", json: #"{"_rev":"\#(rev)","question":"Tabs or spaces?"}"#)
        #expect(status == 201)
        (status, body) = try await server.send("GET", "/voting/q1")
        #expect(body?["question"] == .string("Tabs or spaces?"))
        (status, body) = try await server.send("GET", "/voting/nope")
        #expect(status == 404 && body == .object(["error": .string("not_found"), "reason": .string("missing")]))
        (status, body) = try await server.send("PUT", "/voting/bad", json: #"{"question": "#)
        #expect(status == 400 && body?["error"] == .string("bad_request"))
        (status, body) = try await server.send("GET", "/voting")
        #expect(body?["doc_count"] == .int(1))
        #expect(body?["update_seq"]?.stringValue == "2")
        #expect(body?["instance_start_time"]?.stringValue != nil)
        (status, body) = try await server.send("POST", "/voting/_revs_diff", json: #"{"q1":["9-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"]}"#)
        #expect(body?["q1"]?["missing"] == .array([.string("9-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")]))
        (status, body) = try await server.send("POST", "/voting/_bulk_docs", json: #"{"docs":[{"_id":"x","_rev":"1-abc"}],"new_edits":false}"#)
        #expect(status == 201 && body == .array([]))
        (status, body) = try await server.send("POST", "/voting/_find", json: #"{"selector":{"a":{"$bogus":1}}}"#)
        #expect(status == 400 && body == .object(["error": .string("invalid_operator"), "reason": .string("Invalid operator: $bogus")]))
        (status, body) = try await server.send("POST", "/voting/_find", json: #"{"selector":{"a":1},"sort":["a"]}"#)
        #expect(status == 400 && body?["error"] == .string("no_usable_index"))
    }

    /// `_find` over HTTP compares and sorts text in CouchDB's collation, as
    /// a real CouchDB answers: `"apple"` is not after `"Z"`, and `"B"` sorts
    /// after `"a"` and `"b"`.
    @Test func findOverHTTPUsesCouchDBsCollation() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        let admin = "admin:secret"
        #expect(try await server.send("PUT", "/words", user: admin).0 == 201)
        let docs = ["Zebra", "B", "apple", "b", "a"].map { #"{"v":"\#($0)"}"# }.joined(separator: ",")
        #expect(try await server.send("POST", "/words/_bulk_docs", json: #"{"docs":[\#(docs)]}"#, user: admin).0 == 201)
        var (status, body) = try await server.send("POST", "/words/_find", json: #"{"selector":{"v":{"$gt":"Z"}}}"#, user: admin)
        #expect(status == 200 && body?["docs"]?.arrayValue?.compactMap { $0["v"]?.stringValue } == ["Zebra"])
        #expect(try await server.send("POST", "/words/_index", json: #"{"index":{"fields":["v"]},"name":"by-v"}"#, user: admin).0 == 200)
        (status, body) = try await server.send("POST", "/words/_find", json: #"{"selector":{"v":{"$gte":"a"}},"sort":["v"],"fields":["v"]}"#, user: admin)
        #expect(status == 200 && body?["docs"] == .array(["a", "apple", "b", "B", "Zebra"].map { .object(["v": .string($0)]) }))
    }

    /// Malformed requests get CouchDB's error and status, never a 500, and
    /// write nothing.
    @Test func badRequestsGetCouchDBsErrorsNeverA500() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        let admin = "admin:secret"
        #expect(try await server.send("PUT", "/t", user: admin).0 == 201)
        let cases: [(String, String, String?, Int, String)] = [
            ("POST", "/t/_bulk_docs", #"{"docs":"#, 400, "bad_request"),
            ("POST", "/t/_bulk_docs", #"{"docs":[1]}"#, 400, "bad_request"),
            ("POST", "/t/_find", #"{"selector":{"a":{"$regex":"("}}}"#, 400, "bad_request"),
            ("PUT", "/t/d?rev=abc", "{}", 400, "bad_request"),
            ("PUT", "/t/d", #"{"_rev":5}"#, 400, "bad_request"),
            ("PUT", "/t/d?new_edits=false", "{}", 400, "bad_request"),
            ("GET", "/t/d?open_revs=%5Bbad", nil, 400, "bad_request"),
            ("POST", "/t/_revs_diff", #"{"d":"x"}"#, 400, "bad_request"),
            ("POST", "/t/_bulk_get", #"{"docs":[1]}"#, 400, "bad_request"),
            ("POST", "/t/_all_docs", #"{"keys":5}"#, 400, "bad_request"),
            ("GET", "/t/_changes?limit=-1", nil, 400, "query_parse_error"),
            ("GET", "/t/_changes?since=xyz", nil, 400, "bad_request"),
            ("PUT", "/t/_security", "[1]", 400, "bad_request"),
            ("PUT", "/t/att", #"{"_attachments":{"a.txt":{"data":"!!!"}}}"#, 400, "bad_request"),
            ("PUT", "/t/_design/x", #"{"views":5}"#, 400, "invalid_design_doc"),
            ("PUT", "/t/%FF", "{}", 400, "bad_request"),
            ("PUT", "/t/_bogus", "{}", 400, "illegal_docid"),
            ("POST", "/t", #"{"_id":5}"#, 400, "illegal_docid"),
            ("PUT", "/Bad", nil, 400, "illegal_database_name"),
        ]
        for (method, path, body, status, error) in cases {
            let (got, answer) = try await server.send(method, path, json: body, user: admin)
            #expect(got == status && answer?["error"] == .string(error), "\(method) \(path): \(got) \(String(describing: answer))")
        }
        let oversized = Data(count: (64 << 20) + 1)
        let (status, answer) = try await server.send("PUT", "/t/big", user: admin, headers: ["Content-Type": "application/json"], body: oversized)
        #expect(status == 413 && answer?["error"] == .string("too_large"))
        #expect(try await server.send("GET", "/t", user: admin).1?["doc_count"] == .int(0))
    }

    /// Concurrent writes are committed together and each gets its own
    /// answer: all new documents saved, and of two creations of one id,
    /// exactly one wins.
    @Test func concurrentWritesEachGetTheirAnswer() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        _ = try await server.send("PUT", "/db", user: "admin:secret")
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for i in 0..<40 {
                group.addTask { try await server.send("PUT", "/db/doc\(i)", json: #"{"n":\#(i)}"#).0 }
                group.addTask { try await server.send("PUT", "/db/same", json: #"{"n":\#(i)}"#).0 }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses.filter { $0 == 201 }.count == 41)
        #expect(statuses.filter { $0 == 409 }.count == 39)
        let (_, info) = try await server.send("GET", "/db")
        #expect(info?["doc_count"] == .int(41))
    }

    @Test func longpollWakesOnAWrite() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        _ = try await server.send("PUT", "/db", user: "admin:secret")
        async let waiting = server.send("GET", "/db/_changes?feed=longpoll&since=0&timeout=60000")
        // The write lands while the longpoll waits on the empty database (or
        // before it starts: either way the answer holds this change, and a
        // longpoll that missed the wake-up would time out empty).
        _ = try await server.send("PUT", "/db/late", json: "{}")
        let (status, body) = try await waiting
        #expect(status == 200)
        #expect(body?["results"]?.arrayValue?.first?["id"] == .string("late"))
    }

    /// Each route as anonymous and as a server admin (Strata has no other
    /// users yet): creating, deleting, `_security` and design documents
    /// need the admin; a database with members refuses anonymous readers;
    /// nothing refused is written.
    @Test func authorization() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        let admin = "admin:secret"
        #expect(try await server.send("PUT", "/db").0 == 401)
        #expect(try await server.send("PUT", "/db", user: "admin:wrong").0 == 401)
        #expect(try await server.send("PUT", "/db", user: admin).0 == 201)
        #expect(try await server.send("PUT", "/db/_design/app", json: "{}").0 == 401)
        // In a batch, the engine refuses the design document alone (CouchDB
        // answers 201 with the row's error).
        let (bulk, rows) = try await server.send("POST", "/db/_bulk_docs", json: #"{"docs":[{"_id":"_design/x"}]}"#)
        #expect(bulk == 201 && rows?.arrayValue?.first?["error"] == "unauthorized")
        #expect(try await server.send("PUT", "/db/_design/app", json: "{}", user: admin).0 == 201)
        #expect(try await server.send("PUT", "/db/_security", json: #"{"members":{"names":["bob"]}}"#).0 == 401)
        #expect(try await server.send("GET", "/db/_design/x").0 == 404)
        #expect(try await server.send("PUT", "/db/_security", json: #"{"members":{"names":["bob"]}}"#, user: admin).0 == 200)
        #expect(try await server.send("GET", "/db/_all_docs").0 == 401)
        #expect(try await server.send("PUT", "/db/doc", json: "{}").0 == 401)
        #expect(try await server.send("GET", "/db/_all_docs", user: admin).0 == 200)
        #expect(try await server.send("DELETE", "/db").0 == 401)
        let (_, info) = try await server.send("GET", "/db", user: admin)
        #expect(info?["doc_count"] == .int(1))
        #expect(try await server.send("DELETE", "/db", user: admin).0 == 200)
        #expect(try await server.send("GET", "/db", user: admin).0 == 404)
    }
}
