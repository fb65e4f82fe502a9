import MacroTesting
import SwiftSyntaxMacros
import SwiftSyntaxMacroExpansion
import StrataMacrosPlugin
import Testing

// What `@Record` writes, as snapshots of the expanded source, and the
// compile-time errors (with their fix-its) for types it cannot store.
// `RecordMacroTests` compiles and runs records that use the macro.

@Suite(
    .macros(
        [
            "Record": MacroSpec(type: RecordMacro.self, conformances: ["GeneratedRecord"]),
            "Column": MacroSpec(type: MarkerMacro.self),
            "PrimaryKey": MacroSpec(type: MarkerMacro.self),
            "Unique": MacroSpec(type: MarkerMacro.self),
            "Ignored": MacroSpec(type: MarkerMacro.self),
            "ForeignKey": MacroSpec(type: MarkerMacro.self),
        ],
        record: .missing
    )
)
struct RecordMacroExpansionTests {
    @Test func aStruct() {
        assertMacro {
            """
            @Record(table: "movies")
            public struct Movie {
                public var id: Int64?
                @Unique var title: String
                var year, runtime: Int
                var genre: Genre
                var cast: [String] = []
                @Ignored var isSelected = false
                var summary: String { title }
                static let shared = 1
            }
            """
        } expansion: {
            """
            public struct Movie {
                public var id: Int64?
                var title: String
                var year, runtime: Int
                var genre: Genre
                var cast: [String] = []
                var isSelected = false
                var summary: String { title }
                static let shared = 1
            }

            extension Movie: GeneratedRecord {
                public struct Columns {
                    public let id = Strata.Column<Int64?>("id")
                    public let title = Strata.Column<String>("title")
                    public let year = Strata.Column<Int>("year")
                    public let runtime = Strata.Column<Int>("runtime")
                    public let genre = Strata.Column<Genre>("genre")
                    public let cast = Strata.Column<[String]>("cast")
                }

                /// The typed columns: `filter { $0.column > value }`.
                public static var columns: Columns {
                    Columns()
                }

                public static var databaseColumns: [Strata.RecordColumnDefinition] {
                    [
                        Strata.RecordColumnDefinition("id", Int64?.self),
                        Strata.RecordColumnDefinition("title", String.self),
                        Strata.RecordColumnDefinition("year", Int.self),
                        Strata.RecordColumnDefinition("runtime", Int.self),
                        Strata.RecordColumnDefinition("genre", Genre.self),
                        Strata.RecordColumnDefinition("cast", [String].self),
                    ]
                }

                public init(row: Strata.RecordRow) throws {
                    self.id = try row.decode(Int64?.self, 0)
                    self.title = try row.decode(String.self, 1)
                    self.year = try row.decode(Int.self, 2)
                    self.runtime = try row.decode(Int.self, 3)
                    self.genre = try row.decode(Genre.self, 4)
                    self.cast = try row.decode([String].self, 5)
                }

                public func encodeColumns(into values: inout Strata.RecordValues) throws {
                    try values.encodePrimaryKey(self.id)
                    try values.encode(self.title)
                    try values.encode(self.year)
                    try values.encode(self.runtime)
                    try values.encode(self.genre)
                    try values.encode(self.cast)
                }

                public static var databaseTableName: String {
                    "movies"
                }

                public static var databasePrimaryKey: [String] {
                    ["id"]
                }

                public static var databaseUniqueKeys: [[String]] {
                    [["title"]]
                }

                public mutating func didInsert(rowID: Int64, primaryKeyColumn: String) throws {
                    try Strata.assignRowID(rowID, to: &self.id, tableName: Self.databaseTableName, column: primaryKeyColumn)
                }
            }
            """
        }
    }

    @Test func aFinalClassWithARenamedKeyAndAForeignKey() {
        assertMacro {
            """
            @Record
            final class Book {
                @Column("ID") var id: Int64?
                var title: String
                @ForeignKey(Author.self, column: "ID", onDelete: .cascade) var authorID: Int64
                init(title: String, authorID: Int64) {
                    self.title = title
                    self.authorID = authorID
                }
            }
            """
        } expansion: {
            """
            final class Book {
                var id: Int64?
                var title: String
                var authorID: Int64
                init(title: String, authorID: Int64) {
                    self.title = title
                    self.authorID = authorID
                }

                init(row: Strata.RecordRow) throws {
                    self.id = try row.decode(Int64?.self, 0)
                    self.title = try row.decode(String.self, 1)
                    self.authorID = try row.decode(Int64.self, 2)
                }
            }

            extension Book: GeneratedRecord {
                struct Columns {
                    let id = Strata.Column<Int64?>("ID")
                    let title = Strata.Column<String>("title")
                    let authorID = Strata.Column<Int64>("authorID")
                }

                /// The typed columns: `filter { $0.column > value }`.
                static var columns: Columns {
                    Columns()
                }

                static var databaseColumns: [Strata.RecordColumnDefinition] {
                    [
                        Strata.RecordColumnDefinition("ID", Int64?.self),
                        Strata.RecordColumnDefinition("title", String.self),
                        Strata.RecordColumnDefinition("authorID", Int64.self),
                    ]
                }

                func encodeColumns(into values: inout Strata.RecordValues) throws {
                    try values.encodePrimaryKey(self.id)
                    try values.encode(self.title)
                    try values.encode(self.authorID)
                }

                static var databasePrimaryKey: [String] {
                    ["ID"]
                }

                static var databaseForeignKeys: [Strata.DatabaseForeignKey] {
                    [
                        Strata.DatabaseForeignKey(["authorID"], references: Author.self, columns: ["ID"], onDelete: .cascade),
                    ]
                }

                func didInsert(rowID: Int64, primaryKeyColumn: String) throws {
                    try Strata.assignRowID(rowID, to: &self.id, tableName: Self.databaseTableName, column: primaryKeyColumn)
                }
            }
            """
        }
    }

