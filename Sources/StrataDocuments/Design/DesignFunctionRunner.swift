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

    /// Maps `documents` with the JavaScript map functions `functions` (and
    /// the design document's `views.lib`, for `require`): for each
    /// document, for each function, the rows it emits.
    func map(tenant: String, functions: [String], lib: JSON?, documents: [JSONObject]) throws -> [[[EmittedRow]]]

    /// Runs the JavaScript reduce function `source`: on `[key, id]` pairs
    /// and their values, or (`rereduce`) on earlier reductions.
    func reduce(tenant: String, source: String, keys: [JSON]?, values: [JSON], rereduce: Bool) throws -> JSON

    /// Runs the JavaScript reduce function `source` on many batches at once
    /// (what a view's stored reductions are made of): for each batch, its
    /// result or the function's own error. Throws only a failure that is
    /// not the function's (the query server gone, a time limit).
    func reduce(tenant: String, source: String, batches: [ReduceBatch], rereduce: Bool) throws -> [Result<JSON, DocumentError>]

    /// Compiles the JavaScript function `source` without running it, as
    /// CouchDB compiles a design document's views when it is written
    /// (`couch_query_servers:try_compile`): throws `compilation_error`
    /// with the engine's message when it does not compile.
    func compile(tenant: String, source: String) throws
}

extension DesignFunctionRunner {
    /// A runner of validations and updates only: views need map functions.
    public func map(tenant: String, functions: [String], lib: JSON?, documents: [JSONObject]) throws -> [[[EmittedRow]]] {
        throw DocumentError(.osProcessError, "this database's DesignFunctionRunner runs no JavaScript map functions")
    }

    /// A runner that cannot compile accepts every function, as CouchDB
    /// saves design documents in a language it has no query server for.
    public func compile(tenant: String, source: String) throws {}

    /// A runner of validations and updates only: views need reduce functions.
    public func reduce(tenant: String, source: String, keys: [JSON]?, values: [JSON], rereduce: Bool) throws -> JSON {
        throw DocumentError(.osProcessError, "this database's DesignFunctionRunner runs no JavaScript reduce functions")
    }

    /// One ``reduce(tenant:source:keys:values:rereduce:)`` a batch.
    public func reduce(tenant: String, source: String, batches: [ReduceBatch], rereduce: Bool) throws -> [Result<JSON, DocumentError>] {
        try batches.map { batch in
            do {
                return .success(try reduce(tenant: tenant, source: source, keys: batch.keys, values: batch.values, rereduce: rereduce))
            } catch let error as DocumentError where error.error != DocumentError.Kind.osProcessError.rawValue {
                return .failure(error)
            }
        }
    }
}

extension DocumentDatabase {
    /// Gives the engine the runner of its design documents' JavaScript and
    /// the database's name as validation functions see it (`userCtx.db`).
    public func setDesignFunctionRunner(_ runner: (any DesignFunctionRunner)?, databaseName: String? = nil) {
        registry.setRunner(runner, databaseName: databaseName)
    }
}
