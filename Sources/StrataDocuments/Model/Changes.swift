import Foundation
import Strata

/// Options of the changes feed, the same for a store in this process and
/// a server's.
public struct ChangesOptions: Sendable {
    /// Which revisions a change lists (`style`).
    public enum Style: String, Sendable {
        /// The winning revision only (`main_only`).
        case mainOnly = "main_only"
        /// Every leaf revision, conflicts and deleted leaves too (`all_docs`).
        case allDocs = "all_docs"
    }
    /// Where to start: ``ChangeSequence/start``, ``ChangeSequence/now``, or
    /// a `lastSeq` (or a change's `seq`) the same store gave.
    public var since = ChangeSequence.start
    /// At most this many changes (`limit`); nil: all of them.
    public var limit: Int?
    /// The newest change first (`descending`).
    public var descending = false
    /// Which revisions each change lists (`style`).
    public var style = Style.mainOnly
    /// Each change with its document's winning revision (`include_docs`).
    public var includeDocs = false
    /// With ``includeDocs``, each document with its `_conflicts`
    /// (`conflicts`).
    public var conflicts = false
    /// Only these documents (`filter=_doc_ids`). A list, not a set: ids
    /// are bytes to CouchDB, and a `Set<String>` would keep one of two ids
    /// that Swift's `==` takes for one (a precomposed `é` and `e` with a
    /// combining accent). Order and repeats do not matter.
    public var documentIDs: [String]?
    /// Only documents matching this Mango selector (`filter=_selector`).
    public var selector: JSON?
    /// Only design documents (`filter=_design`).
    public var designOnly = false
    /// A filter function of a design document, `"ddoc/name"`
    /// (`filter=ddoc/name`), run by the store: JavaScript on a server, a
    /// registered Swift filter or the database's runner in this process.
    public var designFilter: String?
    /// The query parameters the design filter sees (`req.query`).
    public var filterParameters: [String: String] = [:]
    /// Only documents this function keeps (a filter function: it sees the
    /// winning revision, `{_id, _rev, _deleted: true}` for a deletion).
    /// Runs in this process: a server's feed refuses it (use a
    /// ``designFilter`` there).
    public var filter: (@Sendable (JSONObject) throws -> Bool)?
    /// When nothing changed after ``since``: wait up to this long for the
    /// first change before answering an empty page (CouchDB's
    /// `feed=longpoll`). Nil answers at once.
    public var longpoll: Duration?
    /// Whether `pending` is counted (the pages of a streamed feed leave it
    /// to the end: counting is a scan).
    package var countsPending = true

    /// Whether CouchDB reads only the named documents for this feed (a few
    /// `doc_ids`, or `_design`) rather than the whole feed: the others then
    /// count as pending.
    package var readsNamedDocumentsOnly: Bool {
        designOnly || (documentIDs.map { $0.count <= 100 } ?? false)
    }

    /// Options with the given values; the defaults are CouchDB's.
    public init(since: ChangeSequence = .start, limit: Int? = nil, descending: Bool = false, style: Style = .mainOnly, includeDocs: Bool = false, conflicts: Bool = false, documentIDs: [String]? = nil, selector: JSON? = nil, designOnly: Bool = false, designFilter: String? = nil, filterParameters: [String: String] = [:], longpoll: Duration? = nil) {
        self.since = since
        self.limit = limit
        self.descending = descending
        self.style = style
        self.includeDocs = includeDocs
        self.conflicts = conflicts
        self.documentIDs = documentIDs
        self.selector = selector
        self.designOnly = designOnly
        self.designFilter = designFilter
        self.filterParameters = filterParameters
        self.longpoll = longpoll
    }
}

/// One entry of the changes feed.
public struct Change: Sendable, Equatable {
    /// Where this change is in the feed: hand it back as `since` to read
    /// the changes after it.
    public var seq: ChangeSequence
    /// The document's id.
    public var id: String
    /// The leaf revisions (the winner only with `style: .mainOnly`).
    public var changes: [String]
    /// Whether the document's winning revision is a deletion.
    public var deleted: Bool
    /// The document, with `includeDocs`.
    public var doc: JSONObject?

    /// An entry with the given values.
    public init(seq: ChangeSequence, id: String, changes: [String], deleted: Bool = false, doc: JSONObject? = nil) {
        self.seq = seq
        self.id = id
        self.changes = changes
        self.deleted = deleted
        self.doc = doc
    }

    /// CouchDB's JSON for the entry.
    public var json: JSON {
        var o: JSONObject = ["seq": seq.json, "id": .string(id), "changes": .array(changes.map { .object(["rev": .string($0)]) })]
        if deleted { o["deleted"] = .bool(true) }
        if let doc { o["doc"] = .object(doc) }
        return .object(o)
    }
}

/// A page of the changes feed.
public struct ChangesResult: Sendable, Equatable {
    /// The changes of the page, in the order of the feed.
    public var results: [Change]
    /// Where the next page starts (`since`).
    public var lastSeq: ChangeSequence
    /// Changes after this page (nil when a server does not say).
    public var pending: Int?

    /// A page with the given values.
    public init(results: [Change], lastSeq: ChangeSequence, pending: Int?) {
        self.results = results
        self.lastSeq = lastSeq
        self.pending = pending
    }
}
