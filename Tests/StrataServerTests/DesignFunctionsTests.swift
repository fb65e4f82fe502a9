import Foundation
import Strata
import StrataDocuments
import StrataServerTestHelpers
import StrataTestHelpers
import Testing

/// Design functions written in Swift: views, update handlers, validation and
/// filters, for an app that embeds the store without JavaScript, and served
/// by `strata serve` in place of a design document's JavaScript.
@Suite(.serialized) struct DesignFunctionsTests {
    /// Counts map calls, to see which documents the index maps again.
    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var ids: [String] = []
        func note(_ id: String) { lock.withLock { ids.append(id) } }
        func take() -> [String] { lock.withLock { defer { ids = [] }; return ids.sorted() } }
    }

    static func voting(counter: Counter? = nil) -> DesignFunctions {
        var voting = DesignFunctions(version: "1")
        voting.views["votes_by_answer"] = .init(map: { doc, emit in
            counter?.note(doc["_id"]?.stringValue ?? "")
            for (i, answer) in (doc["answers"]?.arrayValue ?? []).enumerated() {
                for _ in answer["votes"]?.arrayValue ?? [] {
                    emit(.array([doc["_id"] ?? .null, .int(i)]), .int(1))
                }
            }
        }, reduce: .sum)
        voting.updates["addvote"] = { doc, request in
            guard var doc else { return (nil, .object(["code": .int(404), "json": .object(["error": .string("not_found")])])) }
            let body = try JSON(parsing: request["body"]?.stringValue ?? "{}")
            guard let answer = body["answer"]?.stringValue.flatMap({ Int($0) }), var answers = doc["answers"]?.arrayValue, answers.indices.contains(answer),
                  var chosen = answers[answer].objectValue else {
                throw DocumentError(.forbidden, "no such answer")
            }
            chosen["votes"] = .array((chosen["votes"]?.arrayValue ?? []) + [body["uid"] ?? .null])
            answers[answer] = .object(chosen)
            doc["answers"] = .array(answers)
            return (doc, .string(JSON.object(doc).text))
        }
        voting.validate = { newDocument, _, user, _ in
            let roles = user["roles"]?.arrayValue ?? []
            if user["name"] == .null, !roles.contains(.string("_admin")) {
                throw DocumentError(.unauthorized, "sign in to write")
            }
            if newDocument["question"] != nil, newDocument["answers"]?.arrayValue == nil {
                throw DocumentError(.forbidden, "a question needs answers")
            }
        }
        voting.filters["questions"] = { doc, _ in doc["question"] != nil }
        return voting
    }

    static let question: JSONObject = [
        "_id": .string("q1"), "question": .string("Tabs or spaces?"),
        "answers": .array([.object(["answer": .string("Tabs"), "votes": .array([])]), .object(["answer": .string("Spaces"), "votes": .array([])])]),
    ]

    @Test func anEmbeddedStoreRunsSwiftFunctions() throws {
        let db = try DocumentDatabase(DatabaseQueue(), name: "votes")
        let counter = Counter()
        try db.register(design: "voting", Self.voting(counter: counter))
        try db.put(Self.question)
        try db.put(["_id": .string("note"), "text": .string("not a question")])
        // Validation runs on the app's writes too.
        #expect(throws: DocumentError(.forbidden, "a question needs answers")) { try db.put(["_id": .string("q2"), "question": .string("?")]) }
        #expect(throws: DocumentError(.unauthorized, "sign in to write")) {
            try db.put(["_id": .string("x")], userContext: .object(["name": .null, "roles": .array([])]))
        }
        // The update function: each call one vote, in one transaction.
        for uid in ["a", "b", "c"] {
            let (written, response) = try db.update(design: "voting", function: "addvote", id: "q1",
                                                    request: .object(["body": .string(#"{"answer":"1","uid":"\#(uid)"}"#)]))
            #expect(written?.id == "q1")
            let answered = try JSON(parsing: response.stringValue ?? "")
            #expect(answered["answers"]?.arrayValue?[1]["votes"]?.arrayValue?.last == .string(uid))
        }
        #expect(throws: DocumentError(.forbidden, "no such answer")) {
            try db.update(design: "voting", function: "addvote", id: "q1", request: .object(["body": .string(#"{"answer":"7"}"#)]))
        }
        // The view: grouped sums, and only changed documents mapped again.
        var result = try db.view(design: "voting", view: "votes_by_answer", options: ViewQueryOptions(group: true))
        #expect(result.json.text == #"{"rows":[{"key":["q1",1],"value":3}]}"#)
        #expect(counter.take() == ["note", "q1"])
        try db.update(design: "voting", function: "addvote", id: "q1", request: .object(["body": .string(#"{"answer":"0","uid":"d"}"#)]))
        result = try db.view(design: "voting", view: "votes_by_answer", options: ViewQueryOptions(groupLevel: 1))
        #expect(result.json.text == #"{"rows":[{"key":["q1"],"value":4}]}"#)
        #expect(counter.take() == ["q1"])
        result = try db.view(design: "voting", view: "votes_by_answer", options: ViewQueryOptions(limit: 1, reduce: false))
        #expect(result.totalRows == 4 && result.rows.count == 1)
        // A new version rebuilds the index.
        var second = Self.voting(counter: counter)
        second.version = "2"
        try db.register(design: "voting", second)
        _ = try db.view(design: "voting", view: "votes_by_answer")
        #expect(counter.take() == ["note", "q1"])
        // The filter.
        let changes = try db.changes(filter: "voting/questions")
        #expect(changes.results.map(\.id) == ["q1"])
    }

    @Test func strataServeUsesRegisteredFunctionsOverJavaScript() async throws {
        let server = try await RunningServer.start { server in
            try server.register(database: "voting", design: "voting", Self.voting())
        }
        defer { server.stop() }
        let admin = "admin:secret"
        #expect(try await server.send("PUT", "/voting", user: admin).0 == 201)
        // The seed's JavaScript design document is stored; the Swift functions answer in its place.
        #expect(try await server.send("PUT", "/voting/_design/voting", json: SeedVoting.design, user: admin).0 == 201)
        let question = JSON.object(Self.question).text
        var (status, body) = try await server.send("PUT", "/voting/q1", json: question)
        #expect(status == 401 && body?["reason"] == .string("sign in to write"))
        #expect(try await server.send("PUT", "/voting/q1", json: question, user: admin).0 == 201)
        (status, body) = try await server.send("PUT", "/voting/q2", json: #"{"question":"?"}"#, user: admin)
        #expect(status == 403 && body?["reason"] == .string("a question needs answers"))
        // 50 concurrent votes through the Swift update handler: all counted.
        try await withThrowingTaskGroup(of: Int.self) { group in
            for i in 0..<50 {
                group.addTask {
                    let (status, _, _) = try await server.sendRaw("POST", "/voting/_design/voting/_update/addvote/q1",
                                                                   json: #"{"answer":"\#(i % 2)","uid":"device-\#(i)"}"#, user: admin)
                    return status
                }
            }
            for try await status in group { #expect(status == 201) }
        }
        let (_, totals) = try await server.send("GET", "/voting/_design/voting/_view/votes_by_answer?group=true")
        #expect(totals?.text == #"{"rows":[{"key":["q1",0],"value":25},{"key":["q1",1],"value":25}]}"#)
        let (_, feed) = try await server.send("GET", "/voting/_changes?filter=voting/questions", user: admin)
        #expect(feed?["results"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["q1"])
    }
}
