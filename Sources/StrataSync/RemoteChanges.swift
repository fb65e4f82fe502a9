import Foundation
import StrataDocuments

/// One row of a server's changes feed. The sequence is opaque (CouchDB 3
/// gives strings such as `"12-g1AAAA…"`): keep it and hand it back as
/// `since`.
public struct RemoteChange: Sendable, Equatable {
    /// The sequence, as the server gave it.
    public var seq: JSON
    public var id: String
    /// The leaf revisions (the winner only with `style=main_only`).
    public var changes: [String]
    public var deleted: Bool
    /// The document, with `includeDocs`.
    public var doc: JSONObject?

    public init(seq: JSON, id: String, changes: [String], deleted: Bool = false, doc: JSONObject? = nil) {
        self.seq = seq
        self.id = id
        self.changes = changes
        self.deleted = deleted
        self.doc = doc
    }
}

/// A page of a server's changes feed.
public struct RemoteChangesResult: Sendable, Equatable {
    public var results: [RemoteChange]
    /// Where the next page starts (`since`).
    public var lastSeq: JSON
    /// Changes after this page, when the server says.
    public var pending: Int?
}

/// Options of `_changes` on a server.
public struct RemoteChangesOptions: Sendable {
    /// Where to start: nil (or `"0"`) from the beginning, `"now"` from the
    /// current end, or a `lastSeq` the server gave.
    public var since: JSON?
    public var limit: Int?
    public var descending = false
    public var style = ChangesOptions.Style.mainOnly
    public var includeDocs = false
    public var conflicts = false
    /// Only these documents (`filter=_doc_ids`).
    public var documentIDs: [String]?
    /// Only documents matching this Mango selector (`filter=_selector`).
    public var selector: JSON?
    /// A filter function of a design document, `"ddoc/name"`, with its
    /// query parameters.
    public var filter: String?
    public var filterParameters: [String: String] = [:]
    /// How long a longpoll waits for a change before answering empty.
    public var timeout: Duration = .seconds(60)

    public init(since: JSON? = nil, limit: Int? = nil, style: ChangesOptions.Style = .mainOnly, includeDocs: Bool = false,
                documentIDs: [String]? = nil, selector: JSON? = nil, filter: String? = nil,
                filterParameters: [String: String] = [:], timeout: Duration = .seconds(60)) {
        self.since = since
        self.limit = limit
        self.style = style
        self.includeDocs = includeDocs
        self.documentIDs = documentIDs
        self.selector = selector
        self.filter = filter
        self.filterParameters = filterParameters
        self.timeout = timeout
    }
}

extension RemoteDatabase {
    /// `_changes`: one page (`feed=normal`), or with `longpoll` the changes
    /// after `since`, waiting up to `options.timeout` for the first.
    public func changes(_ options: RemoteChangesOptions = RemoteChangesOptions(), longpoll: Bool = false) async throws -> RemoteChangesResult {
        var query: [(String, String)] = [("feed", longpoll ? "longpoll" : "normal")]
        if let since = options.since { query.append(("since", since.stringValue ?? since.text)) }
        if let limit = options.limit { query.append(("limit", String(limit))) }
        if options.descending { query.append(("descending", "true")) }
        if options.style == .allDocs { query.append(("style", "all_docs")) }
        if options.includeDocs { query.append(("include_docs", "true")) }
        if options.conflicts { query.append(("conflicts", "true")) }
        let milliseconds = Int(options.timeout.components.seconds * 1000 + options.timeout.components.attoseconds / 1_000_000_000_000_000)
        if longpoll { query.append(("timeout", String(milliseconds))) }
        var body: JSON?
        if let ids = options.documentIDs {
            query.append(("filter", "_doc_ids"))
            body = .object(["doc_ids": .array(ids.map(JSON.string))])
        } else if let selector = options.selector {
            query.append(("filter", "_selector"))
            body = .object(["selector": selector])
        } else if let filter = options.filter {
            query.append(("filter", filter))
            for (name, value) in options.filterParameters.sorted(by: { $0.key < $1.key }) { query.append((name, value)) }
        }
        // The request waits at least as long as the server may hold it.
        let wait = longpoll ? Double(milliseconds) / 1000 + 60 : nil
        let object = try await client.json(body == nil ? "GET" : "POST", [name, "_changes"], query: query, body: body, timeout: wait)
        let results = (object["results"]?.arrayValue ?? []).compactMap { row -> RemoteChange? in
            guard let id = row["id"]?.stringValue, let seq = row["seq"] else { return nil }
            return RemoteChange(seq: seq, id: id, changes: row["changes"]?.arrayValue?.compactMap { $0["rev"]?.stringValue } ?? [],
                                deleted: row["deleted"]?.boolValue ?? false, doc: row["doc"]?.objectValue)
        }
        return RemoteChangesResult(results: results, lastSeq: object["last_seq"] ?? options.since ?? .string("0"),
                                   pending: object["pending"]?.intValue)
    }

    /// The changes feed as an endless sequence: every change after
    /// `options.since`, then each new one as the server reports it (a
    /// longpoll loop, as PouchDB's live changes). Ends when the task is
    /// cancelled; a network failure ends it with the error.
    ///
    /// ```swift
    /// for try await change in votes.liveChanges(RemoteChangesOptions(since: .string("now"))) {
    ///     print(change.id)
    /// }
    /// ```
    public func liveChanges(_ options: RemoteChangesOptions = RemoteChangesOptions()) -> AsyncThrowingStream<RemoteChange, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                var options = options
                do {
                    while !Task.isCancelled {
                        let page = try await changes(options, longpoll: true)
                        for change in page.results { continuation.yield(change) }
                        options.since = page.lastSeq
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: Task.isCancelled ? nil : error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
