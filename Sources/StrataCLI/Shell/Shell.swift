import Foundation
import Strata

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The sqlite3 shell's loop on Strata's connection: lines are read until
/// they end a statement, statements run and print their rows in the chosen
/// mode, dot commands change settings or work on the database, and an error
/// is printed on one line without ending the shell.
final class Shell {
    let db: Database
    let path: String
    /// Whether a person types at a terminal: prompts, line editing, and an
    /// error never ends the session.
    let isInteractive: Bool
    var output = ShellOutput()
    /// Whether `.timer on` is set: each SQL run prints its time.
    var showsTimer = false
    /// Whether `.bail on` (or `--bail`) is set: reading stops at the first
    /// error.
    var bails = false
    /// Whether an error was printed: the exit code of a script is then 1.
    private(set) var hadError = false
    /// Set by `.quit` or `.exit`: the session ends with this code.
    private(set) var requestedExit: Int32?
    let interruption: ShellInterruption
    private let editor: LineEditor?
    /// How deep `.read` files are nested (a file reading itself stops).
    private var readDepth = 0

    init(db: Database, path: String, isInteractive: Bool, historyURL: URL?) {
        self.db = db
        self.path = path
        self.isInteractive = isInteractive
        self.interruption = ShellInterruption(handle: db.interruptHandle)
        self.editor = isInteractive ? LineEditor(historyURL: historyURL) : nil
    }

    /// Reads standard input (the terminal, or a pipe) until its end or
    /// `.quit`, and returns the exit code: 0, or 1 when a script had an
    /// error, or what `.exit` gave.
    func run() -> Int32 {
        if let editor {
            _ = runLines(source: nil) { prompt in
                let input = editor.readLine(prompt: prompt)
                if case .line(let line) = input { editor.remember(line) }
                return input
            }
        } else {
            _ = runLines(source: nil) { _ in
                Swift.readLine(strippingNewline: true).map(LineInput.line) ?? .endOfInput
            }
        }
        return requestedExit ?? (hadError && !isInteractive ? 1 : 0)
    }

    /// Runs the statements and dot commands of `read`'s lines, named
    /// `source` in errors (nil: standard input). Returns false when the
    /// session must end: `.quit`, or an error with `.bail on`.
    func runLines(source: String?, read: (_ prompt: String) -> LineInput) -> Bool {
        var pending = ""
        var pendingLine = 0
        var lineNumber = 0
        while true {
            let input = read(pending.isEmpty ? "strata> " : "   ...> ")
            switch input {
            case .endOfInput:
                // As sqlite3: what remains runs, even without its semicolon.
                if !pending.isEmpty { return runSQL(pending, at: pendingLine, in: source) || !bails }
                return true
            case .interrupt:
                pending = ""
            case .line(let line):
                lineNumber += 1
                if pending.isEmpty {
                    let trimmed = line.trimmingCharacters(in: .whitespaces)
                    if trimmed.hasPrefix(".") {
                        guard runDotCommand(trimmed, at: lineNumber, in: source) else { return false }
                        continue
                    }
                    pendingLine = lineNumber
                }
                pending += pending.isEmpty ? line : "\n" + line
                if Self.holdsOnlyComments(pending) {
                    pending = ""
                } else if Database.isComplete(sql: pending) {
                    let sql = pending
                    pending = ""
                    guard runSQL(sql, at: pendingLine, in: source) || !bails else { return false }
                }
            }
            if requestedExit != nil { return false }
        }
    }

    /// Runs the statements of `sql` one by one, printing the rows of each
    /// that returns rows. Returns false when one failed (the error is
    /// printed; the statements before it stay done).
    @discardableResult
    func runSQL(_ sql: String, at line: Int, in source: String?) -> Bool {
        let timer = ShellTimer()
        defer { if showsTimer { Terminal.write(timer.report() + "\n") } }
        do {
            try interruptibly {
                let statements = try db.allStatements(sql: sql)
                while let statement = try statements.next() {
                    try interruption.check()
                    if statement.columnCount > 0 {
                        try output.write(statement, in: db)
                    } else {
                        try statement.execute()
                    }
                }
            }
            return true
        } catch {
            report(error, at: line, in: source)
            // Ctrl-C ends a script, as it ends any program; a person at the
            // prompt stays.
            if !isInteractive && interruption.wasRequested { exit(130) }
            return false
        }
    }

    /// Runs `body` so that Ctrl-C (SIGINT) stops it: the running statement
    /// fails with an interruption, and the shell goes on.
    func interruptibly<T>(_ body: () throws -> T) throws -> T {
        interruption.begin()
        defer { interruption.end() }
        return isInteractive ? try Terminal.withoutEcho(body) : try body()
    }

