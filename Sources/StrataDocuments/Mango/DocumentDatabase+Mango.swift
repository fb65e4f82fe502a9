import Foundation
import Strata

extension DocumentDatabase {
    /// Runs a Mango query (`_find`).
    public func find(_ query: FindQuery) throws -> FindResult {
        let tables = self.tables
        return try writer.read { db in try tables.find(db, query) }
    }

    /// What `_find` would do, without running it (`_explain`).
    public func explain(_ query: FindQuery) throws -> FindResult {
        let tables = self.tables
        return try writer.read { db in try tables.find(db, query, explainOnly: true) }
    }

    /// Creates a Mango index: a SQLite index on the JSON expressions of
    /// `fields` (partial when `partialFilterSelector` is given). Answers
    /// `created` or `exists`, with the design document id and the name.
    public func createIndex(fields: [String], ddoc: String? = nil, name: String? = nil, partialFilterSelector: JSON? = nil) throws -> (result: String, ddoc: String, name: String) {
        let tables = self.tables
        return try writer.write { db in
            try tables.createIndex(db, fields: fields, ddoc: ddoc, name: name, partialFilterSelector: partialFilterSelector)
        }
    }

    /// The Mango indexes, after the special `_all_docs` one.
    public func indexes() throws -> [MangoIndex] {
        let tables = self.tables
        return try writer.read { db in try tables.mangoIndexes(db).map(\.0) }
    }

    /// Drops a Mango index.
    public func deleteIndex(ddoc: String, name: String) throws {
        let tables = self.tables
        try writer.write { db in try tables.deleteIndex(db, ddoc: ddoc, name: name) }
    }
}