    @Test func aCompositeKeyAndUniqueGroups() {
        assertMacro {
            """
            @Record(uniqueKeys: [["role", "since"]])
            struct Membership {
                @PrimaryKey var groupID: Int64
                @PrimaryKey var userID: Int64
                var role: String
                var since: Int
            }
            """
        } expansion: {
            """
            struct Membership {
                var groupID: Int64
                var userID: Int64
                var role: String
                var since: Int
            }

            extension Membership: GeneratedRecord {
                struct Columns {
                    let groupID = Strata.Column<Int64>("groupID")
                    let userID = Strata.Column<Int64>("userID")
                    let role = Strata.Column<String>("role")
                    let since = Strata.Column<Int>("since")
                }

                /// The typed columns: `filter { $0.column > value }`.
                static var columns: Columns {
                    Columns()
                }

                static var databaseColumns: [Strata.RecordColumnDefinition] {
                    [
                        Strata.RecordColumnDefinition("groupID", Int64.self),
                        Strata.RecordColumnDefinition("userID", Int64.self),
                        Strata.RecordColumnDefinition("role", String.self),
                        Strata.RecordColumnDefinition("since", Int.self),
                    ]
                }

                init(row: Strata.RecordRow) throws {
                    self.groupID = try row.decode(Int64.self, 0)
                    self.userID = try row.decode(Int64.self, 1)
                    self.role = try row.decode(String.self, 2)
                    self.since = try row.decode(Int.self, 3)
                }

                func encodeColumns(into values: inout Strata.RecordValues) throws {
                    try values.encode(self.groupID)
                    try values.encode(self.userID)
                    try values.encode(self.role)
                    try values.encode(self.since)
                }

                static var databasePrimaryKey: [String] {
                    ["groupID", "userID"]
                }

                static var databaseUniqueKeys: [[String]] {
                    [["role", "since"]]
                }
            }
            """
        }
    }

    @Test func aRecordWithoutPrimaryKey() {
        assertMacro {
            """
            @Record(withoutPrimaryKey: true)
            struct LogLine {
                var message: String
            }
            """
        } expansion: {
            """
            struct LogLine {
                var message: String
            }

            extension LogLine: GeneratedRecord {
                struct Columns {
                    let message = Strata.Column<String>("message")
                }

                /// The typed columns: `filter { $0.column > value }`.
                static var columns: Columns {
                    Columns()
                }

                static var databaseColumns: [Strata.RecordColumnDefinition] {
                    [
                        Strata.RecordColumnDefinition("message", String.self),
                    ]
                }

                init(row: Strata.RecordRow) throws {
                    self.message = try row.decode(String.self, 0)
                }

                func encodeColumns(into values: inout Strata.RecordValues) throws {
                    try values.encode(self.message)
                }

                static var databasePrimaryKey: [String] {
                    []
                }
            }
            """
        }
    }

    @Test func aMissingPrimaryKeyIsAnError() {
        assertMacro {
            """
            @Record
            struct LogLine {
                var message: String
                var level: Int
            }
            """
        } diagnostics: {
            """
            @Record
            ┬──────
            ╰─ 🛑 @Record needs a primary key to update, save, upsert and delete records: add a property named 'id', mark one or more with @PrimaryKey, or write withoutPrimaryKey: true
               ✏️ mark 'message' with @PrimaryKey
               ✏️ identify rows by rowid only: withoutPrimaryKey: true
            struct LogLine {
                var message: String
                var level: Int
            }
            """
        } fixes: {
            """
            @Record(withoutPrimaryKey: true)
            struct LogLine {
                @PrimaryKey var message: String
                var level: Int
            }
            """
        }
    }

