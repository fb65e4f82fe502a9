extension Database {
    /// Creates a record type's table from the type: its columns from the
    /// coding keys, their declared types and NOT NULL from the property types,
    /// the primary key, unique keys and foreign keys the type declares.
    ///
    /// ```swift
    /// try db.create(table: Note.self, ifNotExists: true)
    /// ```
    ///
    /// - Throws: ``RecordError`` when the columns cannot be derived;
    ///   ``SQLiteError`` when SQLite refuses the table.
    public func create<Record: DatabaseRecord>(table type: Record.Type, ifNotExists: Bool = false) throws {
        try execute(sql: Record.createTableSQL(ifNotExists: ifNotExists))
    }
}

extension DatabaseRecord {
    /// The CREATE TABLE statement ``Database/create(table:ifNotExists:)`` runs.
    public static func createTableSQL(ifNotExists: Bool = false) throws -> String {
        let schema = try RecordSchema.of(Self.self)
        let primaryKey = databasePrimaryKey
        return table.create(ifNotExists: ifNotExists) { t in
            for column in schema.columns {
                if primaryKey.count == 1 && primaryKey[0].caseInsensitiveEquals(column.name) {
                    // A single INTEGER key is the rowid: SQLite assigns it when NULL.
                    t.column(
                        named: column.name, declaredType: column.declaredType, primaryKey: .default,
                        isNotNull: column.declaredType != "INTEGER")
                } else {
                    t.column(named: column.name, declaredType: column.declaredType, isNotNull: !column.isOptional)
                }
            }
            if primaryKey.count > 1 { t.primaryKey(named: primaryKey) }
            for unique in databaseUniqueKeys { t.unique(named: unique) }
            for key in databaseForeignKeys {
                t.foreignKey(
                    named: key.columns, references: key.destinationTable, key.destinationColumns,
                    onDelete: key.onDelete, onUpdate: key.onUpdate)
            }
        }.sql
    }

    // MARK: - Writing

    /// Inserts the record. When its single integer primary key is nil, SQLite
    /// assigns one and it is written back into the record.
    ///
    /// - Throws: ``SQLiteError`` (a constraint error when a row with the same
    ///   key exists), or an encoding error.
    public mutating func insert(_ db: Database) throws {
        try insertRecord(db)
    }

    /// The insert that the class form calls: the class's own `insert`
    /// would call itself.
    mutating func insertRecord(_ db: Database) throws {
        try Self.creatingTableOnFirstUse(db) { try insertOrThrow(db) }
    }

    private mutating func insertOrThrow(_ db: Database) throws {
        if let insert = try Self.generatedInsert(db) {
            try insertGenerated(db, insert)
            return
        }
        if try insertByBinding(db) { return }
        let encoded = try EncodedRecord(self)
        try Self.checkKeyColumns(encoded)
        try Self.insertEncoder(db, columns: encoded.columns).statement.execute(arguments: StatementArguments(encoded.values))
        try writeBackRowID(db, encoded)
    }

    /// Inserts by encoding the record straight into its type's cached
    /// INSERT; false (nothing written) when there is no such statement yet
    /// or the record does not encode the statement's columns in order.
    private mutating func insertByBinding(_ db: Database) throws -> Bool {
        guard let encoder = Self.cachedInsert(db) else { return false }
        try encoder.begin()
        try encode(to: encoder)
        guard encoder.isComplete else { return false }
        // An error names the values, as the general path's does.
        try encoder.statement.runBound { (try? EncodedRecord(self)).map { StatementArguments($0.values) } }
        if encoder.primaryKeyIsNull {
            try didInsert(rowID: db.lastInsertedRowID, primaryKeyColumn: Self.databasePrimaryKey[0])
        }
        return true
    }

