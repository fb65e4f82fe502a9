/// A column of a table, as `PRAGMA table_xinfo` describes it.
///
/// See <https://www.sqlite.org/pragma.html#pragma_table_info>.
public struct ColumnInfo: Hashable, Sendable {
    /// The column's name.
    public var name: String
    /// The declared type from CREATE TABLE as SQLite reports it: the type
    /// names SQLite knows upper-cased (`text` → `"TEXT"`, `int` → `"INT"`),
    /// others as written (`"VarChar(10)"`), `""` when none.
    public var declaredType: String
    /// Whether the column is declared NOT NULL.
    public var isNotNull: Bool
    /// The default value's SQL text (`"0"`, `"'none'"`, `"CURRENT_TIMESTAMP"`),
    /// nil when there is none.
    public var defaultValueSQL: String?
    /// The column's 1-based position in the primary key; 0 when it is not
    /// part of it.
    public var primaryKeyIndex: Int
    /// Whether the column is generated or hidden (0 for an ordinary column).
    public var isHidden: Bool

    /// Makes a column description.
    public init(name: String, declaredType: String, isNotNull: Bool, defaultValueSQL: String?, primaryKeyIndex: Int, isHidden: Bool) {
        self.name = name
        self.declaredType = declaredType
        self.isNotNull = isNotNull
        self.defaultValueSQL = defaultValueSQL
        self.primaryKeyIndex = primaryKeyIndex
        self.isHidden = isHidden
    }
}

/// An index of a table.
///
/// See <https://www.sqlite.org/pragma.html#pragma_index_list>.
public struct IndexInfo: Hashable, Sendable {
    /// The index's name (`sqlite_autoindex_…` for those SQLite makes for
    /// UNIQUE and PRIMARY KEY constraints).
    public var name: String
    /// The indexed columns, in order; nil entries are expressions.
    public var columns: [String?]
    /// Whether the index is UNIQUE.
    public var isUnique: Bool
    /// Why it exists: `"c"` CREATE INDEX, `"u"` a UNIQUE constraint, `"pk"` a
    /// PRIMARY KEY.
    public var origin: String
    /// Whether it is a partial index (with a WHERE clause).
    public var isPartial: Bool

    /// Makes an index description.
    public init(name: String, columns: [String?], isUnique: Bool, origin: String, isPartial: Bool) {
        self.name = name
        self.columns = columns
        self.isUnique = isUnique
        self.origin = origin
        self.isPartial = isPartial
    }
}

/// A foreign key of a table.
///
/// See <https://www.sqlite.org/pragma.html#pragma_foreign_key_list>.
public struct ForeignKeyInfo: Hashable, Sendable {
    /// One column of the key and the column it references.
    public struct Mapping: Hashable, Sendable {
        /// The column in the table that holds the key.
        public var origin: String
        /// The referenced column; nil when the key references the parent's
        /// primary key implicitly.
        public var destination: String?

        /// Makes a mapping.
        public init(origin: String, destination: String?) {
            self.origin = origin
            self.destination = destination
        }
    }

    /// The referenced (parent) table.
    public var destinationTable: String
    /// The columns, in key order.
    public var mappings: [Mapping]
    /// The ON UPDATE action (`"NO ACTION"`, `"CASCADE"`, …).
    public var onUpdate: String
    /// The ON DELETE action (`"NO ACTION"`, `"CASCADE"`, …).
    public var onDelete: String

    /// Makes a foreign key description.
    public init(destinationTable: String, mappings: [Mapping], onUpdate: String, onDelete: String) {
        self.destinationTable = destinationTable
        self.mappings = mappings
        self.onUpdate = onUpdate
        self.onDelete = onDelete
    }
}

extension Database {
    /// The names of the tables in the main database, sorted, without SQLite's
    /// internal `sqlite_` tables.
    public func tableNames() throws -> [String] {
        try String.fetchAll(self, sql: """
            SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name
            """)
    }

    /// The names of the views in the main database, sorted.
    public func viewNames() throws -> [String] {
        try String.fetchAll(self, sql: "SELECT name FROM sqlite_master WHERE type = 'view' ORDER BY name")
    }

    /// Whether the main database has a table (or view) with this name, without
    /// regard to ASCII case.
    public func tableExists(_ name: String) throws -> Bool {
        try Bool.fetchOne(self, sql: """
            SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type IN ('table', 'view') AND name = ? COLLATE NOCASE)
            """, arguments: [name]) ?? false
    }

    /// The columns of a table or view, in order.
    ///
    /// - Throws: ``SQLiteError`` when there is no such table.
    public func columns(in table: String) throws -> [ColumnInfo] {
        let rows = try Row.fetchAll(self, sql: "SELECT * FROM pragma_table_xinfo(?)", arguments: [table])
        guard !rows.isEmpty else { throw noSuchTable(table) }
        return try rows.map { row in
            ColumnInfo(
                name: try row["name"],
                declaredType: try row["type"],
                isNotNull: try row["notnull"],
                defaultValueSQL: try row["dflt_value"],
                primaryKeyIndex: try row["pk"],
                isHidden: try row["hidden"] as Int != 0)
        }
    }

    /// The indexes of a table, sorted by name.
    ///
    /// - Throws: ``SQLiteError`` when there is no such table.
    public func indexes(on table: String) throws -> [IndexInfo] {
        guard try tableExists(table) else { throw noSuchTable(table) }
        let list = try Row.fetchAll(self, sql: "SELECT * FROM pragma_index_list(?) ORDER BY name", arguments: [table])
        return try list.map { row in
            let name: String = try row["name"]
            let columns = try String?.fetchAll(
                self, sql: "SELECT name FROM pragma_index_info(?) ORDER BY seqno", arguments: [name])
            return IndexInfo(
                name: name, columns: columns, isUnique: try row["unique"], origin: try row["origin"],
                isPartial: try row["partial"])
        }
    }

    /// The foreign keys of a table.
    ///
    /// - Throws: ``SQLiteError`` when there is no such table.
    public func foreignKeys(on table: String) throws -> [ForeignKeyInfo] {
        guard try tableExists(table) else { throw noSuchTable(table) }
        let rows = try Row.fetchAll(
            self, sql: "SELECT * FROM pragma_foreign_key_list(?) ORDER BY id, seq", arguments: [table])
        var keys: [Int: ForeignKeyInfo] = [:]
        var order: [Int] = []
        for row in rows {
            let id: Int = try row["id"]
            let mapping = ForeignKeyInfo.Mapping(origin: try row["from"], destination: try row["to"])
            if keys[id] == nil {
                order.append(id)
                keys[id] = ForeignKeyInfo(
                    destinationTable: try row["table"], mappings: [],
                    onUpdate: try row["on_update"], onDelete: try row["on_delete"])
            }
            keys[id]?.mappings.append(mapping)
        }
        return order.compactMap { keys[$0] }
    }

    private func noSuchTable(_ table: String) -> SQLiteError {
        SQLiteError(code: .error, message: "no such table: \(table)")
    }
}
