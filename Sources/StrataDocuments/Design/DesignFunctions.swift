import Foundation
import Strata

/// A design document's functions written in Swift: what an app that embeds
/// the store without JavaScript registers under a design document name.
///
/// ```swift
/// var voting = DesignFunctions(version: "1")
/// voting.views["by_answer"] = .init(map: { doc, emit in
///     for answer in doc["answers"]?.arrayValue ?? [] {
///         emit(answer["text"] ?? .null, .int(answer["votes"]?.arrayValue?.count ?? 0))
///     }
/// }, reduce: .sum)
/// voting.validate = { newDocument, _, user, _ in
///     if user["name"] == .null { throw DocumentError(.unauthorized, "sign in to vote") }
/// }
/// try database.register(design: "voting", voting)
/// let totals = try database.view(design: "voting", view: "by_answer", options: ViewQueryOptions(group: true))
/// ```
///
/// The functions take and give JSON as CouchDB's JavaScript functions do
/// (the user context is `{"db","name","roles"}`, the request object
/// CouchDB's), so one design can move between the two. When a design is
/// registered, its Swift functions are used instead of the JavaScript of a
/// design document with the same name, by the store and by `strata serve`.
public struct DesignFunctions: Sendable {
    /// A map function: calls `emit(key, value)` for each row of the document.
    public typealias Map = @Sendable (_ document: JSONObject, _ emit: (JSON, JSON) -> Void) throws -> Void
    /// An update function: the current document (nil when there is none) and
    /// CouchDB's request object in; the document to save (nil: none) and the
    /// answer (a string, or `{code, headers, json|body|base64}`) out.
    public typealias Update = @Sendable (_ document: JSONObject?, _ request: JSON) throws -> (document: JSONObject?, response: JSON)
    /// A validation function: throw ``DocumentError`` `forbidden` or
    /// `unauthorized` to refuse the write.
    public typealias Validate = @Sendable (_ newDocument: JSONObject, _ oldDocument: JSONObject?, _ userContext: JSON, _ security: JSON) throws -> Void
    /// A filter function for the changes feed: true keeps the document.
    public typealias Filter = @Sendable (_ document: JSONObject, _ request: JSON) throws -> Bool

    /// A view: its map and, optionally, its reduce.
    public struct View: Sendable {
        /// Emits the view's rows of one document.
        public var map: Map
        /// Reduces the rows, when the view has a reduce.
        public var reduce: ViewReduce?

        /// A view of `map` and, optionally, `reduce`.
        public init(map: @escaping Map, reduce: ViewReduce? = nil) {
            self.map = map
            self.reduce = reduce
        }
    }

    /// Name it when the functions change: the views' indexes are rebuilt
    /// when the version differs from the one they were built with.
    public var version: String
    /// The views, by name (`_view/name`).
    public var views: [String: View] = [:]
    /// The update functions, by name (`_update/name`).
    public var updates: [String: Update] = [:]
    /// The validation every write of a document is checked with.
    public var validate: Validate?
    /// The changes feed's filters, by name (`filter=design/name`).
    public var filters: [String: Filter] = [:]

    /// No functions yet, at `version`.
    public init(version: String = "1") {
        self.version = version
    }

    /// The views as the index needs them, for the design document `design`
    /// (`_design/voting`).
    public func viewGroup(design: String) -> ViewGroup {
        let names = views.keys.sorted()
        let maps = names.map { views[$0]!.map }
        var reduces: [String: ViewReduce] = [:]
        for (name, view) in views { reduces[name] = view.reduce }
        return ViewGroup(design: design, signature: "swift:\(version):" + names.joined(separator: ","), views: names, reduces: reduces) { documents in
            documents.map { document in
                maps.map { map in
                    var rows: [EmittedRow] = []
                    do {
                        try map(document) { key, value in rows.append(EmittedRow(key: key, value: value)) }
                    } catch {
                        // As in CouchDB: a document the function fails on emits nothing.
                        return []
                    }
                    return rows
                }
            }
        }
    }
}

/// The designs registered on one database.
final class FunctionRegistry: Sendable {
    private struct State {
        var designs: [String: DesignFunctions] = [:]
        var runner: (any DesignFunctionRunner)?
        var databaseName: String?
        var stored: StoredValidators?
    }

    private let state = Locked(State())

    func setRunner(_ runner: (any DesignFunctionRunner)?, databaseName: String?) {
        state.withLock {
            $0.runner = runner
            $0.databaseName = databaseName
        }
    }
    var runner: (any DesignFunctionRunner)? { state.withLock { $0.runner } }
    var databaseName: String? { state.withLock { $0.databaseName } }
    var cachedValidators: StoredValidators? {
        get { state.withLock { $0.stored } }
        set { state.withLock { $0.stored = newValue } }
    }

    func set(_ name: String, _ functions: DesignFunctions?) { state.withLock { $0.designs[name] = functions } }
    func get(_ name: String) -> DesignFunctions? { state.withLock { $0.designs[name] } }
    var validators: [DesignFunctions.Validate] {
        state.withLock { state in state.designs.keys.sorted().compactMap { state.designs[$0]?.validate } }
    }
}

