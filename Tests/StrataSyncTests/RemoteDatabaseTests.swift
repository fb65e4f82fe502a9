import Foundation
import StrataDocuments
import StrataSync
import StrataServerTestHelpers
import StrataTestHelpers
import Testing

/// StrataSync's client against `strata serve`: each call of CouchDB's API.
@Suite(.serialized) struct RemoteDatabaseTests {
    struct Note: Codable, Equatable {
        var _id: String
        var _rev: String?
        var title: String
    }

    @Test func databasesAndDocuments() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        let client = try server.client()
        let info = try await client.serverInfo()
        #expect(info["couchdb"] == .string("Welcome"))
        #expect(info["uuid"]?.stringValue?.count == 32)
        let notes = client.database("notes")
        #expect(try await notes.exists() == false)
        try await notes.create()
        #expect(try await notes.exists())
        // Creating it again is CouchDB's 412, as a typed error.
        await #expect(throws: RemoteError(status: 412, error: "file_exists", reason: "The database could not be created, the file already exists.")) {
            try await notes.create()
        }
        try await notes.createIfMissing()
        #expect(try await client.allDatabases().contains("notes"))

        // JSON documents: put, read, a stale write refused with 409, delete.
        let first = try await notes.put(["_id": "n1", "title": "Groceries"])
        #expect(first.id == "n1" && first.rev.hasPrefix("1-"))
        let read = try await notes.document(id: "n1")
        #expect(read["title"] == .string("Groceries") && read["_rev"] == .string(first.rev))
        let second = try await notes.put(["_id": "n1", "_rev": .string(first.rev), "title": "Groceries, Saturday"])
        do {
            try await notes.put(["_id": "n1", "_rev": .string(first.rev), "title": "stale"])
            Issue.record("a stale write was accepted")
        } catch let error as RemoteError {
            #expect(error.status == 409 && error.error == "conflict")
        }
        // A new id from the server when there is no _id.
        let made = try await notes.put(["title": "no id"])
        #expect(made.id.count == 32)

        // Codable values.
        var note = Note(_id: "n2", _rev: nil, title: "Call Ana")
        note._rev = try await notes.put(note).rev
        #expect(try await notes.document(Note.self, id: "n2") == note)

        // A missing document: 404 with CouchDB's reason.
        await #expect(throws: RemoteError(status: 404, error: "not_found", reason: "missing")) {
            try await notes.document(id: "nope")
        }
        let deleted = try await notes.delete(id: "n1", rev: second.rev)
        #expect(deleted.rev.hasPrefix("3-"))
        await #expect(throws: RemoteError(status: 404, error: "not_found", reason: "deleted")) {
            try await notes.document(id: "n1")
        }
        // Revisions of the deleted document are still there to read.
        let old = try await notes.document(id: "n1", options: DocumentReadOptions(rev: first.rev))
        #expect(old["title"] == .string("Groceries"))

        // _all_docs, by range and by keys.
        let all = try await notes.allDocuments(AllDocumentsOptions(includeDocs: true))
        #expect(all.totalRows == 2 && all.rows.count == 2)
        let byKeys = try await notes.allDocuments(AllDocumentsOptions(keys: ["n2", "missing"]))
        #expect(byKeys.rows.count == 2 && byKeys.rows[1]["error"] == .string("not_found"))

        // The database's info, then gone.
        let dbInfo = try await notes.info()
        #expect(dbInfo.documentCount == 2 && dbInfo.name == "notes")
        try await notes.delete()
        #expect(try await notes.exists() == false)
    }

    @Test func bulkCallsAndRevisionTrees() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        let db = try server.client().database("bulk")
        try await db.create()
        let results = try await db.bulkPut([["_id": "a", "n": 1], ["_id": "b", "n": 2], ["_id": "a", "n": 3]])
        #expect(results.count == 3)
        guard case .success(let a) = results[0], case .success = results[1], case .failure(let conflict) = results[2] else {
            Issue.record("\(results)")
            return
        }
        #expect(conflict.kind == .conflict)
        // A revision written with its history, as a replicator writes it.
        let failures = try await db.bulkPut([["_id": "a", "_rev": "2-ffff", "n": 9,
                                              "_revisions": ["start": 2, "ids": ["ffff", .string(String(a.rev.dropFirst(2)))]]]],
                                            newEdits: false)
        #expect(failures.isEmpty)
        let diff = try await db.revisionsDiff(["a": ["2-ffff", "2-eeee"], "b": ["1-0000"]])
        #expect(diff["a"]?.missing == ["2-eeee"] && diff["b"]?.missing == ["1-0000"])
        let got = try await db.bulkGet([(id: "a", rev: "2-ffff"), (id: "b", rev: nil), (id: "zz", rev: "1-aa")])
        #expect(got.map(\.id) == ["a", "b", "zz"])
        guard case .ok(let doc) = got[0].docs.first else { Issue.record("\(got)"); return }
        #expect(doc["_revisions"]?["start"]?.intValue == 2 && doc["n"]?.intValue == 9)
        guard case .missing = got[2].docs.first else { Issue.record("\(got)"); return }
        let open = try await db.openRevisions(id: "a", revisions: nil)
        #expect(open.count == 1)
    }

    @Test func changesNormalLongpollAndLive() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        let db = try server.client().database("feed")
        try await db.create()
        try await db.put(["_id": "one"])
        let page = try await db.changes()
        #expect(page.results.map(\.id) == ["one"])
        // A longpoll waits for the next write.
        let waiting = Task { try await db.changes(ChangesOptions(since: page.lastSeq, longpoll: .seconds(60))) }
        try await Task.sleep(for: .milliseconds(200))
        try await db.put(["_id": "two"])
        let woke = try await waiting.value
        #expect(woke.results.map(\.id) == ["two"])
        // A longpoll with nothing to report answers empty after its timeout.
        let quiet = try await db.changes(ChangesOptions(since: woke.lastSeq, longpoll: .milliseconds(200)))
        #expect(quiet.results.isEmpty)
        // Filters: doc_ids and a selector.
        try await db.put(["_id": "three", "kind": "vote"])
        let ids = try await db.changes(ChangesOptions(documentIDs: ["three", "one"]))
        #expect(Set(ids.results.map(\.id)) == ["one", "three"])
        let selected = try await db.changes(ChangesOptions(includeDocs: true, selector: .object(["kind": .string("vote")])))
        #expect(selected.results.map(\.id) == ["three"] && selected.results[0].doc?["kind"] == .string("vote"))
        // The live feed as an AsyncSequence: what is there, then new writes.
        let seen = ValueLog<String>()
        let live = Task {
            for try await change in db.liveChanges(ChangesOptions(longpoll: .seconds(5))) { seen.append(change.id) }
        }
        try await seen.wait(for: 3)
        try await db.put(["_id": "four"])
        try await seen.wait(for: 4)
        live.cancel()
        #expect(seen.values == ["one", "two", "three", "four"])
    }

    @Test func findViewsUpdateHandlersAttachmentsAndLocalDocuments() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        let db = try server.client().database("voting")
        try await db.create()
        try await db.put(try JSON(parsing: SeedVoting.design).objectValue!)
        var question = try JSON(parsing: SeedVoting.question).objectValue!
        question["_id"] = "q1"
        try await db.put(question)
        // The seed's vote through the update handler.
        let answer = try await db.update(design: "voting", function: "addvote", id: "q1", body: Data(#"{"answer":"1","uid":"device-7"}"#.utf8))
        #expect(answer.status == 201 && answer.documentID == "q1" && answer.newRevision?.hasPrefix("2-") == true)
        #expect(try JSON(parsing: answer.body)["answers"]?.arrayValue?[1]["votes"] == .array(["device-7"]))
        // An unknown handler: 404 as a typed error.
        do {
            _ = try await db.update(design: "voting", function: "nofn", id: "q1")
            Issue.record("an unknown handler answered")
        } catch let error as RemoteError {
            #expect(error.status == 404)
        }

        // Mango, with an index.
        for i in 0..<5 { try await db.put(["_id": .string("v\(i)"), "type": "vote", "answer": .int(i % 2)]) }
        try await db.createIndex(fields: ["type", "answer"])
        let found = try await db.find(FindQuery(selector: .object(["type": "vote", "answer": 1]), sort: [("type", true), ("answer", true)]))
        #expect(found.docs.map { $0["_id"] } == [.string("v1"), .string("v3")])
        #expect(found.warning == nil)

        // A view with a built-in reduce.
        try await db.put(["_id": "_design/tally", "views": ["by_answer": [
            "map": "function(doc) { if (doc.type == 'vote') emit(doc.answer, 1); }", "reduce": "_count"]]])
        let grouped = try await db.view(design: "tally", view: "by_answer", options: ViewQueryOptions(group: true))
        #expect(grouped.rows == [.object(["key": 0, "value": 3]), .object(["key": 1, "value": 2])])
        let rows = try await db.view(design: "tally", view: "by_answer", options: ViewQueryOptions(key: 1, reduce: false))
        #expect(rows.rows.count == 2 && rows.totalRows == 5)
        let keyed = try await db.view(design: "tally", view: "by_answer", options: ViewQueryOptions(keys: [0], reduce: false))
        #expect(keyed.rows.count == 3)

        // Attachments.
        let rev = try await db.document(id: "q1")["_rev"]!.stringValue!
        let withPicture = try await db.putAttachment(id: "q1", name: "picture.txt", rev: rev, contentType: "text/plain", data: Data("tabs!".utf8))
        let picture = try await db.attachment(id: "q1", name: "picture.txt")
        #expect(picture.data == Data("tabs!".utf8) && picture.contentType == "text/plain" && picture.digest.hasPrefix("md5-"))
        try await db.deleteAttachment(id: "q1", name: "picture.txt", rev: withPicture.rev)
        await #expect(throws: RemoteError.self) { try await db.attachment(id: "q1", name: "picture.txt") }

        // _local documents: none, then one.
        #expect(try await db.localDocument(id: "checkpoint") == nil)
        try await db.putLocal(id: "checkpoint", ["seq": 5])
        #expect(try await db.localDocument(id: "checkpoint")?["seq"]?.intValue == 5)
    }

    @Test func basicAndCookieAuthentication() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        // Credentials in the URL become Basic authentication.
        let fromURL = try CouchClient(url: URL(string: "http://admin:secret@127.0.0.1:\(server.base.port!)/")!)
        #expect(fromURL.authentication == .basic(name: "admin", password: "secret"))
        #expect(fromURL.url.absoluteString == "http://127.0.0.1:\(server.base.port!)")
        #expect(try await fromURL.session()["userCtx"]?["name"] == .string("admin"))
        let cookie = try server.client(.cookie(name: "admin", password: "secret"))
        try await cookie.database("private").create()
        #expect(try await cookie.session()["userCtx"]?["roles"] == .array(["_admin"]))
        // A wrong password: 401 as a typed error, with CouchDB's reason.
        do {
            _ = try await server.client(.basic(name: "admin", password: "wrong")).allDatabases()
            Issue.record("a wrong password was accepted")
        } catch let error as RemoteError {
            #expect(error.status == 401 && error.error == "unauthorized" && !error.isTransient)
        }
        do {
            _ = try await server.client(.cookie(name: "admin", password: "wrong")).allDatabases()
            Issue.record("a wrong password was accepted")
        } catch let error as RemoteError {
            #expect(error.status == 401)
        }
        // Anonymous users may not create databases.
        do {
            try await server.client(.none).database("mine").create()
            Issue.record("anonymous created a database")
        } catch let error as RemoteError {
            #expect(error.status == 401)
        }
    }

    @Test func noServerIsATransientNetworkError() async throws {
        // A port nothing listens on (this test's own server, stopped).
        let server = try await RunningServer.start()
        let url = server.base
        // Wait for it to be gone before asking: no request races the shutdown.
        await server.stopped()
        let gone = try CouchClient(url: url)
        do {
            _ = try await gone.serverInfo()
            Issue.record("a stopped server answered")
        } catch let error as RemoteError {
            #expect(error.error == "network_error" && error.isTransient)
        }
        #expect(throws: RemoteError.self) { try CouchClient(url: URL(string: "ftp://example.org")!) }
    }
}
