import Foundation
import Strata
import Hummingbird
import HTTPTypes
import NIOCore
import StrataDocuments

/// `/{db}/_changes`: normal, longpoll, continuous and eventsource feeds,
/// with CouchDB's filters.
@available(macOS 14, iOS 17, tvOS 17, *)
struct ChangesHandlers: Sendable {
    let server: CouchServer

    func changesOptions(_ r: CouchRequest) throws -> ChangesOptions {
        var options = ChangesOptions()
        if let since = r.query["since"] {
            if since == "now" {
                options.since = .now
            } else if let n = Int(since.prefix { $0.isNumber }) {
                options.since = ChangeSequence(n)
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
        case "_view":
            guard let view = r.query["view"], view.split(separator: "/").count == 2 else {
                throw DocumentError(.badRequest, "`view` filter parameter is not provided.")
            }
        case let name?:
            // A design document's filter function: checked here, run by changesFilter.
            let parts = name.split(separator: "/", maxSplits: 1)
            guard parts.count == 2 else { throw DocumentError(.badRequest, "`filter` parameter is not correctly formatted") }
        }
        if r.query["filter"] == nil, let ids = body?["doc_ids"]?.arrayValue {
            options.documentIDs = Set(ids.compactMap(\.stringValue))
        }
        return options
    }

    /// A filter function named by `filter=ddoc/name`: keeps the changes whose
    /// document it passes (their documents dropped again unless asked for).
    typealias ChangesFilter = @Sendable ([Change]) async throws -> [Change]

    func changesFilter(_ db: DocumentDatabase, _ r: CouchRequest) async throws -> ChangesFilter? {
        guard let name = r.query["filter"], name == "_view" || !name.hasPrefix("_") else { return nil }
        // The engine chooses the function (Swift or the stored JavaScript).
        let passes: @Sendable ([JSONObject]) throws -> [Bool]
        if name == "_view" {
            let view = r.query["view"] ?? ""
            passes = try await offload { try db.viewChangesFilter(view) }
        } else {
            let request = try await r.functionRequest(db, docID: nil)
            passes = try await offload { try db.changesFilter(name, request: request) }
        }
        let keepDocs = r.flag("include_docs")
        return { changes in
            guard !changes.isEmpty else { return [] }
            let documents = changes.map { change -> JSONObject in
                var doc = change.doc ?? ["_id": .string(change.id), "_rev": .string(change.changes.first ?? "")]
                if change.deleted { doc["_deleted"] = .bool(true) }
                return doc
            }
            let verdicts = try await offloadFunction { try passes(documents) }
            return zip(changes, verdicts).compactMap { change, pass in
                guard pass else { return nil }
                var kept = change
                if !keepDocs { kept.doc = nil }
                return kept
            }
        }
    }

    /// The feed's result through the filter, then its limit: `pending`
    /// counts the changes after the last one kept, passing or not, as
    /// CouchDB's does.
    func filtered(_ result: ChangesResult, _ filter: ChangesFilter, limit: Int?) async throws -> ChangesResult {
        var kept = try await filter(result.results)
        var lastSeq = result.lastSeq
        var pending = result.pending ?? 0
        if let limit, kept.count > limit {
            kept = Array(kept.prefix(limit))
            lastSeq = kept.last?.seq ?? lastSeq
            let examined = result.results.firstIndex { $0.seq == lastSeq }.map { $0 + 1 } ?? result.results.count
            pending += result.results.count - examined
        }
        return ChangesResult(results: kept, lastSeq: lastSeq, pending: pending)
    }

    func feed(_ db: DocumentDatabase, _ r: CouchRequest) async throws -> HTTPAnswer {
        try r.checkBooleans(["descending", "include_docs", "conflicts", "attachments", "att_encoding_info"])
        var options = try changesOptions(r)
        let filter = try await changesFilter(db, r)
        let limit = options.limit
        if filter != nil {
            options.includeDocs = true
            options.limit = nil
        }
        if options.since == .now { options.since = try await offload { try db.updateSequence() } }
        let feed = r.query["feed"] ?? "normal"
        let timeout = Duration.milliseconds(try r.int("timeout") ?? 60_000)
        // `heartbeat=true` (aiocouch sends it) means CouchDB's default, 60 s.
        let heartbeat = try (r.query["heartbeat"] == "true" ? 60_000 : r.int("heartbeat")).map { Duration.milliseconds(max($0, 100)) }
        let interval = try r.int("seq_interval")
        switch feed {
        case "normal":
            let final = options
            var result = try await offload { try db.changes(final) }
            if let filter { result = try await filtered(result, filter, limit: limit) }
            return changesAnswer(result, seqInterval: interval, limit: limit)
        case "longpoll":
            let final = options
            var now = try await offload { try db.changes(final) }
            if let filter { now = try await filtered(now, filter, limit: limit) }
            if !now.results.isEmpty { return changesAnswer(now, seqInterval: interval, limit: limit) }
            // Wait for the next change, or the timeout.
            options.since = ChangeSequence(max(options.since.count, now.lastSeq.count))
            let first = try await firstChange(db, options, within: timeout, filter: filter)
            var result = ChangesResult(results: first.map { [$0] } ?? [], lastSeq: first?.seq ?? now.lastSeq, pending: 0)
            if first == nil { result.lastSeq = now.lastSeq }
            return changesAnswer(result, seqInterval: interval, limit: limit)
        case "continuous", "eventsource":
            // As CouchDB: every change since `since` first, whatever the
            // timeout; the timeout then counts the time without a new change.
            let eventSource = feed == "eventsource"
            let ending = r.query["timeout"] == nil && heartbeat != nil ? nil : timeout
            var headers: HTTPFields = [:]
            headers[.contentType] = eventSource ? "text/event-stream" : "application/json"
            // An event stream is never cached (CouchDB's no-cache).
            if eventSource { headers[.cacheControl] = "no-cache" }
            let start = options
            let body = ResponseBody { writer in
                var sent = 0
                var last = start.since
                var sequences = SequenceInterval(interval, limit: limit)
                func send(_ change: Change) async throws -> Bool {
                    var change = change
                    last = change.seq
                    if let filter {
                        guard let kept = try await filter([change]).first else { return false }
                        change = kept
                    }
                    var json = change.json
                    if !sequences.next() { json = Self.withoutSequence(json) }
                    let line = eventSource ? "data: \(json.text)\nid: \(change.seq.json.text)\n\n" : json.text + "\n"
                    try await writer.write(ByteBuffer(string: line))
                    sent += 1
                    if let limit, sent >= limit { return true }
                    return false
                }
                var done = false
                let backlog = try await offload { try db.changes(start) }
                for change in backlog.results where !done { done = try await send(change) }
                last = ChangeSequence(max(last.count, backlog.lastSeq.count))
                if !done {
                    var live = start
                    live.since = last
                    for await event in self.changeEvents(db, live, timeout: ending, heartbeat: heartbeat) {
                        switch event {
                        case .change(let change): done = try await send(change)
                        case .heartbeat: try await writer.write(ByteBuffer(string: "\n"))
                        case .end: done = true
                        // The response stops short of its last_seq line: the
                        // client sees the feed broke and starts it again.
                        case .failed(let error): throw error
                        }
                        if done { break }
                    }
                }
                if !eventSource {
                    // Stopped by its limit, the feed leaves the changes after
                    // its last one pending.
                    let stoppedAt = last
                    let pending = limit.map { sent >= $0 } == true ? try await offload { try db.changeCount(after: stoppedAt) } : 0
                    try await writer.write(ByteBuffer(string: JSON.object(["last_seq": last.json, "pending": .int(pending)]).text + "\n"))
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
    func changesAnswer(_ result: ChangesResult, seqInterval: Int? = nil, limit: Int? = nil) -> HTTPAnswer {
        var sequences = SequenceInterval(seqInterval, limit: limit)
        var text = "{\"results\":[\n"
        text += result.results.map { sequences.next() ? $0.json.text : Self.withoutSequence($0.json).text }.joined(separator: ",\n")
        text += "\n],\n\"last_seq\":" + result.lastSeq.json.text + ",\"pending\":\(result.pending ?? 0)}\n"
        return HTTPAnswer(status: .ok, json: nil, raw: ("application/json", Data(text.utf8)))
    }

    /// A change's JSON with `seq` null (`seq_interval`).
    static func withoutSequence(_ json: JSON) -> JSON {
        guard var object = json.objectValue else { return json }
        object["seq"] = .null
        return .object(object)
    }

    enum ChangeEvent: Sendable {
        case change(Change)
        case heartbeat
        case end
        /// The database could not be read any more (deleted, closed, an I/O
        /// error): the feed ends with this error, never as if it were done.
        case failed(any Error)
    }

    /// The changes after `options.since` as they come, heartbeats between,
    /// and an end once `timeout` has passed without a change (none: until
    /// the client goes away).
    func changeEvents(_ db: DocumentDatabase, _ options: ChangesOptions, timeout: Duration?, heartbeat: Duration?) -> AsyncStream<ChangeEvent> {
        AsyncStream { continuation in
            let lastChange = LastChange()
            let feed = Task {
                do {
                    for try await change in db.liveChanges(options) {
                        lastChange.now()
                        continuation.yield(.change(change))
                    }
                    continuation.yield(.end)
                } catch is CancellationError {
                    continuation.yield(.end)
                } catch {
                    continuation.yield(.failed(error))
                }
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
                var deadline = ContinuousClock.now + timeout
                while !Task.isCancelled {
                    try? await Task.sleep(until: deadline)
                    let idleUntil = lastChange.instant + timeout
                    if idleUntil > deadline {
                        deadline = idleUntil
                        continue
                    }
                    if !Task.isCancelled {
                        continuation.yield(.end)
                        continuation.finish()
                    }
                    return
                }
            }
            continuation.onTermination = { _ in
                feed.cancel()
                beat.cancel()
                stop.cancel()
            }
        }
    }

    func firstChange(_ db: DocumentDatabase, _ options: ChangesOptions, within timeout: Duration, filter: ChangesFilter?) async throws -> Change? {
        for await event in changeEvents(db, options, timeout: timeout, heartbeat: nil) {
            switch event {
            case .change(let c):
                guard let filter else { return c }
                if let kept = try await filter([c]).first { return kept }
            case .end: return nil
            case .heartbeat: continue
            case .failed(let error): throw error
            }
        }
        return nil
    }
}

/// When a live feed last saw a change: its timeout counts from there.
private final class LastChange: Sendable {
    private let last = Locked(ContinuousClock.now)

    var instant: ContinuousClock.Instant { last.value }
    func now() { last.withLock { $0 = .now } }
}

/// CouchDB's `seq_interval=N`: a row carries its `seq` only when the
/// feed's remaining limit (10^15 without one) is a multiple of N, counted
/// down a row at a time; the others carry `null` (`fabric_view_changes`).
struct SequenceInterval {
    private let interval: Int?
    private var remaining: Int

    init(_ interval: Int?, limit: Int?) {
        self.interval = interval.flatMap { $0 > 0 ? $0 : nil }
        remaining = limit ?? 1_000_000_000_000_000
    }

    /// Whether the next row shows its `seq`.
    mutating func next() -> Bool {
        defer { remaining -= 1 }
        guard let interval else { return true }
        return remaining % interval == 0
    }
}
