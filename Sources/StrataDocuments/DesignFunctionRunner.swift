import Foundation
import Strata

/// Runs the JavaScript of design documents for a ``DocumentDatabase``: what
/// `strata serve` gives each database it opens (its pool of query-server
/// processes), so that the engine itself runs the `validate_doc_update` of
/// stored design documents on every write, whatever door it came through.
///
/// An app that embeds the store without JavaScript gives none and registers
/// Swift functions instead (``DesignFunctions``); a write into a database
/// holding a JavaScript validation that no Swift function replaces is then
/// refused, never written unchecked.
public protocol DesignFunctionRunner: Sendable {
    /// Runs `path` (`["validate_doc_update"]`, `["updates", "vote"]`…) of the
    /// design document `design` with `arguments`, and answers the
    /// function's JSON answer. `tenant` names the database whose functions
    /// run (one database's JavaScript never sees another's).
    ///
    /// Throws ``DocumentError`` (the engine gives a refused document its
    /// own error and writes the others).
    func run(tenant: String, design: JSONObject, path: [String], arguments: [JSON]) throws -> JSON
}

/// The stored design documents with a `validate_doc_update`, as read at a
/// state of the design documents (their highest sequence and count).
struct StoredValidators: Sendable {
    var state: String
    var designs: [JSONObject]
}

/// What one transaction's writes learned about the stored validators: read
/// once, again only after the transaction wrote a design document.
final class ValidationPass: @unchecked Sendable {
    // @unchecked: used by the one transaction that made it, on its thread.
    var designs: [JSONObject]?
}

extension DocumentDatabase {
    /// Gives the engine the runner of its design documents' JavaScript and
    /// the database's name as validation functions see it (`userCtx.db`).
    public func setDesignFunctionRunner(_ runner: (any DesignFunctionRunner)?, databaseName: String? = nil) {
        registry.setRunner(runner, databaseName: databaseName)
    }

    /// The check every write makes: each registered Swift validation and
    /// each stored JavaScript `validate_doc_update` (of a design no Swift
    /// function replaces) runs with the document, the current winner, the
    /// user context and the database's `_security`. Design and `_local`
    /// documents are not checked by JavaScript, as in CouchDB.
    func validation(_ userContext: JSON?, pass: ValidationPass = ValidationPass()) -> @Sendable (Database, JSONObject) throws -> Void {
        let swiftValidators = registry.validators
        let runner = registry.runner
        let tables = self.tables
        let registry = self.registry
        let tenant = instanceID
        var context = (userContext ?? DocumentDatabase.appUserContext).objectValue ?? JSONObject()
        if context["db"] == nil || context["db"] == .null { context["db"] = .string(registry.databaseName ?? name) }
        let user = JSON.object(context)
        return { db, document in
            guard let id = document["_id"]?.stringValue, !id.hasPrefix("_local/") else { return }
            var javaScript: [JSONObject] = []
            if id.hasPrefix("_design/") {
                // Validators read before this write may be gone after it.
                pass.designs = nil
            } else {
                let stored = try pass.designs ?? registry.storedValidators(db, tables)
                pass.designs = stored
                javaScript = stored.filter { registry.get(String(($0["_id"]?.stringValue ?? "").dropFirst(8)))?.validate == nil }
            }
            if swiftValidators.isEmpty && javaScript.isEmpty { return }
            var old: JSONObject?
            do { old = try tables.read(db, id: id, options: DocumentReadOptions()) } catch let error as DocumentError where error.kind == .notFound {}
            let security = try tables.meta(db, "_security") ?? .object([:])
            for validate in swiftValidators { try validate(document, old, user, security) }
            guard !javaScript.isEmpty else { return }
            guard let runner else {
                let names = javaScript.compactMap { $0["_id"]?.stringValue }.joined(separator: ", ")
                throw DocumentError(.osProcessError, "\(names) validate\(javaScript.count == 1 ? "s" : "") writes in JavaScript, and this database has no JavaScript runner: register Swift DesignFunctions with a validate function under that design's name, or give the database a DesignFunctionRunner")
            }
            for design in javaScript {
                let answer = try runner.run(tenant: tenant, design: design, path: ["validate_doc_update"],
                                            arguments: [.object(document), old.map(JSON.object) ?? .null, user, security])
                if let refusal = answer.objectValue {
                    if let message = refusal["forbidden"] { throw DocumentError(.forbidden, message.stringValue ?? message.text) }
                    if let message = refusal["unauthorized"] { throw DocumentError(.unauthorized, message.stringValue ?? message.text) }
                }
            }
        }
    }
}

extension FunctionRegistry {
    /// The design documents holding a `validate_doc_update`, read inside the
    /// write's transaction: kept while the design documents' highest
    /// sequence and count are unchanged, so whatever wrote a design
    /// document (any door, a replication, another process) is seen.
    func storedValidators(_ db: Database, _ tables: DocumentTables) throws -> [JSONObject] {
        let state = try String.fetchOne(db, sql: "SELECT coalesce(max(seq), 0) || ':' || count(*) FROM \(tables.docs) WHERE id >= '_design/' AND id < '_design0'") ?? ""

        if let known = cachedValidators, known.state == state { return known.designs }
        var options = AllDocumentsOptions(startKey: "_design/", endKey: "_design0", includeDocs: true)
        options.inclusiveEnd = false
        let designs = try tables.allDocuments(db, options).rows
            .compactMap { $0["doc"]?.objectValue }
            .filter { $0["validate_doc_update"]?.stringValue != nil }
        cachedValidators = StoredValidators(state: state, designs: designs)
        return designs
    }
}
