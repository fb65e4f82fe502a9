import CDuktape
import Foundation

/// Strata's JavaScript query server: design-document functions (update
/// handlers, validation, filters, map and reduce) run in Duktape, an
/// embedded ES5 engine, in a process of their own.
///
/// `strata serve` starts these processes (`strata query-server`) and talks
/// to them with CouchDB's query-server protocol, one JSON line each way, as
/// CouchDB talks to its `couchjs`. The process is the sandbox: JavaScript
/// has no file system or network functions here, a function that allocates
/// without end fails at the heap's byte budget, and the server kills a
/// process that does not answer in time — Debian's Duktape has no interrupt
/// hook, so a loop that never ends can only be stopped from outside.
///
/// Beyond CouchDB's protocol, the line `["strata_reset_heap"]` throws the
/// whole JavaScript heap away and starts a new one: the server sends it
/// before a process that served one database serves another, so what one
/// database's functions changed (`Object.prototype`, `JSON`, `emit`) is
/// never seen by another's.
///
/// Duktape is opened at run time (``unavailableReason``): without its library the
/// process still starts and answers every request with CouchDB's
/// `os_process_error` and what to install.
public enum JavaScriptQueryServer {
    /// Whether Duktape's library can be opened on this machine; `nil` when it
    /// can, otherwise why not and what to install.
    public static var unavailableReason: String? {
        var buffer = [CChar](repeating: 0, count: 2048)
        if strata_duk_load(&buffer, buffer.count) == 0 { return nil }
        let detail = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        return "JavaScript design functions need Duktape 2's runtime library, which was not found (\(detail)). "
            + "Install it: apt-get install libduktape207 (Debian, Ubuntu) or brew install duktape (macOS); "
            + "or set STRATA_DUKTAPE_LIBRARY to the library's path."
    }

    /// Serves requests from standard input until it ends; answers on
    /// standard output, logs on standard error.
    ///
    /// - Parameter memoryLimit: the most memory (bytes) the JavaScript heap
    ///   may hold; past it the allocating function fails.
    /// - Returns: the exit status.
    public static func run(memoryLimit: Int) -> Int32 {
        // Below the server's own priority: functions that spin until their
        // time limit take the CPU the server's requests do not need.
        #if os(Linux)
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
        #else
        _ = setpriority(PRIO_PROCESS, 0, 10)
        #endif
        if let reason = unavailableReason {
            FileHandle.standardError.write(Data("query server: \(reason)\n".utf8))
            return answerEveryRequest(with: reason)
        }
        while true {
            // The engine's own allocator keeps the heap within the limit (an
            // rlimit would also count what a sanitizer's runtime maps).
            guard let context = strata_duk_create_heap(memoryLimit, fatalHandler) else {
                FileHandle.standardError.write(Data("query server: Duktape could not create a heap\n".utf8))
                return 1
            }
            _ = strata_duk_define_global(context, "readline", readlineFunction, 0)
            _ = strata_duk_define_global(context, "respond", respondFunction, 1)
            _ = strata_duk_define_global(context, "logLine", logFunction, 1)
            let status = queryServerScript.withCString { strata_duk_peval(context, $0, strlen($0)) }
            if status != 0 {
                let message = String(cString: strata_duk_safe_to_lstring(context, -1, nil))
                FileHandle.standardError.write(Data("query server: \(message)\n".utf8))
                strata_duk_destroy_heap(context)
                return 1
            }
            strata_duk_destroy_heap(context)
            guard resetRequested else { return 0 }
            resetRequested = false
            writeLine(Array("true".utf8), to: STDOUT_FILENO)
        }
    }

    /// Without an engine: each request line gets the error, until input ends.
    private static func answerEveryRequest(with reason: String) -> Int32 {
        let answer = (try? JSONSerialization.data(withJSONObject: ["error", "os_process_error", reason])).map(Array.init)
            ?? Array(#"["error","os_process_error","no JavaScript engine"]"#.utf8)
        while let line = readLine(strippingNewline: true) {
            if line.isEmpty { continue }
            writeLine(answer, to: STDOUT_FILENO)
        }
        return 0
    }
}

/// The request line that asks for a new heap.
private let resetLine = #"["strata_reset_heap"]"#

/// Set when the reset line was read: the script's loop has been told the
/// input ended, and nothing more is read or written until the heap is new.
/// Only the process's one thread touches it.
nonisolated(unsafe) private var resetRequested = false

private func readlineFunction(_ context: OpaquePointer?) -> strata_duk_ret_t {
    guard !resetRequested, let line = readLine(strippingNewline: true) else {
        strata_duk_push_null(context)
        return 1
    }
    if line == resetLine {
        resetRequested = true
        strata_duk_push_null(context)
        return 1
    }
    var copy = line
    copy.withUTF8 { bytes in
        bytes.withMemoryRebound(to: CChar.self) { _ = strata_duk_push_lstring(context, $0.baseAddress, $0.count) }
    }
    return 1
}

private func respondFunction(_ context: OpaquePointer?) -> strata_duk_ret_t {
    // After the reset line, a function that kept running must not answer in
    // the new heap's place.
    if !resetRequested { writeLine(argument(context), to: STDOUT_FILENO) }
    return 0
}

private func logFunction(_ context: OpaquePointer?) -> strata_duk_ret_t {
    writeLine(argument(context), to: STDERR_FILENO)
    return 0
}

/// The first argument as UTF-8 text.
private func argument(_ context: OpaquePointer?) -> [UInt8] {
    var length: strata_duk_size_t = 0
    guard let text = strata_duk_safe_to_lstring(context, 0, &length) else { return [] }
    return text.withMemoryRebound(to: UInt8.self, capacity: length) { Array(UnsafeBufferPointer(start: $0, count: length)) }
}

/// The bytes and a newline, written whole to a file descriptor (unbuffered:
/// the server waits for each line).
private func writeLine(_ line: [UInt8], to descriptor: Int32) {
    var bytes = line
    bytes.append(0x0A)
    bytes.withUnsafeBytes { buffer in
        var offset = 0
        while offset < buffer.count {
            let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                exit(74)  // the server has gone: nothing left to answer
            }
            offset += written
        }
    }
}

private func fatalHandler(_ userData: UnsafeMutableRawPointer?, _ message: UnsafePointer<CChar>?) {
    // Out of memory inside the engine, or a broken heap: this process ends
    // and the server answers the request with an error and starts another.
    let text = message.map { String(cString: $0) } ?? "unknown"
    FileHandle.standardError.write(Data("query server: fatal error: \(text)\n".utf8))
    exit(70)
}
