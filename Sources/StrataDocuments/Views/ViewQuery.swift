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

    /// Only the rows of this key (`key`).
    public var key: JSON?
    /// Only the rows of these keys, in this order (`keys`).
    public var keys: [JSON]?
    /// The first key of the range (`startkey`), in the order of the query
    /// (the last one when ``descending``).
    public var startKey: JSON?
    /// The last key of the range (`endkey`).
    public var endKey: JSON?
    /// The first document id among the rows of ``startKey``
    /// (`startkey_docid`).
    public var startKeyDocID: String?
    /// The last document id among the rows of ``endKey`` (`endkey_docid`).
    public var endKeyDocID: String?
    /// Whether the rows of ``endKey`` are included (`inclusive_end`).
    public var inclusiveEnd = true
    /// Rows from the last key to the first (`descending`).
    public var descending = false
    /// At most this many rows, or groups when reducing (`limit`).
    public var limit: Int?
    /// Rows (or groups) left out before the first answered (`skip`).
    public var skip = 0
    /// Whether to reduce (`reduce`); nil: reduce when the view has a reduce.
    public var reduce: Bool?
    /// Reduce each key apart (`group`).
    public var group = false
    /// Reduce each group of keys equal in their first this many array
    /// elements (`group_level`).
    public var groupLevel: Int?
    /// Each row with its document (`include_docs`).
    public var includeDocs = false
    /// With ``includeDocs``, each document with its `_conflicts`
    /// (`conflicts`).
    public var conflicts = false
    /// When the index is brought up to date (`update`).
    public var update = Update.yes
    /// The answer says which update sequence the index reflects
    /// (`update_seq`).
    public var updateSeq = false
    /// Whether `totalRows` and `offset` are counted (a page after the first
    /// of a streamed answer needs neither, and counting is a scan).
    package var countsRows = true

    /// Options with the given values; the defaults are CouchDB's.
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

    /// An answer with the given values.
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
