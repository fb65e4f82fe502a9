import Foundation
import Hummingbird
import HTTPTypes
import NIOCore
import StrataDocuments

@available(macOS 14, iOS 17, tvOS 17, *)
extension CouchResponder {
    func changesOptions(_ r: CouchRequest) throws -> ChangesOptions {
        var options = ChangesOptions()
        if let since = r.query["since"] {
            if since == "now" {
                options.since = -1
            } else if let n = Int(since.prefix { $0.isNumber }) {
                options.since = n
            } else {
                throw DocumentError(.badRequest, "Malformed sequence supplied in 'since' parameter.")
            }
        }
        options.limit = try r.int("limit")
        options.descending = r.flag("descending")
        options.includeDocs = r.flag("include_docs")
        options.conflicts = r.flag("conflicts")
        if r.query["style"] == "all_docs" { options.style = .allDocs }
        var body: JSONObject?
        if r.method == .post, !r.body.isEmpty { body = try r.object() }
        switch r.query["filter"] {
        case nil: break
        case "_doc_ids":
            let ids = try body?["doc_ids"]?.arrayValue ?? r.jsonQuery("doc_ids")?.arrayValue
            guard let ids else { throw DocumentError(.badRequest, "filter=_doc_ids needs doc_ids") }
            options.documentIDs = Set(ids.compactMap(\.stringValue))
        case "_selector":
            guard let selector = body?["selector"] else { throw DocumentError(.badRequest, "Selector must be specified in POST payload") }
            _ = try MangoSelector(selector)
            options.selector = selector
        case "_design":
            options.designOnly = true
        case let name?:
            throw DocumentError(.notFound, "filter functions (\(name)) need the JavaScript engine of issue 16")
        }
        if r.query["filter"] == nil, let ids = body?["doc_ids"]?.arrayValue {
            options.documentIDs = Set(ids.compactMap(\.stringValue))
        }
        return options
    }

    func changes(_ db: DocumentDatabase, _ r: CouchRequest) async throws -> HTTPAnswer {
        var options = try changesOptions(r)
        if options.since < 0 { options.since = try await offload { try db.updateSequence() } }
        let feed = r.query["feed"] ?? "normal"
        let timeout = Duration.milliseconds(try r.int("timeout") ?? 60_000)
        // `heartbeat=true` (aiocouch sends it) means CouchDB's default, 60 s.
        let heartbeat = try (r.query["heartbeat"] == "true" ? 60_000 : r.int("heartbeat")).map { Duration.milliseconds(max($0, 100)) }
        switch feed {
        case "normal":
            let final = options
            let result = try await offload { try db.changes(final) }
            return changesAnswer(result)
        case "longpoll":
            let final = options
            let now = try await offload { try db.changes(final) }
            if !now.results.isEmpty { return changesAnswer(now) }
            // Wait for the next change, or the timeout.
            let first = await firstChange(db, options, within: timeout)
            var result = ChangesResult(results: first.map { [$0] } ?? [], lastSeq: first?.seq ?? now.lastSeq, pending: 0)
            if first == nil { result.lastSeq = now.lastSeq }
            return changesAnswer(result)
        case "continuous", "eventsource":
            let eventSource = feed == "eventsource"
            let events = changeEvents(db, options, timeout: r.query["timeout"] == nil && heartbeat != nil ? nil : timeout, heartbeat: heartbeat)
            var headers: HTTPFields = [:]
            headers[.contentType] = eventSource ? "text/event-stream" : "application/json"
            let limit = options.limit
            let since = options.since
            let body = ResponseBody { writer in
                var sent = 0
                var last = since
                for await event in events {
                    switch event {
                    case .change(let change):
                        last = change.seq
                        let line = eventSource ? "data: \(change.json.text)\nid: \(change.seq)\n\n" : change.json.text + "\n"
                        try await writer.write(ByteBuffer(string: line))
                        sent += 1
                        if let limit, sent >= limit { break }
                    case .heartbeat:
                        try await writer.write(ByteBuffer(string: "\n"))
                    case .end:
                        break
                    }
                    if case .end = event { break }
                    if let limit, sent >= limit { break }
                }
                if !eventSource {
                    try await writer.write(ByteBuffer(string: JSON.object(["last_seq": .string(String(last)), "pending": .int(0)]).text + "\n"))
                }
                try await writer.finish(nil)
            }
            return HTTPAnswer(status: .ok, json: nil, headers: headers, stream: body)
        default:
            throw DocumentError(.badRequest, "Supported `feed` types: normal, continuous, live, longpoll, eventsource")
        }
    }

    /// A normal or longpoll answer laid out line by line as CouchDB writes
    /// it: one change a line between `{"results":[` and `],`. Clients parse
    /// those lines (python-cloudant reads the feed a line at a time).
    func changesAnswer(_ result: ChangesResult) -> HTTPAnswer {
        var text = "{\"results\":[\n"
        text += result.results.map(\.json.text).joined(separator: ",\n")
        text += "\n],\n\"last_seq\":" + JSON.string(String(result.lastSeq)).text + ",\"pending\":\(result.pending)}\n"
        return HTTPAnswer(status: .ok, json: nil, raw: ("application/json", Data(text.utf8)))
    }

    enum ChangeEvent: Sendable {
        case change(Change)
        case heartbeat
        case end
    }

    /// The changes after `options.since` as they come, heartbeats between,
    /// and an end after `timeout` (none: until the client goes away).
    func changeEvents(_ db: DocumentDatabase, _ options: ChangesOptions, timeout: Duration?, heartbeat: Duration?) -> AsyncStream<ChangeEvent> {
        AsyncStream { continuation in
            let feed = Task {
                do {
                    for try await change in db.liveChanges(options) { continuation.yield(.change(change)) }
                } catch {}
                continuation.yield(.end)
                continuation.finish()
            }
            let beat = Task {
                guard let heartbeat else { return }
                while !Task.isCancelled {
                    try? await Task.sleep(for: heartbeat)
                    continuation.yield(.heartbeat)
                }
            }
            let stop = Task {
                guard let timeout else { return }
                try? await Task.sleep(for: timeout)
                if !Task.isCancelled {
                    continuation.yield(.end)
                    continuation.finish()
                }
            }
            continuation.onTermination = { _ in
                feed.cancel()
                beat.cancel()
                stop.cancel()
            }
        }
    }

    func firstChange(_ db: DocumentDatabase, _ options: ChangesOptions, within timeout: Duration) async -> Change? {
        for await event in changeEvents(db, options, timeout: timeout, heartbeat: nil) {
            switch event {
            case .change(let c): return c
            case .end: return nil
            case .heartbeat: continue
            }
        }
        return nil
    }
}
