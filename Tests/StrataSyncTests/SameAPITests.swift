import Foundation
import StrataDocuments
import StrataSync
import StrataServerTestHelpers
import StrataTestHelpers
import Testing

/// What a local store and a remote one share: one code path, written
/// against `DocumentStore`, run on a `DocumentDatabase` in this process and
/// on a `RemoteDatabase` of a running `strata serve`, with the same answers
/// and the same errors.
@Suite struct SameAPITests {
    @Test func oneCodePathOnAnEmbeddedStore() async throws {
        let store = try DocumentDatabase(path: try makeTemporaryPath("same.sqlite"))
        // The app's design in Swift (a device runs no JavaScript).
        var functions = DesignFunctions()
        functions.views["byKind"] = DesignFunctions.View(map: { doc, emit in
            if let kind = doc["kind"] { emit(kind, 1) }
        }, reduce: .sum)
        functions.updates["count"] = { doc, request in
            var saved = doc ?? ["_id": request["id"] ?? .null]
            saved["n"] = .int((saved["n"]?.intValue ?? 0) + 1)
            return (saved, .object(["code": 202, "headers": ["X-Seen": "yes"], "json": Self.echo(request)]))
        }
        try store.register(design: "app", functions)
        try await exercise(store, user: .null, database: "couch")
    }

