import Foundation
import StrataDocuments
import StrataServerTestHelpers
import StrataTestHelpers
import Testing

/// Map/reduce views: CouchDB's collation, the built-in and JavaScript
/// reduces, the query parameters, and an index kept up to date from the
/// changes feed.
@Suite(.serialized) struct ViewTests {
    /// The ordering table of CouchDB's "Views Collation" documentation, in order.
    static let collationTable: [String] = [
        "null", "false", "true",
        "1", "2", "3.0", "4",
        #""a""#, #""A""#, #""aa""#, #""b""#, #""B""#, #""ba""#, #""bb""#,
        #"["a"]"#, #"["b"]"#, #"["b","c"]"#, #"["b","c", "a"]"#, #"["b","d"]"#, #"["b","d", "e"]"#,
        #"{"a":1}"#, #"{"a":2}"#, #"{"b":1}"#, #"{"b":2}"#, #"{"b":2, "a":1}"#, #"{"b":2, "c":2}"#,
    ]

    /// The 7-bit ASCII sequence the same page shows ICU giving (space first).
    static let asciiSequence = " `^_-,;:!?.'\"()[]{}@*/\\&#%+<=>|~$0123456789aAbBcCdDeEfFgGhHiIjJkKlLmMnNoOpPqQrRsStTuUvVwWxXyYzZ"

    @Test func collationFollowsCouchDBsTable() throws {
        let keys = try Self.collationTable.map { try JSON(parsing: $0) }
        var generator = SplitMix64(seed: 7)
        for _ in 0..<20 {
            let sorted = keys.shuffled(using: &generator).sorted { JSON.viewCollate($0, $1) < 0 }
            #expect(sorted == keys)
        }
        #expect(JSON.viewCollate(.number("3.0"), .number("3")) == 0)
        #expect(JSON.viewCollate(.number("-1e3"), .number("-2")) < 0)
        // ICU's order of the printable ASCII characters.
        let characters = Self.asciiSequence.map { JSON.string(String($0)) }
        #expect(characters.shuffled(using: &generator).sorted { JSON.viewCollate($0, $1) < 0 } == characters)
        // Letters compare without case first, then lowercase first; accents after the base letter.
        let words = ["abc", "Abc", "ABC", "abc1", "AbcZZZZZ", "abd", "résumé", "resume", "Resume", "rest"].map(JSON.string)
        let sortedWords = words.sorted { JSON.viewCollate($0, $1) < 0 }.compactMap(\.stringValue)
        #expect(sortedWords == ["abc", "Abc", "ABC", "abc1", "AbcZZZZZ", "abd", "rest", "resume", "Resume", "résumé"])
        // {} after every array, as the startkey=["foo"]&endkey=["foo",{}] idiom needs.
        #expect(JSON.viewCollate(try JSON(parsing: #"["foo",["bar","baz"]]"#), try JSON(parsing: #"["foo",{}]"#)) < 0)
        #expect(JSON.viewCollate(try JSON(parsing: #"["foo","zzz"]"#), try JSON(parsing: #"["foo",{}]"#)) < 0)
    }

