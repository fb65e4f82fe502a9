import Dispatch
import Foundation
import Strata
import StrataDocuments

// A target of its own: it starts processes (Foundation's `Process`), which
// an app embedding StrataDocuments on iOS does not have; `strata serve`
// and an app on a desktop give its pool to their databases
// (``DocumentDatabase/setDesignFunctionRunner(_:databaseName:)``).

/// The JavaScript processes (`strata query-server`) that run design-document
/// functions, spoken to with CouchDB's query-server protocol: one JSON line
/// in, one JSON line out.
///
/// Each call has a time limit: a process that does not answer in time is
/// killed and the call fails with 500 `os_process_error`; the next call gets
/// a fresh process. Idle processes are kept for the next calls.
///
/// Each call names its tenant (the database whose functions run). A process
/// serves one tenant at a time: before it serves another, its JavaScript
/// heap is thrown away and made anew (`["strata_reset_heap"]`), so nothing
/// one database's functions changed in the environment (`JSON`, `emit`,
/// `Object.prototype`) sees another database's documents. Calls wait on
/// threads of their own (``functionQueue``), never on the threads that
/// requests needing no JavaScript use.
public final class QueryServers: DesignFunctionRunner, Sendable {
    // A process is used by one call at a time (taken from `idle`, given
    // back after).
    /// The executable and its arguments.
    public let command: [String]
    /// How long one function call may run.
    public let timeLimit: Duration
    private let idle = Locked<[QueryProcess]>([])
    /// The processes calls are using now, so that ``stopAll()`` stops
    /// them too.
    private let busy = Locked<[ObjectIdentifier: QueryProcess]>([:])

    /// How many processes are running a call now.
    public var callsUnderWay: Int { busy.withLock { $0.count } }
    private let keptIdle = 8

    /// - Parameters:
    ///   - command: the executable and its arguments, e.g.
    ///     `["/usr/local/bin/strata", "query-server"]`.
    ///   - timeLimit: how long one function call may run.
    public init(command: [String], timeLimit: Duration) {
        self.command = command
        self.timeLimit = timeLimit
    }

    /// Runs `path` (`["updates", "addvote"]`, `["validate_doc_update"]` …) of
    /// `ddoc` with `arguments`, off the cooperative pool; answers the
    /// function's JSON answer.
    public func call(tenant: String, _ ddoc: JSONObject, _ path: [String], _ arguments: [JSON]) async throws -> JSON {
        try await withCheckedThrowingContinuation { continuation in
            Self.functionQueue.async { [self] in
                continuation.resume(with: Result { try callBlocking(tenant: tenant, ddoc, path, arguments) })
            }
        }
    }

    /// Where calls wait for their process's answer: a queue of its own, so
    /// functions that run long (or forever, until the time limit) never
    /// hold the threads SQLite reads and writes are offloaded to.
    public static let functionQueue = DispatchQueue(label: "strata.query-servers", attributes: .concurrent)

    /// An idle process, the tenant's own when there is one; a process that
    /// served another tenant gets a new heap first.
    private func process(for tenant: String) throws -> QueryProcess {
        let kept = idle.withLock { idle -> QueryProcess? in
            if let index = idle.lastIndex(where: { $0.tenant == tenant }) { return idle.remove(at: index) }
            return idle.popLast()
        }
        let process = try kept ?? QueryProcess(command: command)
        if process.tenant != nil && process.tenant != tenant {
            do {
                let answer = try process.exchange(.array([.string("strata_reset_heap")]), timeLimit: timeLimit)
                guard answer == .bool(true) else {
                    throw DocumentError(status: 500, error: "os_process_error", reason: "the query server did not reset its heap")
                }
            } catch {
                process.stop()
                throw error
            }
            process.designs = [:]
        }
        process.tenant = tenant
        busy.withLock { $0[ObjectIdentifier(process)] = process }
        return process
    }

    /// The engine's door (``DesignFunctionRunner``): a failed call is a
    /// ``DocumentError`` with the function's own error name.
    public func run(tenant: String, design: JSONObject, path: [String], arguments: [JSON]) throws -> JSON {
        try callBlocking(tenant: tenant, design, path, arguments)
    }

