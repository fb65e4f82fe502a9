import Foundation

// The pieces of SQL text every layer writes the same way.

/// Quotes an identifier for SQL: `movies` → `"movies"`, `a"b` → `"a""b"`.
/// Every layer that names a table or a column in SQL quotes it here.
///
/// See <https://www.sqlite.org/lang_keywords.html>.
public func quoteIdentifier(_ name: String) -> String {
    "\"" + doubling("\"", in: name) + "\""
}

/// Quotes text as an SQL string literal: `it's` → `'it''s'`. For SQL that
/// cannot take a bound value (a trigger's body, a partial index's `WHERE`);
/// everywhere else values are bound.
///
/// Each `'` is doubled as a Unicode scalar: a `'` followed by a combining
/// mark is one Character, which `replacingOccurrences(of: "'", …)` leaves
/// alone, and SQLite would end the literal there.
package func quoteStringLiteral(_ text: String) -> String {
    "'" + doubling("'", in: text) + "'"
}

/// `text` with each `quote` doubled, as SQL escapes a quote inside quotes.
///
/// Works on Unicode scalars, not Characters: a quote followed by a
/// combining mark (`"` + U+0483) is one Character, which a Character-level
/// replacement leaves alone, and SQLite would end the quoted text there.
func doubling(_ quote: Unicode.Scalar, in text: String) -> String {
    guard text.unicodeScalars.contains(quote) else { return text }
    var result = String.UnicodeScalarView()
    for scalar in text.unicodeScalars {
        if scalar == quote { result.append(quote) }
        result.append(scalar)
    }
    return String(result)
}

/// `INSERT [OR resolution] INTO "table" ("a", "b")`: how every INSERT
/// Strata writes begins (typed queries, records, imports).
func insertHead(into table: String, columns: [String], conflictResolution: String? = nil) -> String {
    "INSERT " + (conflictResolution.map { "OR \($0) " } ?? "") + "INTO " + quoteIdentifier(table)
        + " (" + columns.map(quoteIdentifier).joined(separator: ", ") + ")"
}

/// An INSERT of one row of parameters: `INSERT INTO "t" ("a", "b") VALUES (?, ?)`.
func parameterizedInsert(into table: String, columns: [String], conflictResolution: String? = nil) -> String {
    insertHead(into: table, columns: columns, conflictResolution: conflictResolution)
        + " VALUES (" + repeatElement("?", count: columns.count).joined(separator: ", ") + ")"
}

/// `text` with each control character (C0, DEL, C1) written as `\u{X}`;
/// line breaks and tabs too unless `keepingLayout`, for text that must stay
/// on one line.
func printable(_ text: String, keepingLayout: Bool = false) -> String {
    func escapes(_ scalar: Unicode.Scalar) -> Bool {
        isControl(scalar) && !(keepingLayout && (scalar == "\n" || scalar == "\r" || scalar == "\t"))
    }
    guard text.unicodeScalars.contains(where: escapes) else { return text }
    var result = ""
    for scalar in text.unicodeScalars {
        if escapes(scalar) {
            result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
        } else {
            result.unicodeScalars.append(scalar)
        }
    }
    return result
}

private func isControl(_ scalar: Unicode.Scalar) -> Bool {
    scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
}

/// Refuses SQL text holding a NUL character: SQLite reads SQL up to the
/// first NUL, so `DELETE FROM t\0 WHERE id = 1` would run as `DELETE FROM t`.
func checkNoNUL(in sql: String) throws {
    guard let offset = sql.utf8.firstIndex(of: 0).map({ sql.utf8.distance(from: sql.utf8.startIndex, to: $0) }) else {
        return
    }
    throw SQLiteError.misuse(
        "the SQL holds a NUL character at byte \(offset), where SQLite would stop reading it; nothing was run",
        sql: printable(sql, keepingLayout: true))
}