    @Test func oneCodePathOnAServer() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        let remote = try server.client().database("same")
        try await remote.createIfMissing()
        // The same design in JavaScript, as a server keeps it.
        try await remote.put([
            "_id": "_design/app",
            "views": ["byKind": ["map": "function(doc) { if (doc.kind) emit(doc.kind, 1); }", "reduce": "_sum"]],
            "updates": ["count": """
                function(doc, req) {
                  var saved = doc || {_id: req.id};
                  saved.n = (saved.n || 0) + 1;
                  return [saved, {code: 202, headers: {"X-Seen": "yes"}, json: {
                    body: req.body, q: req.query.q || null, method: req.method, id: req.id, db: req.info.db_name,
                    user: req.userCtx.name, roles: req.userCtx.roles, uuid: req.uuid.length, form: req.form}}];
                }
                """],
        ])
        try await exercise(remote, user: "admin", database: "same")
    }

    /// What the Swift update function answers: the request object's parts
    /// the JavaScript one answers too.
    static func echo(_ request: JSON) -> JSON {
        .object([
            "body": request["body"] ?? .null, "q": request["query"]?["q"] ?? .null, "method": request["method"] ?? .null,
            "id": request["id"] ?? .null, "db": request["info"]?["db_name"] ?? .null,
            "user": request["userCtx"]?["name"] ?? .null, "roles": request["userCtx"]?["roles"] ?? .null,
            "uuid": .int(request["uuid"]?.stringValue?.count ?? 0), "form": request["form"] ?? .null,
        ])
    }

    /// Every call of the protocol, written once.
    func exercise(_ store: some DocumentStore, user: JSON, database: String) async throws {
        #expect(try await store.exists())
        let identity = try await store.identity()
        #expect(try await store.identity() == identity, "an identity stays the same")

        // Documents, and CouchDB's errors by name.
        let first = try await store.put(["_id": "a", "kind": "note"])
        #expect(first.rev.hasPrefix("1-"))
        await #expect(throws: DocumentError.conflict) { try await store.put(["_id": "a", "kind": "late"]) }
        let second = try await store.put(["_id": "a", "_rev": .string(first.rev), "kind": "note", "v": 2])
        #expect(try await store.document(id: "a")["v"] == 2)
        let results = try await store.bulkPut([["_id": "b", "kind": "vote"], ["_id": "a", "kind": "stale"]])
        #expect(try results[0].get().id == "b")
        #expect(throws: DocumentError.conflict) { try results[1].get() }
        let gone = try await store.delete(id: "b", rev: try results[0].get().rev)
        #expect(gone.rev.hasPrefix("2-"))
        await #expect(throws: DocumentError(.notFound, "deleted")) { try await store.document(id: "b") }
        await #expect(throws: DocumentError.missing) { try await store.document(id: "nobody") }

        // What a replicator asks.
        let diff = try await store.revisionsDiff(["a": [second.rev, "9-abc"], "c": ["1-abc"]])
        #expect(diff["a"]?.missing == ["9-abc"] && diff["c"]?.missing == ["1-abc"])
        let revisions = try await store.openRevisions([(id: "a", revisions: [first.rev, second.rev])], options: DocumentReadOptions(revs: true))
        let docs = try revisions[0].get().compactMap { if case .ok(let doc) = $0 { doc } else { nil } }
        #expect(docs.map { $0["_rev"] } == [.string(first.rev), .string(second.rev)] || docs.map { $0["_rev"] } == [.string(second.rev)])
        #expect(docs.last?["_revisions"]?["start"] == 2)
        let replicated = try await store.bulkPut([["_id": "r", "_rev": "3-feed", "_revisions": ["start": 3, "ids": ["feed", "beef", "cafe"]]]], newEdits: false)
        #expect(replicated.allSatisfy { if case .success = $0 { true } else { false } })
        #expect(try await store.document(id: "r")["_rev"] == "3-feed")

        // Listing, and the changes feed with its opaque sequences.
        let all = try await store.allDocuments(AllDocumentsOptions(includeDocs: true))
        #expect(all.rows.compactMap { $0["id"]?.stringValue }.filter { !$0.hasPrefix("_") } == ["a", "r"])
        let page = try await store.changes(ChangesOptions(style: .allDocs))
        #expect(Set(page.results.map(\.id)).isSuperset(of: ["a", "b", "r"]))
        #expect(page.results.first { $0.id == "b" }?.deleted == true)
        let empty = try await store.changes(ChangesOptions(since: page.lastSeq))
        #expect(empty.results.isEmpty && empty.lastSeq == page.lastSeq)
        let ids = try await store.changes(ChangesOptions(documentIDs: ["r"]))
        #expect(ids.results.map(\.id) == ["r"])
        let selected = try await store.changes(ChangesOptions(includeDocs: true, selector: ["kind": "note"]))
        #expect(selected.results.map(\.id) == ["a"] && selected.results[0].doc?["v"] == 2)
        let quiet = try await store.changes(ChangesOptions(since: page.lastSeq, longpoll: .milliseconds(100)))
        #expect(quiet.results.isEmpty)
        // A longpoll answers the first change after `since`.
        let waiting = Task { try await store.changes(ChangesOptions(since: page.lastSeq, longpoll: .seconds(120))) }
        try await store.put(["_id": "later"])
        #expect(try await waiting.value.results.map(\.id) == ["later"])
        // The live feed: what is there after `since`, then new writes.
        let seen = ValueLog<String>()
        let live = Task {
            for try await change in store.liveChanges(ChangesOptions(since: page.lastSeq, longpoll: .seconds(5))) { seen.append(change.id) }
        }
        try await seen.wait(for: 1)
        try await store.put(["_id": "livelier"])
        try await seen.wait(for: 2)
        live.cancel()
        #expect(Array(seen.values.prefix(2)) == ["later", "livelier"])
        #expect(try await store.info().documentCount >= 4)

        // Local documents, with the _local/ prefix or without.
        #expect(try await store.localDocument(id: "checkpoint") == nil)
        try await store.putLocal(id: "checkpoint", ["seq": 3])
        #expect(try await store.localDocument(id: "_local/checkpoint")?["seq"] == 3)
        try await store.putLocal(id: "_local/checkpoint", ["seq": 4])
        #expect(try await store.localDocument(id: "checkpoint")?["seq"] == 4)
        try await store.deleteLocal(id: "checkpoint")
        #expect(try await store.localDocument(id: "checkpoint") == nil)

        // Attachments.
        let attached = try await store.putAttachment(id: "a", name: "n.txt", rev: try await store.document(id: "a")["_rev"]?.stringValue,
                                                     contentType: "text/plain", data: Data("hello".utf8))
        let attachment = try await store.attachment(id: "a", name: "n.txt", rev: nil)
        #expect(attachment.data == Data("hello".utf8) && attachment.contentType.hasPrefix("text/plain"))
        _ = try await store.deleteAttachment(id: "a", name: "n.txt", rev: attached.rev)

        // Queries and design functions.
        let found = try await store.find(FindQuery(selector: ["kind": "note"]))
        #expect(found.docs.map { $0["_id"] } == ["a"])
        let view = try await store.view(design: "app", view: "byKind", options: ViewQueryOptions(group: true))
        #expect(view.rows == [["key": "note", "value": 1]])
        let answer = try await store.update(design: "app", function: "count", id: "tally",
                                            request: UpdateRequest(body: Data("a=1&b=two+words".utf8), contentType: "application/x-www-form-urlencoded",
                                                                   query: ["q": "yes"]))
        #expect(answer.status == 202)
        #expect(answer.headers["X-Seen"] ?? answer.headers["x-seen"] == "yes")
        #expect(answer.documentID == "tally" && answer.newRevision?.hasPrefix("1-") == true)
        let echoed = try JSON(parsing: answer.body)
        #expect(echoed["body"] == "a=1&b=two+words" && echoed["q"] == "yes" && echoed["method"] == "POST" && echoed["id"] == "tally")
        #expect(echoed["form"] == ["a": "1", "b": "two words"])
        #expect(echoed["db"] == .string(database) && echoed["user"] == user && echoed["roles"] == ["_admin"])
        #expect(echoed["uuid"] == 32)
        #expect(try await store.document(id: "tally")["n"] == 1)
        _ = try await store.update(design: "app", function: "count", id: "tally", body: Data("{}".utf8))
        #expect(try await store.document(id: "tally")["n"] == 2)

        // _security, with CouchDB's checks.
        #expect(try await store.security() == [:])
        let security: JSONObject = ["admins": ["names": ["ann", "admin"], "roles": []], "members": ["names": [], "roles": ["staff"]]]
        try await store.setSecurity(security)
        #expect(try await store.security() == security)
        await #expect(throws: DocumentError(.badRequest, "names must be a JSON list of strings")) {
            try await store.setSecurity(["admins": ["names": "ann"]])
        }
        await #expect(throws: DocumentError(.badRequest, "admins or members must be a JSON list of strings")) {
            try await store.setSecurity(["members": ["staff"]])
        }
        #expect(try await store.security() == security)
    }
}