    /// ``call(tenant:_:_:_:)`` on the calling thread.
    public func callBlocking(tenant: String, _ ddoc: JSONObject, _ path: [String], _ arguments: [JSON]) throws -> JSON {
        let process = try process(for: tenant)
        let answer: JSON
        do {
            let id = ddoc["_id"]?.stringValue ?? ""
            let rev = ddoc["_rev"]?.stringValue ?? ""
            if process.designs[id] != rev {
                _ = try process.exchange(.array([.string("ddoc"), .string("new"), .string(id), .object(ddoc)]), timeLimit: timeLimit)
                process.designs[id] = rev
            }
            answer = try process.exchange(.array([.string("ddoc"), .string(id), .array(path.map(JSON.string)), .array(arguments)]), timeLimit: timeLimit)
        } catch {
            // Timed out, died or answered garbage: this process is done.
            retire(process)
            throw error
        }
        giveBack(process)
        try Self.checkForError(answer, notFoundStatus: 404)
        return answer
    }

    /// Keeps a process that answered for the next calls, or stops it when
    /// enough are kept.
    private func giveBack(_ process: QueryProcess) {
        busy.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(process)) }
        idle.withLock { idle in if idle.count < keptIdle { idle.append(process) } else { process.stop() } }
    }

    /// Throws the function's own error when the answer is
    /// `["error", name, reason]` (status 500; `not_found` is
    /// `notFoundStatus`).
    private static func checkForError(_ answer: JSON, notFoundStatus: Int) throws {
        guard let list = answer.arrayValue, list.first == .string("error") else { return }
        let name = list.count > 1 ? list[1].stringValue ?? "unknown_error" : "unknown_error"
        let reason = list.count > 2 ? list[2].stringValue ?? "" : ""
        throw DocumentError(status: name == "not_found" ? notFoundStatus : 500, error: name, reason: reason)
    }

    /// Runs raw query-server commands on one process, in order (`reset`,
    /// `add_fun`, `map_docs`, `reduce`…); answers the last command's answer.
    func exchange(tenant: String, _ requests: [JSON]) throws -> JSON {
        let process = try process(for: tenant)
        var answer = JSON.null
        do {
            for request in requests {
                answer = try process.exchange(request, timeLimit: timeLimit)
                if let list = answer.arrayValue, list.first == .string("error") { break }
            }
        } catch {
            retire(process)
            throw error
        }
        giveBack(process)
        try Self.checkForError(answer, notFoundStatus: 500)
        return answer
    }

    /// Maps documents with JavaScript map functions (and the design
    /// document's `views.lib` for `require`): for each document, for each
    /// function, the rows it emits.
    public func map(tenant: String, functions: [String], lib: JSON?, documents: [JSONObject]) throws -> [[[EmittedRow]]] {
        var requests: [JSON] = [.array([.string("reset")])]
        if let lib { requests.append(.array([.string("add_lib"), lib])) }
        for source in functions { requests.append(.array([.string("add_fun"), .string(source)])) }
        requests.append(.array([.string("map_docs"), .array(documents.map(JSON.object))]))
        let answer = try exchange(tenant: tenant, requests)
        guard let perDocument = answer.arrayValue, perDocument.count == documents.count else {
            throw DocumentError(status: 500, error: "os_process_error", reason: "the query server's map answer does not match the documents")
        }
        return perDocument.map { results in
            (results.arrayValue ?? []).map { rows in
                (rows.arrayValue ?? []).map { pair in
                    let kv = pair.arrayValue ?? []
                    return EmittedRow(key: kv.first ?? .null, value: kv.count > 1 ? kv[1] : .null)
                }
            }
        }
    }

    /// Compiles a function in a query server (`add_fun` after a `reset`)
    /// without running it.
    public func compile(tenant: String, source: String) throws {
        _ = try exchange(tenant: tenant, [.array([.string("reset")]), .array([.string("add_fun"), .string(source)])])
    }

    /// Runs a JavaScript reduce function on `[key, id]` pairs and their
    /// values, or (`rereduce`) on earlier reductions.
    public func reduce(tenant: String, source: String, keys: [JSON]?, values: [JSON], rereduce: Bool) throws -> JSON {
        let request: JSON
        if rereduce {
            request = .array([.string("rereduce"), .array([.string(source)]), .array(values)])
        } else {
            let pairs = zip(keys ?? [], values).map { JSON.array([$0, $1]) }
            request = .array([.string("reduce"), .array([.string(source)]), .array(pairs)])
        }
        let answer = try exchange(tenant: tenant, [request])
        guard let parts = answer.arrayValue, parts.count == 2, parts[0] == .bool(true), let results = parts[1].arrayValue, let result = results.first else {
            throw DocumentError(status: 500, error: "reduce_error", reason: "the reduce function's answer is not [true, [value]]")
        }
        return result
    }

    /// Runs a JavaScript reduce function on many batches in one exchange
    /// (`reduce_many`, beyond CouchDB's protocol): the function compiled
    /// once, each batch's result or error apart.
    public func reduce(tenant: String, source: String, batches: [ReduceBatch], rereduce: Bool) throws -> [Result<JSON, DocumentError>] {
        guard !batches.isEmpty else { return [] }
        let inputs: [JSON] = batches.map { batch in
            guard !rereduce else { return .array(batch.values) }
            return .array(zip(batch.keys ?? [], batch.values).map { JSON.array([$0, $1]) })
        }
        let answer = try exchange(tenant: tenant, [.array([.string("reduce_many"), .string(source), .bool(rereduce), .array(inputs)])])
        guard let results = answer.arrayValue, results.count == batches.count else {
            throw DocumentError(status: 500, error: "os_process_error", reason: "the query server's reduce_many answer does not match the batches")
        }
        return results.map { result in
            let parts = result.arrayValue ?? []
            if parts.count == 2, parts[0] == .bool(true) { return .success(parts[1]) }
            let name = parts.count > 1 ? parts[1].stringValue ?? "unknown_error" : "reduce_error"
            let reason = parts.count > 2 ? parts[2].stringValue ?? "" : "the reduce function's answer is not [true, value]"
            return .failure(DocumentError(status: 500, error: name, reason: reason))
        }
    }

    /// Stops a process that failed a call.
    private func retire(_ process: QueryProcess) {
        busy.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(process)) }
        process.stop()
    }

    /// Stops every process (the server is shutting down): the idle ones,
    /// and those running a call, whose calls then fail at once instead of
    /// running on until their time limit.
    public func stopAll() {
        let all = idle.withLock { idle -> [QueryProcess] in
            defer { idle.removeAll() }
            return idle
        }
        for process in all { process.stop() }
        for process in busy.withLock({ Array($0.values) }) { process.terminate() }
    }
}

