import Foundation

/// A `Codable` type stored as rows of a table.
///
/// Conform, and at most name the table and the primary key; the columns come
/// from the coding keys, their types and NOT NULL from the property types:
///
/// ```swift
/// struct Note: DatabaseRecord {
///     var id: Int64?              // INTEGER PRIMARY KEY: nil until inserted
///     var title: String           // TEXT NOT NULL
///     var fontSize: Double        // REAL NOT NULL
///     var images: [ImageDescriptor] = []   // nested Codable: JSON TEXT
///     var isSelected = false      // not stored, see databaseIgnoredColumns
///     static let databaseIgnoredColumns: Set<String> = ["isSelected"]
/// }
///
/// try db.create(table: Note.self, ifNotExists: true)
/// var note = Note(id: nil, title: "Groceries", fontSize: 14)
/// try note.insert(db)                     // note.id is now set
/// let notes = try Note.fetchAll(db, Note.table.order(Column<String>("title")))
/// ```
///
/// Properties outside the coding keys are not stored. Date, Data, UUID, URL,
/// Decimal and enums are stored as in the core (see
/// ``DatabaseValueConvertible``); other nested `Codable` values and arrays
/// are stored as JSON text.
public protocol DatabaseRecord: Codable {
    /// The table's name. Default: the type's name with a lower-case first
    /// letter (`Note` → `note`).
    static var databaseTableName: String { get }

    /// The primary key's columns. Default: `["id"]` when the type has an `id`
    /// coding key; otherwise none, and rows are identified by their rowid.
    static var databasePrimaryKey: [String] { get }

    /// Coding keys that are not stored. Reading a record gives them their
    /// type's empty value (nil, 0, "", false, []). Default: none.
    static var databaseIgnoredColumns: Set<String> { get }

    /// Columns (or groups of columns) whose values must be unique, declared
    /// when the table is created from the type. Default: none.
    static var databaseUniqueKeys: [[String]] { get }

    /// Foreign keys declared when the table is created from the type.
    /// Default: none.
    static var databaseForeignKeys: [DatabaseForeignKey] { get }

    /// Whether the table is created from the type the first time a fetch or
    /// an insert, save or upsert finds it missing, as SwiftyDB does. Default
    /// false: a missing table is an error, and tables come from
    /// ``Database/create(table:ifNotExists:)`` or a ``Migrator``.
    static var databaseCreatesTableOnFirstUse: Bool { get }

    /// Called after a successful insert with the new rowid, when the single
    /// primary key column was NULL. The default writes the rowid into that
    /// column's property (by decoding the record again); implement it to set
    /// the property directly.
    mutating func didInsert(rowID: Int64, primaryKeyColumn: String) throws

    /// Makes the function that reads records of this type from the rows of
    /// one fetch; every fetch (arrays, single records, cursors, associations)
    /// goes through it. Strata provides it: decoding with `Decodable`, or
    /// calling `init(row:)` for a record that also conforms to
    /// ``RowDecodable``. There is no need to implement it.
    static func makeRowReader() -> (LiveRow) throws -> Self

    /// Reads every remaining row of a cursor into records: the loop of
    /// `fetchAll`. The default calls ``makeRowReader()``'s function for each
    /// row; a ``GeneratedRecord`` reads the rows without a closure call or a
    /// row check per row. Strata provides it.
    static func _readAll(_ cursor: RowCursor) throws -> [Self]

    /// The stored columns of a ``GeneratedRecord``; nil for a `Codable`
    /// record. Strata provides it.
    static var _generatedColumns: [RecordColumnDefinition]? { get }

    /// Writes a ``GeneratedRecord``'s stored properties and returns true;
    /// returns false for a `Codable` record. Strata provides it.
    func _encodeGenerated(to values: inout RecordValues) throws -> Bool
}

/// A foreign key of a record's table, for ``DatabaseRecord/databaseForeignKeys``.
public struct DatabaseForeignKey: Sendable {
    /// The columns of this table.
    public var columns: [String]
    /// The referenced table.
    public var destinationTable: String
    /// The referenced columns; the parent's primary key when empty.
    public var destinationColumns: [String]
    /// What deleting the referenced row does.
    public var onDelete: SQLForeignKeyAction?
    /// What changing the referenced key does.
    public var onUpdate: SQLForeignKeyAction?

    /// A foreign key to another record type's table.
    public init<Parent: DatabaseRecord>(
        _ columns: [String], references parent: Parent.Type, columns destinationColumns: [String]? = nil,
        onDelete: SQLForeignKeyAction? = nil, onUpdate: SQLForeignKeyAction? = nil
    ) {
        self.columns = columns
        self.destinationTable = Parent.databaseTableName
        self.destinationColumns = destinationColumns ?? Parent.databasePrimaryKey
        self.onDelete = onDelete
        self.onUpdate = onUpdate
    }
}

