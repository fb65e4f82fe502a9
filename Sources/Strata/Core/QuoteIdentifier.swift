import Foundation

/// Quotes an identifier for SQL: `movies` → `"movies"`, `a"b` → `"a""b"`.
/// Every layer that names a table or a column in SQL quotes it here.
///
/// See <https://www.sqlite.org/lang_keywords.html>.
public func quoteIdentifier(_ name: String) -> String {
    guard name.utf8.contains(34) else { return "\"" + name + "\"" }
    return "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
}
