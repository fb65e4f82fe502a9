import Foundation
import StrataDocuments
import StrataServerTestHelpers
import StrataTestHelpers
import Testing

/// `_changes?filter=ddoc/name`: a design document's filter function decides
/// which changes a feed shows, in every kind of feed.
@Suite(.serialized) struct FilterTests {
    static let design = #"""
    {"filters": {"kind": "function(doc, req) { return doc.type === req.query.kind; }",
                 "live": "function(doc) { return !doc._deleted; }"}}
    """#

    @Test func filterFunctionsChooseTheChanges() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        let admin = "admin:secret"
        #expect(try await server.send("PUT", "/feed", user: admin).0 == 201)
        #expect(try await server.send("PUT", "/feed/_design/app", json: Self.design, user: admin).0 == 201)
        for (id, type) in [("a", "vote"), ("b", "question"), ("c", "vote"), ("d", "vote")] {
            #expect(try await server.send("PUT", "/feed/\(id)", json: #"{"type":"\#(type)"}"#).0 == 201)
        }
        func ids(_ body: JSON?) -> [String] { body?["results"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? [] }
        // Normal feed, with and without include_docs, with a limit.
        var (status, body) = try await server.send("GET", "/feed/_changes?filter=app/kind&kind=vote")
        #expect(status == 200 && ids(body) == ["a", "c", "d"])
        #expect(body?["results"]?.arrayValue?.first?["doc"] == nil)
        (_, body) = try await server.send("GET", "/feed/_changes?filter=app/kind&kind=question&include_docs=true")
        #expect(ids(body) == ["b"] && body?["results"]?.arrayValue?.first?["doc"]?["type"] == .string("question"))
        (_, body) = try await server.send("GET", "/feed/_changes?filter=app/kind&kind=vote&limit=2")
        #expect(ids(body) == ["a", "c"])
        let lastSeq = try #require(body?["last_seq"]?.stringValue)
        (_, body) = try await server.send("GET", "/feed/_changes?filter=app/kind&kind=vote&since=\(lastSeq)")
        #expect(ids(body) == ["d"])
        // Longpoll: a change the filter drops does not wake it; one it keeps does.
        let (_, info) = try await server.send("GET", "/feed")
        let now = try #require(info?["update_seq"]?.stringValue)
        async let waiting = server.send("GET", "/feed/_changes?feed=longpoll&filter=app/kind&kind=vote&since=\(now)&timeout=60000")
        #expect(try await server.send("PUT", "/feed/e", json: #"{"type":"question"}"#).0 == 201)
        #expect(try await server.send("PUT", "/feed/f", json: #"{"type":"vote"}"#).0 == 201)
        (status, body) = try await waiting
        #expect(status == 200 && ids(body) == ["f"])
        // Continuous, until its timeout.
        let (_, data, _) = try await server.sendRaw("GET", "/feed/_changes?feed=continuous&filter=app/kind&kind=question&timeout=300")
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap { try? JSON(parsing: String($0)) }
        #expect(lines.compactMap { $0["id"]?.stringValue } == ["b", "e"])
        #expect(lines.last?["last_seq"] != nil)
        // POST works the same; a missing function or document is a 404.
        (_, body) = try await server.send("POST", "/feed/_changes?filter=app/kind&kind=question", json: "{}")
        #expect(ids(body) == ["b", "e"])
        (status, body) = try await server.send("GET", "/feed/_changes?filter=app/nope")
        #expect(status == 404 && body?["reason"] == .string("missing json key: nope"))
        #expect(try await server.send("GET", "/feed/_changes?filter=other/kind").0 == 404)
        #expect(try await server.send("GET", "/feed/_changes?filter=nonsense").0 == 400)
    }

    /// CouchDB sends a continuous feed's changes so far whatever its
    /// timeout, which counts only the wait for new ones: a short timeout
    /// on a busy machine (a slow filter, a slow read) loses nothing.
    @Test func aContinuousFeedSendsItsChangesSoFarWhateverItsTimeout() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        #expect(try await server.send("PUT", "/feed", user: "admin:secret").0 == 201)
        #expect(try await server.send("PUT", "/feed/_design/app", json: Self.design, user: "admin:secret").0 == 201)
        for i in 0..<30 {
            #expect(try await server.send("PUT", "/feed/d\(i)", json: #"{"type":"\#(i % 3 == 0 ? "question" : "vote")"}"#).0 == 201)
        }
        func ids(_ path: String) async throws -> [String] {
            let (_, data, _) = try await server.sendRaw("GET", path)
            let lines = String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap { try? JSON(parsing: String($0)) }
            #expect(lines.last?["last_seq"] != nil)
            return lines.compactMap { $0["id"]?.stringValue }
        }
        let questions = stride(from: 0, to: 30, by: 3).map { "d\($0)" }
        #expect(try await ids("/feed/_changes?feed=continuous&filter=app/kind&kind=question&timeout=1") == questions)
        #expect(try await ids("/feed/_changes?feed=continuous&timeout=1").count == 31)
        #expect(try await ids("/feed/_changes?feed=continuous&timeout=1&limit=4").count == 4)
    }
}
