import Foundation
import Strata
@testable import StrataDocuments
import StrataTestHelpers
import Testing

/// A runner that reads one rule from a design document instead of running
/// its JavaScript: `"validate_doc_update": "refuse:FIELD"` refuses documents
/// with a true `FIELD`. It counts its calls and the users it saw.
final class RuleRunner: DesignFunctionRunner, @unchecked Sendable {
    private let lock = NSLock()
    private var seen: [JSON] = []
    var users: [JSON] { lock.withLock { seen } }

    func run(tenant: String, design: JSONObject, path: [String], arguments: [JSON]) throws -> JSON {
        guard path == ["validate_doc_update"], let rule = design["validate_doc_update"]?.stringValue else {
            throw DocumentError(.notFound, "no such function")
        }
        lock.withLock { seen.append(arguments[2]) }
        let field = String(rule.dropFirst("refuse:".count))
        if arguments[0][field] == .bool(true) { return .object(["forbidden": .string("no \(field) documents")]) }
        return .int(1)
    }
}

/// The engine runs stored design documents' validation on every write,
/// whatever API wrote it, through the runner it was given.
@Suite struct StoredValidationTests {
    @Test func everyWriteOfTheEmbeddedAPIIsValidatedByTheStoredRules() throws {
        let db = try makeDocuments()
        let runner = RuleRunner()
        db.setDesignFunctionRunner(runner, databaseName: "notes")
        try db.put(["_id": "_design/rules", "validate_doc_update": "refuse:bad"])
        let bad: JSONObject = ["_id": "evil", "bad": true]

        #expect(throws: DocumentError(.forbidden, "no bad documents")) { try db.put(bad) }
        #expect(throws: DocumentError(.forbidden, "no bad documents")) { try db.put(["bad": true]) }
        #expect(try db.bulkPut([bad, ["_id": "fine"]]).map { (try? $0.get()) != nil } == [false, true])
        #expect(try db.bulkPut([["_id": "evil", "_rev": "1-abc", "bad": true]], newEdits: false).first.map { (try? $0.get()) == nil } == true)
        #expect(try db.putEach([(bad, true, nil), (["_id": "also"], true, nil)]).map { (try? $0.get()) != nil } == [false, true])
        let user: JSON = ["db": "notes", "name": "ann", "roles": []]
        let results = try db.updateInTurn(id: "evil", count: 1, userContext: user) { _, _ in (bad, "ok") }
        #expect((try? results[0].get()) == nil)
        let fine = try db.document(id: "fine")
        #expect(throws: DocumentError(.forbidden, "no bad documents")) {
            var edited = fine
            edited["bad"] = true
            try db.put(edited)
        }
        #expect(throws: DocumentError.missing) { try db.document(id: "evil") }
        // The runner saw the writer's user context, with the database's name.
        #expect(runner.users.contains(user))
        #expect(runner.users.contains { $0["db"] == "notes" && $0["roles"] == ["_admin"] })

