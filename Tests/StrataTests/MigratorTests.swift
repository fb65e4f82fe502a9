import Foundation
import Strata
import StrataTestHelpers
import Testing

private struct Broken: Error {}

@Suite struct MigratorTests {
    @Test(arguments: TestStorage.allCases)
    func appliesEachMigrationOnce(_ storage: TestStorage) throws {
        let queue = try storage.makeQueue()
        var migrator = Migrator()
        migrator.register("v1") { db in
            try db.execute(sql: "CREATE TABLE t(id INTEGER PRIMARY KEY)")
        }
        try migrator.migrate(queue)
        try migrator.migrate(queue)
        #expect(try queue.read { try migrator.appliedIdentifiers($0) } == ["v1"])
    }

    @Test func appliesInRegistrationOrderAndOnlyNewOnes() throws {
        let queue = try DatabaseQueue(path: try makeTemporaryPath())
        var migrator = Migrator()
        migrator.register("create") { db in try db.execute(sql: "CREATE TABLE log(step TEXT)") }
        migrator.register("first") { db in try db.execute(sql: "INSERT INTO log VALUES ('first')") }
        try migrator.migrate(queue)
        migrator.register("second") { db in try db.execute(sql: "INSERT INTO log VALUES ('second')") }
        migrator.register("third") { db in try db.execute(sql: "INSERT INTO log VALUES ('third')") }
        try migrator.migrate(queue)
        try queue.read { (db: Database) throws in
            #expect(try String.fetchAll(db, sql: "SELECT step FROM log") == ["first", "second", "third"])
            #expect(try migrator.appliedIdentifiers(db) == ["create", "first", "second", "third"])
            #expect(try migrator.hasCompletedMigrations(db))
        }
    }

    @Test func aFailingMigrationRollsBackAndIsNamed() throws {
        let queue = try DatabaseQueue()
        var migrator = Migrator()
        migrator.register("v1") { db in try db.execute(sql: "CREATE TABLE t(a)") }
        migrator.register("v2") { db in
            try db.execute(sql: "INSERT INTO t VALUES (1)")
            throw Broken()
        }
        migrator.register("v3") { db in try db.execute(sql: "INSERT INTO t VALUES (3)") }
        let error = try #require(throws: MigrationError.self) { try migrator.migrate(queue) }
        #expect(error.identifier == "v2")
        #expect(error.underlyingError is Broken)
        #expect(error.description.hasPrefix("migration \"v2\" failed"))
        try queue.read { (db: Database) throws in
            #expect(try migrator.appliedIdentifiers(db) == ["v1"])
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM t") == 0)
            #expect(try !migrator.hasCompletedMigrations(db))
        }
    }

    @Test func checksForeignKeysAfterEachMigration() throws {
        let queue = try DatabaseQueue()
        var migrator = Migrator()
        migrator.register("schema") { db in
            try db.execute(sql: """
                CREATE TABLE parents(id INTEGER PRIMARY KEY);
                CREATE TABLE children(parentID INTEGER REFERENCES parents(id));
                """)
        }
        migrator.register("orphans") { db in
            try db.execute(sql: "INSERT INTO children VALUES (42)")  // accepted while enforcement is off
        }
        let error = try #require(throws: MigrationError.self) { try migrator.migrate(queue) }
        #expect(error.identifier == "orphans")
        #expect((error.underlyingError as? SQLiteError)?.code == .constraintForeignKey)
        try queue.read { (db: Database) throws in
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM children") == 0)
            #expect(try Bool.fetchOne(db, sql: "PRAGMA foreign_keys") == true)  // enforcement is back on
        }
    }

    @Test func rebuildsTheDatabaseWhenAMigrationChangedIfAsked() throws {
        let path = try makeTemporaryPath()
        var v1 = Migrator()
        v1.register("v1") { db in try db.execute(sql: "CREATE TABLE t(a); INSERT INTO t VALUES (1)") }
        try v1.migrate(DatabaseQueue(path: path))

        // The migration was edited during development.
        var edited = Migrator()
        edited.register("v1") { db in try db.execute(sql: "CREATE TABLE t(a, b); INSERT INTO t VALUES (1, 2)") }
        // Without the option nothing happens.
        try edited.migrate(DatabaseQueue(path: path))
        #expect(try Database(path: path).columns(in: "t").count == 1)
        // With it, the database is erased and migrated again.
        edited.eraseDatabaseOnSchemaChange = true
        try edited.migrate(DatabaseQueue(path: path))
        let db = try Database(path: path)
        #expect(try db.columns(in: "t").map(\.name) == ["a", "b"])
        #expect(try Int.fetchOne(db, sql: "SELECT b FROM t") == 2)
        // An unchanged set of migrations keeps the data.
        try db.execute(sql: "INSERT INTO t VALUES (3, 4)")
        try edited.migrate(DatabaseQueue(path: path))
        #expect(try Int.fetchOne(Database(path: path), sql: "SELECT count(*) FROM t") == 2)
        // A migration that was applied and is no longer registered also rebuilds.
        var renamed = Migrator()
        renamed.eraseDatabaseOnSchemaChange = true
        renamed.register("v1-renamed") { db in try db.execute(sql: "CREATE TABLE u(x)") }
        try renamed.migrate(DatabaseQueue(path: path))
        #expect(try Database(path: path).tableNames() == ["strata_migrations", "u"])
    }

    @Test func refusesToRunInsideATransaction() throws {
        let db = try Database()
        var migrator = Migrator()
        migrator.register("v1") { db in try db.execute(sql: "CREATE TABLE t(a)") }
        try db.transaction {
            expectError(.misuse) { try migrator.migrate(db) }
        }
    }

    @Test func migratesFromAsyncCode() async throws {
        let queue = try DatabaseQueue()
        var migrator = Migrator()
        migrator.register("v1") { db in try db.create(table: Note.self) }
        try await migrator.migrate(queue)
        #expect(try await queue.read { db in try db.tableExists("notes") })
    }
}