/// One `strata query-server` process and its pipes.
final class QueryProcess: @unchecked Sendable {
    // @unchecked: used by one call at a time (see QueryServers); `timedOut`
    // is shared with the watchdog under its lock.
    let process = Process()
    let input: FileHandle
    let output: FileHandle
    /// The design documents this process has been given, by id, with the rev given.
    var designs: [String: String] = [:]
    /// The database whose functions the process's heap has run, if any.
    var tenant: String?
    private var buffer: [UInt8] = []
    private let timedOut = Locked(false)

    init(command: [String]) throws {
        guard let executable = command.first else {
            throw DocumentError(status: 500, error: "os_process_error", reason: "no query server command")
        }
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = Array(command.dropFirst())
        let stdin = Pipe(), stdout = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        input = stdin.fileHandleForWriting
        output = stdout.fileHandleForReading
        do {
            try process.run()
        } catch {
            throw DocumentError(status: 500, error: "os_process_error", reason: "cannot start the query server \(executable): \(error.localizedDescription)")
        }
    }

    /// Sends one request line and reads the answer line; kills the process
    /// when the answer does not come within `timeLimit`.
    func exchange(_ request: JSON, timeLimit: Duration) throws -> JSON {
        var line = request.text
        line.append("\n")
        do {
            try input.write(contentsOf: Data(line.utf8))
        } catch {
            throw DocumentError(status: 500, error: "os_process_error", reason: "the query server has exited")
        }
        let pid = process.processIdentifier
        let deadline = DispatchWorkItem { [self] in
            timedOut.value = true
            kill(pid, SIGKILL)
        }
        let (seconds, attoseconds) = timeLimit.components
        DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)), execute: deadline)
        defer { deadline.cancel() }
        guard let answer = readLine() else {
            let timedOut = self.timedOut.value
            throw DocumentError(status: 500, error: "os_process_error",
                                reason: timedOut ? "OS process timed out after \(timeLimit)." : "the query server exited")
        }
        do {
            return try JSON(parsing: answer)
        } catch {
            throw DocumentError(status: 500, error: "os_process_error", reason: "the query server answered something that is not JSON")
        }
    }

    private func readLine() -> [UInt8]? {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = Array(buffer[..<newline])
                buffer.removeFirst(newline + 1)
                return line
            }
            let chunk = output.availableData
            if chunk.isEmpty { return nil }
            buffer.append(contentsOf: chunk)
        }
    }

    /// Kills the process without waiting: the call using it sees it exit.
    func terminate() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }

    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        try? input.close()
        process.waitUntilExit()
        try? output.close()
    }
}

