import Foundation
import Strata
import StrataDocuments

/// One condition of the table browser's filters: a column, an operator and
/// a value, as Datasette's filters (`?filters=[["year", ">", "1990"]]`).
struct SQLiteTableFilter: Sendable, Equatable {
    enum Operator: String, Sendable, CaseIterable {
        case equals = "="
        case notEquals = "!="
        case less = "<"
        case greater = ">"
        case lessOrEqual = "<="
        case greaterOrEqual = ">="
        case contains
        case startsWith = "starts"
        case isNull = "null"
        case isNotNull = "notnull"
    }

    let column: String
    let op: Operator
    let value: String

    /// The filters of `?filters=`: a JSON array of `[column, operator, value]`.
    static func parse(_ text: String?) throws -> [SQLiteTableFilter] {
        guard let text, !text.isEmpty else { return [] }
        guard let list = (try? JSON(parsing: text))?.arrayValue else {
            throw DocumentError(.badRequest, "filters must be a JSON array of [column, operator, value]")
        }
        return try list.map { item in
            guard let parts = item.arrayValue, parts.count == 2 || parts.count == 3,
                  let column = parts[0].stringValue, let name = parts[1].stringValue else {
                throw DocumentError(.badRequest, "A filter is [column, operator, value]: \(item.text)")
            }
            guard let op = Operator(rawValue: name) else {
                throw DocumentError(.badRequest, "Unknown filter operator \(name) (use \(Operator.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            let value = parts.count == 3 ? (parts[2].stringValue ?? parts[2].text) : ""
            return SQLiteTableFilter(column: column, op: op, value: value)
        }
    }

    /// The condition's SQL, its value bound: for `<`, `>`, `<=` and `>=` a
    /// value that reads as a number is bound as one, so they compare
    /// numbers even in a column without a type.
    func condition() -> (sql: String, argument: (any DatabaseValueConvertible)?) {
        let column = quoteIdentifier(self.column)
        let number: (any DatabaseValueConvertible)? = Int64(value).map { $0 } ?? Double(value).map { $0 }
        switch op {
        // Equality binds the text, as the column filter always did: a
        // column with a numeric type converts it.
        case .equals: return ("\(column) = ?", value)
        case .notEquals: return ("\(column) IS NOT ?", value)
        case .less: return ("\(column) < ?", number ?? value)
        case .greater: return ("\(column) > ?", number ?? value)
        case .lessOrEqual: return ("\(column) <= ?", number ?? value)
        case .greaterOrEqual: return ("\(column) >= ?", number ?? value)
        case .contains: return ("instr(\(column), ?) > 0", value)
        case .startsWith: return ("instr(\(column), ?) = 1", value)
        case .isNull: return ("\(column) IS NULL", nil)
        case .isNotNull: return ("\(column) IS NOT NULL", nil)
        }
    }
}
