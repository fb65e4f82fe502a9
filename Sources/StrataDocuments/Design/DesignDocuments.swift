import Foundation
import Strata

/// The functions of a design: those registered in Swift under its name
/// (``DocumentDatabase/register(design:_:)``), or else the JavaScript of the
/// stored design document, run by the database's ``DesignFunctionRunner``.
/// The engine makes that choice for views, filters and update functions,
/// so the server, the replicator and an embedding app get the same answer
/// for the same design.
extension DocumentDatabase {
    /// The stored design document `_design/{design}` (`design` with or
    /// without the prefix); 404 `missing` (or `deleted`) when there is none.
    public func designDocument(_ design: String) throws -> JSONObject {
        try document(id: Self.designID(design))
    }

    /// `_design/`, for the server and the replicator (the literal is
    /// written once, in `DocumentTables`).
    package static let designPrefix = DocumentTables.designPrefix
    /// A design document's id from its name or its id.
    package static func designID(_ design: String) -> String { DocumentTables.designID(design) }
    /// A design's name from its id or its name.
    package static func designName(_ design: String) -> String { DocumentTables.designName(design) }
    /// A document id as a URL path's segments: `_design/x` and `_local/x`
    /// keep their `/` (CouchDB's paths), any other id is one segment.
    package static func pathSegments(ofID id: String) -> [String] {
        for prefix in [designPrefix, "_local/"] where id.hasPrefix(prefix) {
            return [String(prefix.dropLast()), String(id.dropFirst(prefix.count))]
        }
        return [id]
    }

    /// The runner, or CouchDB's `os_process_error` saying what needs one.
    private func requireRunner(_ what: String) throws -> any DesignFunctionRunner {
        guard let runner = registry.runner else { throw Self.noRunner(what) }
        return runner
    }

    static func noRunner(_ what: String) -> DocumentError {
        DocumentError(.osProcessError, "\(what) need\(what.hasSuffix("s") ? "" : "s") JavaScript, and this database has no JavaScript runner: register Swift DesignFunctions under that design's name, or give the database a DesignFunctionRunner")
    }

    // MARK: Views

    /// The views of a design, as the index needs them: the registered Swift
    /// views, or the stored design document's JavaScript (map functions,
    /// built-in or JavaScript reduces). Its signature changes whenever what
    /// the index is built from changes.
    public func viewGroup(design: String) throws -> ViewGroup {
        let id = Self.designID(design)
        if let native = registry.get(Self.designName(design)), !native.views.isEmpty {
            return native.viewGroup(design: id)
        }
        return try viewGroup(stored: designDocument(design))
    }

    /// The views of a stored design document's JavaScript.
    func viewGroup(stored ddoc: JSONObject) throws -> ViewGroup {
        let id = ddoc["_id"]?.stringValue ?? ""
        let definitions = ddoc["views"]?.objectValue ?? JSONObject()
        let runner = registry.runner
        let tenant = instanceID
        var names: [String] = []
        var maps: [String] = []
        var reduces: [String: ViewReduce] = [:]
        var reduceBatches: [String: ViewReduceBatches] = [:]
        for (name, definition) in definitions.sorted(by: { $0.key < $1.key }) where name != "lib" {
            guard let map = definition["map"]?.stringValue else { continue }
            names.append(name)
            maps.append(map)
            if let reduce = definition["reduce"]?.stringValue {
                if let builtin = ViewReduce(builtin: reduce) {
                    reduces[name] = builtin
                } else if reduce.hasBytePrefix("_") {
                    throw DocumentError(.badRequest, "Unknown built-in reduce function: \(reduce)")
                } else {
                    let runner = try requireRunner("JavaScript reduce functions")
                    reduces[name] = .function { keys, values, rereduce in
                        try runner.reduce(tenant: tenant, source: reduce, keys: keys, values: values, rereduce: rereduce)
                    }
                    reduceBatches[name] = { batches, rereduce in
                        try runner.reduce(tenant: tenant, source: reduce, batches: batches, rereduce: rereduce)
                    }
                }
            }
        }
        let lib = definitions["lib"]
        // The index is rebuilt when what it is built from changes.
        var signed = JSONObject()
        signed["language"] = ddoc["language"] ?? .string("javascript")
        signed["views"] = .object(JSONObject(definitions.pairs.sorted { $0.key < $1.key }))
        signed["options"] = ddoc["options"] ?? .null
        let signature = MD5.hex(Array(JSON.object(signed).canonicalText.utf8))
        let sources = maps
        var group = ViewGroup(design: id, signature: signature, views: names, reduces: reduces) { documents in
            guard let runner else { throw Self.noRunner("views") }
            return try runner.map(tenant: tenant, functions: sources, lib: lib, documents: documents)
        }
        group.reduceBatches = reduceBatches
        return group
    }

