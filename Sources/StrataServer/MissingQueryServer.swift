import StrataDocuments

extension DocumentError {
    /// `what` (views, validate_doc_update…) needs JavaScript and the server
    /// was made without a query server: says what to pass.
    static func noQueryServer(_ what: String) -> DocumentError {
        DocumentError(.osProcessError, "\(what) need\(what.hasSuffix("s") ? "" : "s") a JavaScript query server, and this server runs none: "
                        + "strata serve runs its own; a CouchServer made in your code needs "
                        + "queryServer: [\"/path/to/strata\", \"query-server\"] (the strata executable)")
    }
}

/// The runner of a server made without query servers: every JavaScript
/// call fails with `os_process_error` saying how to get them.
struct MissingQueryServer: DesignFunctionRunner {
    func run(tenant: String, design: JSONObject, path: [String], arguments: [JSON]) throws -> JSON {
        let what: String
        switch path.first {
        case "validate_doc_update": what = "validate_doc_update"
        case "filters": what = "filter functions"
        default: what = "design functions"
        }
        throw DocumentError.noQueryServer(what)
    }

    func map(tenant: String, functions: [String], lib: JSON?, documents: [JSONObject]) throws -> [[[EmittedRow]]] {
        throw DocumentError.noQueryServer("views")
    }

    func reduce(tenant: String, source: String, keys: [JSON]?, values: [JSON], rereduce: Bool) throws -> JSON {
        throw DocumentError.noQueryServer("JavaScript reduce functions")
    }
}

