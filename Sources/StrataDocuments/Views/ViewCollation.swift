import Foundation
import Strata

/// CouchDB's view collation as bytes: ``JSON/viewSortKey`` turns a key into
/// a byte string whose plain byte order (`memcmp`, SQLite's `BINARY`) is
/// CouchDB's order of view keys, so a view index is an ordinary SQLite index
/// and a key range is a `BETWEEN` on it.
///
/// The order: `null` < `false` < `true` < numbers < strings < arrays <
/// objects; numbers by value (`3.0` equals `3`); arrays element by element,
/// a prefix first; objects member by member (key, then value), a subset
/// first. Strings follow the Unicode Collation Algorithm as ICU applies it
/// with its root locale, which is what CouchDB uses:
///
/// - Whitespace, then punctuation and symbols (in ICU's order for ASCII:
///   `` ` ^ _ - , ; : ! ? . ' " ( ) [ ] { } @ * / \ & # % + < = > | ~ $ ``),
///   then digits, then letters.
/// - Letters compare without regard to case or accents first (`a` < `aa`,
///   `A` < `aa`, `é` < `f`), then by accents, then by case, lowercase first
///   (`a` < `A`, `e` < `é`).
///
/// Beyond Latin letters this is an approximation of ICU's tables: other
/// letters compare by their lowercase code point.
extension JSON {
    /// The byte string that sorts as this value sorts in a CouchDB view.
    public var viewSortKey: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(16)
        ViewCollation.append(self, to: &out)
        return out
    }

    /// CouchDB's view collation of two keys: negative, zero or positive.
    /// The order of their ``viewSortKey``s, reached without building them
    /// for the common case (text in ASCII).
    public static func viewCollate(_ a: JSON, _ b: JSON) -> Int {
        let ra = a.collationRank, rb = b.collationRank
        if ra != rb { return ra < rb ? -1 : 1 }
        switch (a, b) {
        case (.bool, .bool), (.null, .null):
            return 0
        case (.number(let x), .number(let y)):
            let dx = Double(x) ?? 0, dy = Double(y) ?? 0
            return dx < dy ? -1 : (dx > dy ? 1 : 0)
        case (.string(let x), .string(let y)):
            return Int(ViewCollation.compare(x, y))
        case (.array(let x), .array(let y)):
            for (ex, ey) in zip(x, y) {
                let c = viewCollate(ex, ey)
                if c != 0 { return c }
            }
            return x.count == y.count ? 0 : (x.count < y.count ? -1 : 1)
        case (.object(let x), .object(let y)):
            for (px, py) in zip(x.pairs, y.pairs) {
                let k = ViewCollation.compare(px.key, py.key)
                if k != 0 { return Int(k) }
                let v = viewCollate(px.value, py.value)
                if v != 0 { return v }
            }
            return x.count == y.count ? 0 : (x.count < y.count ? -1 : 1)
        default:
            return 0
        }
    }
}

extension DatabaseCollation {
    /// CouchDB's collation of strings (``JSON/viewCollate(_:_:)`` on two
    /// strings), as SQLite's `COLLATE couch`: what Mango's indexes and
    /// queries compare and sort text with. StrataDocuments registers it for
    /// every connection (`DatabaseCollation.registerForEveryConnection(_:)`)
    /// when it opens a document database.
    public static let couch = DatabaseCollation("couch") { a, b in ViewCollation.compareUTF8(a, b) }
}

enum ViewCollation {
    /// Two strings in CouchDB's order: negative, zero or positive.
    static func compare(_ a: String, _ b: String) -> Int32 {
        var a = a, b = b
        return a.withUTF8 { x in b.withUTF8 { y in compareUTF8(UnsafeRawBufferPointer(x), UnsafeRawBufferPointer(y)) } }
    }

