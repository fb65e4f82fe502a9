import Foundation
import StrataDocuments

extension RemoteDatabase {
    /// `_changes`: one page (`feed=normal`), or with `ChangesOptions.longpoll`
    /// the changes after `since`, the server waiting up to that long for
    /// the first. The sequences are the server's (CouchDB 3 gives strings
    /// such as `"12-g1AAAA…"`): hand them back as `since`.
    public func changes(_ options: ChangesOptions = ChangesOptions()) async throws -> ChangesResult {
        guard options.filter == nil else {
            throw DocumentError(.badRequest, "a Swift filter closure runs only on a store in this process; ask a server with designFilter, selector or documentIDs")
        }
        var query: [(String, String)] = [("feed", options.longpoll == nil ? "normal" : "longpoll")]
        query.append(("since", options.since.description))
        if let limit = options.limit { query.append(("limit", String(limit))) }
        if options.descending { query.append(("descending", "true")) }
        if options.style == .allDocs { query.append(("style", "all_docs")) }
        if options.includeDocs { query.append(("include_docs", "true")) }
        if options.conflicts { query.append(("conflicts", "true")) }
        var milliseconds = 0
        if let wait = options.longpoll {
            milliseconds = Int(wait.components.seconds * 1000 + wait.components.attoseconds / 1_000_000_000_000_000)
            query.append(("timeout", String(milliseconds)))
        }
        var body: JSON?
        if let ids = options.documentIDs {
            query.append(("filter", "_doc_ids"))
            body = .object(["doc_ids": .array(ids.sorted().map(JSON.string))])
        } else if let selector = options.selector {
            query.append(("filter", "_selector"))
            body = .object(["selector": selector])
        } else if options.designOnly {
            query.append(("filter", "_design"))
        } else if let filter = options.designFilter {
            query.append(("filter", filter))
            for (name, value) in options.filterParameters.sorted(by: { $0.key < $1.key }) { query.append((name, value)) }
        }
        // The request waits at least as long as the server may hold it.
        let wait = options.longpoll == nil ? nil : Double(milliseconds) / 1000 + 60
        let object = try await client.json(body == nil ? "GET" : "POST", [name, "_changes"], query: query, body: body, timeout: wait)
        let results = (object["results"]?.arrayValue ?? []).compactMap { row -> Change? in
            guard let id = row["id"]?.stringValue, let seq = row["seq"] else { return nil }
            return Change(seq: ChangeSequence(seq), id: id, changes: row["changes"]?.arrayValue?.compactMap { $0["rev"]?.stringValue } ?? [],
                          deleted: row["deleted"]?.boolValue ?? false, doc: row["doc"]?.objectValue)
        }
        return ChangesResult(results: results, lastSeq: object["last_seq"].map(ChangeSequence.init) ?? options.since,
                             pending: object["pending"]?.intValue)
    }

    /// The changes feed as an endless sequence: every change after
    /// `options.since`, then each new one as the server reports it (a
    /// longpoll loop, as PouchDB's live changes; each poll waits
    /// `options.longpoll`, 60 seconds when nil). Ends when the task is
    /// cancelled; a network failure ends it with the error.
    ///
    /// ```swift
    /// for try await change in votes.liveChanges(ChangesOptions(since: .now)) {
    ///     print(change.id)
    /// }
    /// ```
    public func liveChanges(_ options: ChangesOptions = ChangesOptions()) -> AsyncThrowingStream<Change, any Error> {
        AsyncThrowingStream { continuation in
            let task = Task {
                var options = options
                options.longpoll = options.longpoll ?? .seconds(60)
                options.limit = nil
                do {
                    while !Task.isCancelled {
                        let page = try await changes(options)
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
