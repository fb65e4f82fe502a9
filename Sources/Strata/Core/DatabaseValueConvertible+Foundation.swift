import Foundation
import StrataSQLite

// MARK: - Date

/// Dates are stored as UTC TEXT, `YYYY-MM-DD HH:MM:SS.SSS`, with millisecond
/// precision.
///
/// That is one of the formats SQLite's date and time functions read, so
/// `date(?)`, `datetime(?, '+1 day')` and `strftime('%Y', ?)` work on stored
/// dates, text comparison orders them chronologically, and the sqlite3 shell
/// shows them readably.
///
/// Reading accepts the time-value formats of SQLite's date functions:
/// `YYYY-MM-DD`, `YYYY-MM-DD HH:MM`, `YYYY-MM-DD HH:MM:SS`, with optional
/// fractional seconds, a `T` instead of the space, and a `Z` or `±HH:MM`
/// suffix; and an INTEGER or REAL number of seconds since 1970 (what
/// `unixepoch()` returns).
///
/// See <https://www.sqlite.org/lang_datefunc.html>.
extension Date: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { .text(DatabaseDateFormat.string(from: self)) }

    public static func fromDatabaseValue(_ value: DatabaseValue) -> Date? {
        switch value {
        case .text(let string):
            return DatabaseDateFormat.date(from: string)
        case .integer(let seconds):
            return Date(timeIntervalSince1970: TimeInterval(seconds))
        case .real(let seconds):
            return Date(timeIntervalSince1970: seconds)
        default:
            return nil
        }
    }

    public func bind(to sqliteStatement: OpaquePointer, at index: Int32) throws {
        try bindText(DatabaseDateFormat.string(from: self), to: sqliteStatement, at: index)
    }

    public static func decode(from sqliteStatement: OpaquePointer, at index: Int32) -> Date? {
        switch sqlite3_column_type(sqliteStatement, index) {
        case SQLITE_TEXT:
            guard let bytes = sqlite3_column_text(sqliteStatement, index) else { return nil }
            let count = Int(sqlite3_column_bytes(sqliteStatement, index))
            return DatabaseDateFormat.date(fromUTF8: UnsafeBufferPointer(start: bytes, count: count))
        case SQLITE_INTEGER:
            return Date(timeIntervalSince1970: TimeInterval(sqlite3_column_int64(sqliteStatement, index)))
        case SQLITE_FLOAT:
            return Date(timeIntervalSince1970: sqlite3_column_double(sqliteStatement, index))
        default:
            return nil
        }
    }
}

