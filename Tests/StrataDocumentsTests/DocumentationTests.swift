import Strata
import StrataDocuments
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
}
