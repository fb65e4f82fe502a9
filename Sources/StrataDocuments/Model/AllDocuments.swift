import Foundation
import Strata

/// Which documents `_all_docs` lists.
public enum AllDocumentsNamespace: Sendable {
    /// Every document, design documents included (`_all_docs`).
    case all
    /// The design documents (`_design_docs`).
    case design
    /// The `_local` documents, which never replicate (`_local_docs`).
    case local
}

/// Options of `_all_docs`.
public struct AllDocumentsOptions: Sendable {
    /// Which documents are listed; `_all_docs`'s by default.
    public var namespace = AllDocumentsNamespace.all
    /// These ids, in this order (after `descending`, `skip` and `limit`);
    /// a missing one is a row with `"error": "not_found"`.
    public var keys: [String]?
    /// The first id listed (`startkey`), in the order of the listing.
    public var startKey: String?
    /// The last id listed (`endkey`).
    public var endKey: String?
    /// Whether ``endKey`` itself is listed (`inclusive_end`).
    public var inclusiveEnd = true
    /// From the last id to the first (`descending`).
    public var descending = false
    /// At most this many rows (`limit`).
    public var limit: Int?
    /// Rows left out before the first answered (`skip`).
    public var skip = 0
    /// Each row with its document's winning revision (`include_docs`).
    public var includeDocs = false
    /// With ``includeDocs``, each document with its `_conflicts`
    /// (`conflicts`).
    public var conflicts = false
    /// Whether `totalRows` and `offset` are counted (a page after the first
    /// of a streamed listing needs neither, and counting is a scan).
    package var countsRows = true

    /// Options with the given values; the defaults are CouchDB's.
    public init(keys: [String]? = nil, startKey: String? = nil, endKey: String? = nil, inclusiveEnd: Bool = true, descending: Bool = false, limit: Int? = nil, skip: Int = 0, includeDocs: Bool = false, conflicts: Bool = false) {
        self.keys = keys
        self.startKey = startKey
        self.endKey = endKey
        self.inclusiveEnd = inclusiveEnd
        self.descending = descending
        self.limit = limit
        self.skip = skip
        self.includeDocs = includeDocs
        self.conflicts = conflicts
    }
}

/// What `_all_docs` answers.
public struct AllDocumentsResult: Sendable, Equatable {
    /// The documents of the namespace; nil for `_local` ones (CouchDB
    /// answers `null`, it does not count them).
    public var totalRows: Int?
    /// How many rows of the namespace come before the first one answered;
    /// nil when keys were given or for `_local` documents (CouchDB answers
    /// `null`).
    public var offset: Int?
    /// `{"id", "key", "value": {"rev"}[, "doc"]}` for each document
    /// listed, CouchDB's rows.
    public var rows: [JSON]

    /// An answer with the given values.
    public init(totalRows: Int?, offset: Int?, rows: [JSON]) {
        self.totalRows = totalRows
        self.offset = offset
        self.rows = rows
    }
}