        // A new rule, written by any API, holds for the next write.
        try db.put(["_id": "_design/more", "validate_doc_update": "refuse:ugly"])
        #expect(throws: DocumentError(.forbidden, "no ugly documents")) { try db.put(["_id": "u", "ugly": true]) }
        // A rule replaced by a Swift function is the Swift function's.
        var swift = DesignFunctions()
        swift.validate = { _, _, _, _ in }
        try db.register(design: "more", swift)
        try db.put(["_id": "u", "ugly": true])
    }

    /// CouchDB's rule in the engine, not only at the server's door: a
    /// design document is written by a database admin, whatever API writes
    /// it with a user context; the app (no user context) is an admin.
    @Test func aDesignDocumentIsADatabaseAdminsToWriteOnEveryPath() async throws {
        let db = try makeDocuments()
        let reader: JSON = ["name": "bob", "roles": ["staff"]]
        let anonymous: JSON = ["name": .null, "roles": []]
        let design: JSONObject = ["_id": "_design/app", "views": [:]]
        let refused = DocumentError(.forbidden, "You are not a db or server admin.")
        #expect(throws: refused) { try db.put(design, userContext: reader) }
        #expect(throws: DocumentError(.unauthorized, "You are not a db or server admin.")) { try db.put(design, userContext: anonymous) }
        #expect(throws: refused) { try db.bulkPut([design], userContext: reader)[0].get() }
        #expect(throws: refused) { try db.bulkPut([["_id": "_design/app", "_rev": "1-abc"]], newEdits: false, userContext: reader)[0].get() }
        #expect(throws: refused) { try db.putEach([(design, true, reader)])[0].get() }
        await #expect(throws: refused) { try await db.commit(design, userContext: reader) }
        #expect(throws: refused) {
            try db.putAttachment(id: "_design/app", name: "a.txt", rev: nil, contentType: "text/plain", data: Data("x".utf8), userContext: reader)
        }
        #expect(throws: DocumentError.missing) { try db.document(id: "_design/app") }
        // A design document's id read in bytes, as everywhere: `_design/`
        // and a combining mark (which joins the slash in one Character).
        let marked = "_design/\u{301}app"
        #expect(throws: refused) { try db.put(["_id": .string(marked), "views": [:]], userContext: reader) }
        #expect(throws: refused) { try db.bulkPut([["_id": .string(marked), "views": [:]]], userContext: reader)[0].get() }
        #expect(throws: DocumentError.missing) { try db.document(id: marked) }
        // An admin of the database by name or role, a server admin, the app.
        try await db.setSecurity(["admins": ["names": ["bob"], "roles": []]])
        let written = try await db.put(design, userContext: reader)
        try await db.setSecurity(["admins": ["names": [], "roles": ["editors"]]])
        let edited = try await db.put(["_id": "_design/app", "_rev": .string(written.rev), "views": [:], "v": 2],
                                userContext: ["name": "carol", "roles": ["editors"]])
        let deleted = try db.delete(id: "_design/app", rev: edited.rev, userContext: ["name": "root", "roles": ["_admin"]])
        #expect(deleted.rev.hasPrefix("3-"))
        await #expect(try db.put(["_id": "_design/app", "views": [:]]).rev.hasPrefix("4-"))
        // Plain documents stay anyone's to write.
        await #expect(try db.put(["_id": "note"], userContext: reader).rev.hasPrefix("1-"))
    }

    @Test func withoutARunnerAJavaScriptRuleRefusesWritesItCannotCheck() throws {
        let db = try makeDocuments()
        try db.put(["_id": "_design/rules", "validate_doc_update": "function(n) { if (n.bad) throw({forbidden: 'no'}); }"])
        do {
            try db.put(["_id": "a"])
            Issue.record("written unchecked")
        } catch let error as DocumentError {
            #expect(error.kind == .osProcessError)
            #expect(error.reason.contains("_design/rules") && error.reason.contains("DesignFunctionRunner"))
        }
        #expect(throws: DocumentError.missing) { try db.document(id: "a") }
        // Design and local documents are not checked; a Swift function in
        // the design's place makes writes possible again.
        try db.put(["_id": "_local/x"])
        var swift = DesignFunctions()
        swift.validate = { new, _, _, _ in if new["bad"] == .bool(true) { throw DocumentError(.forbidden, "no") } }
        try db.register(design: "rules", swift)
        try db.put(["_id": "a"])
        #expect(throws: DocumentError(.forbidden, "no")) { try db.put(["_id": "b", "bad": true]) }
    }

    @Test func aVerdictReachedBeforeTheWriteStandsOnlyWhileTheRulesAreTheSame() throws {
        let db = try makeDocuments()
        db.setDesignFunctionRunner(RuleRunner())
        try db.put(["_id": "_design/rules", "validate_doc_update": "refuse:bad"])
        let ugly: JSONObject = ["_id": "u", "ugly": true], bad: JSONObject = ["_id": "b", "bad": true]
        let passed = try #require(try db.checkInAdvance(ugly, userContext: nil))
        let refused = try #require(try db.checkInAdvance(bad, userContext: nil))
        #expect(passed.refusal == nil && refused.refusal != nil)
        // A rule added between the check and the write holds for the write.
        try db.put(["_id": "_design/more", "validate_doc_update": "refuse:ugly"])
        let results = try db.putEach([(ugly, true, nil)], checked: [passed])
        #expect(throws: DocumentError(.forbidden, "no ugly documents")) { try results[0].get() }
        // A verdict for other contents or another user is not used.
        let other = try db.putEach([(["_id": "b"], true, nil), (bad, true, ["name": "x", "roles": []])], checked: [refused])
        #expect((try? other[0].get()) != nil)
        #expect(throws: DocumentError(.forbidden, "no bad documents")) { try other[1].get() }
        // The rules unchanged, the verdict stands without running again.
        let runner = RuleRunner()
        db.setDesignFunctionRunner(runner)
        let checked = try #require(try db.checkInAdvance(["_id": "c"], userContext: nil))
        let calls = runner.users.count
        _ = try db.putEach([(["_id": "c"], true, nil)], checked: [checked])
        #expect(runner.users.count == calls)
        #expect(try db.document(id: "c")["_id"] == "c")
    }
}
