import Foundation

/// A column's type affinity, from its declared type by SQLite's rules
/// (<https://www.sqlite.org/datatype3.html#determination_of_column_affinity>).
enum ColumnAffinity {
    case integer, text, blob, real, numeric

    init(declaredType: String) {
        // SQLite compares bytes, ASCII case folded: a Character-level search
        // would miss `INT` followed by a combining mark.
        let type = Array(declaredType.utf8.map { $0 >= 97 && $0 <= 122 ? $0 - 32 : $0 })
        func contains(_ word: String) -> Bool {
            let word = Array(word.utf8)
            return type.count >= word.count && (0...(type.count - word.count)).contains { start in
                type[start..<(start + word.count)].elementsEqual(word)
            }
        }
        if contains("INT") {
            self = .integer
        } else if contains("CHAR") || contains("CLOB") || contains("TEXT") {
            self = .text
        } else if contains("BLOB") || type.isEmpty {
            self = .blob
        } else if contains("REAL") || contains("FLOA") || contains("DOUB") {
            self = .real
        } else {
            self = .numeric
        }
    }

    /// Whether SQLite turns number-like text into a number in the column.
    var convertsText: Bool { self == .integer || self == .real || self == .numeric }
}

/// Text that SQLite's numeric affinity would turn into a number: optional
/// spaces, a sign, digits with an optional point, an optional exponent.
struct NumericText {
    /// Whether it is written as an integer (no point, no exponent).
    var isIntegerForm: Bool
    /// Its value when written as an integer that fits an Int64.
    var integer: Int64?
    /// Significant digits (leading and trailing zeros dropped) and the
    /// decimal exponent of the first one: `0.0125` is `125` and -2.
    var digits: [UInt8]
    var exponent: Int
    var isNegative: Bool

    /// Reads text; nil when SQLite would keep it as text.
    init?(_ text: UnsafeBufferPointer<UInt8>) {
        var index = 0
        var end = text.count
        func isSpace(_ byte: UInt8) -> Bool { byte == 32 || (byte >= 9 && byte <= 13) }
        while index < end, isSpace(text[index]) { index += 1 }
        while end > index, isSpace(text[end - 1]) { end -= 1 }
        isNegative = false
        if index < end, text[index] == UInt8(ascii: "-") || text[index] == UInt8(ascii: "+") {
            isNegative = text[index] == UInt8(ascii: "-")
            index += 1
        }
        var all: [UInt8] = []
        var pointPosition: Int?
        var sawDigit = false
        while index < end {
            let byte = text[index]
            if byte >= 48 && byte <= 57 {
                all.append(byte)
                sawDigit = true
            } else if byte == UInt8(ascii: "."), pointPosition == nil {
                pointPosition = all.count
            } else {
                break
            }
            index += 1
        }
        guard sawDigit else { return nil }
        var writtenExponent = 0
        var hasExponent = false
        if index < end, text[index] == UInt8(ascii: "e") || text[index] == UInt8(ascii: "E") {
            index += 1
            var negativeExponent = false
            if index < end, text[index] == UInt8(ascii: "-") || text[index] == UInt8(ascii: "+") {
                negativeExponent = text[index] == UInt8(ascii: "-")
                index += 1
            }
            var exponentDigits = 0
            while index < end, text[index] >= 48, text[index] <= 57 {
                if writtenExponent < 100_000 { writtenExponent = writtenExponent * 10 + Int(text[index] - 48) }
                exponentDigits += 1
                index += 1
            }
            guard exponentDigits > 0 else { return nil }
            if negativeExponent { writtenExponent = -writtenExponent }
            hasExponent = true
        }
        guard index == end else { return nil }
        isIntegerForm = pointPosition == nil && !hasExponent
        let integerDigitCount = pointPosition ?? all.count
        var first = 0
        while first < all.count, all[first] == 48 { first += 1 }
        var last = all.count
        while last > first, all[last - 1] == 48 { last -= 1 }
        digits = Array(all[first..<last])
        exponent = digits.isEmpty ? 0 : integerDigitCount - first - 1 + writtenExponent
        integer = nil
        if isIntegerForm {
            var value: Int64 = 0
            var overflow = false
            for digit in all {
                let (times10, o1) = value.multipliedReportingOverflow(by: 10)
                let (sum, o2) = times10.addingReportingOverflow(Int64(digit - 48))
                if o1 || o2 { overflow = true; break }
                value = sum
            }
            if !overflow {
                integer = isNegative ? -value : value
            } else if isNegative, digits == Array("9223372036854775808".utf8) {
                integer = Int64.min
            }
        }
    }

    /// The number as a Double, when the Double keeps every digit written:
    /// printed back (shortest form), it is the same decimal number. Fifteen
    /// significant digits always survive; longer numbers are checked.
    var exactDouble: Double? {
        let text = (isNegative ? "-" : "") + (digits.isEmpty ? "0" : "0." + String(decoding: digits, as: UTF8.self) + "e\(exponent + 1)")
        guard let value = Double(text), value.isFinite else { return nil }
        if digits.isEmpty { return value }
        if digits.count <= 15 && exponent > -300 && exponent < 300 { return value }
        guard let back = NumericText(value) else { return nil }
        return back.digits == digits && back.exponent == exponent ? value : nil
    }

    private init?(_ value: Double) {
        var text = Array(String(value).utf8)
        let parsed = text.withUnsafeMutableBufferPointer { NumericText(UnsafeBufferPointer($0)) }
        guard let parsed else { return nil }
        self = parsed
    }

    /// Whether the number survives a column of this affinity unchanged, and
    /// what it would become otherwise (for the error).
    func storedExactly(in affinity: ColumnAffinity) -> (isExact: Bool, storedAs: String) {
        if let integer {
            // REAL affinity makes every integer a double.
            if affinity == .real, Int64(exactly: Double(integer)) != integer {
                return (false, "the REAL \(Double(integer))")
            }
            return (true, "")
        }
        if exactDouble != nil { return (true, "") }
        let text = (isNegative ? "-" : "") + "0." + String(decoding: digits, as: UTF8.self) + "e\(exponent + 1)"
        let rounded = Double(text) ?? .nan
        return (false, "the REAL \(rounded)")
    }
}