extension DocumentDatabase {
    /// The user context of the app's own writes: an admin with no name.
    public static let appUserContext: JSON = .object(["db": .null, "name": .null, "roles": .array([.string("_admin")])])

    /// Registers Swift functions under the design document name `design`
    /// (`"voting"` for `_design/voting`); nil removes them.
    public func register(design: String, _ functions: DesignFunctions?) throws {
        let name = DocumentTables.designName(design)
        guard !name.isEmpty else { throw DocumentError(.badRequest, "a design needs a name") }
        registry.set(name, functions)
    }

    /// The Swift functions registered under `design` (without `_design/`).
    public func designFunctions(_ design: String) -> DesignFunctions? {
        registry.get(design)
    }

    /// The changes feed through the filter function `filter`
    /// (`"design/name"`): a registered Swift filter, or the stored design
    /// document's JavaScript; it gets `request` as CouchDB's request object.
    public func changes(_ options: ChangesOptions = ChangesOptions(), filter: String, request: JSON = .object([:])) throws -> ChangesResult {
        let passes = try changesFilter(filter, request: request)
        var options = options
        options.filter = { try passes([$0]).first ?? false }
        return try changes(options)
    }

    /// Runs an update function of a design (Swift, or the stored design
    /// document's JavaScript) on the document `id` (nil: none): reads the
    /// document, calls the function and saves what it answers, in one
    /// transaction, so concurrent calls are applied one after the other
    /// and none is lost.
    ///
    /// - Returns: the write (nil when the function saved nothing) and the
    ///   function's answer.
    @discardableResult
    public func update(design: String, function: String, id: String?, request: JSON = .object([:]),
                       userContext: JSON? = nil) throws -> (written: DocumentWriteResult?, response: JSON) {
        try update(design: design, function: function, id: id, requests: [request], userContext: userContext)[0].get()
    }

    /// Calls `call` `count` times on the document `id` (nil: none), one
    /// after the other in one write transaction: each call gets the current
    /// document (nil when missing or deleted) as the previous call left it,
    /// and the document it answers is saved as a new revision (its `_id`
    /// made when absent). One commit, one sync to disk for all.
    ///
    /// What an update handler with many callers needs: no call conflicts
    /// with another, none is lost, and they share one durable commit. A
    /// call that throws fails alone (what it did is rolled back); a failure
    /// of SQLite itself fails them all.
    ///
    /// Validation (registered Swift functions, stored JavaScript) sees each
    /// write with `userContext`. `call` runs while the transaction is open:
    /// keep it short.
    public func updateInTurn(id: String?, count: Int, userContext: JSON? = nil,
                             _ call: (_ index: Int, _ current: JSONObject?) throws -> (document: JSONObject?, result: JSON)) throws
        -> [Result<(written: DocumentWriteResult?, result: JSON), any Error>] {
        let tables = self.tables
        let validation = self.validation(userContext)
        return try writer.write { db in
            var results: [Result<(written: DocumentWriteResult?, result: JSON), any Error>] = []
            results.reserveCapacity(count)
            // The document as the previous call saved it, so the next call
            // needs no read (nil: read it).
            var carried: JSONObject?
            for index in 0..<count {
                do {
                    let outcome = try db.savepoint { () -> (written: DocumentWriteResult?, result: JSON) in
                        var current: JSONObject?
                        if let id {
                            if let carried {
                                current = carried
                            } else {
                                // With `_revisions`, as CouchDB hands it over.
                                current = try tables.winner(db, id: id, revisions: DocumentDatabase.functionRevisionsLimit)
                            }
                        }
                        let (document, result) = try call(index, current)
                        guard var document else { return (nil, result) }
                        if document["_id"] == nil { document["_id"] = .string(id ?? DocumentTables.newID()) }
                        try validation(db, document)
                        let written = try tables.write(db, document: document, newEdits: true)
                        // What a read would give back: _id, _rev, the body.
                        if written.id == id, document["_attachments"] == nil, document["_deleted"] == nil || document["_deleted"] == .bool(false),
                           let rev = Revision(written.rev) {
                            var saved: JSONObject = ["_id": .string(written.id), "_rev": .string(written.rev)]
                            for (key, value) in document where !key.hasBytePrefix("_") { saved[key] = value }
                            // The new revision on the path the call before
                            // saw, no longer than a fresh read would give.
                            let limit = min(DocumentDatabase.functionRevisionsLimit, try tables.meta(db, "revs_limit")?.intValue ?? 1000)
                            let before = current?["_revisions"]?["ids"]?.arrayValue ?? []
                            saved["_revisions"] = .object(["start": .int(rev.depth), "ids": .array(Array(([.string(rev.hash)] + before).prefix(limit)))])
                            carried = saved
                        } else {
                            carried = nil
                        }
                        return (written, result)
                    }
                    results.append(.success(outcome))
                } catch let error as SQLiteError {
                    throw error
                } catch {
                    results.append(.failure(error))
                }
            }
            return results
        }
    }
}
