import Foundation
import Strata

/// Options of `_all_docs`.
public struct AllDocumentsOptions: Sendable {
    public var keys: [String]?
    public var startKey: String?
    public var endKey: String?
    public var inclusiveEnd = true
    public var descending = false
    public var limit: Int?
    public var skip = 0
    public var includeDocs = false
    public var conflicts = false

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
    public var totalRows: Int
    /// Nil when keys were given (CouchDB answers `null`).
    public var offset: Int?
    public var rows: [JSON]

    public init(totalRows: Int, offset: Int?, rows: [JSON]) {
        self.totalRows = totalRows
        self.offset = offset
        self.rows = rows
    }
}