    /// Inserts a ``GeneratedRecord``: its generated code binds each stored
    /// property straight into the type's cached INSERT.
    private mutating func insertGenerated(_ db: Database, _ insert: GeneratedInsert) throws {
        try insert.statement.prepareForBinding()
        var values = RecordValues(statement: insert.statement.sqliteStatement)
        _ = try _encodeGenerated(to: &values)
        // An error names the values, as the general path's does.
        try insert.statement.runBound { (try? EncodedRecord(self)).map { StatementArguments($0.values) } }
        if values.primaryKeyIsNull {
            try didInsert(rowID: db.lastInsertedRowID, primaryKeyColumn: Self.databasePrimaryKey[0])
        }
    }

    /// A ``GeneratedRecord``'s cached INSERT of every stored column, made
    /// on first use and kept on the connection under the type's identifier;
    /// nil for a `Codable` record.
    private static func generatedInsert(_ db: Database) throws -> GeneratedInsert? {
        let type = ObjectIdentifier(Self.self)
        if let cached = db.layerCache[type] {
            // Only the Records layer stores under a record type's identifier:
            // a Codable record's encoder, or this.
            guard let insert = cached as? GeneratedInsert else { return nil }
            if !insert.statement.isBusy { return insert }
        }
        guard let columns = _generatedColumns else { return nil }
        let insert = GeneratedInsert(statement: try db.makeStatement(sql: insertSQL(columns.map(\.name), resolution: nil)))
        db.layerCache[type] = insert
        return insert
    }

    /// The record type's cached INSERT, kept on the connection under the
    /// type's identifier, unless it is being stepped (a cursor over the
    /// INSERT's RETURNING rows, say).
    private static func cachedInsert(_ db: Database) -> RecordBindingEncoder? {
        // Only the Records layer stores under a record type's identifier.
        guard let cached = db.layerCache[ObjectIdentifier(Self.self)] else { return nil }
        let encoder = unsafeDowncast(cached, to: RecordBindingEncoder.self)
        return encoder.statement.isBusy ? nil : encoder
    }

    /// The prepared INSERT for these columns, kept per record type on the
    /// connection (replaced when the columns change or it is being stepped).
    private static func insertEncoder(_ db: Database, columns: [String]) throws -> RecordBindingEncoder {
        let type = ObjectIdentifier(Self.self)
        if let cached = cachedInsert(db), cached.columns == columns {
            return cached
        }
        let encoder = RecordBindingEncoder(
            statement: try db.makeStatement(sql: insertSQL(columns, resolution: nil)), columns: columns,
            ignored: databaseIgnoredColumns, primaryKey: databasePrimaryKey)
        db.layerCache[type] = encoder
        return encoder
    }

    /// The record as inserted, with its assigned key.
    public func inserted(_ db: Database) throws -> Self {
        var copy = self
        try copy.insert(db)
        return copy
    }

    /// Inserts many records in one savepoint (all or nothing), with one
    /// prepared statement, and returns them with their assigned keys.
    public static func insertAll(_ db: Database, _ records: [Self]) throws -> [Self] {
        try db.savepoint {
            try records.map { try $0.inserted(db) }
        }
    }

    /// Updates every column of the record's row.
    ///
    /// - Throws: ``RecordError`` (`.notFound`) when no row has the record's
    ///   key; ``SQLiteError`` for constraint errors.
    public func update(_ db: Database) throws {
        let encoded = try EncodedRecord(self)
        let key = Self.databasePrimaryKey
        try update(db, encoded: encoded, columns: encoded.columns.filter { !key.containsColumn($0) })
    }

    /// Updates only the columns whose values differ from `old`, the same
    /// record as it was fetched; returns whether anything changed.
    @discardableResult
    public func updateChanges(_ db: Database, from old: Self) throws -> Bool {
        let encoded = try EncodedRecord(self)
        let previous = try EncodedRecord(old)
        let key = Self.databasePrimaryKey
        let changed = encoded.columns.indices.filter { index in
            let column = encoded.columns[index]
            guard !key.containsColumn(column) else { return false }
            let oldValue = previous.value(of: column).flatMap { $0?.databaseValue } ?? .null
            return (encoded.values[index]?.databaseValue ?? .null) != oldValue
        }.map { encoded.columns[$0] }
        guard !changed.isEmpty else { return false }
        try update(db, encoded: encoded, columns: changed)
        return true
    }

