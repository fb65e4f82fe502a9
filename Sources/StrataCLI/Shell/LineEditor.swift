import Foundation

/// What the user gave at the prompt.
enum LineInput: Equatable {
    /// A line, ended by Enter.
    case line(String)
    /// Ctrl-C: the line typed so far is dropped.
    case interrupt
    /// Ctrl-D on an empty line, or the terminal went away.
    case endOfInput
}

/// The shell's line editor, on a terminal in raw mode: the keys of readline
/// and libedit's Emacs mode that sqlite3 users type, and a history kept in a
/// file across sessions.
///
/// Keys: Left, Right, Home, End, Ctrl-A/E/B/F, Alt-B/F and Ctrl-Left/Right
/// (by word), Backspace, Delete, Ctrl-D (delete, or end on an empty line),
/// Ctrl-K/U (cut to the end, to the start), Ctrl-W (cut a word), Ctrl-T
/// (swap), Up and Down or Ctrl-P/N (history), Ctrl-L (clear the screen),
/// Ctrl-C (drop the line). A line longer than the terminal scrolls
/// sideways.
final class LineEditor {
    /// The lines entered, oldest first.
    private(set) var history: [String] = []
    private let historyURL: URL?
    private let historyLimit = 1_000

    /// Loads the history from `historyURL`, which need not exist yet.
    init(historyURL: URL?) {
        self.historyURL = historyURL
        guard let historyURL, let text = try? String(contentsOf: historyURL, encoding: .utf8) else { return }
        history = text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init).suffix(historyLimit)
        // Keep the file from growing without end.
        if text.utf8.count > 256 * 1024 {
            try? (history.joined(separator: "\n") + "\n").write(to: historyURL, atomically: true, encoding: .utf8)
        }
    }

    /// Adds a line to the history and appends it to the history file; an
    /// empty line, or the same line again, is not added.
    func remember(_ line: String) {
        guard !line.trimmingCharacters(in: .whitespaces).isEmpty, line != history.last, !line.contains("\n") else { return }
        history.append(line)
        if history.count > historyLimit { history.removeFirst(history.count - historyLimit) }
        guard let historyURL else { return }
        let data = Data((line + "\n").utf8)
        if let file = try? FileHandle(forWritingTo: historyURL) {
            defer { try? file.close() }
            _ = try? file.seekToEnd()
            try? file.write(contentsOf: data)
        } else {
            try? data.write(to: historyURL)
        }
    }

    /// Shows `prompt` and edits a line until Enter, Ctrl-C or Ctrl-D.
    func readLine(prompt: String) -> LineInput {
        Terminal.withRawMode {
            var state = EditState(prompt: prompt, entries: history + [""])
            state.refresh()
            return edit(&state)
        }
    }

    private func edit(_ state: inout EditState) -> LineInput {
        while let byte = Terminal.readByte() {
            switch byte {
            case 13, 10:  // Enter
                state.cursor = state.buffer.count
                state.refresh()
                Terminal.write("\n")
                return .line(String(state.buffer))
            case 3:  // Ctrl-C
                state.cursor = state.buffer.count
                state.refresh()
                Terminal.write("^C\n")
                return .interrupt
            case 4:  // Ctrl-D
                if state.buffer.isEmpty {
                    Terminal.write("\n")
                    return .endOfInput
                }
                state.deleteForward()
            case 127, 8: state.deleteBackward()
            case 1: state.cursor = 0
            case 5: state.cursor = state.buffer.count
            case 2: state.cursor = max(0, state.cursor - 1)
            case 6: state.cursor = min(state.buffer.count, state.cursor + 1)
            case 11: state.buffer.removeSubrange(state.cursor...)
            case 21:
                state.buffer.removeSubrange(..<state.cursor)
                state.cursor = 0
            case 23: state.deleteWordBackward()
            case 20: state.transpose()
            case 16: state.moveInHistory(by: -1)
            case 14: state.moveInHistory(by: 1)
            case 12: Terminal.write("\u{1B}[H\u{1B}[2J")
            case 27: readEscapeSequence(&state)
            case 9: state.insert("\t")
            case 0..<32: continue  // other control keys do nothing
            default:
                guard let character = readCharacter(startingWith: byte) else { continue }
                state.insert(character)
            }
            state.refresh()
        }
        return .endOfInput
    }

    /// The rest of a UTF-8 character whose first byte is `first`.
    private func readCharacter(startingWith first: UInt8) -> Character? {
        let length = first >= 0xF0 ? 4 : first >= 0xE0 ? 3 : first >= 0xC0 ? 2 : 1
        var bytes = [first]
        while bytes.count < length, let next = Terminal.readByte() { bytes.append(next) }
        return String(bytes: bytes, encoding: .utf8)?.first
    }

    /// The keys that send escape sequences: arrows, Home, End, Delete, and
    /// Alt with a letter.
    private func readEscapeSequence(_ state: inout EditState) {
        guard let first = Terminal.readByte() else { return }
        switch first {
        case UInt8(ascii: "b"): state.moveWord(by: -1)
        case UInt8(ascii: "f"): state.moveWord(by: 1)
        case UInt8(ascii: "["), UInt8(ascii: "O"):
            // Parameters (digits and ";"), then a final byte.
            var parameters = ""
            var final: UInt8 = 0
            while let byte = Terminal.readByte() {
                if (48...57).contains(byte) || byte == 59 {
                    parameters.append(Character(UnicodeScalar(byte)))
                } else {
                    final = byte
                    break
                }
            }
            let byWord = parameters.hasSuffix(";5") || parameters.hasSuffix(";3")
            switch (final, parameters) {
            case (UInt8(ascii: "A"), _): state.moveInHistory(by: -1)
            case (UInt8(ascii: "B"), _): state.moveInHistory(by: 1)
            case (UInt8(ascii: "C"), _):
                if byWord { state.moveWord(by: 1) } else { state.cursor = min(state.buffer.count, state.cursor + 1) }
            case (UInt8(ascii: "D"), _):
                if byWord { state.moveWord(by: -1) } else { state.cursor = max(0, state.cursor - 1) }
            case (UInt8(ascii: "H"), _), (UInt8(ascii: "~"), "1"), (UInt8(ascii: "~"), "7"): state.cursor = 0
            case (UInt8(ascii: "F"), _), (UInt8(ascii: "~"), "4"), (UInt8(ascii: "~"), "8"): state.cursor = state.buffer.count
            case (UInt8(ascii: "~"), "3"): state.deleteForward()
            default: break
            }
        default: break
        }
    }
}

