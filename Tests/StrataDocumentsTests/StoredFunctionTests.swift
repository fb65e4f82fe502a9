import Foundation
import Strata
import StrataDocuments
import StrataTestHelpers
import Testing

/// A runner that reads one-word rules from a design document in place of
/// JavaScript: a map `"emit:FIELD"` emits `(doc[FIELD], 1)`, the reduce
/// `"sum"` adds values, a filter `"has:FIELD"` passes documents with
/// `FIELD`, an update `"set:FIELD"` sets `FIELD` to the request's body and
/// answers `"ok"`, an update `"fail:NAME"` fails with the error `NAME`, as
/// a query server answers a function's own error.
final class ScriptRunner: DesignFunctionRunner, @unchecked Sendable {
    func run(tenant: String, design: JSONObject, path: [String], arguments: [JSON]) throws -> JSON {
        guard let rule = path.reduce(JSON.object(design), { $0?[$1] })?.stringValue else { throw DocumentError(.notFound, "no such function") }
        let (verb, field) = (String(rule.prefix { $0 != ":" }), String(rule.drop { $0 != ":" }.dropFirst()))
        switch (path.first, verb) {
        case ("filters", "has"):
            return .array([true, .array((arguments[0].arrayValue ?? []).map { .bool($0[field] != nil) })])
        case ("updates", "set"):
            var doc = arguments[0].objectValue ?? [:]
            doc[field] = arguments[1]["body"] ?? .null
            return .array(["up", .object(doc), "ok"])
        case ("updates", "fail"):
            throw DocumentError(status: 500, error: field, reason: "the function said no")
        default:
            throw DocumentError(.notFound, "no such function")
        }
    }

    func map(tenant: String, functions: [String], lib: JSON?, documents: [JSONObject]) throws -> [[[EmittedRow]]] {
        documents.map { doc in
            functions.map { source in
                let field = String(source.dropFirst("emit:".count))
                return doc[field].map { [EmittedRow(key: $0, value: 1)] } ?? []
            }
        }
    }

    func reduce(tenant: String, source: String, keys: [JSON]?, values: [JSON], rereduce: Bool) throws -> JSON {
        .int(values.compactMap(\.intValue).reduce(0, +))
    }
}

/// The engine chooses, for views, filters and update functions, between
/// the Swift functions registered under a design's name and the stored
/// design document's JavaScript (run by the database's runner), so an app
/// embedding the store gets what `strata serve` answers.
@Suite struct StoredFunctionTests {
    static let design: JSONObject = [
        "_id": "_design/app",
        "views": ["by_kind": ["map": "emit:kind", "reduce": "sum"]],
        "filters": ["kinded": "has:kind", "revised": "has:_revisions"],
        "updates": ["note": "set:note", "closed": "fail:poll_closed"],
    ]

    @Test func storedJavaScriptRunsThroughTheRunner() throws {
        let db = try makeDocuments()
        db.setDesignFunctionRunner(ScriptRunner())
        try db.put(Self.design)
        _ = try db.bulkPut([["_id": "a", "kind": "x"], ["_id": "b", "kind": "y"], ["_id": "c"], ["_id": "d", "kind": "x"]])

        let rows = try db.view(design: "app", view: "by_kind", options: ViewQueryOptions(reduce: false))
        #expect(rows.rows.compactMap { $0["id"]?.stringValue } == ["a", "d", "b"])
        let totals = try db.view(design: "_design/app", view: "by_kind", options: ViewQueryOptions(group: true))
        #expect(totals.json.text == #"{"rows":[{"key":"x","value":2},{"key":"y","value":1}]}"#)
        #expect(throws: DocumentError(.notFound, "missing_named_view")) { try db.view(design: "app", view: "nope") }

        let kinded = try db.changes(ChangesOptions(), filter: "app/kinded").results.map(\.id)
        #expect(kinded == ["a", "b", "d"])
        // A filter gets each document's `_revisions`, as CouchDB hands it.
        #expect(try db.changes(ChangesOptions(), filter: "app/revised").results.map(\.id) == ["_design/app", "a", "b", "c", "d"])
        // A deletion that kept its members is handed over with them (a
        // filtered replication then carries it).
        let e = try db.put(["_id": "e", "kind": "z"])
        try db.put(["_id": "e", "_rev": .string(e.rev), "_deleted": true, "kind": "z"])
        #expect(try db.changes(ChangesOptions(), filter: "app/kinded").results.map(\.id) == ["a", "b", "d", "e"])

        let (written, response) = try db.update(design: "app", function: "note", id: "c", request: ["body": "hello"])
        #expect(response == "ok" && written?.id == "c")
        #expect(try db.document(id: "c")["note"] == "hello")
        // The function's own error name is kept, not mapped to another.
        let refused = try #require(throws: DocumentError.self) { try db.update(design: "app", function: "closed", id: "c") }
        #expect(refused.error == "poll_closed" && refused.status == 500 && refused.reason == "the function said no")
        #expect(throws: DocumentError(.notFound, "missing json key: nope")) { try db.update(design: "app", function: "nope", id: "c") }

        // A design registered in Swift under the same name is used instead.
        var swift = DesignFunctions(version: "2")
        swift.views["by_kind"] = .init(map: { doc, emit in emit(doc["_id"] ?? .null, 10) }, reduce: .sum)
        swift.updates["note"] = { doc, _ in (doc, "from Swift") }
        try db.register(design: "app", swift)
        #expect(try db.view(design: "app", view: "by_kind").json.text == #"{"rows":[{"key":null,"value":40}]}"#)
        #expect(try db.update(design: "app", function: "note", id: "c").response == "from Swift")
    }

    /// Without a runner, stored JavaScript is refused with what to do, and
    /// nothing is written.
    @Test func withoutARunnerStoredJavaScriptIsRefused() throws {
        let db = try makeDocuments()
        try db.put(Self.design)
        try db.put(["_id": "c"])
        let view = try #require(throws: DocumentError.self) { try db.view(design: "app", view: "by_kind") }
        #expect(view.kind == .osProcessError && view.reason.contains("DesignFunctionRunner"))
        #expect(throws: DocumentError.self) { try db.update(design: "app", function: "note", id: "c", request: ["body": "x"]) }
        #expect(try db.document(id: "c")["note"] == nil)
        #expect(throws: DocumentError.self) { try db.changes(ChangesOptions(), filter: "app/kinded") }
    }

    /// A design document answered by an update function is written only for
    /// an admin of the database.
    @Test func anUpdateFunctionWritesADesignDocumentOnlyForAnAdmin() throws {
        let db = try makeDocuments()
        var functions = DesignFunctions()
        functions.updates["install"] = { _, _ in (["_id": "_design/evil", "views": [:]], "done") }
        try db.register(design: "app", functions)
        let reader: JSON = ["name": "ann", "roles": ["reader"]]
        #expect(throws: DocumentError(.unauthorized, "You are not a db or server admin.")) {
            try db.update(design: "app", function: "install", id: nil, userContext: reader)
        }
        try db.setMetadata("_security", ["admins": ["names": [], "roles": ["reader"]]])
        #expect(try db.update(design: "app", function: "install", id: nil, userContext: reader).written?.id == "_design/evil")
    }
}