    /// Queries the view `view` of a design (Swift or stored JavaScript),
    /// bringing its index up to date as `options.update` says.
    public func view(design: String, view: String, options: ViewQueryOptions = ViewQueryOptions()) throws -> ViewResult {
        let group = try viewGroup(design: design)
        guard group.views.contains(view) else { throw DocumentError(.notFound, "missing_named_view") }
        return try queryView(group, view: view, options: options)
    }

    /// Drops the view indexes no design builds any more (CouchDB's
    /// `_view_cleanup`): those of deleted design documents and of earlier
    /// versions of their functions.
    public func cleanUpViewIndexes() throws {
        var options = AllDocumentsOptions(startKey: DocumentTables.designPrefix, endKey: "_design0", includeDocs: true)
        options.inclusiveEnd = false
        var current: [String: String] = [:]
        for ddoc in try allDocuments(options).rows.compactMap({ $0["doc"]?.objectValue }) {
            guard let id = ddoc["_id"]?.stringValue else { continue }
            if let native = registry.get(Self.designName(id)), !native.views.isEmpty {
                current[id] = native.viewGroup(design: id).signature
            } else if let group = try? viewGroup(stored: ddoc) {
                current[id] = group.signature
            }
        }
        try cleanUpViewIndexes(keeping: current)
    }

    // MARK: Filters

    /// The filter function `name` (`"design/function"`) of the changes
    /// feed, Swift or stored JavaScript: for a page of documents, whether
    /// each passes. `request` is CouchDB's request object.
    public func changesFilter(_ name: String, request: JSON = .object([:])) throws -> @Sendable ([JSONObject]) throws -> [Bool] {
        let parts = name.split(separator: "/", maxSplits: 1).map(String.init)
        guard parts.count == 2 else { throw DocumentError(.badRequest, "`filter` parameter is not correctly formatted") }
        let function = parts[1]
        if let native = registry.get(parts[0])?.filters[function] {
            return { documents in try self.withFunctionRevisions(documents).map { try native($0, request) } }
        }
        let design: JSONObject
        do { design = try designDocument(parts[0]) } catch let error as DocumentError where error.kind == .notFound {
            throw DocumentError(.notFound, "missing design document \(Self.designID(parts[0]))")
        }
        guard design["filters"]?[function] != nil else { throw DocumentError(.notFound, "missing json key: \(function)") }
        let runner = try requireRunner("filter functions")
        let tenant = instanceID
        return { documents in
            guard !documents.isEmpty else { return [] }
            let documents = try self.withFunctionRevisions(documents)
            let answer = try runner.run(tenant: tenant, design: design, path: ["filters", function],
                                        arguments: [.array(documents.map(JSON.object)), request])
            guard let parts = answer.arrayValue, parts.count == 2, let passes = parts[1].arrayValue, passes.count == documents.count else {
                throw DocumentError(status: 500, error: "render_error", reason: "the filter function's answer is not [true, [passes]]")
            }
            return passes.map { $0 == .bool(true) }
        }
    }

    /// The changes filter of `filter=_view&view=ddoc/name`: a document
    /// passes when the view's map function emits a row for it.
    public func viewChangesFilter(_ name: String) throws -> @Sendable ([JSONObject]) throws -> [Bool] {
        let parts = name.split(separator: "/", maxSplits: 1).map(String.init)
        guard parts.count == 2 else { throw DocumentError(.badRequest, "`view` filter parameter is not provided.") }
        let group = try viewGroup(design: parts[0])
        guard let position = group.views.firstIndex(of: parts[1]) else { throw DocumentError(.notFound, "missing_named_view") }
        return { documents in
            guard !documents.isEmpty else { return [] }
            return try group.map(try self.withFunctionRevisions(documents)).map { perView in position < perView.count && !perView[position].isEmpty }
        }
    }

