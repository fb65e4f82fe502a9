import Foundation
import Strata
import StrataDocuments
import StrataServerTestHelpers
import StrataSync
import StrataTestHelpers
import Testing

/// The Syncing devices article's examples (StrataSync), run against
/// `strata serve` on loopback in place of 127.0.0.1:5984.
@Suite(.serialized) struct SyncingDevicesArticleTests {
    @Test func articleExamples() async throws {
        let running = try await RunningServer.start()
        defer { running.stop() }
        let device = try DocumentDatabase(path: makeTemporaryPath("phone.sqlite"))
        try await device.put(["_id": "vote:tabs-or-spaces:phone", "type": "vote", "question": "tabs-or-spaces", "answer": 1])

        let server = try CouchClient(url: running.base, authentication: .basic(name: "admin", password: "secret"))
        let voting = server.database("voting")
        try await voting.createIfMissing()
        let saved = try await voting.put(["_id": "tabs-or-spaces", "question": "Tabs or spaces?"])
        let question = try await voting.document(id: "tabs-or-spaces")
        #expect(question["_rev"] == .string(saved.rev))

        var refused: RemoteError?
        do {
            try await voting.put(["_id": "tabs-or-spaces", "question": "stale"])
        } catch let error as RemoteError where error.status == 409 {
            refused = error
        }
        #expect(refused?.reason == "Document update conflict.")

        // One code path for the device and the server.
        var tallyFunctions = DesignFunctions()
        tallyFunctions.views["votes"] = DesignFunctions.View(map: { doc, emit in
            if doc["type"] == "vote", let answer = doc["answer"] { emit(answer, 1) }
        }, reduce: .sum)
        try device.register(design: "tally", tallyFunctions)
        try await voting.put(["_id": "_design/tally", "views": ["votes": [
            "map": "function(doc) { if (doc.type == 'vote') emit(doc.answer, 1); }", "reduce": "_sum"]]])
        func tally(_ store: some DocumentStore) async throws -> [JSON] {
            try await store.view(design: "tally", view: "votes", options: ViewQueryOptions(group: true)).rows
        }
        let onDevice = try await tally(device)
        let onServer = try await tally(voting)
        #expect(onDevice == [["key": 1, "value": 1]] && onServer == [])

        let push = Replicator(source: device, target: voting)
        let progress = try await push.run()
        #expect(progress.documentsWritten == 1)

        let (sent, received) = try await Replicator.sync(device, voting)
        #expect(sent.documentsWritten == 0 && received.documentsWritten == 2)
        #expect(try await tally(voting) == onDevice)

        let live = Task {
            try await Replicator.sync(device, voting, options: ReplicationOptions(continuous: true))
        }
        let later = try await device.put(["_id": "later", "type": "vote"])
        #expect(await eventually { (try? await voting.document(id: "later"))?["_rev"] == .string(later.rev) })
        live.cancel()

        let list = try await device.document(id: "vote:tabs-or-spaces:phone", options: DocumentReadOptions(conflicts: true))
        for loser in list["_conflicts"]?.arrayValue ?? [] {
            try await device.delete(id: "vote:tabs-or-spaces:phone", rev: loser.stringValue!)
        }

        var options = ReplicationOptions()
        options.filter = .selector(["type": "vote"])
        try await Replicator(source: device, target: voting, options: options).run()
    }

    /// "Replications the server runs": the `_replicator` document, with a
    /// second server on loopback in place of backup.local.
    @Test func replicatorDocumentExample() async throws {
        let running = try await RunningServer.start()
        defer { running.stop() }
        let backup = try await RunningServer.start()
        defer { backup.stop() }
        let voting = try running.client().database("voting")
        try await voting.create()
        _ = try await voting.put(["_id": "tabs-or-spaces", "question": "Tabs or spaces?"])
        let target = backup.base.absoluteString.replacingOccurrences(of: "http://", with: "http://admin:secret@") + "/voting"
        let body = #"{"source": "voting", "target": "\#(target)", "create_target": true, "continuous": true}"#
        #expect(try await running.send("PUT", "/_replicator/backup", json: body, user: "admin:secret").0 == 201)
        let copy = try backup.client().database("voting")
        #expect(await eventually { (try? await copy.document(id: "tabs-or-spaces")) != nil })
        #expect(try await running.send("GET", "/_scheduler/docs/_replicator/backup", user: "admin:secret").1?["state"] == "running")
    }
}

/// The Syncing tables article's examples (StrataDocuments' catalog), against `strata
/// serve` on loopback in place of 127.0.0.1:5984 and a temporary file in
/// place of notes.sqlite.
@Suite struct SyncingTablesArticleTests {
    @Test func articleExamples() async throws {
        let running = try await RunningServer.start()
        defer { running.stop() }
        try await running.client().database("notes-alice").create()

        let pool = try DatabasePool(path: try makeTemporaryPath("notes.sqlite"))
        try await pool.write { db in
            try db.execute(sql: """
                CREATE TABLE IF NOT EXISTS folders(id TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL);
                CREATE TABLE IF NOT EXISTS notes(id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL,
                  body TEXT NOT NULL DEFAULT '', updatedAt TEXT, folderID TEXT REFERENCES folders(id));
                """)
        }
        let sync = try TableSync(pool, tables: ["folders", "notes"])

        try await pool.write { db in
            try db.execute(sql: "INSERT INTO notes(id, title) VALUES (?, ?)", arguments: [UUID().uuidString, "Groceries"])
        }

        let server = try CouchClient(url: running.base, authentication: .basic(name: "admin", password: "secret"))
        let notes = server.database("notes-alice")
        try await sync.sync(with: notes)
        #expect(try await notes.info().documentCount == 1)

        let syncing = Task { try await sync.run(with: notes) }
        try await pool.write { db in
            try db.execute(sql: "INSERT INTO notes(id, title) VALUES (?, ?)", arguments: [UUID().uuidString, "Calls"])
        }
        #expect(try await eventually { try await notes.info().documentCount == 2 })
        syncing.cancel()

        for conflict in try sync.conflicts(in: "notes") {
            print(conflict.key, "has", conflict.losers.count, "other version(s)")
        }
        #expect(try sync.resolveConflicts(in: "notes", using: .newest(by: "updatedAt")) == 0)
        #expect(try sync.resolveConflicts(in: "notes", using: .mergeColumns(newestBy: "updatedAt")) == 0)

        try await pool.write { db in
            try TableSync.alter(db) { db in
                try db.execute(sql: "ALTER TABLE notes DROP COLUMN body")
            }
        }
        #expect(try TableSync(pool, tables: ["folders", "notes"]).tables.last?.columns == ["id", "title", "updatedAt", "folderID"])
    }
}
