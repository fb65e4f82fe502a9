import Foundation
import Strata

/// The stored design documents with a `validate_doc_update`, as read at a
/// state of the design documents (their highest sequence and count).
struct StoredValidators: Sendable {
    var state: String
    var designs: [JSONObject]
}

/// What one transaction's writes learned about the stored validators: read
/// once, again only after the transaction wrote a design document; and the
/// verdicts of the JavaScript validators reached before the transaction.
final class ValidationPass: @unchecked Sendable {
    // @unchecked: filled before the transaction, then used by the one
    // transaction that made it, on its thread.
    var stored: StoredValidators?
    var checked: [String: CheckedDocument] = [:]
}

/// A document the stored JavaScript validators judged before its write's
/// transaction, at a state of the design documents: the write uses the
/// verdict when the state is still the same, and runs them again if not.
/// So the JavaScript of concurrent writes runs concurrently, and no write
/// holds the database's write lock while a function runs.
package struct CheckedDocument: Sendable {
    let document: JSONObject
    let user: JSON
    let state: String
    let refusal: DocumentError?
}

extension DocumentDatabase {
    /// The user context validation functions get.
    private func validationUser(_ userContext: JSON?) -> JSON {
        var context = (userContext ?? DocumentDatabase.appUserContext).objectValue ?? JSONObject()
        if context["db"] == nil || context["db"] == .null { context["db"] = .string(registry.databaseName ?? name) }
        return .object(context)
    }

    /// Runs the stored JavaScript validators on `document` outside any
    /// write (reading the current winner and `_security` from a reader):
    /// nil when there is nothing to run (no runner, no such validator, a
    /// design or local document).
    package func checkInAdvance(_ document: JSONObject, userContext: JSON?) throws -> CheckedDocument? {
        guard mayNeedCheckInAdvance, let runner = registry.runner, let id = document["_id"]?.stringValue,
              !id.hasBytePrefix("_local/"), !id.hasBytePrefix(DocumentTables.designPrefix) else { return nil }
        let tables = self.tables, registry = self.registry
        // Only when there is JavaScript to run are the winner and
        // `_security` read.
        let read = try writer.read { db -> (StoredValidators, [JSONObject], JSONObject?, JSON)? in
            let stored = try registry.storedValidators(db, tables)
            let javaScript = registry.unreplaced(stored.designs)
            guard !javaScript.isEmpty else { return nil }
            return (stored, javaScript, try tables.winner(db, id: id, revisions: DocumentDatabase.functionRevisionsLimit),
                    try tables.meta(db, "_security") ?? .object([:]))
        }
        guard let (stored, javaScript, old, security) = read else { return nil }
        let user = validationUser(userContext)
        do {
            try Self.runJavaScript(javaScript, runner: runner, tenant: instanceID, document: document, old: old,
                                   user: user, security: security)
            return CheckedDocument(document: document, user: user, state: stored.state, refusal: nil)
        } catch let error as DocumentError where error.kind == .forbidden || error.kind == .unauthorized {
            return CheckedDocument(document: document, user: user, state: stored.state, refusal: error)
        }
    }

    /// False when no write needs a check in advance: no runner, or no
    /// JavaScript validator when the design documents were last read. (A
    /// validator written since is run inside the write: the check in
    /// advance only spares the transaction the wait.) Reads nothing.
    package var mayNeedCheckInAdvance: Bool {
        guard registry.runner != nil else { return false }
        guard let known = registry.cachedValidators else { return true }
        return !registry.unreplaced(known.designs).isEmpty
    }

    /// Checks each document in advance into `pass` (see ``checkInAdvance``).
    func checkInAdvance(_ documents: [JSONObject], userContext: JSON?, into pass: ValidationPass) throws {
        guard mayNeedCheckInAdvance else { return }
        for document in documents {
            if let id = document["_id"]?.stringValue, let checked = try checkInAdvance(document, userContext: userContext) {
                pass.checked[id] = checked
            }
        }
    }

    /// Runs each design's JavaScript `validate_doc_update`. The functions
    /// get the documents as CouchDB's query servers do: the new one with
    /// its `_revisions` (for an edit, the revision it was made on), the old
    /// one (read by the caller) with its newest
    /// ``functionRevisionsLimit`` revision ids.
    static func runJavaScript(_ designs: [JSONObject], runner: any DesignFunctionRunner, tenant: String,
                              document: JSONObject, old: JSONObject?, user: JSON, security: JSON) throws {
        var document = document
        if document["_revisions"] == nil, let rev = document["_rev"]?.stringValue.flatMap(Revision.init) {
            document["_revisions"] = .object(["start": .int(rev.depth), "ids": .array([.string(rev.hash)])])
        }
        for design in designs {
            let answer = try runner.run(tenant: tenant, design: design, path: ["validate_doc_update"],
                                        arguments: [.object(document), old.map(JSON.object) ?? .null, user, security])
            if let refusal = answer.objectValue {
                if let message = refusal["forbidden"] { throw DocumentError(.forbidden, message.stringValue ?? message.text) }
                if let message = refusal["unauthorized"] { throw DocumentError(.unauthorized, message.stringValue ?? message.text) }
            }
        }
    }

