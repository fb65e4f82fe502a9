/// Why a document operation failed, with CouchDB's error name, reason and
/// HTTP status, so the server answers exactly what CouchDB answers: the one
/// error of the document engine, of design functions (a JavaScript
/// function's own error name is kept) and of remote servers
/// (StrataSync's `RemoteError` is this type).
public struct DocumentError: Error, Equatable, CustomStringConvertible, Sendable {
    /// The kinds of failure CouchDB distinguishes.
    public enum Kind: String, Sendable {
        /// The revision given is not the current leaf (409 `conflict`).
        case conflict
        /// No such document, revision or database (404 `not_found`).
        case notFound = "not_found"
        /// The request is malformed: a bad rev, a bad id, bad JSON (400 `bad_request`).
        case badRequest = "bad_request"
        /// Refused by a validation function or a permission (403 `forbidden`).
        case forbidden
        /// Needs a user with more rights (401 `unauthorized`).
        case unauthorized
        /// A Mango selector uses an operator that does not exist (400 `invalid_operator`).
        case invalidOperator = "invalid_operator"
        /// A Mango sort has no index to serve it (400 `no_usable_index`).
        case noUsableIndex = "no_usable_index"
        /// A database that already exists (412 `file_exists`).
        case fileExists = "file_exists"
        /// A database name CouchDB would refuse (400 `illegal_database_name`).
        case illegalDatabaseName = "illegal_database_name"
        /// A document id CouchDB would refuse (400 `illegal_docid`).
        case illegalDocumentID = "illegal_docid"
        /// A design document whose members have the wrong types (400 `invalid_design_doc`).
        case invalidDesignDocument = "invalid_design_doc"
        /// A query parameter with a value of the wrong kind (400 `query_parse_error`).
        case queryParseError = "query_parse_error"
        /// An HTTP method the resource does not take (405 `method_not_allowed`).
        case methodNotAllowed = "method_not_allowed"
        /// A request body over the server's limit (413 `too_large`).
        case tooLarge = "too_large"
        /// A body in an encoding or type the server does not read (415 `bad_content_type`).
        case unsupportedMediaType = "bad_content_type"
        /// A built-in reduce given values it cannot reduce (500 `builtin_reduce_error`).
        case builtinReduceError = "builtin_reduce_error"
        /// A design function's process failed, timed out, or is missing
        /// (500 `os_process_error`).
        case osProcessError = "os_process_error"
        /// Anything else (500 `unknown_error`).
        case internalError = "unknown_error"

        /// The HTTP status CouchDB gives this kind.
        public var status: Int {
            switch self {
            case .conflict: return 409
            case .notFound: return 404
            case .badRequest, .invalidOperator, .noUsableIndex, .illegalDatabaseName, .illegalDocumentID,
                 .invalidDesignDocument, .queryParseError: return 400
            case .forbidden: return 403
            case .unauthorized: return 401
            case .methodNotAllowed: return 405
            case .fileExists: return 412
            case .tooLarge: return 413
            case .unsupportedMediaType: return 415
            case .internalError, .builtinReduceError, .osProcessError: return 500
            }
        }
    }

    /// CouchDB's `error` member: a ``Kind``'s name, or any other name a
    /// function or a remote server gave (kept as it came).
    public var error: String
    /// CouchDB's `reason`, for a person to read.
    public var reason: String
    /// The HTTP status; 0 when no answer came from a remote server (a
    /// refused connection, a timeout).
    public var status: Int

    /// The kind of failure: ``Kind/internalError`` for an error name that
    /// is none of CouchDB's kinds (``error`` keeps the name).
    public var kind: Kind { Kind(rawValue: error) ?? .internalError }

    /// An error of one of CouchDB's kinds, with its status, and why.
    public init(_ kind: Kind, _ reason: String) {
        self.error = kind.rawValue
        self.reason = reason
        self.status = kind.status
    }

    /// An error by CouchDB's three members, as a design function or a
    /// remote server answered it: a name that is none of the ``Kind``s is
    /// kept, never mapped to another.
    public init(status: Int, error: String, reason: String) {
        self.error = error
        self.reason = reason
        self.status = status
    }

    /// Whether a failure is worth a retry: no answer at all, a timeout, a
    /// 5xx or 429. A 4xx other than 408 and 429 is the request's own fault.
    public var isTransient: Bool { status == 0 || status == 408 || status == 429 || status >= 500 }

    public var description: String { status == 0 ? "\(error): \(reason)" : "\(status) \(error): \(reason)" }

    /// CouchDB's answer body: `{"error":…,"reason":…}`.
    public var json: JSON {
        .object(["error": .string(error), "reason": .string(reason)])
    }

    /// 409 `conflict`.
    public static let conflict = DocumentError(.conflict, "Document update conflict.")
    /// 404 `missing`.
    public static let missing = DocumentError(.notFound, "missing")
    /// 404 `deleted`.
    public static let deleted = DocumentError(.notFound, "deleted")
    /// 400 `Invalid rev format`.
    public static let badRev = DocumentError(.badRequest, "Invalid rev format")
}