    private func update(_ db: Database, encoded: EncodedRecord, columns: [String]) throws {
        let (keyClause, keyValues) = try Self.keyPredicate(encoded)
        guard !columns.isEmpty else {
            // Only key columns: nothing to set, but the row must exist.
            guard try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(quoteIdentifier(Self.databaseTableName)) WHERE \(keyClause))", arguments: StatementArguments(keyValues)) == true else {
                throw Self.notFound(encoded)
            }
            return
        }
        let assignments = columns.map { quoteIdentifier($0) + " = ?" }.joined(separator: ", ")
        let values = columns.map { column in encoded.value(of: column) ?? nil }
        try db.execute(
            sql: "UPDATE \(quoteIdentifier(Self.databaseTableName)) SET \(assignments) WHERE \(keyClause)",
            arguments: StatementArguments(values + keyValues))
        if db.changesCount == 0 {
            throw Self.notFound(encoded)
        }
    }

    /// Inserts the record when its key is nil or no row has its key; updates
    /// the row otherwise.
    ///
    /// - Throws: ``RecordError`` (`.missingPrimaryKey`) when the type has no
    ///   primary key among its coding keys: without one, a saved record could
    ///   not be told from a new one, and saving twice would store two rows.
    public mutating func save(_ db: Database) throws {
        try saveRecord(db)
    }

    mutating func saveRecord(_ db: Database) throws {
        try Self.creatingTableOnFirstUse(db) { try saveOrThrow(db) }
    }

    private mutating func saveOrThrow(_ db: Database) throws {
        let encoded = try EncodedRecord(self)
        let key = Self.databasePrimaryKey
        guard !key.isEmpty else {
            throw RecordError(
                kind: .missingPrimaryKey, tableName: Self.databaseTableName,
                message: "save needs a primary key to tell a stored \(Self.self) from a new one; declare databasePrimaryKey, or use insert")
        }
        try Self.checkKeyColumns(encoded)
        let hasKey = key.allSatisfy { (encoded.value(of: $0) ?? nil) != nil }
        if hasKey {
            do {
                try update(db)
                return
            } catch let error as RecordError where error.kind == .notFound {}
        }
        try insert(db)
    }

    /// Inserts the record, or updates the row with the same primary key:
    /// `INSERT … ON CONFLICT (key) DO UPDATE SET …`.
    public mutating func upsert(_ db: Database) throws {
        try upsertRecord(db)
    }

    mutating func upsertRecord(_ db: Database) throws {
        try Self.creatingTableOnFirstUse(db) { try upsertOrThrow(db) }
    }

    private mutating func upsertOrThrow(_ db: Database) throws {
        let encoded = try EncodedRecord(self)
        let key = Self.databasePrimaryKey
        guard !key.isEmpty else {
            throw RecordError(kind: .missingPrimaryKey, tableName: Self.databaseTableName, message: "upsert needs a primary key")
        }
        let others = encoded.columns.filter { !key.containsColumn($0) }
        var sql = Self.insertSQL(encoded.columns, resolution: nil)
        sql += " ON CONFLICT (" + key.map(quoteIdentifier).joined(separator: ", ") + ") DO "
        sql += others.isEmpty ? "NOTHING" : "UPDATE SET " + others.map { quoteIdentifier($0) + " = excluded." + quoteIdentifier($0) }.joined(separator: ", ")
        try db.execute(sql: sql, arguments: StatementArguments(encoded.values))
        try writeBackRowID(db, encoded)
    }

    /// Deletes the record's row; returns whether there was one.
    @discardableResult
    public func delete(_ db: Database) throws -> Bool {
        let (keyClause, keyValues) = try Self.keyPredicate(try EncodedRecord(self))
        try db.execute(sql: "DELETE FROM \(quoteIdentifier(Self.databaseTableName)) WHERE \(keyClause)", arguments: StatementArguments(keyValues))
        return db.changesCount > 0
    }

    /// Deletes every row of the table; returns how many.
    @discardableResult
    public static func deleteAll(_ db: Database) throws -> Int {
        try db.execute(sql: "DELETE FROM \(quoteIdentifier(databaseTableName))")
        return db.changesCount
    }

    /// Whether a row has the record's primary key.
    public func exists(_ db: Database) throws -> Bool {
        let (keyClause, keyValues) = try Self.keyPredicate(try EncodedRecord(self))
        return try Bool.fetchOne(
            db, sql: "SELECT EXISTS (SELECT 1 FROM \(quoteIdentifier(Self.databaseTableName)) WHERE \(keyClause))",
            arguments: StatementArguments(keyValues)) ?? false
    }

    // MARK: - Internals

    /// Throws when a declared key column is not among the coding keys: the
    /// row's key could not be read back nor written into the record.
    static func checkKeyColumns(_ encoded: EncodedRecord) throws {
        for column in databasePrimaryKey where encoded.index(of: column) == nil {
            throw RecordError(
                kind: .missingPrimaryKey, tableName: databaseTableName,
                message: "the primary key column \"\(column)\" is not among \(Self.self)'s coding keys (\(encoded.columns.joined(separator: ", ")))")
        }
    }

    static func insertSQL(_ columns: [String], resolution: SQLConflictResolution?) -> String {
        parameterizedInsert(into: databaseTableName, columns: columns, conflictResolution: resolution?.rawValue)
    }

    private mutating func writeBackRowID(_ db: Database, _ encoded: EncodedRecord) throws {
        let key = Self.databasePrimaryKey
        guard key.count == 1, let value = encoded.value(of: key[0]), value == nil else { return }
        try didInsert(rowID: db.lastInsertedRowID, primaryKeyColumn: key[0])
    }

    /// `"a" = ? AND "b" = ?` and the key's values.
    static func keyPredicate(_ encoded: EncodedRecord) throws -> (String, [(any DatabaseValueConvertible)?]) {
        let key = databasePrimaryKey
        guard !key.isEmpty else {
            throw RecordError(
                kind: .missingPrimaryKey, tableName: databaseTableName,
                message: "\(Self.self) has no primary key; declare databasePrimaryKey")
        }
        var values: [(any DatabaseValueConvertible)?] = []
        for column in key {
            guard let value = encoded.value(of: column), let present = value else {
                throw RecordError(
                    kind: .missingPrimaryKey, tableName: databaseTableName,
                    message: "the record has no value for its primary key column \"\(column)\"")
            }
            values.append(present)
        }
        return (key.map { quoteIdentifier($0) + " = ?" }.joined(separator: " AND "), values)
    }

    private static func notFound(_ encoded: EncodedRecord) -> RecordError {
        let description = databasePrimaryKey.map { column in
            "\(column) = \((encoded.value(of: column) ?? nil)?.databaseValue.description ?? "NULL")"
        }.joined(separator: ", ")
        return RecordError(kind: .notFound, tableName: databaseTableName, message: "no row with \(description)")
    }
}

/// A generated record type's prepared INSERT, cached on a connection.
final class GeneratedInsert {
    let statement: Statement

    init(statement: Statement) {
        self.statement = statement
    }
}

// MARK: - Classes

extension DatabaseRecord where Self: AnyObject {
    /// Inserts the object; when its single integer primary key is nil,
    /// SQLite assigns one and it is written into this same object.
    ///
    /// ```swift
    /// let rex = Dog(name: "Rex")
    /// try rex.insert(db)     // rex.id is set
    /// ```
    ///
    /// - Throws: ``SQLiteError`` (a constraint error when a row with the same
    ///   key exists), or an encoding error.
    public func insert(_ db: Database) throws {
        var object = self
        try object.insertRecord(db)
    }

    /// Inserts the object when its key is nil or no row has its key;
    /// updates the row otherwise. See ``DatabaseRecord/save(_:)-782fy``.
    public func save(_ db: Database) throws {
        var object = self
        try object.saveRecord(db)
    }

    /// Inserts the object, or updates the row with the same primary key.
    /// See ``DatabaseRecord/upsert(_:)-7bds4``.
    public func upsert(_ db: Database) throws {
        var object = self
        try object.upsertRecord(db)
    }
}