/// Strata's date text format, written and parsed by hand: no `DateFormatter`,
/// no locale, no time zone database.
enum DatabaseDateFormat {
    static func string(from date: Date) -> String {
        let milliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.toNearestOrEven))
        let millisecondsPerDay: Int64 = 86_400_000
        var days = milliseconds / millisecondsPerDay
        var remainder = milliseconds % millisecondsPerDay
        if remainder < 0 {
            days -= 1
            remainder += millisecondsPerDay
        }
        let (year, month, day) = civilDate(fromDaysSince1970: days)
        let hour = remainder / 3_600_000
        let minute = remainder / 60_000 % 60
        let second = remainder / 1000 % 60
        let millisecond = remainder % 1000
        var text = ""
        text.reserveCapacity(23)
        append(year, width: 4, to: &text)
        text.append("-")
        append(month, width: 2, to: &text)
        text.append("-")
        append(day, width: 2, to: &text)
        text.append(" ")
        append(hour, width: 2, to: &text)
        text.append(":")
        append(minute, width: 2, to: &text)
        text.append(":")
        append(second, width: 2, to: &text)
        text.append(".")
        append(millisecond, width: 3, to: &text)
        return text
    }

    static func date(from string: String) -> Date? {
        var string = string
        return string.withUTF8 { date(fromUTF8: $0) }
    }

    static func date(fromUTF8 bytes: UnsafeBufferPointer<UInt8>) -> Date? {
        var position = 0
        func number(_ digits: Int) -> Int64? {
            guard position + digits <= bytes.count else { return nil }
            var value: Int64 = 0
            for _ in 0..<digits {
                let byte = bytes[position]
                guard byte >= 48 && byte <= 57 else { return nil }
                value = value * 10 + Int64(byte - 48)
                position += 1
            }
            return value
        }
        func consume(_ byte: UInt8) -> Bool {
            guard position < bytes.count, bytes[position] == byte else { return false }
            position += 1
            return true
        }
        guard let year = number(4), consume(45), let month = number(2), consume(45), let day = number(2),
            (1...12).contains(month), day >= 1, day <= daysInMonth(year: year, month: month)
        else { return nil }
        var seconds = Double(daysSince1970(year: year, month: month, day: day)) * 86_400
        if position < bytes.count {
            guard consume(32) || consume(84) else { return nil }  // " " or "T"
            guard let hour = number(2), consume(58), let minute = number(2), hour < 24, minute < 60
            else { return nil }
            seconds += Double(hour * 3600 + minute * 60)
            if consume(58) {  // ":"
                guard let second = number(2), second < 60 else { return nil }
                seconds += Double(second)
                if consume(46) {  // "."
                    var fraction = 0.0
                    var scale = 0.1
                    var digitCount = 0
                    while position < bytes.count, bytes[position] >= 48, bytes[position] <= 57 {
                        fraction += Double(bytes[position] - 48) * scale
                        scale /= 10
                        digitCount += 1
                        position += 1
                    }
                    guard digitCount > 0 else { return nil }
                    seconds += fraction
                }
            }
            if consume(90) {  // "Z"
            } else if position < bytes.count {
                let sign: Double
                if consume(43) { sign = 1 } else if consume(45) { sign = -1 } else { return nil }
                guard let offsetHours = number(2), consume(58), let offsetMinutes = number(2),
                    offsetHours < 24, offsetMinutes < 60
                else { return nil }
                seconds -= sign * Double(offsetHours * 3600 + offsetMinutes * 60)
            }
        }
        guard position == bytes.count else { return nil }
        // Millisecond precision, as stored: avoids binary fractions such as
        // .123 becoming .12299999.
        return Date(timeIntervalSince1970: (seconds * 1000).rounded() / 1000)
    }

    private static func append(_ value: Int64, width: Int, to text: inout String) {
        let digits = String(value)
        if digits.count < width {
            text.append(String(repeating: "0", count: width - digits.count))
        }
        text.append(digits)
    }

    private static func isLeapYear(_ year: Int64) -> Bool {
        (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
    }

    private static func daysInMonth(year: Int64, month: Int64) -> Int64 {
        switch month {
        case 2: isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    // Howard Hinnant's days_from_civil and civil_from_days.
    private static func daysSince1970(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func civilDate(fromDaysSince1970 days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}

// MARK: - UUID

/// Stored as TEXT in the canonical upper-case form
/// (`E621E1F8-C36C-495A-93FC-0C247A3E6E5F`), readable in the sqlite3 shell and
/// by other programs. Reading also accepts lower case and a 16-byte BLOB.
extension UUID: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { .text(uuidString) }

    public static func fromDatabaseValue(_ value: DatabaseValue) -> UUID? {
        switch value {
        case .text(let string):
            return UUID(uuidString: string)
        case .blob(let data) where data.count == 16:
            return data.withUnsafeBytes { bytes in
                UUID(uuid: bytes.loadUnaligned(as: uuid_t.self))
            }
        default:
            return nil
        }
    }

    public func bind(to sqliteStatement: OpaquePointer, at index: Int32) throws {
        try bindText(uuidString, to: sqliteStatement, at: index)
    }
}

// MARK: - URL

/// Stored as TEXT, the URL's `absoluteString`.
extension URL: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { .text(absoluteString) }

    public static func fromDatabaseValue(_ value: DatabaseValue) -> URL? {
        guard case .text(let string) = value else { return nil }
        return URL(string: string)
    }
}

// MARK: - Decimal

/// Stored as TEXT (`"12.50"` stays `12.50`, where a REAL would round it).
/// Declare such a column `TEXT`: a column with NUMERIC affinity would turn the
/// text back into a REAL. Reading also accepts INTEGER and REAL.
extension Decimal: DatabaseValueConvertible {
    public var databaseValue: DatabaseValue { .text(description) }

    public static func fromDatabaseValue(_ value: DatabaseValue) -> Decimal? {
        switch value {
        case .integer(let int64):
            return Decimal(int64)
        case .real(let double):
            return Decimal(string: String(double), locale: Locale(identifier: "en_US_POSIX"))
        case .text(let string):
            // Decimal(string:) accepts a numeric prefix ("12abc" → 12): check
            // the whole text is a number first.
            guard !string.isEmpty,
                string.utf8.allSatisfy({ ($0 >= 48 && $0 <= 57) || $0 == 46 || $0 == 45 || $0 == 43 || $0 == 101 || $0 == 69 }),
                string.utf8.contains(where: { $0 >= 48 && $0 <= 57 })
            else { return nil }
            return Decimal(string: string, locale: Locale(identifier: "en_US_POSIX"))
        default:
            return nil
        }
    }
}
