import Foundation

/// New revision ids as CouchDB 3 makes them (`couch_db:new_revid`): the MD5
/// of the Erlang external term format (`term_to_binary`, minor version 1)
/// of `[Deleted, OldStart, OldRev, Body, Atts]`, where Body is the document
/// as jiffy decodes its JSON and Atts the attachments' `{Name, Type, MD5}`
/// in the reverse of the document's order. The same edit made here and on a
/// CouchDB gets the same id, so replicas converge instead of conflicting.
///
/// Revisions written by earlier versions keep their ids: an id is only
/// ever computed for a new revision.
enum RevisionID {
    /// The id of a new revision on `parent` (nil for a document's first).
    static func make(deleted: Bool, parent: Revision?, body: JSONObject, attachments: [(name: String, contentType: String, digest: String)]) -> String {
        var term = ErlangTerm()
        term.bytes.reserveCapacity(256)
        term.bytes.append(131)
        term.listHeader(5)
        term.atom(deleted ? "true" : "false")
        term.integer(parent?.depth ?? 0)
        if let parent {
            term.binary(revisionBytes(parent.hash))
        } else {
            term.integer(0)
        }
        term.object(body)
        if attachments.isEmpty {
            term.nil()
        } else {
            term.listHeader(attachments.count)
            for attachment in attachments.reversed() {
                term.tupleHeader(3)
                term.binary(Array(attachment.name.utf8))
                term.binary(Array(attachment.contentType.utf8))
                term.binary(digestBytes(attachment.digest))
            }
            term.nil()
        }
        term.nil()
        return MD5.hex(term.bytes)
    }

    /// A revision id as CouchDB parses it (`couch_doc:parse_revid`): 32 hex
    /// digits are their 16 bytes, anything else its text.
    static func revisionBytes(_ hash: String) -> [UInt8] {
        let utf8 = Array(hash.utf8)
        guard utf8.count == 32 else { return utf8 }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        var index = 0
        while index < 32 {
            guard let high = hexValue(utf8[index]), let low = hexValue(utf8[index + 1]) else { return utf8 }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// The MD5 an attachment's digest (`md5-` and base64) names.
    static func digestBytes(_ digest: String) -> [UInt8] {
        guard digest.hasPrefix("md5-"), let data = Data(base64Encoded: String(digest.dropFirst(4))) else { return Array(digest.utf8) }
        return Array(data)
    }
}

/// The Erlang external term format, for the terms a revision id is made of.
struct ErlangTerm {
    var bytes: [UInt8] = []

    mutating func atom(_ name: String) {
        // ATOM_EXT: what term_to_binary wrote for atoms before OTP 26, and
        // writes with minor_version 1.
        let count = name.utf8.count
        bytes.append(100)
        bytes.append(UInt8(count >> 8))
        bytes.append(UInt8(count & 0xFF))
        bytes.append(contentsOf: name.utf8)
    }

    mutating func integer(_ value: Int) {
        if (0...255).contains(value) {
            bytes.append(97)
            bytes.append(UInt8(value))
        } else if (Int(Int32.min)...Int(Int32.max)).contains(value) {
            bytes.append(98)
            append32(UInt32(bitPattern: Int32(value)))
        } else {
            var magnitude = value.magnitude
            var digits: [UInt8] = []
            while magnitude > 0 {
                digits.append(UInt8(magnitude & 0xFF))
                magnitude >>= 8
            }
            bigInteger(negative: value < 0, littleEndian: digits)
        }
    }

    mutating func bigInteger(negative: Bool, littleEndian digits: [UInt8]) {
        if digits.count <= 255 {
            bytes += [110, UInt8(digits.count), negative ? 1 : 0]
        } else {
            bytes.append(111)
            append32(UInt32(digits.count))
            bytes.append(negative ? 1 : 0)
        }
        bytes += digits
    }

    mutating func float(_ value: Double) {
        bytes.append(70)
        let bits = value.bitPattern
        for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
    }

    mutating func binary(_ data: [UInt8]) {
        bytes.append(109)
        append32(UInt32(data.count))
        bytes += data
    }

    /// A string's UTF-8 as a binary, without copying it into an array first.
    mutating func binary(_ text: String) {
        bytes.append(109)
        append32(UInt32(text.utf8.count))
        bytes.append(contentsOf: text.utf8)
    }

    mutating func listHeader(_ count: Int) {
        bytes.append(108)
        append32(UInt32(count))
    }

    mutating func tupleHeader(_ arity: Int) {
        bytes.append(104)
        bytes.append(UInt8(arity))
    }

    /// The empty list (and a proper list's tail).
    mutating func `nil`() { bytes.append(106) }

    private mutating func append32(_ value: UInt32) {
        bytes.append(UInt8(value >> 24))
        bytes.append(UInt8(value >> 16 & 0xFF))
        bytes.append(UInt8(value >> 8 & 0xFF))
        bytes.append(UInt8(value & 0xFF))
    }

    /// A JSON value as jiffy decodes it: objects `{[{Key, Value}]}`, arrays
    /// lists, strings binaries, `true`/`false`/`null` atoms, numbers with a
    /// fraction or an exponent floats, the others integers (of any size).
    mutating func json(_ value: JSON) {
        switch value {
        case .null: atom("null")
        case .bool(let b): atom(b ? "true" : "false")
        case .string(let s): binary(s)
        case .number(let text): number(text)
        case .array(let items):
            if items.isEmpty {
                self.nil()
            } else {
                listHeader(items.count)
                for item in items { json(item) }
                self.nil()
            }
        case .object(let object): self.object(object)
        }
    }

    mutating func object(_ object: JSONObject) {
        tupleHeader(1)
        if object.count == 0 {
            self.nil()
            return
        }
        listHeader(object.count)
        for (key, value) in object {
            tupleHeader(2)
            binary(key)
            json(value)
        }
        self.nil()
    }

    private mutating func number(_ text: String) {
        if text.utf8.contains(where: { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }) {
            float(Double(text) ?? 0)
            return
        }
        if let value = Int(text) {
            integer(value)
            return
        }
        // An integer past 64 bits: its magnitude in base 256.
        var decimal = Array(text.utf8.drop { $0 == UInt8(ascii: "-") }).map { Int($0) - 48 }
        var digits: [UInt8] = []
        while !(decimal.isEmpty || decimal.allSatisfy { $0 == 0 }) {
            var remainder = 0
            var quotient: [Int] = []
            for d in decimal {
                let current = remainder * 10 + d
                quotient.append(current / 256)
                remainder = current % 256
            }
            digits.append(UInt8(remainder))
            decimal = Array(quotient.drop { $0 == 0 })
        }
        bigInteger(negative: text.hasPrefix("-"), littleEndian: digits)
    }
}
