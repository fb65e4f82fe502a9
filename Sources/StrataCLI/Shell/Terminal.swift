import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The terminal on standard input and output: raw mode for the line editor,
/// its width, and unbuffered writes.
enum Terminal {
    /// Whether standard input and standard output are both a terminal: the
    /// shell edits lines and shows prompts only then.
    static var isInteractive: Bool {
        isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1
    }

    /// The terminal's width in columns; 80 when it cannot tell.
    static var columns: Int {
        var size = winsize()
        guard ioctl(STDOUT_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 80 }
        return Int(size.ws_col)
    }

    /// Writes text to standard output at once, past Swift's buffer.
    static func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    /// Reads one byte from standard input; nil at its end.
    static func readByte() -> UInt8? {
        var byte: UInt8 = 0
        while true {
            let count = read(STDIN_FILENO, &byte, 1)
            if count == 1 { return byte }
            if count < 0 && errno == EINTR { continue }
            return nil
        }
    }

    /// Runs `body` with the terminal in raw mode: keys arrive one by one,
    /// unechoed, and Ctrl-C is a key rather than a signal. Output processing
    /// stays on, so "\n" still starts a line. Keys typed ahead are kept.
    static func withRawMode<T>(_ body: () -> T) -> T {
        var original = termios()
        guard tcgetattr(STDIN_FILENO, &original) == 0 else { return body() }
        var raw = original
        raw.c_iflag &= ~tcflag_t(BRKINT | ICRNL | INPCK | ISTRIP | IXON)
        raw.c_cflag |= tcflag_t(CS8)
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON | IEXTEN | ISIG)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        // TCSANOW, not TCSAFLUSH: a pasted script's later lines are waiting.
        guard tcsetattr(STDIN_FILENO, TCSANOW, &raw) == 0 else { return body() }
        changedSettings.set(original)
        defer { restore() }
        return body()
    }

    /// Puts back the settings raw mode or `withoutEcho` changed, if any:
    /// also on SIGTERM or SIGHUP, so that a shell killed at its prompt does
    /// not leave the terminal raw.
    static func restore() {
        guard var original = changedSettings.take() else { return }
        tcsetattr(STDIN_FILENO, TCSANOW, &original)
    }

    /// The terminal's settings before the current change.
    private static let changedSettings = SavedSettings()

    /// Runs `body` with the terminal's echo off: keys typed meanwhile wait,
    /// unshown, for the next prompt (whose editor shows them), and Ctrl-C
    /// still sends SIGINT without printing "^C" into the output.
    static func withoutEcho<T>(_ body: () throws -> T) rethrows -> T {
        var original = termios()
        guard tcgetattr(STDIN_FILENO, &original) == 0 else { return try body() }
        var quiet = original
        quiet.c_lflag &= ~tcflag_t(ECHO)
        guard tcsetattr(STDIN_FILENO, TCSANOW, &quiet) == 0 else { return try body() }
        changedSettings.set(original)
        defer { restore() }
        return try body()
    }
}

/// Terminal settings kept for a signal handler's thread to put back.
private final class SavedSettings: @unchecked Sendable {
    private let lock = NSLock()
    private var settings: termios?

    func set(_ value: termios) { lock.withLock { settings = value } }

    func take() -> termios? {
        lock.withLock {
            defer { settings = nil }
            return settings
        }
    }
}
