import Foundation
import Strata
import StrataDocuments
import StrataSync
import StrataTestHelpers
import Testing

/// The Sharing data article's examples, run.
@Suite struct SharingDataArticleTests {
    struct Vote: Document, Equatable {
        var _id: String
        var _rev: String?
        var question: String
        var answer: Int
    }

    @Test func articleExamples() throws {
        let queue = try DatabaseQueue()
        let votes = try DocumentDatabase(queue, name: "votes")

        var vote = Vote(_id: "v1", _rev: nil, question: "q1", answer: 2)
        vote._rev = try votes.put(vote).rev
        let again = try votes.document(Vote.self, id: "v1")
        #expect(again == vote)

        _ = try votes.createIndex(fields: ["answer"])
        let query = FindQuery(selector: .object(["answer": .object(["$gte": .int(2)])]), sort: [("answer", true)])
        let popular = try votes.find(Vote.self, query)
        #expect(popular == [vote])
    }

    @Test func viewsExample() throws {
        let votes = try DocumentDatabase(DatabaseQueue(), name: "votes")
        try votes.put(["_id": .string("q1"), "answers": .array([.object(["votes": .array([.string("a"), .string("b")])]), .object(["votes": .array([.string("c")])])])])

        var results = DesignFunctions(version: "1")
        results.views["votes"] = .init(map: { doc, emit in
            for (i, answer) in (doc["answers"]?.arrayValue ?? []).enumerated() {
                emit(.array([doc["_id"] ?? .null, .int(i)]), .int(answer["votes"]?.arrayValue?.count ?? 0))
            }
        }, reduce: .sum)
        results.validate = { newDocument, _, _, _ in
            if newDocument["answers"] != nil, newDocument["answers"]?.arrayValue == nil {
                throw DocumentError(.forbidden, "answers is a list")
            }
        }
        try votes.register(design: "results", results)
        let perQuestion = try votes.view(design: "results", view: "votes", options: ViewQueryOptions(groupLevel: 1))

        #expect(perQuestion.json.text == #"{"rows":[{"key":["q1"],"value":3}]}"#)
        #expect(throws: DocumentError(.forbidden, "answers is a list")) { try votes.put(["_id": .string("q2"), "answers": .int(1)]) }
    }

    /// The example in DesignFunctions' documentation.
    @Test func designFunctionsDocumentationExample() throws {
        let database = try DocumentDatabase(DatabaseQueue(), name: "votes")
        try database.put(["_id": .string("q1"), "answers": .array([.object(["text": .string("Tabs"), "votes": .array([.string("a")])])])])

        var voting = DesignFunctions(version: "1")
        voting.views["by_answer"] = .init(map: { doc, emit in
            for answer in doc["answers"]?.arrayValue ?? [] {
                emit(answer["text"] ?? .null, .int(answer["votes"]?.arrayValue?.count ?? 0))
            }
        }, reduce: .sum)
        voting.validate = { newDocument, _, user, _ in
            if user["name"] == .null { throw DocumentError(.unauthorized, "sign in to vote") }
        }
        try database.register(design: "voting", voting)
        let totals = try database.view(design: "voting", view: "by_answer", options: ViewQueryOptions(group: true))

        #expect(totals.rows == [.object(["key": .string("Tabs"), "value": .int(1)])])
        #expect(throws: DocumentError(.unauthorized, "sign in to vote")) { try database.put(["_id": .string("x")]) }
    }
}

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
        #expect(try await eventually { (try? await voting.document(id: "later"))?["_rev"] == .string(later.rev) })
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
        #expect(try await eventually { (try? await copy.document(id: "tabs-or-spaces")) != nil })
        #expect(try await running.send("GET", "/_scheduler/docs/_replicator/backup", user: "admin:secret").1?["state"] == "running")
    }
}
