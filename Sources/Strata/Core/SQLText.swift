import Foundation

// The pieces of SQL text every layer writes the same way.

/// Quotes an identifier for SQL: `movies` → `"movies"`, `a"b` → `"a""b"`.
/// Every layer that names a table or a column in SQL quotes it here.
///
/// See <https://www.sqlite.org/lang_keywords.html>.
public func quoteIdentifier(_ name: String) -> String {
    guard name.utf8.contains(34) else { return "\"" + name + "\"" }
    return "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
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