    /// Prints an error on one line, on standard error: where it happened
    /// when reading a script, and a plain "interrupted" for Ctrl-C.
    func report(_ error: any Error, at line: Int, in source: String?) {
        hadError = true
        let message: String
        if let error = error as? SQLiteError, error.code == .interrupt, interruption.wasRequested {
            message = "interrupted"
        } else if let error = error as? ShellInterruption.Interrupted {
            message = error.description
        } else {
            message = oneLineMessage(error)
        }
        var place = ""
        if let source {
            place = "near line \(line) of \(source): "
        } else if !isInteractive {
            place = "near line \(line): "
        }
        FileHandle.standardError.write(Data("Error: \(place)\(message)\n".utf8))
    }

    /// Runs a script file's lines as if typed (`.read`).
    func read(file: String, at line: Int, in source: String?) -> Bool {
        guard readDepth < 16 else {
            report(ShellError("\(file): .read files nest more than 16 deep"), at: line, in: source)
            return !bails
        }
        let text: String
        do {
            text = try String(contentsOfFile: file, encoding: .utf8)
        } catch {
            report(ShellError("cannot read \(file): \((error as NSError).localizedDescription)"), at: line, in: source)
            return !bails
        }
        readDepth += 1
        defer { readDepth -= 1 }
        // Any line break: "\r\n" is one Character.
        var lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).makeIterator()
        return runLines(source: file) { _ in
            lines.next().map { LineInput.line(String($0)) } ?? .endOfInput
        }
    }

    /// Ends the session with `code` once the current line is done.
    func exit(_ code: Int32) {
        requestedExit = code
    }

    /// Whether `text` holds only spaces and comments, so that the shell
    /// drops it rather than wait for a semicolon. An open block comment is
    /// not done, and waits.
    static func holdsOnlyComments(_ text: String) -> Bool {
        var rest = Substring(text)
        while let first = rest.first {
            if first.isWhitespace {
                rest = rest.dropFirst()
            } else if rest.hasPrefix("--") {
                guard let end = rest.firstIndex(of: "\n") else { return true }
                rest = rest[end...]
            } else if rest.hasPrefix("/*") {
                guard let end = rest.range(of: "*/") else { return false }
                rest = rest[end.upperBound...]
            } else {
                return false
            }
        }
        return true
    }
}

/// A shell error of its own, shown as its text.
struct ShellError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Ctrl-C while the shell works: SIGINT, caught on a thread of its own,
/// interrupts the connection's running statement. At the prompt the line
/// editor reads Ctrl-C as a key instead.
final class ShellInterruption: @unchecked Sendable {
    /// The error that stops a script between two statements after Ctrl-C.
    struct Interrupted: Error, CustomStringConvertible {
        var description: String { "interrupted" }
    }

    private let handle: DatabaseInterruptHandle
    private let lock = NSLock()
    private var isRunning = false
    private var requested = false

    init(handle: DatabaseInterruptHandle) {
        self.handle = handle
    }

    /// Whether Ctrl-C came since the current work began.
    var wasRequested: Bool { lock.withLock { requested } }

    func begin() {
        lock.withLock {
            isRunning = true
            requested = false
        }
    }

    func end() {
        lock.withLock { isRunning = false }
    }

    /// Throws when Ctrl-C came: the statements after an interrupted one
    /// do not run.
    func check() throws {
        if wasRequested { throw Interrupted() }
    }

    /// Handles SIGINT: interrupts the running work and returns true, or
    /// returns false when nothing runs.
    func interrupt() -> Bool {
        lock.withLock {
            guard isRunning else { return false }
            requested = true
            handle.interrupt()
            return true
        }
    }
}

/// The time one run took, in sqlite3's `.timer` words: wall clock, and the
/// process's user and system CPU time.
struct ShellTimer {
    private let start = ContinuousClock.now
    private let usage = ShellTimer.resourceUsage()

    func report() -> String {
        let elapsed = ContinuousClock.now - start
        let now = Self.resourceUsage()
        func seconds(_ duration: Duration) -> String {
            String(format: "%.3f", Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
        }
        return "Run Time: real \(seconds(elapsed)) user \(String(format: "%.6f", now.user - usage.user)) sys \(String(format: "%.6f", now.system - usage.system))"
    }

    private static func resourceUsage() -> (user: Double, system: Double) {
        var usage = rusage()
        #if canImport(Glibc)
        getrusage(RUSAGE_SELF.rawValue, &usage)
        #else
        getrusage(RUSAGE_SELF, &usage)
        #endif
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        return (seconds(usage.ru_utime), seconds(usage.ru_stime))
    }
}
