/// A query of a record type's table that fetches records: started from the
/// type, refined like any typed query.
///
/// ```swift
/// let title = Column<String>("title")
/// let recent = try Note.filter(title.like("G%")).order(title).limit(20).fetchAll(db)
/// let count = try Note.filter(title.like("G%")).fetchCount(db)
/// ```
///
/// Each refinement returns a new query; nothing runs until a fetch.
public struct RecordQuery<Record: DatabaseRecord>: SQLLiteralConvertible, Sendable {
    /// The typed query underneath, for anything the record query does not
    /// offer (joins, grouping): `Note.all().table.join(…)`.
    public var table: SQLTable

    init(table: SQLTable) {
        self.table = table
    }

    /// The query's SQL and arguments.
    public var sqlLiteral: SQLLiteral { table.sqlLiteral }

    // MARK: - Refining

    /// Records where the predicate is true; several filters are joined by AND.
    public func filter(_ predicate: SQLExpression<Bool>) -> RecordQuery {
        RecordQuery(table: table.filter(predicate))
    }

    /// Records where a NULL-able predicate is true (NULL counts as false).
    public func filter(_ predicate: SQLExpression<Bool?>) -> RecordQuery {
        RecordQuery(table: table.filter(predicate))
    }

    /// Sorts by the terms, in order; replaces an earlier order.
    public func order(_ terms: any SQLOrderingTerm...) -> RecordQuery {
        RecordQuery(table: table.order(terms))
    }

    /// At most `count` records, after skipping `offset`.
    public func limit(_ count: Int, offset: Int? = nil) -> RecordQuery {
        RecordQuery(table: table.limit(count, offset: offset))
    }

    // MARK: - Fetching

    /// Every record the query selects.
    ///
    /// - Throws: ``SQLiteError``, or ``DatabaseDecodingError`` when a row
    ///   does not fit the type.
    public func fetchAll(_ db: Database) throws -> [Record] {
        try Record.fetchAll(db, self)
    }

    /// The first record the query selects; nil when none.
    public func fetchOne(_ db: Database) throws -> Record? {
        try Record.fetchOne(db, self)
    }

    /// A cursor over the records, decoded one at a time.
    public func fetchCursor(_ db: Database) throws -> RecordCursor<Record> {
        try Record.fetchCursor(db, self)
    }

    /// The number of records the query selects.
    public func fetchCount(_ db: Database) throws -> Int {
        try Record.creatingTableOnFirstUse(db) { try table.fetchCount(db) }
    }

    /// Deletes the records the query selects; returns how many.
    @discardableResult
    ///
    /// - Throws: ``SQLiteError`` (`.misuse`) when the query has a limit:
    ///   DELETE applies the filter only, and would delete more than the
    ///   query selects.
    public func deleteAll(_ db: Database) throws -> Int {
        guard table.limitCount == nil else {
            throw SQLiteError.misuse("deleteAll deletes every record the filter selects and cannot apply a limit; fetch the records and delete each, or filter instead")
        }
        return try db.run(table.delete())
    }
}

extension DatabaseRecord {
    /// Every record of the table, as a query to refine or fetch:
    /// `try Note.all().fetchCount(db)`.
    public static func all() -> RecordQuery<Self> {
        RecordQuery(table: table)
    }

    /// The records where the predicate is true: `Note.filter(title == "x")`.
    public static func filter(_ predicate: SQLExpression<Bool>) -> RecordQuery<Self> {
        all().filter(predicate)
    }

    /// The records where a NULL-able predicate is true.
    public static func filter(_ predicate: SQLExpression<Bool?>) -> RecordQuery<Self> {
        all().filter(predicate)
    }

    /// Every record, sorted: `Note.order(title.desc)`.
    public static func order(_ terms: any SQLOrderingTerm...) -> RecordQuery<Self> {
        RecordQuery(table: table.order(terms))
    }

    /// At most `count` records, after skipping `offset`.
    public static func limit(_ count: Int, offset: Int? = nil) -> RecordQuery<Self> {
        all().limit(count, offset: offset)
    }
}
