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
            options.documentIDs = ids.compactMap(\.stringValue)
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
            options.documentIDs = ids.compactMap(\.stringValue)
        }
        return options
    }

    /// A filter function named by `filter=ddoc/name`: keeps the changes whose
    /// document it passes (their documents dropped again unless asked for).
    typealias ChangesFilter = @Sendable ([Change]) async throws -> [Change]

    func changesFilter(_ db: DocumentDatabase, _ r: CouchRequest) async throws -> ChangesFilter? {
        guard let name = r.query["filter"], name == "_view" || !name.hasBytePrefix("_") else { return nil }
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
        let pager = ChangesPager(db: db, options: options, filter: filter, limit: limit)
        switch feed {
        case "normal", "longpoll":
            // A normal feed's ETag names the database's state, as CouchDB's
            // (its database info): a client whose copy is current gets 304.
            var etag: String?
            if feed == "normal" {
                let info = try await offload { try db.info() }
                etag = "\"" + MD5.hex(Array(JSON.object(info.json).text.utf8)) + "\""
                if let etag, r.headers[.ifNoneMatch] == etag { return .notModified(etag: etag) }
            }
            var first = try await pager.next()
            if feed == "longpoll", first.isEmpty {
                // Wait for the next change, or the timeout.
                var waiting = options
                waiting.since = pager.lastSeq
                if let change = try await firstChange(db, waiting, within: timeout, filter: filter) {
                    first = [change]
                    pager.sentOne(change)
                }
                pager.finish()
            }
            // Streamed a page at a time, CouchDB's lines: a change a line
            // between `{"results":[` and `],` (python-cloudant reads them so).
            let sequences = Locked(SequenceInterval(interval, limit: limit))
            let rows = { @Sendable (changes: [Change]) -> [JSON] in
                sequences.withLock { sequences in changes.map { sequences.next() ? $0.json : Self.withoutSequence($0.json) } }
            }
            if r.method == .head { return HTTPAnswer(status: .ok, json: nil, stream: ResponseBody()) }
            var answer = HTTPAnswer.streamedRows(head: "{\"results\":[", first: rows(first), separator: ",\n", start: "\n", tail: {
                "\n],\n\"last_seq\":" + pager.lastSeq.json.text + ",\"pending\":\(try await pager.pending())}\n"
            }) { _, _ in
                rows(try await pager.next())
            }
            answer.headers[.eTag] = etag
            return answer
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
                var sequences = SequenceInterval(interval, limit: limit)
                func write(_ change: Change) async throws {
                    var json = change.json
                    if !sequences.next() { json = Self.withoutSequence(json) }
                    let line = eventSource ? "data: \(json.text)\nid: \(change.seq.json.text)\n\n" : json.text + "\n"
                    try await writer.write(ByteBuffer(string: line))
                }
                // What is there already, a page at a time.
                while true {
                    let batch = try await pager.next()
                    if batch.isEmpty { break }
                    for change in batch { try await write(change) }
                }
                if !pager.isDone {
                    var live = start
                    live.since = pager.lastSeq
                    live: for await event in self.changeEvents(db, live, timeout: ending, heartbeat: heartbeat) {
                        switch event {
                        case .change(let change):
                            pager.examined(change)
                            if let filter {
                                guard let kept = try await filter([change]).first else { continue }
                                try await write(kept)
                            } else {
                                try await write(change)
                            }
                            pager.sentOne(change)
                            if pager.isDone { break live }
                        case .heartbeat: try await writer.write(ByteBuffer(string: "\n"))
                        case .end: break live
                        // The response stops short of its last_seq line: the
                        // client sees the feed broke and starts it again.
                        case .failed(let error): throw error
                        }
                    }
                }
                if !eventSource {
                    try await writer.write(ByteBuffer(string: JSON.object(["last_seq": pager.lastSeq.json, "pending": .int(try await pager.pending())]).text + "\n"))
                }
                try await writer.finish(nil)
            }
            return HTTPAnswer(status: .ok, json: nil, headers: headers, stream: body)
        default:
            throw DocumentError(.badRequest, "Supported `feed` types: normal, continuous, live, longpoll, eventsource")
        }
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

