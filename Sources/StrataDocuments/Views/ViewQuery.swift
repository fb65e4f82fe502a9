import Foundation
import Strata

/// Options of a view query (CouchDB's query parameters of `_view`).
public struct ViewQueryOptions: Sendable {
    /// When the index is brought up to date (`update=true|false|lazy`).
    public enum Update: String, Sendable {
        /// Before answering (the default).
        case yes = "true"
        /// Never: answer from the index as it is.
        case no = "false"
        /// After answering.
        case lazy
    }

    public var key: JSON?
    public var keys: [JSON]?
    public var startKey: JSON?
    public var endKey: JSON?
    public var startKeyDocID: String?
    public var endKeyDocID: String?
    public var inclusiveEnd = true
    public var descending = false
    public var limit: Int?
    public var skip = 0
    /// Nil: reduce when the view has a reduce.
    public var reduce: Bool?
    public var group = false
    public var groupLevel: Int?
    public var includeDocs = false
    public var conflicts = false
    public var update = Update.yes
    public var updateSeq = false
    /// Whether `totalRows` and `offset` are counted (a page after the first
    /// of a streamed answer needs neither, and counting is a scan).
    package var countsRows = true

    public init(key: JSON? = nil, keys: [JSON]? = nil, startKey: JSON? = nil, endKey: JSON? = nil,
                startKeyDocID: String? = nil, endKeyDocID: String? = nil, inclusiveEnd: Bool = true,
                descending: Bool = false, limit: Int? = nil, skip: Int = 0, reduce: Bool? = nil,
                group: Bool = false, groupLevel: Int? = nil, includeDocs: Bool = false, conflicts: Bool = false,
                update: Update = .yes, updateSeq: Bool = false) {
        self.key = key
        self.keys = keys
        self.startKey = startKey
        self.endKey = endKey
        self.startKeyDocID = startKeyDocID
        self.endKeyDocID = endKeyDocID
        self.inclusiveEnd = inclusiveEnd
        self.descending = descending
        self.limit = limit
        self.skip = skip
        self.reduce = reduce
        self.group = group
        self.groupLevel = groupLevel
        self.includeDocs = includeDocs
        self.conflicts = conflicts
        self.update = update
        self.updateSeq = updateSeq
    }
}

/// What a view query answers: CouchDB's `{total_rows, offset, rows}` (map)
/// or `{rows}` (reduce).
public struct ViewResult: Sendable, Equatable {
    /// Nil for a reduced answer.
    public var totalRows: Int?
    /// Nil for a reduced answer.
    public var offset: Int?
    /// `{"id","key","value"[,"doc"]}` or, reduced, `{"key","value"}`.
    public var rows: [JSON]
    /// The sequence the index was up to date with, when asked.
    public var updateSequence: Int?

    public init(totalRows: Int?, offset: Int?, rows: [JSON], updateSequence: Int? = nil) {
        self.totalRows = totalRows
        self.offset = offset
        self.rows = rows
        self.updateSequence = updateSequence
    }

    /// CouchDB's JSON for the answer.
    public var json: JSON {
        var o = JSONObject()
        if let totalRows { o["total_rows"] = .int(totalRows) }
        if let offset { o["offset"] = .int(offset) }
        if let updateSequence { o["update_seq"] = .string(String(updateSequence)) }
        o["rows"] = .array(rows)
        return .object(o)
    }
}

extension ViewResult {
    init(rows: [JSON]) {
        self.init(totalRows: nil, offset: nil, rows: rows, updateSequence: nil)
    }
}