    /// The check every write makes: each registered Swift validation and
    /// each stored JavaScript `validate_doc_update` (of a design no Swift
    /// function replaces) runs with the document, the current winner, the
    /// user context and the database's `_security`. Design and `_local`
    /// documents are not checked by JavaScript, as in CouchDB. A verdict
    /// reached in advance (`pass.checked`) stands when neither the document
    /// nor the design documents changed since.
    func validation(_ userContext: JSON?, pass: ValidationPass = ValidationPass()) -> @Sendable (Database, JSONObject) throws -> Void {
        let swiftValidators = registry.validators
        let runner = registry.runner
        let tables = self.tables
        let registry = self.registry
        let tenant = instanceID
        let user = validationUser(userContext)
        return { db, document in
            guard let id = document["_id"]?.stringValue, !id.hasBytePrefix("_local/") else { return }
            var javaScript: [JSONObject] = []
            var verdict: CheckedDocument?
            if id.hasBytePrefix(DocumentTables.designPrefix) {
                // Validators read before this write may be gone after it.
                pass.stored = nil
                // CouchDB's rule, whatever door the write came through: a
                // design document is a database admin's to write.
                if userContext != nil, !DocumentDatabase.isAdmin(user, security: try tables.meta(db, "_security")) {
                    throw DocumentError(user["name"]?.stringValue == nil ? .unauthorized : .forbidden, "You are not a db or server admin.")
                }
                if let runner, document["_deleted"]?.boolValue != true { try DocumentDatabase.compileViews(document, runner: runner, tenant: tenant) }
            } else {
                let stored = try pass.stored ?? registry.storedValidators(db, tables)
                pass.stored = stored
                javaScript = registry.unreplaced(stored.designs)
                if let checked = pass.checked[id], checked.state == stored.state, checked.user == user, checked.document == document { verdict = checked }
            }
            if swiftValidators.isEmpty && javaScript.isEmpty { return }
            // Only Swift functions need the winner and `_security` read
            // again when the JavaScript's verdict was reached in advance.
            if swiftValidators.isEmpty, let verdict {
                if let refusal = verdict.refusal { throw refusal }
                return
            }
            let old = try tables.winner(db, id: id)
            let security = try tables.meta(db, "_security") ?? .object([:])
            for validate in swiftValidators { try validate(document, old, user, security) }
            guard !javaScript.isEmpty else { return }
            if let verdict {
                if let refusal = verdict.refusal { throw refusal }
                return
            }
            guard let runner else {
                let names = javaScript.compactMap { $0["_id"]?.stringValue }.joined(separator: ", ")
                throw DocumentError(.osProcessError, "\(names) validate\(javaScript.count == 1 ? "s" : "") writes in JavaScript, and this database has no JavaScript runner: register Swift DesignFunctions with a validate function under that design's name, or give the database a DesignFunctionRunner")
            }
            // The functions see the old document's newest revision ids, as
            // on CouchDB (read only when JavaScript runs).
            let oldWithRevisions = try old.map { try tables.withRevisions(db, $0, revisions: DocumentDatabase.functionRevisionsLimit) }
            try DocumentDatabase.runJavaScript(javaScript, runner: runner, tenant: tenant, document: document, old: oldWithRevisions,
                                               user: user, security: security)
        }
    }
}

extension DocumentDatabase {
    /// Compiles a JavaScript design document's map and reduce functions,
    /// as CouchDB does before it saves one (`couch_mrview:validate`): a
    /// function that does not compile is a 400 `compilation_error` naming
    /// it, and the document is not written.
    static func compileViews(_ design: JSONObject, runner: any DesignFunctionRunner, tenant: String) throws {
        guard (design["language"]?.stringValue ?? "javascript") == "javascript" else { return }
        for (name, view) in design["views"]?.objectValue ?? JSONObject() where name != "lib" {
            for (kind, member) in [("map", "map"), ("reduce", "reduce")] {
                guard let source = view[member]?.stringValue, !(kind == "reduce" && source.hasBytePrefix("_")) else { continue }
                do {
                    try runner.compile(tenant: tenant, source: source)
                } catch let error as DocumentError where error.error == "compilation_error" {
                    throw DocumentError(status: 400, error: "compilation_error",
                                        reason: "Compilation of the \(kind) function in the '\(name)' view failed: \(error.reason)")
                }
            }
        }
    }
}

extension FunctionRegistry {
    /// The stored validators no registered Swift validation replaces.
    func unreplaced(_ designs: [JSONObject]) -> [JSONObject] {
        designs.filter { get(DocumentTables.designName($0["_id"]?.stringValue ?? ""))?.validate == nil }
    }

    /// The design documents holding a `validate_doc_update`, read inside the
    /// transaction: kept while the design documents' highest sequence and
    /// count are unchanged, so whatever wrote a design document (any door,
    /// a replication, another process) is seen.
    func storedValidators(_ db: Database, _ tables: DocumentTables) throws -> StoredValidators {
        let state = try String.fetchOne(db, sql: "SELECT coalesce(max(seq), 0) || ':' || count(*) FROM \(tables.docs) WHERE id >= '_design/' AND id < '_design0'") ?? ""
        if let known = cachedValidators, known.state == state { return known }
        var options = AllDocumentsOptions(startKey: DocumentTables.designPrefix, endKey: "_design0", includeDocs: true)
        options.inclusiveEnd = false
        let designs = try tables.allDocuments(db, options).rows
            .compactMap { $0["doc"]?.objectValue }
            .filter { $0["validate_doc_update"]?.stringValue != nil }
        let stored = StoredValidators(state: state, designs: designs)
        cachedValidators = stored
        return stored
    }
}