/// A feed read a page at a time from the engine, through its filter, up to
/// its limit, keeping what CouchDB's last line says: where the feed ended
/// (`last_seq`) and what it left (`pending`, counted once at the end: a
/// count is a scan, which a page must not repeat).
final class ChangesPager: Sendable {
    private struct State {
        var since: ChangeSequence
        var lastSeq: ChangeSequence
        /// What the engine counted, for a feed read in one call.
        var pending: Int?
        var sent = 0
        /// The changes the engine looked at (for `doc_ids` and `_design`,
        /// those it read).
        var examined = 0
        var done = false
        /// Stopped by its limit: the changes after the last sent are pending.
        var cut = false
    }

    let db: DocumentDatabase
    let options: ChangesOptions
    let filter: ChangesHandlers.ChangesFilter?
    let limit: Int?
    private let state: Locked<State>

    init(db: DocumentDatabase, options: ChangesOptions, filter: ChangesHandlers.ChangesFilter?, limit: Int?) {
        self.db = db
        self.options = options
        self.filter = filter
        self.limit = limit
        state = Locked(State(since: options.since, lastSeq: options.since))
    }

    var lastSeq: ChangeSequence { state.value.lastSeq }
    var isDone: Bool { state.value.done }

    /// Nothing more is read (a longpoll answered).
    func finish() { state.withLock { $0.done = true } }

    /// The next changes kept, empty at the end of what is there.
    func next() async throws -> [Change] {
        while true {
            let current = state.value
            let remaining = (limit ?? .max) - current.sent
            if current.done || remaining <= 0 {
                state.withLock { $0.done = true }
                return []
            }
            var page = options
            page.since = current.since
            var pageLimit: Int?
            if options.descending {
                // Read whole (a descending feed starts from the end), and
                // its pending counted by the engine.
                page.limit = filter == nil ? limit : nil
            } else {
                pageLimit = filter == nil ? min(BulkHandlers.pageSize, remaining) : BulkHandlers.pageSize
                page.limit = pageLimit
                page.countsPending = false
            }
            let asked = page
            let result = try await offload { [db] in try db.changes(asked) }
            var kept = result.results
            if let filter { kept = try await filter(kept) }
            var lastSeq = result.lastSeq
            var examined = result.results.count
            let cut = kept.count > remaining
            if cut {
                kept = Array(kept.prefix(remaining))
                lastSeq = kept.last?.seq ?? lastSeq
                examined = result.results.firstIndex { $0.seq == lastSeq }.map { $0 + 1 } ?? examined
            }
            let full = pageLimit.map { result.results.count >= $0 } ?? false
            let done = cut || !full || options.descending || (filter == nil && kept.count >= remaining)
            state.withLock { state in
                state.since = result.lastSeq
                state.lastSeq = lastSeq
                state.pending = result.pending
                state.sent += kept.count
                state.examined += examined
                state.done = done
                state.cut = cut || (limit.map { state.sent >= $0 } ?? false)
            }
            if !kept.isEmpty || done { return kept }
        }
    }

    /// A live change looked at (kept or not).
    func examined(_ change: Change) {
        state.withLock { state in
            state.lastSeq = ChangeSequence(max(state.lastSeq.count, change.seq.count))
            state.examined += 1
        }
    }

    /// A live change sent.
    func sentOne(_ change: Change) {
        state.withLock { state in
            state.lastSeq = change.seq
            state.sent += 1
            if let limit, state.sent >= limit {
                state.done = true
                state.cut = true
            }
        }
    }

    /// CouchDB's `pending`: what its fold had left when it stopped, the
    /// changes after the last one looked at; for `doc_ids` and `_design`,
    /// every change but those it read.
    func pending() async throws -> Int {
        let current = state.value
        if options.descending { return current.pending ?? 0 }
        if options.readsNamedDocumentsOnly {
            let since = options.since
            return try await offload { [db] in try db.changeCount(after: since) } - current.examined
        }
        guard current.cut else { return 0 }
        let after = current.lastSeq
        return try await offload { [db] in try db.changeCount(after: after) }
    }
}