    /// Two strings' UTF-8 bytes in CouchDB's order, as their sort keys
    /// order them. Text in ASCII is compared in place, level by level
    /// (characters, then case); other text through its sort key.
    static func compareUTF8(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Int32 {
        guard a.allSatisfy({ $0 < 0x80 }), b.allSatisfy({ $0 < 0x80 }) else {
            var x: [UInt8] = [], y: [UInt8] = []
            appendString(String(decoding: a, as: UTF8.self), to: &x)
            appendString(String(decoding: b, as: UTF8.self), to: &y)
            return x == y ? 0 : (x.lexicographicallyPrecedes(y) ? -1 : 1)
        }
        // The primary level: the characters' weights, ignorable ones
        // skipped; a string that runs out first sorts first.
        var i = 0, j = 0
        var caseOrder: Int32 = 0
        while true {
            while i < a.count, asciiWeight(a[i]) == nil { i += 1 }
            while j < b.count, asciiWeight(b[j]) == nil { j += 1 }
            guard i < a.count else { return j < b.count ? -1 : caseOrder }
            guard j < b.count else { return 1 }
            let (wa, upperA) = asciiWeight(a[i])!
            let (wb, upperB) = asciiWeight(b[j])!
            if wa != wb { return wa < wb ? -1 : 1 }
            // The tertiary level decides only when the whole primary level
            // is equal (the secondary level of ASCII always is): the first
            // difference in case, lowercase first.
            if caseOrder == 0, upperA != upperB { caseOrder = upperA ? 1 : -1 }
            i += 1
            j += 1
        }
    }

    static func append(_ value: JSON, to out: inout [UInt8]) {
        switch value {
        case .null: out.append(0x01)
        case .bool(let b): out.append(b ? 0x03 : 0x02)
        case .number(let text):
            out.append(0x04)
            appendNumber(Double(text) ?? 0, to: &out)
        case .string(let s):
            out.append(0x05)
            appendString(s, to: &out)
        case .array(let elements):
            out.append(0x06)
            for e in elements { append(e, to: &out) }
            out.append(0x00)
        case .object(let object):
            out.append(0x07)
            for (key, member) in object {
                out.append(0x01)
                appendString(key, to: &out)
                append(member, to: &out)
            }
            out.append(0x00)
        }
    }

    /// Eight bytes, big-endian, ordered as the doubles are.
    static func appendNumber(_ d: Double, to out: inout [UInt8]) {
        let value = d == 0 ? 0 : d // -0 sorts as 0
        var bits = value.bitPattern
        bits = (bits & (1 << 63)) != 0 ? ~bits : bits | (1 << 63)
        for shift in stride(from: 56, through: 0, by: -8) {
            out.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift)))
        }
    }

    /// ICU's order of the ASCII whitespace, punctuation and symbols.
    static let asciiPunctuation: [UInt8: UInt32] = {
        var table: [UInt8: UInt32] = [:]
        for (i, c) in "\t\n\u{0B}\u{0C}\r `^_-,;:!?.'\"()[]{}@*/\\&#%+<=>|~$".utf8.enumerated() {
            table[c] = UInt32(i + 1)
        }
        return table
    }()

    /// A string's three levels: primary weights (what the characters are),
    /// secondary (accents), tertiary (case), each level ended by a zero byte
    /// so that a shorter string sorts before its extensions.
    static func appendString(_ s: String, to out: inout [UInt8]) {
        var primary: [UInt32] = []
        var secondary: [UInt32] = []
        var tertiary: [UInt8] = []
        primary.reserveCapacity(s.utf8.count)
        let ascii = s.utf8.allSatisfy { $0 < 0x80 }
        if ascii {
            for c in s.utf8 {
                guard let (w, upper) = asciiWeight(c) else { continue }
                primary.append(w)
                secondary.append(0x0100_0000)
                tertiary.append(upper ? 2 : 1)
            }
        } else {
            for scalar in s.decomposedStringWithCanonicalMapping.unicodeScalars {
                let properties = scalar.properties
                if properties.generalCategory == .nonspacingMark || properties.generalCategory == .enclosingMark || properties.generalCategory == .spacingMark {
                    // An accent: the secondary weight of the base before it.
                    if !secondary.isEmpty {
                        secondary[secondary.count - 1] = secondary[secondary.count - 1] &+ scalar.value
                    }
                    continue
                }
                if scalar.value < 0x80 {
                    guard let (w, upper) = asciiWeight(UInt8(scalar.value)) else { continue }
                    primary.append(w)
                    secondary.append(0x0100_0000)
                    tertiary.append(upper ? 2 : 1)
                    continue
                }
                if properties.generalCategory == .control || properties.generalCategory == .format {
                    continue // ignorable, as in ICU
                }
                let lower = properties.lowercaseMapping.unicodeScalars
                let base = lower.count == 1 ? lower.first!.value : scalar.value
                let weight: UInt32
                if properties.isAlphabetic || properties.numericType != nil {
                    weight = 0x0600_0000 | base
                } else if properties.isWhitespace {
                    weight = 0x0200_0000 | 6 // as a space
                } else {
                    weight = 0x0300_0000 | base
                }
                primary.append(weight)
                secondary.append(0x0100_0000)
                tertiary.append(properties.isUppercase || properties.generalCategory == .titlecaseLetter ? 2 : 1)
            }
        }
        for w in primary { appendWeight(w, to: &out) }
        out.append(0x00)
        for w in secondary { appendWeight(w, to: &out) }
        out.append(0x00)
        out.append(contentsOf: tertiary)
        out.append(0x00)
    }

    /// The primary weight of an ASCII character and whether it is an
    /// uppercase letter; nil for the control characters ICU ignores.
    @inline(__always)
    static func asciiWeight(_ c: UInt8) -> (UInt32, Bool)? {
        switch c {
        case 0x61...0x7A: return (0x0500_0000 | UInt32(c), false)
        case 0x41...0x5A: return (0x0500_0000 | UInt32(c + 0x20), true)
        case 0x30...0x39: return (0x0400_0000 | UInt32(c), false)
        default:
            if let p = asciiPunctuation[c] { return (0x0200_0000 | p, false) }
            return nil
        }
    }

    @inline(__always)
    static func appendWeight(_ w: UInt32, to out: inout [UInt8]) {
        out.append(UInt8(truncatingIfNeeded: w >> 24))
        out.append(UInt8(truncatingIfNeeded: w >> 16))
        out.append(UInt8(truncatingIfNeeded: w >> 8))
        out.append(UInt8(truncatingIfNeeded: w))
    }
}

extension JSON {
    /// The rank of the value's type in CouchDB's collation:
    /// null < false < true < numbers < strings < arrays < objects.
    var collationRank: Int {
        switch self {
        case .null: return 0
        case .bool(let b): return b ? 2 : 1
        case .number: return 3
        case .string: return 4
        case .array: return 5
        case .object: return 6
        }
    }

    /// Orders two values as CouchDB's view collation does: the same order
    /// as ``viewCollate(_:_:)`` (strings as ICU's root collation orders
    /// them, not by code point).
    public static func collate(_ a: JSON, _ b: JSON) -> Int {
        viewCollate(a, b)
    }
}

// JSON values written as Swift literals: `["_id": "q1", "votes": [], "open": true, "count": 3]`.
