import Foundation
import Strata

/// Uses `text` as a table name, a column name and a value. SQLite refuses
/// a NUL in a name and names starting with `sqlite_`; every other text
/// must round-trip exactly: the schema holds the name, the row the value.
public func fuzzIdentifierAndValue(_ text: String) {
    let db = try! Database()
    // SQLite reserves names whose first seven bytes are `sqlite_` in any
    // ASCII case (bytes, not Characters: `_` may carry a combining mark).
    let prefix = text.utf8.prefix(7).map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 }
    let refused = text.utf8.contains(0) || prefix.elementsEqual("sqlite_".utf8)
    do {
        try db.execute(literal: "CREATE TABLE \(identifier: text) (\(identifier: text) TEXT)")
        try db.execute(literal: "INSERT INTO \(identifier: text) VALUES (\(text))")
        let table = SQLTable(text)
        let column = Column<String?>(text)
        _ = try db.run(table.insert(column <- text))
        require(!refused, "SQLite accepted the name \(text.debugDescription)")
        let names = try String.fetchAll(db, sql: "SELECT name FROM sqlite_schema WHERE type = 'table'")
        require(names == [text], "the schema holds \(names.debugDescription), not \(text.debugDescription)")
        let values = try String?.fetchAll(db, literal: "SELECT \(identifier: text) FROM \(identifier: text) ORDER BY rowid")
        require(values == [text, text], "read back \(values.debugDescription), not \(text.debugDescription)")
        let typed = try table.select(column).filter(column == text).fetchCount(db)
        require(typed == 2, "the typed filter found \(typed) rows, not 2")
    } catch let error as SQLiteError {
        require(refused, "\(text.debugDescription) was refused: \(error)")
        require(!error.description.unicodeScalars.contains { $0.value == 0 }, "a NUL in the error")
    } catch {
        fatalError("\(type(of: error)) thrown for \(text.debugDescription): \(error)")
    }
}
