import Foundation
import Strata
import StrataDocuments
import StrataTestHelpers
import Testing

@Suite struct MangoTests {
    func matches(_ selector: String, _ doc: String) throws -> Bool {
        try MangoSelector(JSON(parsing: selector)).matches(JSON(parsing: doc))
    }

    /// `_explain` shows the selector as CouchDB normalizes it.
    @Test func normalizesAsCouchDBDoes() throws {
        let cases: [(String, String)] = [
            (#"{"type":"Person"}"#, #"{"type":{"$eq":"Person"}}"#),
            (#"{"a":{"b":1},"c":{"$gt":2,"$lt":5}}"#, #"{"$and":[{"a.b":{"$eq":1}},{"$and":[{"c":{"$gt":2}},{"c":{"$lt":5}}]}]}"#),
            (#"{"$or":[{"x":1},{"y":{"$exists":true}}]}"#, #"{"$or":[{"x":{"$eq":1}},{"y":{"$exists":true}}]}"#),
            (#"{"tags":{"$elemMatch":{"v":{"$mod":[2,0]}}}}"#, #"{"tags":{"$elemMatch":{"v":{"$mod":[2,0]}}}}"#),
            (#"{"a\\.b":1}"#, #"{"a\\.b":{"$eq":1}}"#),
        ]
        for (selector, normalized) in cases {
            #expect(try MangoSelector(JSON(parsing: selector)).normalized == JSON(parsing: normalized), "\(selector)")
        }
    }

    @Test func everyOperator() throws {
        let doc = #"{"_id":"d","n":5,"s":"hello","b":true,"z":null,"tags":["a","b"],"nested":{"x":1},"points":[{"v":1},{"v":9}]}"#
        let cases: [(String, Bool)] = [
            (#"{"n":5}"#, true), (#"{"n":{"$eq":5}}"#, true), (#"{"n":{"$ne":5}}"#, false),
            (#"{"n":{"$gt":4}}"#, true), (#"{"n":{"$gte":5}}"#, true), (#"{"n":{"$lt":5}}"#, false), (#"{"n":{"$lte":5}}"#, true),
            (#"{"s":{"$gt":5}}"#, true), // strings sort after numbers
            (#"{"missing":{"$exists":false}}"#, true), (#"{"n":{"$exists":false}}"#, false), (#"{"missing":{"$ne":1}}"#, false),
            (#"{"z":{"$type":"null"}}"#, true), (#"{"b":{"$type":"boolean"}}"#, true), (#"{"tags":{"$type":"array"}}"#, true),
            (#"{"n":{"$in":[1,5]}}"#, true), (#"{"tags":{"$in":["b","q"]}}"#, true), (#"{"n":{"$nin":[5]}}"#, false),
            (#"{"tags":{"$all":["a","b"]}}"#, true), (#"{"tags":{"$all":["a","c"]}}"#, false),
            (#"{"points":{"$elemMatch":{"v":{"$gt":8}}}}"#, true), (#"{"points":{"$allMatch":{"v":{"$gt":0}}}}"#, true),
            (#"{"points":{"$allMatch":{"v":{"$gt":1}}}}"#, false),
            (#"{"tags":{"$size":2}}"#, true), (#"{"s":{"$regex":"^h.l"}}"#, true), (#"{"n":{"$mod":[2,1]}}"#, true),
            (#"{"s":{"$beginsWith":"he"}}"#, true), (#"{"s":{"$beginsWith":"lo"}}"#, false),
            (#"{"nested.x":1}"#, true), (#"{"nested":{"x":{"$gt":0}}}"#, true),
            (#"{"$and":[{"n":5},{"b":true}]}"#, true), (#"{"$or":[{"n":4},{"b":true}]}"#, true),
            (#"{"$nor":[{"n":4},{"b":false}]}"#, true), (#"{"$not":{"n":5}}"#, false), (#"{"n":{"$not":{"$eq":4}}}"#, true),
            (#"{"_id":"d"}"#, true),
        ]
        for (selector, expected) in cases {
            #expect(try matches(selector, doc) == expected, "\(selector)")
        }
        #expect(throws: DocumentError(.invalidOperator, "Invalid operator: $bogus")) { try MangoSelector(JSON(parsing: #"{"a":{"$bogus":1}}"#)) }
    }

    func seeded(_ count: Int = 60) throws -> DocumentDatabase {
        let db = try makeDocuments()
        var docs: [JSONObject] = []
        for i in 0..<count {
            docs.append(try obj(#"{"_id":"doc\#(String(format: "%03d", i))","type":"\#(i % 3 == 0 ? "ballot" : "question")","n":\#(i)}"#))
        }
        _ = try db.bulkPut(docs)
        return db
    }

    @Test func findWithoutIndexWarnsAndRefusesSort() throws {
        let db = try seeded()
        let result = try db.find(FindQuery(selector: .object(["type": .string("ballot")]), limit: 5))
        #expect(result.docs.count == 5)
        #expect(result.warning == "No matching index found, create an index to optimize query time.")
        #expect(throws: DocumentError(.noUsableIndex, "No index exists for this sort, try indexing by the sort fields.")) {
            try db.find(FindQuery(selector: .object(["type": .string("ballot")]), sort: [("n", true)]))
        }
    }

    @Test func indexIsARealSQLiteIndexAndServesSort() throws {
        let db = try seeded()
        let created = try db.createIndex(fields: ["type", "n"], name: "by-type")
        #expect(created.result == "created")
        #expect(created.ddoc.hasPrefix("_design/"))
        #expect(try db.createIndex(fields: ["type", "n"], name: "by-type").result == "exists")
        let query = FindQuery(selector: try JSON(parsing: #"{"type":"ballot","n":{"$gt":10}}"#), fields: ["_id", "n"], sort: [("type", false), ("n", false)], limit: 3)
        let result = try db.find(query)
        #expect(result.warning == nil)
        #expect(result.docs.map { $0["n"] } == [.int(57), .int(54), .int(51)])
        #expect(result.docs[0].keys == ["_id", "n"])
        // Each range is an index search read in the index's order: no sort.
        #expect(result.statements.count == 2)
        for sql in result.statements {
            let plan = try db.writer.read { db in
                try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: ["ballot", 10]).map { try $0["detail"] as String }
            }
            #expect(plan.contains { $0.contains("SEARCH") && $0.contains("_idx_") }, "\(plan)")
            #expect(!plan.contains { $0.contains("TEMP B-TREE") }, "\(plan)")
        }
        let explained = try db.explain(query)
        #expect(explained.index?.name == "by-type")
    }

    /// A comparison on an indexed field spans CouchDB's type ranks
    /// (`$gt: 2` matches strings, arrays and objects too): read in index
    /// ranges, the answer is the one the collation gives, in either
    /// direction, with skip and limit across the ranges. (Two arrays, or two
    /// objects, are ordered by their JSON text, not by the collation: one
    /// of each here.)
    @Test func indexedComparisonsFollowTheCollationAcrossTypes() throws {
        let db = try makeDocuments()
        let values = [#"null"#, #"false"#, #"true"#, #"0"#, #"1"#, #"2"#, #"2.5"#, #"3"#, #"10"#, #"-4"#, #""a""#, #""b""#, #""m""#, #""z""#,
                      #"[1]"#, #"{"k":1}"#, #"3"#, #""b""#]
        var docs: [JSONObject] = values.enumerated().map { i, v in (try? obj(#"{"_id":"d\#(String(format: "%02d", i))","v":\#(v),"t":"x"}"#)) ?? [:] }
        docs.append(try obj(#"{"_id":"nov","t":"x"}"#))
        _ = try db.bulkPut(docs)
        _ = try db.createIndex(fields: ["t", "v"], name: "by-t-v")
        let cases = [#"{"t":"x","v":{"$gt":2}}"#, #"{"t":"x","v":{"$gte":2}}"#, #"{"t":"x","v":{"$lt":"m"}}"#, #"{"t":"x","v":{"$lte":3}}"#,
                     #"{"t":"x","v":{"$gte":1,"$lte":3}}"#, #"{"t":"x","v":{"$gt":0,"$lt":"c"}}"#, #"{"t":"x","v":{"$gt":"b"}}"#]
        for selectorText in cases {
            let selector = try MangoSelector(JSON(parsing: selectorText))
            for ascending in [true, false] {
                var expected = docs.filter { selector.matches(.object($0)) }.sorted {
                    let order = JSON.collate($0["v"]!, $1["v"]!)
                    return order != 0 ? order < 0 : $0["_id"]!.stringValue! < $1["_id"]!.stringValue!
                }.map { $0["_id"]! }
                if !ascending { expected.reverse() }
                let sort = [("t", ascending), ("v", ascending)]
                let all = try db.find(FindQuery(selector: JSON(parsing: selectorText), sort: sort, limit: 100))
                #expect(all.index?.name == "by-t-v")
                #expect(all.docs.map { $0["_id"]! } == expected, "\(selectorText) ascending: \(ascending)")
                let page = try db.find(FindQuery(selector: JSON(parsing: selectorText), sort: sort, limit: 3, skip: 2))
                #expect(page.docs.map { $0["_id"]! } == Array(expected.dropFirst(2).prefix(3)), "\(selectorText) page")
            }
        }
    }

    /// Mango compares and sorts text as CouchDB does, in its view
    /// collation (ICU's root order: letters before case, lowercase first),
    /// not by code point: `"apple"` is not after `"Z"`, `"B"` sorts after
    /// `"a"` and `"b"`; with an index or without, and the index is read in
    /// order rather than sorted.
    @Test func textComparesAndSortsInCouchDBsCollation() throws {
        let db = try makeDocuments()
        let words = ["Zebra", "B", "apple", "b", "a", "Apple", "é", "f", "10", "9"]
        _ = try db.bulkPut(words.enumerated().map { ["_id": .string("w\($0.offset)"), "v": .string($0.element)] })
        func found(_ selector: String, sort ascending: Bool? = nil) throws -> [String] {
            try db.find(FindQuery(selector: JSON(parsing: selector), sort: ascending.map { [("v", $0)] } ?? [], limit: 100))
                .docs.compactMap { $0["v"]?.stringValue }
        }
        for indexed in [false, true] {
            if indexed { _ = try db.createIndex(fields: ["v"], name: "by-v") }
            #expect(try Set(found(#"{"v":{"$gt":"Z"}}"#)) == ["Zebra"], "indexed: \(indexed)")
            #expect(try Set(found(#"{"v":{"$lt":"b"}}"#)) == ["10", "9", "a", "apple", "Apple"], "indexed: \(indexed)")
            #expect(try Set(found(#"{"v":{"$gte":"b","$lte":"f"}}"#)) == ["b", "B", "é", "f"], "indexed: \(indexed)")
            #expect(try Set(found(#"{"v":{"$beginsWith":"a"}}"#)) == ["a", "apple"], "indexed: \(indexed)")
        }
        let order = ["10", "9", "a", "apple", "Apple", "b", "B", "é", "f", "Zebra"]
        #expect(try found(#"{"v":{"$gt":null}}"#, sort: true) == order)
        #expect(try found(#"{"v":{"$gt":null}}"#, sort: false) == order.reversed())
        #expect(try found(#"{"v":{"$gt":"a"}}"#, sort: true) == Array(order.dropFirst(3)))
        let query = FindQuery(selector: try JSON(parsing: #"{"v":{"$gt":"a"}}"#), sort: [("v", true)])
        for sql in try db.explain(query).statements {
            let plan = try db.writer.read { db in
                try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: ["a"]).map { try $0["detail"] as String }
            }
            #expect(plan.contains { $0.contains("_idx_") } && !plan.contains { $0.contains("TEMP B-TREE") }, "\(plan)")
        }
    }

    /// A Mango index made by an earlier version (text in byte order) is
    /// built again in CouchDB's collation when the database opens, and
    /// queries read it in order again.
    @Test func anIndexInByteOrderIsRebuiltWhenTheDatabaseOpens() throws {
        let path = try makeTemporaryPath()
        var db: DocumentDatabase? = try DocumentDatabase(path: path)
        _ = try db!.bulkPut([["_id": "1", "v": "B"], ["_id": "2", "v": "a"]])
        _ = try db!.createIndex(fields: ["v"], name: "by-v")
        try db!.writer.write { db in
            let (name, sql) = try #require(try Row.fetchOne(db, sql: "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND name LIKE '%_idx_%'")
                .map { (try $0[0] as String, try $0[1] as String) })
            try db.execute(sql: "DROP INDEX \"\(name)\"")
            try db.execute(sql: sql.replacingOccurrences(of: " COLLATE couch", with: ""))
        }
        db = nil
        db = try DocumentDatabase(path: path)
        let sql = try db!.writer.read { db in try String.fetchOne(db, sql: "SELECT sql FROM sqlite_master WHERE type = 'index' AND name LIKE '%_idx_%'") }
        #expect(sql?.contains("COLLATE couch") == true)
        let result = try db!.find(FindQuery(selector: .object(["v": .object(["$gt": .null])]), sort: [("v", true)]))
        #expect(result.index?.name == "by-v")
        #expect(result.docs.compactMap { $0["v"]?.stringValue } == ["a", "B"])
    }

    @Test func partialIndexHoldsOnlyMatchingDocuments() throws {
        let db = try seeded()
        _ = try db.createIndex(fields: ["n"], name: "ballots", partialFilterSelector: .object(["type": .string("ballot")]))
        let result = try db.find(FindQuery(selector: try JSON(parsing: #"{"n":{"$gte":0}}"#), sort: [("n", true)], limit: 100, useIndex: "ballots"))
        #expect(result.docs.count == 20)
        for sql in result.statements {
            let plan = try db.writer.read { db in
                try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: [0]).map { try $0["detail"] as String }
            }
            #expect(plan.contains { $0.contains("_idx_") }, "\(plan)")
        }
    }

    /// A partial index's selector is written into its `WHERE` as literals
    /// (an index takes no bound value). A value with a quote, a quote
    /// followed by a combining mark (one Character, two scalars) or a `?`
    /// stays a value, and none of it runs as SQL: the selector comes from a
    /// request.
    @Test func partialIndexSelectorValuesStayValues() throws {
        let db = try makeDocuments()
        try db.writer.write { try $0.execute(sql: "CREATE TABLE canary(x)") }
        // Each value is the type of one document and the tag of the one
        // before: "a?b" then ") OR (1=1); DROP TABLE canary; --" dropped the
        // table when the `?` inside the first literal took the second value.
        let values = ["a?b", ") OR (1=1); DROP TABLE canary; --", "it's", "x'\u{301}", "?",
                      "x'\u{301}) OR (1=1); DROP TABLE canary; --", "\"\\", "plain?"]
        var docs: [JSONObject] = []
        for (i, value) in values.enumerated() {
            docs.append(["_id": .string("v\(i)"), "type": .string(value), "tag": .string(values[(i + 1) % values.count]), "n": .int(i)])
            docs.append(["_id": .string("other\(i)"), "type": .string("plain"), "tag": .string(value), "n": .int(i)])
        }
        _ = try db.bulkPut(docs)
        for (i, value) in values.enumerated() {
            // Two values in one selector: the second must not land in the
            // first's literal.
            let tag = values[(i + 1) % values.count]
            _ = try db.createIndex(fields: ["n"], name: "p\(i)",
                                   partialFilterSelector: .object(["type": .string(value), "tag": .string(tag)]))
            let result = try db.find(FindQuery(selector: try JSON(parsing: #"{"n":{"$gte":0}}"#), sort: [("n", true)], limit: 100, useIndex: "p\(i)"))
            #expect(result.docs.compactMap { $0["_id"]?.stringValue } == ["v\(i)"], "\(value)")
            #expect(result.index?.name == "p\(i)")
        }
        #expect(try db.writer.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM sqlite_schema WHERE name = 'canary'") } == 1)
        #expect(try db.info().documentCount == 2 * values.count)
    }

    /// A field name is written into SQL between quotes, so a name with a
    /// quote is matched in Swift instead, and cannot be indexed; a quote
    /// followed by a combining mark (one Character) is a quote too.
    @Test func fieldNamesWithAQuoteStayNames() throws {
        let db = try makeDocuments()
        try db.writer.write { try $0.execute(sql: "CREATE TABLE canary(x)") }
        let names = ["a'\u{301}') IS NOT NULL OR ('1' = '1", "b\"\u{301}", "it's"]
        for (i, name) in names.enumerated() {
            _ = try db.bulkPut([["_id": .string("match\(i)"), name: "yes"], ["_id": .string("other\(i)"), name: "no"], ["_id": .string("none\(i)")]])
            let result = try db.find(FindQuery(selector: .object([name: .string("yes")])))
            #expect(result.docs.compactMap { $0["_id"]?.stringValue } == ["match\(i)"], "\(name)")
            #expect(throws: DocumentError(.badRequest, "Invalid index field: \(name)")) {
                _ = try db.createIndex(fields: [name], name: "by-name")
            }
        }
        #expect(try db.writer.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM sqlite_schema WHERE name = 'canary'") } == 1)
    }

    @Test func bookmarkAdvancesUntilTheEnd() throws {
        let db = try seeded(25)
        var bookmark: String?
        var seen: [String] = []
        for _ in 0..<10 {
            let page = try db.find(FindQuery(selector: .object(["n": .object(["$gte": .int(0)])]), limit: 10, bookmark: bookmark))
            if page.docs.isEmpty { break }
            #expect(page.bookmark != bookmark)
            seen += page.docs.compactMap { $0["_id"]?.stringValue }
            bookmark = page.bookmark
        }
        #expect(seen.count == 25)
        #expect(Set(seen).count == 25)
    }

    @Test func collationOrdersTypes() throws {
        let values = [#"{"a":1}"#, "[1]", #""b""#, #""a""#, "2", "1.5", "true", "false", "null"].reversed()
        let sorted = try values.map { try JSON(parsing: $0) }.sorted { JSON.collate($0, $1) < 0 }
        #expect(sorted.map(\.text) == ["null", "false", "true", "1.5", "2", #""a""#, #""b""#, "[1]", #"{"a":1}"#])
    }
}
