@_exported import Strata

/// Makes a struct or final class a record whose reading, writing, typed
/// columns and schema are generated at compile time.
///
/// ```swift
/// import StrataMacros
///
/// @Record(table: "movies")
/// struct Movie {
///     var id: Int64?                   // the primary key: SQLite assigns it
///     var title: String
///     var year: Int
///     var genre: Genre                 // an enum: stored as its raw value
///     var cast: [String] = []          // nested Codable: JSON text
///     @Ignored var isSelected = false  // not stored
/// }
///
/// try db.create(table: Movie.self)
/// var movie = Movie(id: nil, title: "Alien", year: 1979, genre: .scienceFiction)
/// try movie.insert(db)                 // movie.id is set
/// let recent = try Movie.filter { $0.year > 1990 }.order(\.title).fetchAll(db)
/// ```
///
/// The macro conforms the type to ``GeneratedRecord`` (and so to
/// `DatabaseRecord` and `Codable`) and generates:
///
/// - `init(row:)`, reading each column at an index resolved once per
///   statement;
/// - `encodeColumns(into:)`, binding each stored property straight into the
///   type's cached INSERT;
/// - `Columns`, a typed column per stored property (`Movie.columns.year` is
///   a `Column<Int>`), for `filter { $0.year > 1990 }` and `order(\.title)`;
/// - the schema `db.create(table:)` uses: column types and NOT NULL from the
///   property types, the primary key, unique keys and foreign keys.
///
/// Every stored property is a column, named like the property unless
/// ``Column(_:)`` names it. The primary key is the property named `id`, or
/// the properties marked ``PrimaryKey()`` (several make a composite key).
///
/// - Parameters:
///   - table: The table's name. Default: the type's name with a lower-case
///     first letter (`Movie` → `movie`).
///   - uniqueKeys: Groups of columns whose values must be unique together;
///     ``Unique()`` marks a single column.
///   - withoutPrimaryKey: Rows are identified by SQLite's rowid only: no
///     update, save, upsert or delete of single records. Without it, a
///     record with no primary key is a compile-time error.
@attached(member, names: named(init(row:)))
@attached(
    extension, conformances: GeneratedRecord,
    names: named(Columns), named(columns), named(databaseColumns), named(init(row:)), named(encodeColumns(into:)),
    named(databaseTableName), named(databasePrimaryKey), named(databaseUniqueKeys), named(databaseForeignKeys),
    named(didInsert(rowID:primaryKeyColumn:))
)
public macro Record(table: String? = nil, uniqueKeys: [[String]] = [], withoutPrimaryKey: Bool = false) =
    #externalMacro(module: "StrataMacrosPlugin", type: "RecordMacro")

/// Names a record property's column, when it differs from the property's
/// name: `@Column("ID") var id: Int64?`.
@attached(peer)
public macro Column(_ name: String) = #externalMacro(module: "StrataMacrosPlugin", type: "MarkerMacro")

/// Marks a property of the record's primary key. Several marked properties
/// make a composite key. Without any, a property named `id` is the key.
@attached(peer)
public macro PrimaryKey() = #externalMacro(module: "StrataMacrosPlugin", type: "MarkerMacro")

/// Declares the property's column UNIQUE when the table is created from the
/// type. Groups of columns: `@Record(uniqueKeys: [["title", "year"]])`.
@attached(peer)
public macro Unique() = #externalMacro(module: "StrataMacrosPlugin", type: "MarkerMacro")

/// Leaves the property out of the table. It needs a default value, which a
/// fetched record gets.
@attached(peer)
public macro Ignored() = #externalMacro(module: "StrataMacrosPlugin", type: "MarkerMacro")

/// Declares the property's column a foreign key to another record type's
/// table, when the table is created from the type.
///
/// ```swift
/// @ForeignKey(Author.self, onDelete: .cascade) var authorID: Int64
/// ```
///
/// - Parameters:
///   - parent: The referenced record type.
///   - column: The referenced column; the parent's primary key when nil.
///   - onDelete: What deleting the referenced row does.
///   - onUpdate: What changing the referenced key does.
@attached(peer)
public macro ForeignKey<Parent: DatabaseRecord>(
    _ parent: Parent.Type, column: String? = nil, onDelete: SQLForeignKeyAction? = nil, onUpdate: SQLForeignKeyAction? = nil
) = #externalMacro(module: "StrataMacrosPlugin", type: "MarkerMacro")
