/// Applies named schema migrations, once each, in registration order.
///
/// ```swift
/// var migrator = Migrator()
/// migrator.register("v1: notes") { db in
///     try db.create(table: Note.self)
/// }
/// migrator.register("v2: seed") { db in
///     for note in try loadBundledNotes() { _ = try note.inserted(db) }
/// }
/// try migrator.migrate(queue)
/// ```
///
/// Each migration runs in its own transaction and is recorded in the
/// `strata_migrations` table. A migration that throws is rolled back, the
/// ones before it stay applied, and the error (a ``MigrationError``) names it.
/// Foreign keys are checked before each migration commits, with enforcement
/// turned off while it runs so that tables can be rebuilt.
public struct Migrator: Sendable {
    struct Migration: Sendable {
        var identifier: String
        var migrate: @Sendable (Database) throws -> Void
    }

    var migrations: [Migration] = []

    /// During development: when the registered migrations no longer match
    /// the database (a migration was edited, or an applied one removed),
    /// erase the database and migrate again from scratch. Never use it with
    /// data you want to keep.
    public var eraseDatabaseOnSchemaChange = false

    /// An empty migrator.
    public init() {}

    /// Registers a migration. Identifiers must be unique.
    ///
    /// - Precondition: no migration with this identifier is registered.
    public mutating func register(_ identifier: String, migrate: @escaping @Sendable (Database) throws -> Void) {
        precondition(!migrations.contains { $0.identifier == identifier }, "migration \"\(identifier)\" is already registered")
        migrations.append(Migration(identifier: identifier, migrate: migrate))
    }

    /// The identifiers of the registered migrations, in order.
    public var registeredIdentifiers: [String] { migrations.map(\.identifier) }

    /// Applies the migrations not yet applied, on the writer connection of a
    /// ``DatabaseQueue`` or a ``DatabasePool``.
    ///
    /// - Throws: ``MigrationError`` naming the migration that failed.
    public func migrate(_ writer: some DatabaseWriter) throws {
        try writer.writeWithoutTransaction { db in try migrate(db) }
    }

    /// Applies the migrations not yet applied, from async code.
    public func migrate(_ writer: some DatabaseWriter) async throws {
        try await writer.writeWithoutTransaction { db in try migrate(db) }
    }

    /// Applies the migrations not yet applied.
    ///
    /// - Throws: ``MigrationError`` naming the migration that failed.
    public func migrate(_ db: Database) throws {
        guard !db.isInsideTransaction else {
            throw SQLiteError.misuse("migrations must run outside a transaction: use writeWithoutTransaction")
        }
        try createMigrationsTable(db)
        if eraseDatabaseOnSchemaChange, try needsErase(db) {
            try erase(db)
            try createMigrationsTable(db)
        }
        let applied = Set(try appliedIdentifiers(db))
        for migration in migrations where !applied.contains(migration.identifier) {
            try apply(migration, to: db)
        }
    }

    /// The identifiers of the migrations applied to the database, in the
    /// order they were applied.
    public func appliedIdentifiers(_ db: Database) throws -> [String] {
        guard try db.tableExists("strata_migrations") else { return [] }
        return try String.fetchAll(db, sql: "SELECT identifier FROM strata_migrations ORDER BY rowid")
    }

    /// Whether every registered migration is applied.
    public func hasCompletedMigrations(_ db: Database) throws -> Bool {
        Set(try appliedIdentifiers(db)).isSuperset(of: registeredIdentifiers)
    }

    // MARK: - Internals

    private func createMigrationsTable(_ db: Database) throws {
        try db.execute(sql: """
            CREATE TABLE IF NOT EXISTS strata_migrations(identifier TEXT NOT NULL PRIMARY KEY, appliedAt TEXT NOT NULL)
            """)
    }

    private func apply(_ migration: Migration, to db: Database) throws {
        let foreignKeysWereOn = try Bool.fetchOne(db, sql: "PRAGMA foreign_keys") ?? false
        if foreignKeysWereOn { try db.execute(sql: "PRAGMA foreign_keys = OFF") }
        defer {
            if foreignKeysWereOn { try? db.execute(sql: "PRAGMA foreign_keys = ON") }
        }
        do {
            try db.transaction(.immediate) {
                try migration.migrate(db)
                if foreignKeysWereOn {
                    let violations = try Row.fetchAll(db, sql: "PRAGMA foreign_key_check")
                    if let first = violations.first {
                        throw SQLiteError(
                            code: .constraintForeignKey,
                            message: "\(violations.count) foreign key violation(s), first in table \(try first["table"] as String) rowid \(try first["rowid"] as Int64? ?? 0) referencing \(try first["parent"] as String)")
                    }
                }
                try db.execute(
                    sql: "INSERT INTO strata_migrations(identifier, appliedAt) VALUES (?, datetime('now'))",
                    arguments: [migration.identifier])
            }
        } catch {
            throw MigrationError(identifier: migration.identifier, underlyingError: error)
        }
    }

    /// Whether the database's schema differs from what the registered
    /// migrations make from scratch.
    private func needsErase(_ db: Database) throws -> Bool {
        let applied = try appliedIdentifiers(db)
        if !Set(applied).isSubset(of: registeredIdentifiers) { return true }
        let appliedMigrations = migrations.filter { applied.contains($0.identifier) }
        let reference = try Database()
        var replay = Migrator()
        replay.migrations = appliedMigrations
        try replay.migrate(reference)
        return try schemaSQL(reference) != schemaSQL(db)
    }

    private func schemaSQL(_ db: Database) throws -> [String] {
        try String.fetchAll(db, sql: """
            SELECT type || ' ' || name || ' ' || ifnull(sql, '') FROM sqlite_master
            WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY type, name
            """)
    }

    private func erase(_ db: Database) throws {
        try db.execute(sql: "PRAGMA foreign_keys = OFF")
        defer { try? db.execute(sql: "PRAGMA foreign_keys = \(db.configuration.foreignKeysEnabled ? "ON" : "OFF")") }
        try db.transaction {
            let objects = try Row.fetchAll(db, sql: """
                SELECT type, name FROM sqlite_master WHERE type IN ('table', 'view', 'trigger') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'
                """)
            for object in objects {
                let type: String = try object["type"]
                try db.execute(sql: "DROP \(type.uppercased()) IF EXISTS \(quoteIdentifier(try object["name"]))")
            }
        }
    }
}

/// A migration failed; it was rolled back and the ones before it stay applied.
public struct MigrationError: Error, CustomStringConvertible, Sendable {
    /// The failed migration's identifier.
    public let identifier: String
    /// What the migration threw.
    public let underlyingError: any Error

    /// `migration "v2" failed: …`
    public var description: String {
        "migration \"\(identifier)\" failed: \(underlyingError)"
    }
}