    @Test func aNonFinalClassIsAnError() {
        assertMacro {
            """
            @Record
            class Note {
                var id: Int64?
            }
            """
        } diagnostics: {
            """
            @Record
            class Note {
            ┬────
            ╰─ 🛑 @Record needs a final class: a subclass's properties would not be stored
               ✏️ make the class final
                var id: Int64?
            }
            """
        } fixes: {
            """
            @Record
            final class Note {
                var id: Int64?
            }
            """
        } expansion: {
            """
            final class Note {
                var id: Int64?

                init(row: Strata.RecordRow) throws {
                    self.id = try row.decode(Int64?.self, 0)
                }
            }

            extension Note: GeneratedRecord {
                struct Columns {
                    let id = Strata.Column<Int64?>("id")
                }

                /// The typed columns: `filter { $0.column > value }`.
                static var columns: Columns {
                    Columns()
                }

                static var databaseColumns: [Strata.RecordColumnDefinition] {
                    [
                        Strata.RecordColumnDefinition("id", Int64?.self),
                    ]
                }

                func encodeColumns(into values: inout Strata.RecordValues) throws {
                    try values.encodePrimaryKey(self.id)
                }

                static var databasePrimaryKey: [String] {
                    ["id"]
                }

                func didInsert(rowID: Int64, primaryKeyColumn: String) throws {
                    try Strata.assignRowID(rowID, to: &self.id, tableName: Self.databaseTableName, column: primaryKeyColumn)
                }
            }
            """
        }
    }

    @Test func aMissingTypeAnnotationIsFixedFromTheLiteral() {
        assertMacro {
            """
            @Record
            struct Counter {
                var id: Int64?
                var count = 0
            }
            """
        } diagnostics: {
            """
            @Record
            struct Counter {
                var id: Int64?
                var count = 0
                    ┬────
                    ╰─ 🛑 'count' needs a type annotation: @Record reads and writes each stored property by its type
                       ✏️ add ': Int'
            }
            """
        } fixes: {
            """
            @Record
            struct Counter {
                var id: Int64?
                var count: Int = 0
            }
            """
        } expansion: {
            """
            struct Counter {
                var id: Int64?
                var count: Int = 0
            }

            extension Counter: GeneratedRecord {
                struct Columns {
                    let id = Strata.Column<Int64?>("id")
                    let count = Strata.Column<Int>("count")
                }

                /// The typed columns: `filter { $0.column > value }`.
                static var columns: Columns {
                    Columns()
                }

                static var databaseColumns: [Strata.RecordColumnDefinition] {
                    [
                        Strata.RecordColumnDefinition("id", Int64?.self),
                        Strata.RecordColumnDefinition("count", Int.self),
                    ]
                }

                init(row: Strata.RecordRow) throws {
                    self.id = try row.decode(Int64?.self, 0)
                    self.count = try row.decode(Int.self, 1)
                }

                func encodeColumns(into values: inout Strata.RecordValues) throws {
                    try values.encodePrimaryKey(self.id)
                    try values.encode(self.count)
                }

                static var databasePrimaryKey: [String] {
                    ["id"]
                }

                mutating func didInsert(rowID: Int64, primaryKeyColumn: String) throws {
                    try Strata.assignRowID(rowID, to: &self.id, tableName: Self.databaseTableName, column: primaryKeyColumn)
                }
            }
            """
        }
    }

    @Test func anEnumIsAnError() {
        assertMacro {
            """
            @Record
            enum Kind {
                case a
            }
            """
        } diagnostics: {
            """
            @Record
            ┬──────
            ╰─ 🛑 @Record applies to a struct or a final class
            enum Kind {
                case a
            }
            """
        }
    }

    @Test func propertiesThatCannotBeStoredAreErrors() {
        assertMacro {
            """
            @Record
            struct Note {
                var id: Int64?
                var onChange: () -> Void
                var size: (Int, Int)
                var count = 0
                let version = 2
                @Ignored var cache: [String: Int]
            }
            """
        } diagnostics: {
            """
            @Record
            struct Note {
                var id: Int64?
                var onChange: () -> Void
                              ┬─────────
                              ╰─ 🛑 'onChange' cannot be stored in a column: '() -> Void' is a function; mark it @Ignored, or store a Codable value
                                 ✏️ mark it @Ignored
                var size: (Int, Int)
                          ┬─────────
                          ╰─ 🛑 'size' cannot be stored in a column: '(Int, Int)' is a tuple; mark it @Ignored, or store a Codable value
                             ✏️ mark it @Ignored
                var count = 0
                    ┬────
                    ╰─ 🛑 'count' needs a type annotation: @Record reads and writes each stored property by its type
                       ✏️ add ': Int'
                let version = 2
                    ┬──────
                    ╰─ 🛑 'version' is a constant with a value, so a fetched record cannot read it: make it 'var', or mark it @Ignored
                       ✏️ make it 'var'
                       ✏️ mark it @Ignored
                @Ignored var cache: [String: Int]
                             ┬────
                             ╰─ 🛑 the ignored property 'cache' needs a default value, which fetched records get
            }
            """
        }
    }
}