extension DatabaseRecord {
    public static var databaseTableName: String {
        let name = String(describing: Self.self)
        guard let first = name.first else { return name }
        return first.lowercased() + name.dropFirst()
    }

    public static var databasePrimaryKey: [String] {
        // `case id = "ID"` names the column ID: SQLite's names ignore case.
        guard let columns = try? RecordSchema.of(Self.self).columns,
            let id = columns.first(where: { $0.name.caseInsensitiveEquals("id") })
        else { return [] }
        return [id.name]
    }

    public static var databaseIgnoredColumns: Set<String> { [] }

    public static var _generatedColumns: [RecordColumnDefinition]? { nil }

    public func _encodeGenerated(to values: inout RecordValues) throws -> Bool { false }

    public static var databaseUniqueKeys: [[String]] { [] }

    public static var databaseForeignKeys: [DatabaseForeignKey] { [] }

    public static var databaseCreatesTableOnFirstUse: Bool { false }

    /// Runs `body`; when it fails because the record's table is missing and
    /// the type asks for it, creates the table and runs `body` again.
    @usableFromInline
    static func creatingTableOnFirstUse<T>(_ db: Database, _ body: () throws -> T) throws -> T {
        guard databaseCreatesTableOnFirstUse else { return try body() }
        do {
            return try body()
        } catch let error as SQLiteError where error.isMissingTable(databaseTableName) {
            try db.create(table: Self.self, ifNotExists: true)
            return try body()
        }
    }

    /// The record's table, for the typed query API:
    /// `Note.table.filter(Column<String>("title").like("%x%"))`.
    public static var table: SQLTable { SQLTable(databaseTableName) }

    /// Decodes each row with `Decodable`, the columns' positions resolved on
    /// the first row and one decoder for all rows.
    @inlinable
    public static func makeRowReader() -> (LiveRow) throws -> Self {
        let context = RecordDecodingContext(ignored: databaseIgnoredColumns)
        return { row in try decode(from: row, context: context) }
    }

    @inlinable
    public static func _readAll(_ cursor: RowCursor) throws -> [Self] {
        // Inlinable, so it is specialized for the record type: appending to
        // a generic `[Self]` looks up its metadata for every row.
        let read = makeRowReader()
        var records: [Self] = []
        while let row = try cursor.next() {
            records.append(try read(row))
        }
        return records
    }

    public mutating func didInsert(rowID: Int64, primaryKeyColumn: String) throws {
        if Self.self is AnyClass {
            // The app holds this object: it gets the id, not a new instance.
            try writeIntoInstance(rowID: rowID, primaryKeyColumn: primaryKeyColumn)
            return
        }
        let encoded = try EncodedRecord(self)
        var values = encoded.values.map { $0?.databaseValue ?? .null }
        guard let index = encoded.index(of: primaryKeyColumn) else {
            throw RecordError(
                kind: .missingPrimaryKey, tableName: Self.databaseTableName,
                message: "the row was inserted with rowid \(rowID), but \(Self.self) has no coding key \"\(primaryKeyColumn)\" to hold it; implement didInsert(rowID:primaryKeyColumn:)")
        }
        values[index] = .integer(rowID)
        self = try Self.decode(from: Row(columnNames: encoded.columns, values: values))
    }
}

extension SQLiteError {
    /// Whether SQLite reported `no such table: <name>` (or `main.<name>`).
    func isMissingTable(_ name: String) -> Bool {
        guard code.primaryResultCode == .error, let message, message.utf8.starts(with: "no such table: ".utf8) else { return false }
        let table = String(decoding: message.utf8.dropFirst("no such table: ".utf8.count), as: UTF8.self)
        return identifiersMatch(table, name) || identifiersMatch(table, "main." + name)
    }
}

/// A record operation that could not be done.
public struct RecordError: Error, CustomStringConvertible, Sendable {
    /// What went wrong.
    public enum Kind: Sendable, Equatable {
        /// No row has the record's primary key (update).
        case notFound
        /// The record type has no primary key, or a value is missing from it.
        case missingPrimaryKey
        /// The type's schema cannot be derived from its `Codable` conformance.
        case unsupportedType
    }

    /// What went wrong.
    public var kind: Kind
    /// The record's table.
    public var tableName: String
    /// A description of the problem.
    public var message: String

    /// The table and the problem: `notes: no row with id = 42`.
    public var description: String { "\(tableName): \(message)" }
}
