import Foundation
import StrataDocuments
import StrataServerTestHelpers
import StrataTestHelpers
import Testing

/// `_all_docs`, views, `_changes` and `_find` are streamed as CouchDB
/// streams them, chunked, a page of 1,000 rows at a time: these answers
/// cross several pages, and each row must come once, in order.
@Suite struct LongAnswersTests {
    let admin = "admin:secret"

    func server(documents count: Int) async throws -> RunningServer {
        let server = try await RunningServer.start()
        #expect(try await server.send("PUT", "/db", user: admin).0 == 201)
        let docs = (0..<count).map { String(format: #"{"_id":"d%05d","k":%d}"#, $0, $0 % 3) }.joined(separator: ",")
        #expect(try await server.send("POST", "/db/_bulk_docs", json: #"{"docs":[\#(docs)]}"#).0 == 201)
        return server
    }

    static func ids(_ rows: JSON?) -> [String] {
        rows?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
    }

    @Test func allDocsCrossesPagesWithEveryRowOnce() async throws {
        let server = try await server(documents: 2500)
        defer { server.stop() }
        let everything = (0..<2500).map { String(format: "d%05d", $0) }
        let (status, body, headers) = try await server.sendWithHeaders("GET", "/db/_all_docs")
        #expect(status == 200 && headers["content-length"] == nil, "chunked, no length")
        #expect(body?["total_rows"] == 2500 && body?["offset"] == 0)
        #expect(Self.ids(body?["rows"]) == everything)
        let window = try await server.send("GET", "/db/_all_docs?limit=1500&skip=700").1
        #expect(Self.ids(window?["rows"]) == Array(everything[700..<2200]) && window?["offset"] == 700)
        let backwards = try await server.send("GET", "/db/_all_docs?descending=true&include_docs=true").1
        #expect(Self.ids(backwards?["rows"]) == everything.reversed())
        #expect(backwards?["rows"]?.arrayValue?.last?["doc"]?["k"] == 0)
        let ranged = try await server.send("GET", #"/db/_all_docs?startkey="d00500"&endkey="d02000"&inclusive_end=false"#).1
        #expect(Self.ids(ranged?["rows"]) == Array(everything[500..<2000]))
    }

    @Test func aViewCrossesPagesWithRowsOfOneKeyAndDocument() async throws {
        let server = try await server(documents: 1200)
        defer { server.stop() }
        // Each document emits its key twice: rows of one key and document
        // fall across a page's end.
        #expect(try await server.send("PUT", "/db/_design/v", json: #"{"views":{"k":{"map":"function(doc) { emit(doc.k, 1); emit(doc.k, 2); }"}}}"#, user: admin).0 == 201)
        let body = try await server.send("GET", "/db/_design/v/_view/k").1
        let rows = body?["rows"]?.arrayValue ?? []
        #expect(body?["total_rows"] == 2400 && rows.count == 2400)
        let pairs = rows.map { "\($0["id"]?.stringValue ?? "")/\($0["value"]?.text ?? "")" }
        #expect(Set(pairs).count == 2400, "every row once")
        #expect(rows.map { $0["key"]?.intValue ?? -1 } == rows.map { $0["key"]?.intValue ?? -1 }.sorted(), "in key order")
        let one = try await server.send("GET", "/db/_design/v/_view/k?key=1&limit=1000&skip=300").1?["rows"]?.arrayValue ?? []
        #expect(one.count == 500 && one.allSatisfy { $0["key"] == 1 })
    }

    @Test func changesCrossPagesAndCountWhatIsLeft() async throws {
        let server = try await server(documents: 2500)
        defer { server.stop() }
        let all = try await server.send("GET", "/db/_changes").1
        #expect(all?["results"]?.arrayValue?.count == 2500 && all?["pending"] == 0 && all?["last_seq"] == "2500")
        let some = try await server.send("GET", "/db/_changes?limit=1200").1
        #expect(some?["results"]?.arrayValue?.count == 1200 && some?["pending"] == 1300 && some?["last_seq"] == "1200")
        // Through a filter, across pages: a third of them.
        let filtered = try await server.send("POST", "/db/_changes?filter=_selector", json: #"{"selector":{"k":1}}"#).1
        #expect(filtered?["results"]?.arrayValue?.count == 833)
        let (_, feed, _) = try await server.sendRaw("GET", "/db/_changes?feed=continuous&timeout=100")
        let lines = String(decoding: feed, as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 2501 && (try? JSON(parsing: String(lines.last!)))?["last_seq"] == "2500")
    }
}
