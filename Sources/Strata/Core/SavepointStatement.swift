/// A SAVEPOINT, RELEASE or ROLLBACK TO statement, read from its SQL.
///
/// See <https://www.sqlite.org/lang_savepoint.html>.
struct SavepointStatement: Equatable {
    enum Kind: Equatable {
        /// `SAVEPOINT name`
        case begin
        /// `RELEASE [SAVEPOINT] name`
        case release
        /// `ROLLBACK [TRANSACTION] TO [SAVEPOINT] name`
        case rollbackTo
    }

    var kind: Kind
    /// The savepoint's name, unquoted. SQLite compares names without case.
    var name: String

    /// Reads the statement; nil for any other statement (a whole ROLLBACK
    /// included: the rollback hook reports it).
    init?(sql: String) {
        var tokens = SQLTokens(Array(sql.utf8))
        guard let first = tokens.next()?.uppercased() else { return nil }
        switch first {
        case "SAVEPOINT":
            kind = .begin
        case "RELEASE":
            kind = .release
            if tokens.peek()?.uppercased() == "SAVEPOINT" { _ = tokens.next() }
        case "ROLLBACK":
            kind = .rollbackTo
            if tokens.peek()?.uppercased() == "TRANSACTION" { _ = tokens.next() }
            guard tokens.next()?.uppercased() == "TO" else { return nil }
            if tokens.peek()?.uppercased() == "SAVEPOINT" { _ = tokens.next() }
        default:
            return nil
        }
        guard let name = tokens.next() else { return nil }
        self.name = name
    }
}

/// Words and quoted identifiers of SQL text, comments and spaces skipped.
private struct SQLTokens {
    let bytes: [UInt8]
    var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    mutating func peek() -> String? {
        let saved = index
        defer { index = saved }
        return next()
    }

    mutating func next() -> String? {
        skipSpaceAndComments()
        guard index < bytes.count else { return nil }
        let byte = bytes[index]
        let closing: UInt8? = switch byte {
        case UInt8(ascii: "\""): UInt8(ascii: "\"")
        case UInt8(ascii: "'"): UInt8(ascii: "'")
        case UInt8(ascii: "`"): UInt8(ascii: "`")
        case UInt8(ascii: "["): UInt8(ascii: "]")
        default: nil
        }
        if let closing {
            var text: [UInt8] = []
            index += 1
            while index < bytes.count {
                if bytes[index] == closing {
                    // A doubled quote stands for one (not inside brackets).
                    if closing != UInt8(ascii: "]"), index + 1 < bytes.count, bytes[index + 1] == closing {
                        text.append(closing)
                        index += 2
                        continue
                    }
                    index += 1
                    return String(decoding: text, as: UTF8.self)
                }
                text.append(bytes[index])
                index += 1
            }
            return nil
        }
        let start = index
        while index < bytes.count, isWordByte(bytes[index]) { index += 1 }
        guard index > start else { return nil }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    private func isWordByte(_ byte: UInt8) -> Bool {
        byte >= 0x80 || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "$")
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
            || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "z"))
    }

    private mutating func skipSpaceAndComments() {
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 32 || (byte >= 9 && byte <= 13) {
                index += 1
            } else if byte == UInt8(ascii: "-"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "-") {
                while index < bytes.count, bytes[index] != 10 { index += 1 }
            } else if byte == UInt8(ascii: "/"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "*") {
                index += 2
                while index + 1 < bytes.count, !(bytes[index] == UInt8(ascii: "*") && bytes[index + 1] == UInt8(ascii: "/")) {
                    index += 1
                }
                index = min(index + 2, bytes.count)
            } else {
                return
            }
        }
    }
}