    /// `documents` as CouchDB 3.4.3 hands them to a filter
    /// (`couch_query_servers:json_doc`): each with `_revisions`, its newest
    /// ``functionRevisionsLimit`` ids, read in one transaction. Documents
    /// that have them already (the changes feed of this store adds them as
    /// it reads) are left as they are.
    func withFunctionRevisions(_ documents: [JSONObject]) throws -> [JSONObject] {
        guard documents.contains(where: { $0["_revisions"] == nil }) else { return documents }
        let tables = self.tables
        return try writer.read { db in
            try documents.map { $0["_revisions"] == nil ? try tables.withRevisions(db, $0, revisions: Self.functionRevisionsLimit) : $0 }
        }
    }

    // MARK: Updates

    /// Runs the update function `function` of a design (Swift, or the
    /// stored design document's JavaScript) once per request, in turn on
    /// the document `id` (nil: none), in one transaction (see
    /// ``updateInTurn(id:count:userContext:_:)``): each call gets the
    /// document as the call before left it and CouchDB's request object;
    /// what it answers is validated and saved. A design document answered
    /// by a function is saved only for a database admin.
    ///
    /// - Returns: per request, the write (nil when the function saved
    ///   nothing) and the function's answer, or why it failed.
    public func update(design: String, function: String, id: String?, requests: [JSON],
                       userContext: JSON? = nil) throws -> [Result<(written: DocumentWriteResult?, response: JSON), any Error>] {
        let call: (_ current: JSONObject?, _ request: JSON) throws -> (document: JSONObject?, response: JSON)
        if let native = registry.get(Self.designName(design))?.updates[function] {
            call = { current, request in try native(current, request) }
        } else {
            let ddoc = try designDocument(design)
            guard ddoc["updates"]?[function] != nil else { throw DocumentError(.notFound, "missing json key: \(function)") }
            let runner = try requireRunner("update functions")
            let tenant = instanceID
            call = { current, request in
                let answer = try runner.run(tenant: tenant, design: ddoc, path: ["updates", function], arguments: [current.map(JSON.object) ?? .null, request])
                if let refusal = answer.objectValue {
                    if let message = refusal["forbidden"]?.stringValue { throw DocumentError(.forbidden, message) }
                    if let message = refusal["unauthorized"]?.stringValue { throw DocumentError(.unauthorized, message) }
                }
                guard let parts = answer.arrayValue, parts.count == 3, parts[0] == .string("up") else {
                    throw DocumentError(status: 500, error: "render_error", reason: "the update function's answer is not [doc, response]")
                }
                return (parts[1].objectValue, parts[2])
            }
        }
        let isAdmin = try isDatabaseAdmin(userContext)
        let results = try updateInTurn(id: id, count: requests.count, userContext: userContext) { index, current in
            var (document, result) = try call(current, requests[index])
            if document != nil, document?["_id"] == nil {
                document?["_id"] = .string(id ?? DocumentTables.newID())
            }
            if let saved = document?["_id"]?.stringValue, saved.hasBytePrefix(DocumentTables.designPrefix), !isAdmin {
                throw DocumentError(.unauthorized, "You are not a db or server admin.")
            }
            return (document, result)
        }
        return results.map { $0.map { (written: $0.written, response: $0.result) } }
    }

    /// Whether `userContext` (nil: the app) is an admin of this database:
    /// a server admin (`_admin`), or named in `_security.admins` by name or
    /// role.
    func isDatabaseAdmin(_ userContext: JSON?) throws -> Bool {
        try Self.isAdmin(userContext ?? Self.appUserContext, security: metadata("_security"))
    }

    /// Whether `user` is an admin of a database with `security`.
    static func isAdmin(_ user: JSON, security: JSON?) -> Bool {
        let roles = Set((user["roles"]?.arrayValue ?? []).compactMap(\.stringValue))
        if roles.contains("_admin") { return true }
        let admins = security?["admins"]
        if let name = user["name"]?.stringValue, (admins?["names"]?.arrayValue ?? []).contains(.string(name)) { return true }
        return (admins?["roles"]?.arrayValue ?? []).contains { $0.stringValue.map(roles.contains) ?? false }
    }
}
