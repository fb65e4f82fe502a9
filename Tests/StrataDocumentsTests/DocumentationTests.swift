import Foundation
import Strata
import StrataDocuments
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
