import Foundation
import Strata
import StrataDocuments
import StrataTestHelpers
import Testing

/// Group commit and update batching belong to the engine: an app writing
/// from many tasks gets what `strata serve` gives its clients.
@Suite struct GroupedWriteTests {
    /// Concurrent `commit`s all land, each answered with its own revision;
    /// one refused by a stored rule fails alone.
    @Test func concurrentCommitsAllLand() async throws {
        let db = try makeDocuments()
        db.setDesignFunctionRunner(RuleRunner())
        try await db.put(["_id": "_design/rules", "validate_doc_update": "refuse:bad"])
        let results = await withTaskGroup(of: (Int, Result<DocumentWriteResult, any Error>).self) { group in
            for i in 0..<64 {
                group.addTask {
                    let doc: JSONObject = ["_id": .string("d\(i)"), "bad": .bool(i == 7)]
                    do { return (i, .success(try await db.commit(doc))) } catch { return (i, .failure(error)) }
                }
            }
            var all: [Int: Result<DocumentWriteResult, any Error>] = [:]
            for await (i, result) in group { all[i] = result }
            return all
        }
        #expect(results.count == 64)
        for (i, result) in results {
            switch result {
            case .success(let written):
                #expect(i != 7 && written.id == "d\(i)" && written.rev.hasPrefix("1-"))
            case .failure(let error):
                #expect(i == 7 && (error as? DocumentError) == DocumentError(.forbidden, "no bad documents"))
            }
        }
        #expect(try await db.info().documentCount == 64) // 63 documents and the design document
        #expect(throws: DocumentError.missing) { try db.document(id: "d7") }
        // A conflict is the writer's own answer too.
        await #expect(throws: DocumentError.conflict) { try await db.commit(["_id": "d1"]) }
    }

    /// Concurrent calls of one update function on one document are applied
    /// one after the other: every call counted, none in conflict.
    @Test func concurrentUpdatesOnOneDocumentAreAllApplied() async throws {
        let db = try makeDocuments()
        var functions = DesignFunctions()
        functions.updates["add"] = { doc, request in
            var doc = doc ?? ["_id": "counter"]
            doc["n"] = .int((doc["n"]?.intValue ?? 0) + (request["body"]?.intValue ?? 0))
            return (doc, doc["n"]!)
        }
        try db.register(design: "app", functions)
        let answers = try await withThrowingTaskGroup(of: JSON.self) { group in
            for _ in 0..<40 {
                group.addTask { try await db.runUpdate(design: "app", function: "add", id: "counter", request: ["body": 1]).response }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(Set(answers) == Set((1...40).map { JSON.int($0) }))
        #expect(try await db.document(id: "counter")["n"] == 40)
        #expect(try await db.document(id: "counter")["_rev"]?.stringValue?.hasPrefix("40-") == true)
    }

    /// Calls on two documents whose ids Swift's `==` takes for one (a
    /// precomposed `é`, and `e` with a combining accent) are two documents'
    /// calls: never batched together, each applied to its own document.
    @Test func concurrentUpdatesOnIDsSpelledTwoWaysStayApart() async throws {
        let db = try makeDocuments()
        let ids = ["caf\u{E9}", "cafe\u{301}"]
        _ = try await db.put(["_id": .string(ids[0]), "n": 0])
        _ = try await db.put(["_id": .string(ids[1]), "n": 100])
        var functions = DesignFunctions()
        functions.updates["add"] = { doc, _ in
            var doc = doc ?? [:]
            doc["n"] = .int((doc["n"]?.intValue ?? 0) + 1)
            return (doc, doc["_id"] ?? .null)
        }
        try db.register(design: "app", functions)
        let answers = try await withThrowingTaskGroup(of: (String, JSON).self) { group in
            for call in 0..<60 {
                let id = ids[call % 2]
                group.addTask { (id, try await db.runUpdate(design: "app", function: "add", id: id).response) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        // Each call saw its own document.
        #expect(answers.allSatisfy { Array($0.0.utf8) == $0.1.stringValue.map { Array($0.utf8) } })
        #expect(try await db.document(id: ids[0])["n"] == 30)
        #expect(try await db.document(id: ids[1])["n"] == 130)
    }

    /// An update function sees the newest 20 revision ids of its document's
    /// path, as CouchDB 3 hands a document to a design function, whether
    /// the document was read for the call or carried over from the call
    /// before it in one batch.
    @Test func updateFunctionsSeeTheNewestTwentyRevisions() throws {
        let db = try makeDocuments()
        var functions = DesignFunctions()
        functions.updates["count"] = { doc, _ in
            var doc = doc ?? ["_id": "q"]
            doc["n"] = .int((doc["n"]?.intValue ?? 0) + 1)
            return (doc, doc["_revisions"] ?? .null)
        }
        try db.register(design: "app", functions)
        // 25 calls, each read afresh, then a batch of 30 in one transaction.
        var seen = try (0..<25).map { _ in try db.update(design: "app", function: "count", id: "q").response }
        seen += try db.update(design: "app", function: "count", id: "q", requests: Array(repeating: .object([:]), count: 30)).map { try $0.get().response }
        let path = try db.document(id: "q", options: DocumentReadOptions(revs: true))["_revisions"]?["ids"]?.arrayValue ?? []
        #expect(path.count == 55)
        #expect(seen[0] == .null)
        for calls in 1..<55 {
            let expected: JSON = ["start": .int(calls), "ids": .array(Array(path[(55 - calls)...].prefix(20)))]
            #expect(seen[calls] == expected, "call \(calls + 1)")
        }
    }
}