    /// The comparison that skips building sort keys (ASCII text compared
    /// in place, values compared member by member) orders every pair as
    /// their sort keys do: random text with case, digits, punctuation,
    /// ignorable control characters and accents, inside arrays and objects.
    @Test func directComparisonAgreesWithTheSortKeys() throws {
        var generator = SplitMix64(seed: 11)
        let alphabet = Array("aAbBzZ09 -_.\u{01}\t\u{7F}é")
        func word() -> String { String((0..<Int.random(in: 0...5, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! }) }
        func value(_ depth: Int) -> JSON {
            switch Int.random(in: 0...(depth > 0 ? 5 : 3), using: &generator) {
            case 0: return .int(Int.random(in: -2...2, using: &generator))
            case 1: return .bool(Bool.random(using: &generator))
            case 2, 3: return .string(word())
            case 4: return .array((0..<Int.random(in: 0...2, using: &generator)).map { _ in value(depth - 1) })
            default: return .object(JSONObject((0..<Int.random(in: 0...2, using: &generator)).map { _ in (key: word(), value: value(depth - 1)) }))
            }
        }
        // Text equal but for case, ignorable characters or accents, which
        // only the later levels tell apart.
        func variant(_ text: String) -> String {
            String(text.flatMap { c -> [Character] in
                switch Int.random(in: 0...3, using: &generator) {
                case 0: return [Character(c.uppercased())]
                case 1: return [Character(c.lowercased())]
                case 2: return [c, "\u{01}"]
                default: return c == "e" ? ["é"] : [c]
                }
            })
        }
        for round in 0..<5_000 {
            let a: JSON, b: JSON
            if round % 2 == 0 {
                (a, b) = (value(2), value(2))
            } else {
                let text = word()
                (a, b) = (.array([.string(text), 1]), .array([.string(variant(text)), 1]))
            }
            let x = a.viewSortKey, y = b.viewSortKey
            let byKeys = x == y ? 0 : (x.lexicographicallyPrecedes(y) ? -1 : 1)
            #expect(JSON.viewCollate(a, b).signum() == byKeys, "\(a.text) vs \(b.text)")
        }
    }

    static let design = #"""
    {"views": {
      "by_key": {"map": "function(doc) { if (doc.k !== undefined) emit(doc.k, doc._id); }"},
      "count": {"map": "function(doc) { if (doc.tag) emit(doc.tag, doc.n); }", "reduce": "_count"},
      "sum": {"map": "function(doc) { if (doc.tag) emit(doc.tag, doc.n); }", "reduce": "_sum"},
      "stats": {"map": "function(doc) { if (doc.tag) emit(doc.tag, doc.n); }", "reduce": "_stats"},
      "distinct": {"map": "function(doc) { if (doc.tag) emit(doc.tag[0], null); }", "reduce": "_approx_count_distinct"},
      "js": {"map": "function(doc) { if (doc.tag) emit(doc.tag, doc.n); }", "reduce": "function(keys, values, rereduce) { return sum(values); }"},
      "lib": {"util": "exports.twice = function (x) { return 2 * x; };"},
      "required": {"map": "function(doc) { if (doc.n) emit(doc._id, require('views/lib/util').twice(doc.n)); }"}
    }}
    """#

    func rows(_ answer: JSON?) -> [JSON] { answer?["rows"]?.arrayValue ?? [] }

    @Test func collationThroughAView() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        let admin = "admin:secret"
        #expect(try await server.send("PUT", "/c", user: admin).0 == 201)
        var docs: [String] = []
        for (i, key) in (Self.collationTable + Self.asciiSequence.map { JSON.string(String($0)).text }).enumerated().reversed() {
            docs.append(#"{"_id":"d\#(String(format: "%03d", i))","k":\#(key)}"#)
        }
        #expect(try await server.send("POST", "/c/_bulk_docs", json: #"{"docs":[\#(docs.joined(separator: ","))]}"#).0 == 201)
        #expect(try await server.send("PUT", "/c/_design/v", json: Self.design, user: admin).0 == 201)
        let (status, answer) = try await server.send("GET", "/c/_design/v/_view/by_key")
        #expect(status == 200)
        let ids = rows(answer).compactMap { $0["id"]?.stringValue }
        // Table first, then the ASCII run; 3.0 and the numbers keep the table's places.
        let expected = (0..<(Self.collationTable.count + Self.asciiSequence.count)).map { String(format: "d%03d", $0) }
        // The ASCII strings sort among the table's strings: check each run's own order.
        let tableIDs = ids.filter { Int($0.dropFirst())! < Self.collationTable.count }
        let asciiIDs = ids.filter { Int($0.dropFirst())! >= Self.collationTable.count }
        #expect(tableIDs == Array(expected.prefix(Self.collationTable.count)))
        #expect(asciiIDs == Array(expected.dropFirst(Self.collationTable.count)))
        #expect(answer?["total_rows"] == .int(expected.count))
    }

    @Test func builtInReducesGroupLevelsAndQueryParameters() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        let admin = "admin:secret"
        #expect(try await server.send("PUT", "/v", user: admin).0 == 201)
        let docs = [
            #"{"_id":"a","tag":["x","a"],"n":1}"#, #"{"_id":"b","tag":["x","b"],"n":2}"#, #"{"_id":"c","tag":["y","c"],"n":3}"#,
            #"{"_id":"d","tag":["y","c"],"n":4}"#, #"{"_id":"e","tag":["z"],"n":5}"#, #"{"_id":"f","k":1}"#,
        ]
        #expect(try await server.send("POST", "/v/_bulk_docs", json: #"{"docs":[\#(docs.joined(separator: ","))]}"#).0 == 201)
        #expect(try await server.send("PUT", "/v/_design/v", json: Self.design, user: admin).0 == 201)
        func view(_ query: String) async throws -> JSON? {
            let (status, answer) = try await server.send("GET", "/v/_design/v/_view/" + query)
            #expect(status == 200, "\(query): \(answer?.text ?? "")")
            return answer
        }
        #expect(try await view("count")?.text == #"{"rows":[{"key":null,"value":5}]}"#)
        #expect(try await view("sum")?.text == #"{"rows":[{"key":null,"value":15}]}"#)
        #expect(try await view("stats")?.text == #"{"rows":[{"key":null,"value":{"sum":15,"count":5,"min":1,"max":5,"sumsqr":55}}]}"#)
        #expect(try await view("distinct")?.text == #"{"rows":[{"key":null,"value":3}]}"#)
        #expect(try await view("sum?group_level=1")?.text == #"{"rows":[{"key":["x"],"value":3},{"key":["y"],"value":7},{"key":["z"],"value":5}]}"#)
        #expect(try await view("count?group=true")?.text == #"{"rows":[{"key":["x","a"],"value":1},{"key":["x","b"],"value":1},{"key":["y","c"],"value":2},{"key":["z"],"value":1}]}"#)
        #expect(try await view("js?group_level=1&descending=true")?.text == #"{"rows":[{"key":["z"],"value":5},{"key":["y"],"value":7},{"key":["x"],"value":3}]}"#)
        #expect(try await view(#"sum?startkey=["y"]&endkey=["y",{}]"#.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed)!)?.text == #"{"rows":[{"key":null,"value":7}]}"#)
        #expect(try await view("required?key=%22c%22")?.text == #"{"total_rows":5,"offset":2,"rows":[{"id":"c","key":"c","value":6}]}"#)
        // Map rows: ranges with docids, limit, skip, descending, keys, include_docs.
        let map = try await view(#"sum?reduce=false&startkey=["y","c"]&startkey_docid=d&limit=2"#.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed)!)
        #expect(rows(map).compactMap { $0["id"]?.stringValue } == ["d", "e"])
        #expect(map?["offset"] == .int(3))
        let exclusive = try await view(#"sum?reduce=false&endkey=["y","c"]&inclusive_end=false"#.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed)!)
        #expect(rows(exclusive).compactMap { $0["id"]?.stringValue } == ["a", "b"])
        let down = try await view("sum?reduce=false&descending=true&skip=1&limit=2&include_docs=true")
        #expect(rows(down).compactMap { $0["id"]?.stringValue } == ["d", "c"])
        #expect(rows(down).first?["doc"]?["n"] == .int(4))
        let (_, keyed) = try await server.send("POST", "/v/_design/v/_view/sum?reduce=false", json: #"{"keys":[["z"],["x","a"],["nope"]]}"#)
        #expect(rows(keyed).compactMap { $0["id"]?.stringValue } == ["e", "a"])
        let (_, groupedKeys) = try await server.send("POST", "/v/_design/v/_view/count?group=true", json: #"{"keys":[["y","c"],["x","a"]]}"#)
        #expect(groupedKeys?.text == #"{"rows":[{"key":["y","c"],"value":2},{"key":["x","a"],"value":1}]}"#)
        // CouchDB's refusals.
        var (status, error) = try await server.send("GET", "/v/_design/v/_view/by_key?reduce=true")
        #expect(status == 400 && error?["error"] == .string("query_parse_error"))
        (status, error) = try await server.send("GET", "/v/_design/v/_view/sum?include_docs=true")
        #expect(status == 400 && error?["reason"] == .string("`include_docs` is invalid for reduce"))
        (status, error) = try await server.send("GET", "/v/_design/v/_view/by_key?startkey=2&endkey=1")
        #expect(status == 400 && error?["error"] == .string("query_parse_error"))
        (status, error) = try await server.send("GET", "/v/_design/v/_view/nope")
        #expect(status == 404 && error?["reason"] == .string("missing_named_view"))
        (status, error) = try await server.send("GET", "/v/_design/nope/_view/x")
        #expect(status == 404)
        (status, error) = try await server.send("GET", "/v/_design/v/_view/by_key?key=notjson")
        #expect(status == 400)
        // _sum of something that is not a number: CouchDB's builtin_reduce_error.
        #expect(try await server.send("PUT", "/v/s", json: #"{"tag":["w"],"n":"many"}"#).0 == 201)
        (status, error) = try await server.send("GET", "/v/_design/v/_view/sum")
        #expect(status == 500 && error?["error"] == .string("builtin_reduce_error"))
    }

    @Test func theIndexFollowsTheChangesFeed() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        let admin = "admin:secret"
        #expect(try await server.send("PUT", "/inc", user: admin).0 == 201)
        #expect(try await server.send("PUT", "/inc/_design/v", json: Self.design, user: admin).0 == 201)
        let (_, a) = try await server.send("PUT", "/inc/a", json: #"{"k":1}"#)
        #expect(try await server.send("PUT", "/inc/b", json: #"{"k":2}"#).0 == 201)
        func keys(_ query: String = "") async throws -> [JSON] {
            rows(try await server.send("GET", "/inc/_design/v/_view/by_key" + query).1).compactMap { $0["key"] }
        }
        #expect(try await keys() == [.int(1), .int(2)])
        // An edit moves the row, a deletion removes it, a new document adds one.
        let rev = try #require(a?["rev"]?.stringValue)
        #expect(try await server.send("PUT", "/inc/a", json: #"{"_rev":"\#(rev)","k":3}"#).0 == 201)
        #expect(try await keys() == [.int(2), .int(3)])
        let (_, b) = try await server.send("GET", "/inc/b")
        #expect(try await server.send("DELETE", "/inc/b?rev=" + (b?["_rev"]?.stringValue ?? "")).0 == 200)
        #expect(try await server.send("PUT", "/inc/c", json: #"{"k":0}"#).0 == 201)
        // update=false answers from the index as it was; the next query brings it up to date.
        #expect(try await keys("?update=false") == [.int(2), .int(3)])
        let (_, fresh) = try await server.send("GET", "/inc/_design/v/_view/by_key?update_seq=true")
        #expect(rows(fresh).compactMap { $0["key"] } == [.int(0), .int(3)])
        let (_, info) = try await server.send("GET", "/inc")
        #expect(fresh?["update_seq"] == info?["update_seq"])
        let (_, designInfo) = try await server.send("GET", "/inc/_design/v/_info")
        #expect(designInfo?["name"] == .string("v"))
        #expect(designInfo?["view_index"]?["updates_pending"]?["total"] == .int(0))
        // A changed design document rebuilds the index with its new functions.
        let (_, ddoc) = try await server.send("GET", "/inc/_design/v")
        let changed = Self.design.replacingOccurrences(of: "emit(doc.k, doc._id)", with: "emit(-doc.k, doc._id)")
            .replacingOccurrences(of: #"{"views""#, with: #"{"_rev":"\#(ddoc?["_rev"]?.stringValue ?? "")","views""#)
        #expect(try await server.send("PUT", "/inc/_design/v", json: changed, user: admin).0 == 201)
        #expect(try await keys() == [.int(-3), .int(0)])
        #expect(try await server.send("POST", "/inc/_view_cleanup", json: "{}", user: admin).0 == 202)
        #expect(try await keys() == [.int(-3), .int(0)])
    }

    @Test func aReduceOverManyRowsRereduces() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        let admin = "admin:secret"
        #expect(try await server.send("PUT", "/big", user: admin).0 == 201)
        let docs = (0..<2500).map { #"{"_id":"d\#($0)","tag":["t\#($0 % 2)"],"n":\#($0)}"# }
        #expect(try await server.send("POST", "/big/_bulk_docs", json: #"{"docs":[\#(docs.joined(separator: ","))]}"#).0 == 201)
        #expect(try await server.send("PUT", "/big/_design/v", json: Self.design, user: admin).0 == 201)
        let (_, total) = try await server.send("GET", "/big/_design/v/_view/js")
        #expect(total?.text == #"{"rows":[{"key":null,"value":\#((0..<2500).reduce(0, +))}]}"#)
        let (_, grouped) = try await server.send("GET", "/big/_design/v/_view/js?group=true")
        let evens = stride(from: 0, to: 2500, by: 2).reduce(0, +)
        #expect(grouped?.text == #"{"rows":[{"key":["t0"],"value":\#(evens)},{"key":["t1"],"value":\#((0..<2500).reduce(0, +) - evens)}]}"#)
    }

    /// A JavaScript reduce's stored reductions (made a few hundred blocks a
    /// call to the query server) answer as the built-in `_sum` over the same
    /// rows, through edits and deletions; the function's own error is kept
    /// where its row is, answered by the queries that reach that row only.
    @Test func javaScriptReductionsAreStoredAndMended() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        let admin = "admin:secret"
        #expect(try await server.send("PUT", "/jsred", user: admin).0 == 201)
        let docs = (0..<3000).map { #"{"_id":"d\#($0)","g":\#($0 % 7),"n":\#($0 % 13 == 5 ? 1 : $0)}"# }
        #expect(try await server.send("POST", "/jsred/_bulk_docs", json: #"{"docs":[\#(docs.joined(separator: ","))]}"#).0 == 201)
        let design = #"""
            {"views":{
              "js":{"map":"function(doc) { emit([doc.g, doc.n], doc.n); }",
                    "reduce":"function(keys, values, rereduce) { if (!rereduce && values.indexOf(-13) >= 0) throw({error: 'unlucky', reason: 'thirteen'}); return sum(values); }"},
              "sum":{"map":"function(doc) { emit([doc.g, doc.n], doc.n); }", "reduce":"_sum"}}}
            """#
        #expect(try await server.send("PUT", "/jsred/_design/v", json: design, user: admin).0 == 201)
        let queries = ["", "?group_level=1", "?group=true&limit=20", "?group=true&descending=true&limit=15&skip=3",
                       "?startkey=%5B2%5D&endkey=%5B4%2C%7B%7D%5D", "?startkey=%5B5%2C100%5D&endkey=%5B2%2C5%5D&descending=true&group_level=1",
                       "?startkey=%5B1%2C50%5D&endkey=%5B1%2C1000%5D&inclusive_end=false"]
        func expectSameAsSum(_ note: String) async throws {
            for query in queries {
                let (status, js) = try await server.send("GET", "/jsred/_design/v/_view/js" + query)
                let (_, sum) = try await server.send("GET", "/jsred/_design/v/_view/sum" + query)
                #expect(status == 200 && js == sum && !rows(sum).isEmpty, "\(note): \(query)")
            }
        }
        try await expectSameAsSum("built")
        // Edits (one of them the value the function refuses) and deletions.
        let (_, listing) = try await server.send("GET", "/jsred/_all_docs?limit=40")
        var edits: [String] = []
        for (i, row) in rows(listing).enumerated() {
            let id = row["id"]?.stringValue ?? "", rev = row["value"]?["rev"]?.stringValue ?? ""
            if i % 4 == 0 {
                edits.append(#"{"_id":"\#(id)","_rev":"\#(rev)","_deleted":true}"#)
            } else {
                edits.append(#"{"_id":"\#(id)","_rev":"\#(rev)","g":3,"n":\#(i == 9 ? -13 : i * 1000)}"#)
            }
        }
        #expect(try await server.send("POST", "/jsred/_bulk_docs", json: #"{"docs":[\#(edits.joined(separator: ","))]}"#).0 == 201)
        let (status, refused) = try await server.send("GET", "/jsred/_design/v/_view/js")
        #expect(status == 500 && refused?["error"] == "unlucky" && refused?["reason"] == "thirteen")
        // Groups and ranges that do not reach the row answer.
        let (_, groups) = try await server.send("GET", "/jsred/_design/v/_view/js?group_level=1&endkey=%5B2%2C%7B%7D%5D")
        let (_, sums) = try await server.send("GET", "/jsred/_design/v/_view/sum?group_level=1&endkey=%5B2%2C%7B%7D%5D")
        #expect(groups == sums && rows(groups).count == 3)
        // Mended away.
        let (_, nine) = try await server.send("GET", "/jsred/" + (rows(listing)[9]["id"]?.stringValue ?? ""))
        #expect(try await server.send("PUT", "/jsred/" + (rows(listing)[9]["id"]?.stringValue ?? ""),
                                      json: #"{"_rev":"\#(nine?["_rev"]?.stringValue ?? "")","g":3,"n":13}"#).0 == 201)
        try await expectSameAsSum("edited")
    }

    @Test func showAndListFunctionsRender() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        let admin = "admin:secret"
        #expect(try await server.send("PUT", "/sl", user: admin).0 == 201)
        #expect(try await server.send("PUT", "/sl/a", json: #"{"k":1,"name":"<b>one</b>"}"#).0 == 201)
        #expect(try await server.send("PUT", "/sl/b", json: #"{"k":2,"name":"two"}"#).0 == 201)
        let design = #"""
        {"views": {"by_key": {"map": "function(doc) { emit(doc.k, doc.name); }"}},
         "shows": {"card": "function(doc, req) { return {code: doc ? 200 : 404, headers: {'Content-Type': 'text/plain'}, body: (doc ? doc.name : 'none') + ' ' + (req.query.x || '-')}; }"},
         "lists": {"csv": "function(head, req) { start({headers: {'Content-Type': 'text/csv'}}); send('total ' + head.total_rows + '\\n'); var row; while ((row = getRow())) { send(row.id + ',' + row.value + '\\n'); } return 'end'; }"}}
        """#
        #expect(try await server.send("PUT", "/sl/_design/app", json: design, user: admin).0 == 201)
        var (status, body, headers) = try await server.sendRaw("GET", "/sl/_design/app/_show/card/a?x=1")
        #expect(status == 200 && String(decoding: body, as: UTF8.self) == "<b>one</b> 1" && headers["content-type"] == "text/plain")
        (status, body, _) = try await server.sendRaw("GET", "/sl/_design/app/_show/card/nope")
        #expect(status == 404 && String(decoding: body, as: UTF8.self) == "none -")
        (status, body, headers) = try await server.sendRaw("GET", "/sl/_design/app/_list/csv/by_key?descending=true")
        #expect(status == 200 && headers["content-type"] == "text/csv")
        #expect(String(decoding: body, as: UTF8.self) == "total 2\nb,two\na,<b>one</b>\nend")
        (status, body, _) = try await server.sendRaw("GET", "/sl/_design/app/_list/nope/by_key")
        #expect(status == 404)
    }

    @Test func anEndlessMapIsStoppedAndTheServerLivesOn() async throws {
        let server = try await RunningServer.start(functionTimeLimit: .seconds(2))
        defer { server.stop() }
        let admin = "admin:secret"
        #expect(try await server.send("PUT", "/loop", user: admin).0 == 201)
        #expect(try await server.send("PUT", "/loop/a", json: #"{"k":1}"#).0 == 201)
        #expect(try await server.send("PUT", "/loop/_design/bad", json: #"{"views":{"spin":{"map":"function(doc){ while (true) {} }"}}}"#, user: admin).0 == 201)
        let (status, error) = try await server.send("GET", "/loop/_design/bad/_view/spin")
        #expect(status == 500 && error?["error"] == .string("os_process_error"))
        #expect(try await server.send("PUT", "/loop/_design/v", json: Self.design, user: admin).0 == 201)
        let (ok, answer) = try await server.send("GET", "/loop/_design/v/_view/by_key")
        #expect(ok == 200 && rows(answer).count == 1)
    }
}