/// The line being edited, and where the cursor is in it.
private struct EditState {
    let prompt: String
    var buffer: [Character] = []
    var cursor = 0
    /// The history and, last, the new line; edits to a recalled line are
    /// kept while moving through the history.
    var entries: [String]
    var entryIndex: Int

    init(prompt: String, entries: [String]) {
        self.prompt = prompt
        self.entries = entries
        self.entryIndex = entries.count - 1
    }

    mutating func insert(_ character: Character) {
        buffer.insert(character, at: cursor)
        cursor += 1
    }

    mutating func deleteBackward() {
        guard cursor > 0 else { return }
        cursor -= 1
        buffer.remove(at: cursor)
    }

    mutating func deleteForward() {
        guard cursor < buffer.count else { return }
        buffer.remove(at: cursor)
    }

    mutating func deleteWordBackward() {
        let start = wordBoundary(from: cursor, by: -1)
        buffer.removeSubrange(start..<cursor)
        cursor = start
    }

    mutating func transpose() {
        guard cursor > 0, buffer.count > 1 else { return }
        let at = cursor == buffer.count ? cursor - 1 : cursor
        buffer.swapAt(at - 1, at)
        cursor = min(buffer.count, at + 1)
    }

    mutating func moveWord(by direction: Int) {
        cursor = wordBoundary(from: cursor, by: direction)
    }

    /// The start of the word before `position` (direction -1), or the end of
    /// the word after it (+1); a word is letters, digits and underscores.
    private func wordBoundary(from position: Int, by direction: Int) -> Int {
        func isWord(_ character: Character) -> Bool { character.isLetter || character.isNumber || character == "_" }
        var index = position
        if direction < 0 {
            while index > 0, !isWord(buffer[index - 1]) { index -= 1 }
            while index > 0, isWord(buffer[index - 1]) { index -= 1 }
        } else {
            while index < buffer.count, !isWord(buffer[index]) { index += 1 }
            while index < buffer.count, isWord(buffer[index]) { index += 1 }
        }
        return index
    }

    mutating func moveInHistory(by step: Int) {
        let target = entryIndex + step
        guard entries.indices.contains(target) else { return }
        entries[entryIndex] = String(buffer)
        entryIndex = target
        buffer = Array(entries[target])
        cursor = buffer.count
    }

    /// Draws the prompt and the line again, scrolled sideways so that the
    /// cursor is on screen, and puts the terminal's cursor at it.
    func refresh() {
        let columns = Terminal.columns
        let promptWidth = prompt.count
        let room = max(1, columns - promptWidth - 1)
        let start = max(0, cursor - room)
        let end = min(buffer.count, start + room)
        // Tabs and other controls take one column, shown as a space.
        let visible = String(buffer[start..<end].map { $0.isASCII && $0.asciiValue! < 32 ? " " : $0 })
        var text = "\r" + prompt + visible + "\u{1B}[0K\r"
        let column = promptWidth + cursor - start
        if column > 0 { text += "\u{1B}[\(column)C" }
        Terminal.write(text)
    }
}
