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
public enum JavaScriptQueryServer {
    /// Serves requests from standard input until it ends; answers on
    /// standard output, logs on standard error.
    ///
    /// - Parameter memoryLimit: the most memory (bytes) the JavaScript heap
    ///   may hold; past it the allocating function fails.
    /// - Returns: the exit status.
    public static func run(memoryLimit: Int) -> Int32 {
        // The engine's own allocator keeps the heap within the limit (an
        // rlimit would also count what a sanitizer's runtime maps).
        guard let context = strata_duk_create_heap(memoryLimit, fatalHandler) else {
            FileHandle.standardError.write(Data("query server: Duktape could not create a heap\n".utf8))
            return 1
        }
        define(context, "readline", readlineFunction, 0)
        define(context, "respond", respondFunction, 1)
        define(context, "logLine", logFunction, 1)
        let status = queryServerScript.withCString { strata_duk_peval(context, $0, strlen($0)) }
        if status != 0 {
            let message = String(cString: strata_duk_safe_to_string(context, -1))
            FileHandle.standardError.write(Data("query server: \(message)\n".utf8))
            duk_destroy_heap(context)
            return 1
        }
        duk_destroy_heap(context)
        return 0
    }

    private static func define(_ context: OpaquePointer, _ name: String, _ function: duk_c_function, _ arguments: duk_idx_t) {
        duk_push_c_function(context, function, arguments)
        _ = duk_put_global_string(context, name)
    }
}

private func readlineFunction(_ context: OpaquePointer?) -> duk_ret_t {
    guard let line = readLine(strippingNewline: true) else {
        duk_push_null(context)
        return 1
    }
    var copy = line
    copy.withUTF8 { bytes in
        bytes.withMemoryRebound(to: CChar.self) { _ = duk_push_lstring(context, $0.baseAddress, $0.count) }
    }
    return 1
}

private func respondFunction(_ context: OpaquePointer?) -> duk_ret_t {
    writeLine(context, to: STDOUT_FILENO)
    return 0
}

private func logFunction(_ context: OpaquePointer?) -> duk_ret_t {
    writeLine(context, to: STDERR_FILENO)
    return 0
}

/// The string argument and a newline, written whole to a file descriptor
/// (unbuffered: the server waits for each line).
private func writeLine(_ context: OpaquePointer?, to descriptor: Int32) {
    var length: duk_size_t = 0
    var bytes: [UInt8] = []
    if let text = duk_safe_to_lstring(context, 0, &length) {
        text.withMemoryRebound(to: UInt8.self, capacity: length) { bytes.append(contentsOf: UnsafeBufferPointer(start: $0, count: length)) }
    }
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
