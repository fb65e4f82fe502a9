import Foundation
import Strata
import StrataDocuments
import StrataServerTestHelpers
import StrataSync
import StrataTestHelpers
import Testing

/// Relational tables shared between devices through `strata serve`: each
/// device a file of its own with a `notes` table, synced as documents.
@Suite struct TableSyncTests {
    static let schema = """
        CREATE TABLE notes(id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL, body TEXT, pinned INTEGER, score REAL)
        """

    /// A device: a file with the notes table, synced.
    struct Device {
        let pool: DatabasePool
        let sync: TableSync

        init(rows: String? = nil) throws {
            pool = try DatabasePool(path: try makeTemporaryPath())
            try pool.write { db in
                try db.execute(sql: TableSyncTests.schema)
                if let rows { try db.execute(sql: rows) }
            }
            sync = try TableSync(pool, tables: ["notes"])
        }

        func execute(_ sql: String, _ arguments: StatementArguments = []) throws {
            try pool.write { try $0.execute(sql: sql, arguments: arguments) }
        }

        /// The table, a line per row: `id|title|body|pinned|score`.
        func rows() throws -> [String] {
            try pool.read { db in
                try Row.fetchAll(db, sql: "SELECT id, title, body, pinned, score FROM notes ORDER BY id").map { row in
                    row.databaseValues.map { value in
                        if case .null = value { return "NULL" }
                        return value.description
                    }.joined(separator: "|")
                }
            }
        }
    }

    /// A device file made by `schema`, syncing `table`.
    static func device(_ schema: String, syncing table: String) throws -> (DatabasePool, TableSync) {
        try device(schema, syncing: [table])
    }

    /// A device file made by `schema`, syncing `tables`.
    static func device(_ schema: String, syncing tables: [String]) throws -> (DatabasePool, TableSync) {
        let pool = try DatabasePool(path: try makeTemporaryPath())
        try pool.write { try $0.execute(sql: schema) }
        return (pool, try TableSync(pool, tables: tables))
    }

    /// The rows `sql` reads, a line each, their values joined by `|`.
    static func lines(_ pool: DatabasePool, _ sql: String) throws -> [String] {
        try pool.read { db in
            try Row.fetchAll(db, sql: sql).map { $0.databaseValues.map(\.description).joined(separator: "|") }
        }
    }

    func server() async throws -> (RunningServer, RemoteDatabase) {
        let server = try await RunningServer.start()
        let remote = try server.client().database("notes")
        try await remote.create()
        return (server, remote)
    }

    @Test func twoDevicesConvergeThroughTheServer() async throws {
        let (server, remote) = try await server()
        defer { server.stop() }
        // A row made before syncing began is sent too.
        let alice = try Device(rows: "INSERT INTO notes VALUES ('a', 'Groceries', 'milk', 1, 2.5)")
        let bob = try Device()
        // Offline: Alice adds a row; Bob adds one with raw SQL on a second
        // connection to his file, and one in a transaction he rolls back.
        try alice.execute("INSERT INTO notes VALUES ('b', 'Books', NULL, 0, NULL)")
        let other = try Database(path: bob.pool.path)
        try other.execute(sql: "INSERT INTO notes VALUES ('c', 'Calls', 'mum', NULL, 3.0)")
        try other.execute(sql: "BEGIN; INSERT INTO notes VALUES ('d', 'never', NULL, NULL, NULL); ROLLBACK")
        try other.close()
        #expect(try bob.sync.pendingChangeCount() == 1)

        try await alice.sync.sync(with: remote)
        try await bob.sync.sync(with: remote)
        try await alice.sync.sync(with: remote)
        let expected = ["'a'|'Groceries'|'milk'|1|2.5", "'b'|'Books'|NULL|0|NULL", "'c'|'Calls'|'mum'|NULL|3.0"]
        #expect(try alice.rows() == expected)
        #expect(try bob.rows() == expected)
        // On the server, each row is a document any CouchDB client reads.
        let document = try await remote.document(id: "notes:a")
        #expect(document["$table"] == "notes")
        #expect(document["title"] == "Groceries" && document["pinned"] == 1 && document["score"] == .number("2.5"))
        #expect(try await remote.document(id: "notes:b")["body"] == .null)
        await #expect(throws: (any Error).self) { try await remote.document(id: "notes:d") }

        // An edit and a delete on different devices reach both.
        try alice.execute("UPDATE notes SET title = 'Groceries for Sunday' WHERE id = 'a'")
        try bob.execute("DELETE FROM notes WHERE id = 'b'")
        try await alice.sync.sync(with: remote)
        try await bob.sync.sync(with: remote)
        try await alice.sync.sync(with: remote)
        let after = ["'a'|'Groceries for Sunday'|'milk'|1|2.5", "'c'|'Calls'|'mum'|NULL|3.0"]
        #expect(try alice.rows() == after)
        #expect(try bob.rows() == after)
        // Rows that came from the server were not captured again.
        #expect(try alice.sync.pendingChangeCount() == 0 && bob.sync.pendingChangeCount() == 0)
        #expect(try await alice.sync.captureLocalChanges() == 0)
    }

    @Test func theSameRowEditedOnTwoDevicesEndsTheSameEverywhere() async throws {
        let (server, remote) = try await server()
        defer { server.stop() }
        let alice = try Device(rows: "INSERT INTO notes VALUES ('n', 'Plan', 'draft', NULL, NULL)")
        let bob = try Device()
        try await alice.sync.sync(with: remote)
        try await bob.sync.sync(with: remote)
        #expect(try bob.rows() == ["'n'|'Plan'|'draft'|NULL|NULL"])
        // Both edit the row offline.
        try alice.execute("UPDATE notes SET body = 'alice''s plan' WHERE id = 'n'")
        try bob.execute("UPDATE notes SET body = 'bob''s plan', pinned = 1 WHERE id = 'n'")
        try await alice.sync.sync(with: remote)
        try await bob.sync.sync(with: remote)
        try await alice.sync.sync(with: remote)
        // CouchDB's winner, the same on both; the other edit is kept as a
        // conflicting revision, listed on both devices.
        #expect(try alice.rows() == bob.rows())
        let winner = try await remote.document(id: "notes:n")
        #expect(try alice.rows() == ["'n'|'Plan'|'\(winner["body"]!.stringValue!.replacingOccurrences(of: "'", with: "''"))'|\(winner["pinned"] == .null ? "NULL" : "1")|NULL"])
        let onAlice = try alice.sync.conflicts(in: "notes")
        let onBob = try bob.sync.conflicts(in: "notes")
        #expect(onAlice.count == 1 && onAlice.first?.key == "n" && onAlice.first?.losers.count == 1)
        #expect(onAlice.map(\.winner) == onBob.map(\.winner) && onAlice.map(\.losers) == onBob.map(\.losers))
        let loser = try await remote.document(id: "notes:n", options: DocumentReadOptions(rev: onAlice[0].losers[0]))
        #expect(Set([winner["body"], loser["body"]]) == ["alice's plan", "bob's plan"])
    }

    /// The server's validation applies to a row as to any write: a refused
    /// row is counted, stays on its device, and the others sync.
    @Test func theServersValidationRefusesARow() async throws {
        let (server, remote) = try await server()
        defer { server.stop() }
        try await remote.put(["_id": "_design/rules", "validate_doc_update": """
            function(newDoc) { if (newDoc['$table'] === 'notes' && !newDoc._deleted && newDoc.title === '') throw({forbidden: 'a note needs a title'}); }
            """])
        let alice = try Device(rows: "INSERT INTO notes VALUES ('ok', 'Titled', NULL, NULL, NULL), ('bad', '', NULL, NULL, NULL)")
        let bob = try Device()
        let (push, _) = try await alice.sync.sync(with: remote)
        #expect(push.documentWriteFailures == 1 && push.documentsWritten == 1)
        // The design document stays on the server: on Bob's device, which
        // runs no JavaScript, its validator would refuse every row.
        let (_, bobPull) = try await bob.sync.sync(with: remote)
        #expect(bobPull.documentWriteFailures == 0)
        #expect(try bob.rows() == ["'ok'|'Titled'|NULL|NULL|NULL"])
        #expect(throws: DocumentError.self) { try bob.sync.documents.document(id: "_design/rules") }
        #expect(try alice.rows().count == 2)
        // Given a title, it is a new revision the server takes.
        try alice.execute("UPDATE notes SET title = 'Now titled' WHERE id = 'bad'")
        try await alice.sync.sync(with: remote)
        try await bob.sync.sync(with: remote)
        #expect(try bob.rows() == ["'bad'|'Now titled'|NULL|NULL|NULL", "'ok'|'Titled'|NULL|NULL|NULL"])
    }

    /// Three devices editing offline (new rows, one row edited on all
    /// three, a deletion) converge through the server, and a merge on one
    /// of them settles the conflict everywhere.
    @Test func threeDevicesConverge() async throws {
        let (server, remote) = try await server()
        defer { server.stop() }
        let devices = [try Device(rows: "INSERT INTO notes VALUES ('shared', 'Plan', 'draft', 0, 1.0), ('gone', 'x', NULL, NULL, NULL)"),
                       try Device(), try Device()]
        for device in devices { try await device.sync.sync(with: remote) }
        for device in devices { try await device.sync.sync(with: remote) }
        try devices[0].execute("UPDATE notes SET title = 'Plan A' WHERE id = 'shared'; INSERT INTO notes VALUES ('a', 'from 0', NULL, NULL, NULL)")
        try devices[1].execute("UPDATE notes SET body = 'final' WHERE id = 'shared'; DELETE FROM notes WHERE id = 'gone'")
        try devices[2].execute("UPDATE notes SET pinned = 1 WHERE id = 'shared'; INSERT INTO notes VALUES ('c', 'from 2', NULL, NULL, NULL)")
        for _ in 0..<2 {
            for device in devices { try await device.sync.sync(with: remote) }
        }
        let rows = try devices[0].rows()
        for device in devices.dropFirst() { #expect(try device.rows() == rows) }
        #expect(rows.map { $0.split(separator: "|")[0] } == ["'a'", "'c'", "'shared'"])
        #expect(try devices[0].sync.conflicts(in: "notes").first?.losers.count == 2)
        // Each device changed another column of the shared row: a merge keeps all three.
        #expect(try devices[1].sync.resolveConflicts(in: "notes", using: .mergeColumns()) == 1)
        for _ in 0..<2 {
            for device in devices { try await device.sync.sync(with: remote) }
        }
        for device in devices {
            #expect(try device.rows().last == "'shared'|'Plan A'|'final'|1|1.0")
            #expect(try device.sync.conflicts(in: "notes").isEmpty)
        }
    }

    /// Two devices with one row edited on both, synced: the row conflicted
    /// on both.
    func conflicted(alice aliceEdit: String, bob bobEdit: String) async throws -> (RunningServer, RemoteDatabase, Device, Device) {
        let (server, remote) = try await server()
        let alice = try Device(rows: "INSERT INTO notes VALUES ('n', 'Plan', 'draft', 0, 1.0)")
        let bob = try Device()
        try await alice.sync.sync(with: remote)
        try await bob.sync.sync(with: remote)
        try alice.execute(aliceEdit)
        try bob.execute(bobEdit)
        try await alice.sync.sync(with: remote)
        try await bob.sync.sync(with: remote)
        try await alice.sync.sync(with: remote)
        #expect(try alice.sync.conflicts(in: "notes").count == 1)
        return (server, remote, alice, bob)
    }

    @Test(arguments: ["winner", "newest", "custom"])
    func aResolutionOnOneDeviceReachesTheOther(_ policyName: String) async throws {
        // Bob's edit has the greater score; which one CouchDB picks depends
        // on the revisions' hashes.
        let (server, remote, alice, bob) = try await conflicted(
            alice: "UPDATE notes SET body = 'by alice', score = 2.0 WHERE id = 'n'",
            bob: "UPDATE notes SET body = 'by bob', score = 3.5 WHERE id = 'n'")
        defer { server.stop() }
        let winnerBody = try alice.rows()[0].split(separator: "|")[2]
        let policy: TableSync.ConflictPolicy = switch policyName {
        case "winner": .keepWinner
        case "newest": .newest(by: "score")
        default: .custom { key, versions in
            // Both bodies kept, in a stable order.
            var merged = versions[0]
            merged["body"] = .string(versions.compactMap { $0["body"]?.stringValue }.sorted().joined(separator: " + "))
            merged["title"] = .string("\(key) merged")
            return merged
        }
        }
        #expect(try alice.sync.resolveConflicts(in: "notes", using: policy) == 1)
        let expected = switch policyName {
        case "winner": ["'n'|'Plan'|\(winnerBody)|0|\(winnerBody == "'by bob'" ? "3.5" : "2.0")"]
        case "newest": ["'n'|'Plan'|'by bob'|0|3.5"]
        default: ["'n'|'n merged'|'by alice + by bob'|0|\(winnerBody == "'by bob'" ? "3.5" : "2.0")"]
        }
        #expect(try alice.rows() == expected)
        #expect(try alice.sync.conflicts(in: "notes").isEmpty)
        // The resolution is a write like any other: it replicates.
        try await alice.sync.sync(with: remote)
        try await bob.sync.sync(with: remote)
        #expect(try bob.rows() == expected)
        #expect(try bob.sync.conflicts(in: "notes").isEmpty)
        #expect(try await remote.document(id: "notes:n", options: DocumentReadOptions(conflicts: true))["_conflicts"] == nil)
        // Nothing of the resolution waits to be captured again.
        #expect(try alice.sync.pendingChangeCount() == 0)
    }

    /// Edits of different columns on two devices are all kept; a column
    /// both changed takes the winner's value, or the newest's.
    @Test(arguments: [nil, "score"])
    func columnsEditedOnDifferentDevicesMerge(newestBy: String?) async throws {
        let (server, remote, alice, bob) = try await conflicted(
            alice: "UPDATE notes SET title = 'Alice''s plan', score = 2.0 WHERE id = 'n'",
            bob: "UPDATE notes SET body = 'final', pinned = 1, score = 3.5 WHERE id = 'n'")
        defer { server.stop() }
        let winnerScore = try alice.rows()[0].split(separator: "|")[4]
        #expect(try alice.sync.resolveConflicts(in: "notes", using: .mergeColumns(newestBy: newestBy)) == 1)
        let expected = ["'n'|'Alice''s plan'|'final'|1|\(newestBy == nil ? winnerScore : "3.5")"]
        #expect(try alice.rows() == expected)
        try await alice.sync.sync(with: remote)
        try await bob.sync.sync(with: remote)
        #expect(try bob.rows() == expected)
        #expect(try bob.sync.conflicts(in: "notes").isEmpty)
    }

    /// Without the common ancestor (compacted away), a merge cannot tell
    /// who changed a column: each column that differs takes the winner's.
    @Test func aMergeWithoutTheAncestorKeepsTheWinnersDifferingColumns() async throws {
        let (server, _, alice, _) = try await conflicted(
            alice: "UPDATE notes SET title = 'Alice''s plan' WHERE id = 'n'",
            bob: "UPDATE notes SET body = 'final' WHERE id = 'n'")
        defer { server.stop() }
        let before = try alice.rows()
        try alice.sync.documents.compact()
        #expect(try alice.sync.resolveConflicts(in: "notes", using: .mergeColumns()) == 1)
        #expect(try alice.rows() == before)
        #expect(try alice.sync.conflicts(in: "notes").isEmpty)
    }

    /// A Mango selector on the columns picks the rows that sync, both ways;
    /// a deleted row's document keeps its members, so its deletion passes
    /// the same selector.
    @Test func aSelectorSyncsOnlyTheRowsItMatches() async throws {
        let (server, remote) = try await server()
        defer { server.stop() }
        let alice = try Device(rows: """
            INSERT INTO notes VALUES ('p1', 'pinned', NULL, 1, NULL), ('u1', 'not pinned', NULL, 0, NULL), ('p2', 'pinned too', NULL, 1, NULL)
            """)
        let bob = try Device(rows: "INSERT INTO notes VALUES ('u2', 'bob''s own', NULL, NULL, NULL)")
        let pinned = ReplicationOptions(filter: .selector(["\\$table": "notes", "pinned": 1]))  // `$` escaped, as CouchDB wants
        try await alice.sync.sync(with: remote, options: pinned)
        try await bob.sync.sync(with: remote, options: pinned)
        #expect(try bob.rows() == ["'p1'|'pinned'|NULL|1|NULL", "'p2'|'pinned too'|NULL|1|NULL", "'u2'|'bob''s own'|NULL|NULL|NULL"])
        // What the selector leaves out stays on its device.
        #expect(try await remote.info().documentCount == 2)
        try alice.execute("DELETE FROM notes WHERE id = 'p1'")
        try await alice.sync.sync(with: remote, options: pinned)
        try await bob.sync.sync(with: remote, options: pinned)
        #expect(try bob.rows() == ["'p2'|'pinned too'|NULL|1|NULL", "'u2'|'bob''s own'|NULL|NULL|NULL"])
        #expect(try await remote.changes().results.contains { $0.id == "notes:p1" && $0.deleted })
    }

    /// A row edited here while another device's edit of it arrives (before
    /// this edit is captured) keeps the local edit until the capture, which
    /// makes it a revision on the one it was made on: a conflict, both
    /// edits kept, the row CouchDB's winner on every device. A local
    /// deletion made the same way loses to the other device's edit.
    @Test func aLocalChangeRacingAnArrivingOneIsAConflict() async throws {
        let (server, remote) = try await server()
        defer { server.stop() }
        let alice = try Device(rows: "INSERT INTO notes VALUES ('n', 'Plan', 'draft', NULL, NULL), ('d', 'Old', NULL, NULL, NULL)")
        let bob = try Device()
        try await alice.sync.sync(with: remote)
        try await bob.sync.sync(with: remote)
        try bob.execute("UPDATE notes SET body = 'by bob' WHERE id IN ('n', 'd')")
        try await bob.sync.sync(with: remote)
        // Alice edits one row and deletes the other, and before her changes
        // are captured a pull brings Bob's.
        try alice.execute("UPDATE notes SET body = 'by alice' WHERE id = 'n'")
        try alice.execute("DELETE FROM notes WHERE id = 'd'")
        try await Replicator(source: remote, target: alice.sync.documents).run()
        #expect(try alice.rows() == ["'n'|'Plan'|'by alice'|NULL|NULL"])
        try await alice.sync.sync(with: remote)
        try await bob.sync.sync(with: remote)
        try await alice.sync.sync(with: remote)
        #expect(try alice.rows() == bob.rows())
        #expect(try bob.rows().contains("'d'|'Old'|'by bob'|NULL|NULL"))
        let conflicts = try bob.sync.conflicts(in: "notes")
        #expect(conflicts.map(\.key) == ["n"] && conflicts.first?.losers.count == 1)
        #expect(try alice.sync.conflicts(in: "notes").map(\.winner) == conflicts.map(\.winner))
        var bodies: Set<String> = []
        for rev in [conflicts[0].winner] + conflicts[0].losers {
            bodies.insert(try await remote.document(id: "notes:n", options: DocumentReadOptions(rev: rev))["body"]?.stringValue ?? "")
        }
        #expect(bodies == ["by alice", "by bob"])
        #expect(conflicts[0].winner.hasPrefix("2-"))
        #expect(try alice.sync.pendingChangeCount() == 0)
    }

    /// An update that writes a row's values back unchanged (an app that
    /// saves every column) is no edit: when a change to the row arrives
    /// before the capture, the row takes it, with no conflict. A row
    /// changed and changed back is the same.
    @Test func aRowWrittenBackUnchangedTakesTheChangeThatArrives() async throws {
        let (server, remote) = try await server()
        defer { server.stop() }
        let alice = try Device(rows: "INSERT INTO notes VALUES ('n', 'Plan', 'draft', NULL, NULL), ('m', 'Menu', 'soup', 1, NULL)")
        let bob = try Device()
        try await alice.sync.sync(with: remote)
        try await bob.sync.sync(with: remote)
        try bob.execute("UPDATE notes SET body = 'by bob' WHERE id IN ('n', 'm')")
        try await bob.sync.sync(with: remote)
        // Alice saves one row as it is and changes the other and back, and
        // before that is captured a pull brings Bob's changes.
        try alice.execute("UPDATE notes SET title = title, body = body WHERE id = 'n'")
        try alice.execute("UPDATE notes SET body = 'soup!' WHERE id = 'm'")
        try alice.execute("UPDATE notes SET body = 'soup' WHERE id = 'm'")
        try await Replicator(source: remote, target: alice.sync.documents).run()
        #expect(try await alice.sync.captureLocalChanges() == 0)
        let expected = ["'m'|'Menu'|'by bob'|1|NULL", "'n'|'Plan'|'by bob'|NULL|NULL"]
        #expect(try alice.rows() == expected)
        #expect(try alice.sync.conflicts(in: "notes").isEmpty)
        #expect(try alice.sync.pendingChangeCount() == 0)
        try await alice.sync.sync(with: remote)
        try await bob.sync.sync(with: remote)
        #expect(try bob.rows() == expected && bob.sync.conflicts(in: "notes").isEmpty)
        #expect(try await remote.document(id: "notes:n", options: DocumentReadOptions(conflicts: true))["_conflicts"] == nil)
    }

    @Test func aRowMadeAgainAfterItsDeletionSyncs() async throws {
        let (server, remote) = try await server()
        defer { server.stop() }
        let alice = try Device(rows: "INSERT INTO notes VALUES ('n', 'First life', NULL, NULL, NULL)")
        let bob = try Device()
        try await alice.sync.sync(with: remote)
        try await bob.sync.sync(with: remote)
        try bob.execute("DELETE FROM notes WHERE id = 'n'")
        try await bob.sync.sync(with: remote)
        try await alice.sync.sync(with: remote)
        #expect(try alice.rows().isEmpty)
        // The same key again, on Alice's device: a new life for the document.
        try alice.execute("INSERT INTO notes VALUES ('n', 'Second life', NULL, NULL, NULL)")
        try await alice.sync.sync(with: remote)
        try await bob.sync.sync(with: remote)
        #expect(try bob.rows() == ["'n'|'Second life'|NULL|NULL|NULL"])
    }

    @Test func anEditBeatsADeleteOnTheOtherDevice() async throws {
        let (server, remote) = try await server()
        defer { server.stop() }
        let alice = try Device(rows: "INSERT INTO notes VALUES ('n', 'Keep me', NULL, NULL, NULL)")
        let bob = try Device()
        try await alice.sync.sync(with: remote)
        try await bob.sync.sync(with: remote)
        try alice.execute("DELETE FROM notes WHERE id = 'n'")
        try bob.execute("UPDATE notes SET body = 'still needed' WHERE id = 'n'")
        try await alice.sync.sync(with: remote)
        try await bob.sync.sync(with: remote)
        try await alice.sync.sync(with: remote)
        // CouchDB's rule: a live revision wins over a deleted one.
        #expect(try alice.rows() == ["'n'|'Keep me'|'still needed'|NULL|NULL"])
        #expect(try bob.rows() == alice.rows())
    }

    @Test func aMemberTheTableDoesNotKnowIsKept() async throws {
        let (server, remote) = try await server()
        defer { server.stop() }
        // A newer app version wrote a field this table has no column for.
        try await remote.put(["_id": "notes:x", "$table": "notes", "id": "x", "title": "From the future", "color": "red"])
        let alice = try Device()
        try await alice.sync.sync(with: remote)
        #expect(try alice.rows() == ["'x'|'From the future'|NULL|NULL|NULL"])
        try alice.execute("UPDATE notes SET title = 'Edited by an older app' WHERE id = 'x'")
        try await alice.sync.sync(with: remote)
        let document = try await remote.document(id: "notes:x")
        #expect(document["title"] == "Edited by an older app")
        #expect(document["color"] == "red")
    }

    /// A column only the newer app version has, added `NOT NULL DEFAULT`:
    /// a row made by the older version arrives without the member and
    /// takes the default. A document whose `NOT NULL` column has no value
    /// (another client wrote `null`) is refused and reported, and the rest
    /// of the pull arrives; its next revision that fits is written.
    @Test func aRowWithoutAValueForANotNullColumnIsRefusedNotBlocking() async throws {
        let (server, remote) = try await server()
        defer { server.stop() }
        let older = try Device()
        let (newer, newerSync) = try Self.device("""
            CREATE TABLE notes(id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL, body TEXT, pinned INTEGER, score REAL);
            ALTER TABLE notes ADD COLUMN color TEXT NOT NULL DEFAULT 'white';
            """, syncing: "notes")
        try older.execute("INSERT INTO notes(id, title) VALUES ('a', 'Made by the older app')")
        try await older.sync.sync(with: remote)
        try await remote.put(["_id": "notes:b", "$table": "notes", "id": "b", "title": nil, "color": "red"])
        try await remote.put(["_id": "notes:c", "$table": "notes", "id": "c", "title": "Fine", "color": nil])
        try await newerSync.sync(with: remote)
        #expect(try Self.lines(newer, "SELECT id, title, color FROM notes ORDER BY id") == ["'a'|'Made by the older app'|'white'"])
        #expect(try newerSync.refusedRows(in: "notes").map { "\($0.key): \($0.reason)" } == [
            "b: the document has no value for title, a NOT NULL column",
            "c: the document has no value for color, a NOT NULL column",
        ])
        // Fixed by the client that wrote it: written, no longer refused.
        let b = try await remote.document(id: "notes:b")
        try await remote.put(["_id": "notes:b", "_rev": b["_rev"]!, "$table": "notes", "id": "b", "title": "Now titled", "color": "red"])
        try await newerSync.sync(with: remote)
        #expect(try Self.lines(newer, "SELECT id, title, color FROM notes ORDER BY id") == ["'a'|'Made by the older app'|'white'", "'b'|'Now titled'|'red'"])
        #expect(try newerSync.refusedRows(in: "notes").map(\.key) == ["c"])
        // The same for a document written alone, not in a pull's batch.
        _ = try await newerSync.documents.put(["_id": "notes:d", "$table": "notes", "id": "d", "title": nil])
        #expect(try newerSync.refusedRows(in: "notes").map(\.key) == ["c", "d"])
        // The older app, without the column, takes every row that fits it.
        try await older.sync.sync(with: remote)
        #expect(try older.rows().map { $0.prefix(3) } == ["'a'", "'b'", "'c'"])
    }

    /// Names are written into the triggers' SQL as literals: a table and
    /// a column whose names hold a quote followed by a combining mark (one
    /// Character, which a Character-level replacement does not double)
    /// sync, and a refusal names the column.
    @Test func namesWithAQuoteAndACombiningMarkSync() async throws {
        let (server, remote) = try await server()
        defer { server.stop() }
        let table = "o'\u{301}k", column = "t'\u{301}"
        let schema = "CREATE TABLE \(quoteIdentifier(table))(id TEXT PRIMARY KEY NOT NULL, \(quoteIdentifier(column)) TEXT NOT NULL UNIQUE)"
        let (one, oneSync) = try Self.device(schema, syncing: table)
        let (two, twoSync) = try Self.device(schema, syncing: table)
        try await one.write { try $0.execute(sql: "INSERT INTO \(quoteIdentifier(table)) VALUES ('a', 'it''s')") }
        try await oneSync.sync(with: remote)
        try await twoSync.sync(with: remote)
        let read = "SELECT id, \(quoteIdentifier(column)) FROM \(quoteIdentifier(table)) ORDER BY id"
        #expect(try Self.lines(two, read) == ["'a'|'it''s'"])
        try await remote.put(["_id": .string(table + ":b"), "$table": .string(table), "id": "b"])
        var c: JSONObject = ["_id": .string(table + ":c"), "$table": .string(table), "id": "c"]
        c[column] = "it's"
        try await remote.put(c)
        try await twoSync.sync(with: remote)
        #expect(try Self.lines(two, read) == ["'a'|'it''s'"])
        // A document written alone is checked by the documents' triggers,
        // whose SQL names the column.
        var d: JSONObject = ["_id": .string(table + ":d"), "$table": .string(table), "id": "d"]
        d[column] = "it's"
        _ = try await twoSync.documents.put(d)
        #expect(try Self.lines(two, read) == ["'a'|'it''s'"])
        #expect(try twoSync.refusedRows(in: table).map { "\($0.key): \($0.reason)" } == [
            "b: the document has no value for \(column), a NOT NULL column",
            "c: UNIQUE constraint failed: \(table).\(column)",
            "d: another row has its value of \(column) (UNIQUE)",
        ])
        // The same row edited on both devices: a conflict, listed under
        // the table's name (SQLite counts its code points, not Characters).
        try await one.write { try $0.execute(sql: "UPDATE \(quoteIdentifier(table)) SET \(quoteIdentifier(column)) = 'one' WHERE id = 'a'") }
        try await two.write { try $0.execute(sql: "UPDATE \(quoteIdentifier(table)) SET \(quoteIdentifier(column)) = 'two' WHERE id = 'a'") }
        try await oneSync.sync(with: remote)
        try await twoSync.sync(with: remote)
        #expect(try twoSync.conflicts(in: table).map(\.key) == ["a"])
        // A key that starts with a combining mark, which joins the colon
        // before it in one Character.
        let mark = "\u{301}m"
        try await one.write { try $0.execute(sql: "INSERT INTO \(quoteIdentifier(table)) VALUES (?, 'x')", arguments: [mark]) }
        try await oneSync.sync(with: remote)
        try await twoSync.sync(with: remote)
        try await one.write { try $0.execute(sql: "UPDATE \(quoteIdentifier(table)) SET \(quoteIdentifier(column)) = 'y' WHERE id = ?", arguments: [mark]) }
        try await two.write { try $0.execute(sql: "UPDATE \(quoteIdentifier(table)) SET \(quoteIdentifier(column)) = 'z' WHERE id = ?", arguments: [mark]) }
        try await oneSync.sync(with: remote)
        try await twoSync.sync(with: remote)
        #expect(try twoSync.conflicts(in: table).map { Array($0.key.unicodeScalars) } == [Array("a".unicodeScalars), Array(mark.unicodeScalars)])
    }

    /// A table and columns whose names hold a double quote sync both ways:
    /// SQLite's JSON paths have no escapes (`$."say \"hi\""` stops at the
    /// inner quote and reads nothing), so such a member is found by name.
    /// A text, a BLOB (an attachment of that name) and a missing member
    /// taking the column's default all arrive.
    @Test func columnsWhoseNamesHoldADoubleQuoteSync() async throws {
        let (server, remote) = try await server()
        defer { server.stop() }
        let table = "my \"notes\"", text = "say \"hi\"", blob = "pic\"", fallback = "n\"o"
        let quoted = quoteIdentifier(table)
        let schema = """
            CREATE TABLE \(quoted)(id TEXT PRIMARY KEY NOT NULL, \(quoteIdentifier(text)) TEXT NOT NULL,
                \(quoteIdentifier(blob)) BLOB, \(quoteIdentifier(fallback)) INTEGER NOT NULL DEFAULT 7)
            """
        let read = "SELECT id, \(quoteIdentifier(text)), hex(\(quoteIdentifier(blob))), \(quoteIdentifier(fallback)) FROM \(quoted) ORDER BY id"
        let (one, oneSync) = try Self.device(schema, syncing: table)
        let (two, twoSync) = try Self.device(schema, syncing: table)
        try await one.write { try $0.execute(sql: "INSERT INTO \(quoted) VALUES ('a', 'hello', x'0102', 3)") }
        try await oneSync.sync(with: remote)
        let document = try await remote.document(id: table + ":a")
        #expect(document[text] == "hello" && document[fallback] == 3)
        #expect(try await remote.attachment(id: table + ":a", name: blob).data == Data([1, 2]))
        try await twoSync.sync(with: remote)
        #expect(try Self.lines(two, read) == ["'a'|'hello'|'0102'|3"])
        // Written by another client, without the defaulted member.
        var b: JSONObject = ["_id": .string(table + ":b"), "$table": .string(table), "id": "b"]
        b[text] = "from \"elsewhere\""
        try await remote.put(b)
        try await twoSync.sync(with: remote)
        #expect(try Self.lines(two, read) == ["'a'|'hello'|'0102'|3", "'b'|'from \"elsewhere\"'|''|7"])
        #expect(try twoSync.refusedRows(in: table).isEmpty)
        // An edit on the second device comes back.
        try await two.write { try $0.execute(sql: "UPDATE \(quoted) SET \(quoteIdentifier(text)) = 'edited', \(quoteIdentifier(blob)) = x'FF' WHERE id = 'a'") }
        try await twoSync.sync(with: remote)
        try await oneSync.sync(with: remote)
        #expect(try Self.lines(one, read) == ["'a'|'edited'|'FF'|3", "'b'|'from \"elsewhere\"'|''|7"])
    }

    /// Rows of a pull that break another constraint (a CHECK, a UNIQUE
    /// column) are refused and reported one by one, and the rest of the
    /// batch is written; a later revision that fits is written.
    @Test func aPulledRowThatBreaksAConstraintIsRefusedAlone() async throws {
        let (pool, sync) = try Self.device("""
            CREATE TABLE people(id TEXT PRIMARY KEY NOT NULL, email TEXT UNIQUE, age INTEGER CHECK (age >= 0))
            """, syncing: "people")
        try await Self.write([
            ["_id": "people:a", "email": "a@example.com", "age": 30],
            ["_id": "people:b", "email": "b@example.com", "age": -1],
            ["_id": "people:c", "email": "a@example.com", "age": 40],
            ["_id": "people:d", "email": "d@example.com", "age": 50],
        ], to: sync, batched: true)
        #expect(try Self.lines(pool, "SELECT id, age FROM people ORDER BY id") == ["'a'|30", "'d'|50"])
        #expect(try sync.refusedRows(in: "people").map { "\($0.key): \($0.reason)" } == [
            "b: CHECK constraint failed: age >= 0",
            "c: UNIQUE constraint failed: people.email",
        ])
        let b = try await sync.documents.document(id: "people:b")
        let fixed: JSONObject = ["_id": "people:b", "_rev": .string("2-" + String(repeating: "b", count: 32)), "email": "b@example.com", "age": 20,
                                 "_revisions": ["start": 2, "ids": [.string(String(repeating: "b", count: 32)), .string(String(b["_rev"]!.stringValue!.dropFirst(2)))]]]
        _ = try await sync.documents.bulkPut([fixed], newEdits: false)
        #expect(try Self.lines(pool, "SELECT id, age FROM people ORDER BY id") == ["'a'|30", "'b'|20", "'d'|50"])
        #expect(try sync.refusedRows(in: "people").map(\.key) == ["c"])
        // Once the row it collided with is gone, each sync's
        // applyWaitingRows() writes it.
        try await pool.write { try $0.execute(sql: "DELETE FROM people WHERE id = 'a'") }
        #expect(try await sync.applyWaitingRows() == 1)
        #expect(try Self.lines(pool, "SELECT id, age FROM people ORDER BY id") == ["'b'|20", "'c'|40", "'d'|50"])
        #expect(try sync.refusedRows(in: "people").isEmpty)
    }

    /// A document written alone (an app's own `put`, another process
    /// replicating into the file: the documents' triggers apply it) whose
    /// row would take another row's value of a UNIQUE column or index is
    /// refused as a batch refuses it: its document kept, the other writes
    /// going on, the row written once the value is free.
    @Test func aDocumentWrittenAloneWhoseRowTakesAUniqueValueIsRefused() async throws {
        let (pool, sync) = try Self.device("""
            CREATE TABLE people(id TEXT PRIMARY KEY NOT NULL, email TEXT UNIQUE COLLATE NOCASE, team TEXT, number INTEGER);
            CREATE UNIQUE INDEX people_place ON people(team, number)
            """, syncing: "people")
        try await Self.write([
            ["_id": "people:a", "email": "a@example.com", "team": "red", "number": 1],
            ["_id": "people:b", "email": "A@Example.com", "team": "blue", "number": 1],
            ["_id": "people:c", "email": "c@example.com", "team": "red", "number": 1],
            ["_id": "people:d", "email": "d@example.com", "team": "red", "number": 2],
            ["_id": "people:e", "email": .null, "team": .null, "number": 1],
            ["_id": "people:f", "email": .null, "team": .null, "number": 1],
        ], to: sync, batched: false)
        #expect(try Self.lines(pool, "SELECT id FROM people ORDER BY id") == ["'a'", "'d'", "'e'", "'f'"])
        #expect(try sync.refusedRows(in: "people").map { "\($0.key): \($0.reason)" } == [
            "b: another row has its value of email (UNIQUE)",
            "c: another row has its value of team, number (UNIQUE)",
        ])
        #expect(try await sync.documents.document(id: "people:b")["email"] == "A@Example.com")
        // A row's own values are no collision: an edit of it is written.
        let a = try await sync.documents.document(id: "people:a")
        _ = try await sync.documents.put(["_id": "people:a", "_rev": a["_rev"]!, "email": "a@example.com", "team": "red", "number": 1, "note": "kept"])
        #expect(try sync.refusedRows(in: "people").map(\.key) == ["b", "c"])
        // Once the values are free, each sync's applyWaitingRows() writes
        // the rows.
        try await pool.write { try $0.execute(sql: "UPDATE people SET email = 'x@example.com', number = 3 WHERE id = 'a'") }
        #expect(try await sync.applyWaitingRows() == 2)
        #expect(try Self.lines(pool, "SELECT id, email, team, number FROM people ORDER BY id") == [
            "'a'|'x@example.com'|'red'|3", "'b'|'A@Example.com'|'blue'|1", "'c'|'c@example.com'|'red'|1",
            "'d'|'d@example.com'|'red'|2", "'e'|NULL|NULL|1", "'f'|NULL|NULL|1",
        ])
        #expect(try sync.refusedRows(in: "people").isEmpty)
    }

    /// A document written alone whose row breaks a constraint the
    /// triggers do not check first (a CHECK, a STRICT column's type, an
    /// app's trigger that raises) is kept and its row refused, as a batch
    /// refuses it: the write used to fail whole, so the document was lost
    /// to this device (a replicator would not send it again).
    @Test func aDocumentWrittenAloneWhoseRowBreaksACheckIsKeptAndRefused() async throws {
        let (pool, sync) = try Self.device("""
            CREATE TABLE people(id TEXT PRIMARY KEY NOT NULL, age INTEGER CHECK (age >= 0), locked INTEGER NOT NULL DEFAULT 0);
            CREATE TABLE scores(id TEXT PRIMARY KEY NOT NULL, points INTEGER) STRICT;
            CREATE TRIGGER people_locked BEFORE DELETE ON people WHEN OLD.locked BEGIN SELECT RAISE(ABORT, 'a locked person stays'); END;
            """, syncing: ["people", "scores"])
        let old = try await sync.documents.put(["_id": "people:a", "age": 30, "locked": 1])
        let young = try await sync.documents.put(["_id": "people:b", "age": -1])
        _ = try await sync.documents.put(["_id": "scores:s", "points": "many"])
        _ = try await sync.documents.put(["_id": "scores:t", "points": 12])
        #expect(try Self.lines(pool, "SELECT id, age FROM people UNION ALL SELECT id, points FROM scores ORDER BY 1") == ["'a'|30", "'t'|12"])
        #expect(try sync.refusedRows(in: "people").map { "\($0.key): \($0.reason)" } == ["b: CHECK constraint failed: age >= 0"])
        #expect(try sync.refusedRows(in: "scores").map { "\($0.key): \($0.reason)" } == ["s: cannot store TEXT value in INTEGER column scores.points"])
        #expect(try await sync.documents.document(id: "people:b")["age"] == -1)
        #expect(try await sync.documents.document(id: "scores:s")["points"] == "many")

        // A deletion the app's trigger refuses is kept, and the row stays.
        _ = try await sync.documents.delete(id: "people:a", rev: old.rev)
        await #expect(throws: (any Error).self) { try await sync.documents.document(id: "people:a") }
        #expect(try Self.lines(pool, "SELECT id FROM people") == ["'a'"])
        #expect(try sync.refusedRows(in: "people").map { "\($0.key): \($0.reason)" } == [
            "a: a locked person stays", "b: CHECK constraint failed: age >= 0",
        ])
        // Nothing of these was captured to be sent back.
        #expect(try sync.pendingChangeCount() == 0)

        // An edit that fits writes the row; once the trigger is gone,
        // applyWaitingRows() applies the deletion.
        _ = try await sync.documents.put(["_id": "people:b", "_rev": .string(young.rev), "age": 20])
        try await pool.write { try $0.execute(sql: "DROP TRIGGER people_locked") }
        #expect(try await sync.applyWaitingRows() == 1)
        #expect(try Self.lines(pool, "SELECT id, age FROM people ORDER BY id") == ["'b'|20"])
        #expect(try sync.refusedRows(in: "people").isEmpty)
        #expect(try sync.refusedRows(in: "scores").map(\.key) == ["s"])
        #expect(try sync.pendingChangeCount() == 0)
    }

    /// A batch whose rows pass a UNIQUE value along (a gives up its
    /// position to b, b to c) is written whole, whatever order its rows
    /// come in: a row that collided with one written after it is tried
    /// again once that row moved.
    @Test func rowsPassingAUniqueValueAlongInOneBatchAreAllWritten() async throws {
        let (pool, sync) = try Self.device("""
            CREATE TABLE steps(id TEXT PRIMARY KEY NOT NULL, position INTEGER NOT NULL UNIQUE)
            """, syncing: "steps")
        try await Self.write([["_id": "steps:a", "position": 1], ["_id": "steps:b", "position": 2], ["_id": "steps:c", "position": 3]],
                             to: sync, batched: true)
        // Another device's next revision of `id`, at `depth`.
        func next(_ id: String, _ position: Int, depth: Int = 2) async throws -> JSONObject {
            let current = try await sync.documents.document(id: id)
            let parent = String(current["_rev"]!.stringValue!.split(separator: "-")[1])
            let hash = String(repeating: "\(id.last!)\(depth)", count: 16)
            return ["_id": .string(id), "_rev": .string("\(depth)-" + hash), "position": .int(position),
                    "_revisions": ["start": .int(depth), "ids": [.string(hash), .string(parent)]]]
        }
        // c goes to 4 and frees 3 for b, which frees 2 for a: in the
        // batch's order, a and b each collide with a row not yet moved.
        _ = try await sync.documents.bulkPut([try await next("steps:a", 2), try await next("steps:b", 3), try await next("steps:c", 4)],
                                             newEdits: false)
        #expect(try Self.lines(pool, "SELECT id, position FROM steps ORDER BY id") == ["'a'|2", "'b'|3", "'c'|4"])
        #expect(try sync.refusedRows(in: "steps").isEmpty)
        // a wants b's place and b wants c's, which c keeps: both refused.
        // Once c is gone, one applyWaitingRows() writes b, then a.
        _ = try await sync.documents.bulkPut([try await next("steps:a", 3, depth: 3), try await next("steps:b", 4, depth: 3)], newEdits: false)
        #expect(try sync.refusedRows(in: "steps").map(\.key) == ["a", "b"])
        try await pool.write { try $0.execute(sql: "DELETE FROM steps WHERE id = 'c'") }
        #expect(try await sync.applyWaitingRows() == 2)
        #expect(try Self.lines(pool, "SELECT id, position FROM steps ORDER BY id") == ["'a'|3", "'b'|4"])
        #expect(try sync.refusedRows(in: "steps").isEmpty)
    }

    /// Rows that swap their values of a UNIQUE column (two, or three in a
    /// ring), which SQLite refuses one by one in any order, are written
    /// together: in one pull's batch, and by applyWaitingRows() when the
    /// swap came in two pulls. A row changed here and not yet captured is
    /// never rewritten for it, a foreign key naming the table holds, and a
    /// table whose rows cannot be deleted for a moment without touching
    /// others (a cascade, an app's trigger) keeps its rows refused.
    @Test func rowsSwappingAUniqueValueAreWrittenTogether() async throws {
        let (pool, sync) = try Self.device("""
            CREATE TABLE steps(id TEXT PRIMARY KEY NOT NULL, position INTEGER NOT NULL UNIQUE, title TEXT);
            CREATE TABLE marks(id TEXT PRIMARY KEY NOT NULL, step TEXT NOT NULL REFERENCES steps(id));
            CREATE TABLE cards(id TEXT PRIMARY KEY NOT NULL, position INTEGER NOT NULL UNIQUE);
            CREATE TABLE pins(id TEXT PRIMARY KEY NOT NULL, card TEXT REFERENCES cards(id) ON DELETE CASCADE);
            CREATE TABLE tags(id TEXT PRIMARY KEY NOT NULL, position INTEGER NOT NULL UNIQUE);
            CREATE TABLE log(tag TEXT);
            CREATE TRIGGER tags_deleted AFTER DELETE ON tags BEGIN INSERT INTO log VALUES (OLD.id); END;
            """, syncing: ["steps", "marks", "cards", "pins", "tags"])
        try await Self.write([
            ["_id": "steps:a", "position": 1], ["_id": "steps:b", "position": 2], ["_id": "steps:c", "position": 3],
            ["_id": "marks:m", "step": "a"], ["_id": "cards:x", "position": 1], ["_id": "cards:y", "position": 2], ["_id": "pins:p", "card": "x"],
            ["_id": "tags:t", "position": 1], ["_id": "tags:u", "position": 2],
        ], to: sync, batched: true)
        var depths: [String: Int] = [:]
        // Another device's next revision of `id`.
        func next(_ id: String, _ members: JSONObject) async throws -> JSONObject {
            let current = try await sync.documents.document(id: id)
            let depth = (depths[id] ?? 1) + 1
            depths[id] = depth
            let parent = String(current["_rev"]!.stringValue!.split(separator: "-")[1])
            let hash = String(repeating: "\(id.last!)\(depth)", count: 16)
            var document = members
            document["_id"] = .string(id)
            document["_rev"] = .string("\(depth)-" + hash)
            document["_revisions"] = ["start": .int(depth), "ids": [.string(hash), .string(parent)]]
            return document
        }
        func pull(_ documents: [JSONObject]) async throws {
            for result in try await sync.documents.bulkPut(documents, newEdits: false) { _ = try result.get() }
        }
        // a and b swap in one batch; the step a mark refers to is a step
        // still, with its mark.
        try await pull([try await next("steps:a", ["position": 2]), try await next("steps:b", ["position": 1])])
        #expect(try Self.lines(pool, "SELECT id, position FROM steps ORDER BY id") == ["'a'|2", "'b'|1", "'c'|3"])
        #expect(try sync.refusedRows(in: "steps").isEmpty)
        #expect(try Self.lines(pool, "SELECT id, step FROM marks") == ["'m'|'a'"])
        // A ring of three in one batch.
        try await pull([try await next("steps:a", ["position": 3]), try await next("steps:b", ["position": 2]),
                        try await next("steps:c", ["position": 1])])
        #expect(try Self.lines(pool, "SELECT id, position FROM steps ORDER BY id") == ["'a'|3", "'b'|2", "'c'|1"])
        #expect(try sync.refusedRows(in: "steps").isEmpty)
        // A swap that arrives in two pulls: each half refused, then both
        // written by the next applyWaitingRows().
        try await pull([try await next("steps:a", ["position": 2])])
        try await pull([try await next("steps:b", ["position": 3])])
        #expect(try sync.refusedRows(in: "steps").map(\.key) == ["a", "b"])
        #expect(try await sync.applyWaitingRows() == 2)
        #expect(try Self.lines(pool, "SELECT id, position FROM steps ORDER BY id") == ["'a'|2", "'b'|3", "'c'|1"])
        #expect(try sync.refusedRows(in: "steps").isEmpty)
        // Nothing of these writes waits to be sent back.
        #expect(try await sync.captureLocalChanges() == 0)
        // A row changed here and not yet captured keeps its change: the
        // swap it is part of stays refused.
        try await pool.write { try $0.execute(sql: "UPDATE steps SET title = 'mine' WHERE id = 'c'") }
        try await pull([try await next("steps:b", ["position": 1]), try await next("steps:c", ["position": 3])])
        #expect(try Self.lines(pool, "SELECT id, position, title FROM steps ORDER BY id") == ["'a'|2|NULL", "'b'|3|NULL", "'c'|1|'mine'"])
        #expect(try sync.refusedRows(in: "steps").map(\.key) == ["b"])
        // Deleting a card for a moment would delete its pins, and deleting
        // a tag would run the app's trigger: their swaps stay refused, the
        // pin stays and the trigger does not run.
        try await pull([try await next("cards:x", ["position": 2]), try await next("cards:y", ["position": 1]),
                        try await next("tags:t", ["position": 2]), try await next("tags:u", ["position": 1])])
        #expect(try Self.lines(pool, "SELECT id, position FROM cards ORDER BY id") == ["'x'|1", "'y'|2"])
        #expect(try sync.refusedRows(in: "cards").map(\.key) == ["x", "y"])
        #expect(try Self.lines(pool, "SELECT id FROM pins") == ["'p'"])
        #expect(try Self.lines(pool, "SELECT id, position FROM tags ORDER BY id") == ["'t'|1", "'u'|2"])
        #expect(try sync.refusedRows(in: "tags").map(\.key) == ["t", "u"])
        #expect(try Self.lines(pool, "SELECT count(*) FROM log") == ["0"])
    }

    /// An app version that drops a table it used to sync (a migration)
    /// goes on syncing the others: the dropped table's triggers on the
    /// documents, which named it, are removed when the sync is opened
    /// without it, and a table made again under its name is synced anew.
    @Test func aTableTheAppDroppedNoLongerStopsTheOthers() async throws {
        let (pool, first) = try Self.device("""
            CREATE TABLE folders(id TEXT PRIMARY KEY NOT NULL, name TEXT);
            CREATE TABLE notes(id TEXT PRIMARY KEY NOT NULL, title TEXT);
            INSERT INTO folders VALUES ('f', 'Inbox');
            """, syncing: ["folders", "notes"])
        _ = try await first.captureLocalChanges()
        try await pool.write { try $0.execute(sql: "DROP TABLE folders") }
        let sync = try TableSync(pool, tables: ["notes"])
        try await Self.write([["_id": "notes:a", "title": "pulled"], ["_id": "folders:g", "name": "Later"]], to: sync, batched: true)
        try await Self.write([["_id": "notes:b", "title": "written alone"]], to: sync, batched: false)
        try await pool.write { try $0.execute(sql: "INSERT INTO notes VALUES ('c', 'made here')") }
        _ = try await sync.captureLocalChanges()
        #expect(try Self.lines(pool, "SELECT id, title FROM notes ORDER BY id") == ["'a'|'pulled'", "'b'|'written alone'", "'c'|'made here'"])
        #expect(try await sync.documents.document(id: "notes:c")["title"] == "made here")
        // The folder's documents are kept; a new folders table synced again
        // starts from its own rows.
        #expect(try await sync.documents.document(id: "folders:f")["name"] == "Inbox")
        try await pool.write { try $0.execute(sql: "CREATE TABLE folders(id TEXT PRIMARY KEY NOT NULL, name TEXT); INSERT INTO folders VALUES ('h', 'New')") }
        let again = try TableSync(pool, tables: ["folders", "notes"])
        #expect(try await again.captureLocalChanges() == 1)
        #expect(try await again.documents.document(id: "folders:h")["name"] == "New")
    }

    /// Dropping a column of a synced table, which SQLite refuses while the
    /// sync's triggers name it, works inside `TableSync.alter`; the rows go
    /// on syncing both ways, and the dropped column's member stays in the
    /// documents.
    /// A synced table renamed on two devices: until TableSync is opened
    /// again a sync says so; then the rows sync under the new name, the
    /// two devices' documents of the same rows are the same revisions (no
    /// conflict), the old documents stay, and no trigger notes changes
    /// under the old name any more.
    @Test func aRenamedTableSyncsUnderItsNewName() async throws {
        let (server, remote) = try await server()
        defer { server.stop() }
        let alice = try Device(rows: "INSERT INTO notes(id, title) VALUES ('a', 'one'), ('b', 'two')")
        let bob = try Device()
        try await alice.sync.sync(with: remote)
        try await bob.sync.sync(with: remote)
        for device in [alice, bob] { try device.execute("ALTER TABLE notes RENAME TO memos") }
        try alice.execute("INSERT INTO memos(id, title) VALUES ('c', 'three')")
        do {
            try await alice.sync.sync(with: remote)
            Issue.record("a sync of a renamed table went on")
        } catch let error as DocumentError {
            #expect(error.reason.contains("notes is no longer in the file (dropped or renamed)"))
        }

        let aliceSync = try TableSync(alice.pool, tables: ["memos"])
        let bobSync = try TableSync(bob.pool, tables: ["memos"])
        #expect(try Self.lines(alice.pool, "SELECT name FROM sqlite_schema WHERE type = 'trigger' AND name LIKE 'strata_sync_notes_%'").isEmpty)
        for sync in [aliceSync, bobSync, aliceSync] { try await sync.sync(with: remote) }
        for device in [alice, bob] {
            #expect(try Self.lines(device.pool, "SELECT id, title FROM memos ORDER BY id") == ["'a'|'one'", "'b'|'two'", "'c'|'three'"])
        }
        var conflicts = DocumentReadOptions()
        conflicts.conflicts = true
        for key in ["a", "b", "c"] {
            let document = try await remote.document(id: "memos:" + key, options: conflicts)
            #expect(document["_conflicts"] == nil)
            #expect(document["_rev"]?.stringValue?.hasPrefix("1-") == true)
        }
        #expect(try await remote.document(id: "notes:a")["title"] == "one")

        // One change, noted once, under the new name.
        try alice.execute("UPDATE memos SET title = 'uno' WHERE id = 'a'")
        #expect(try Self.lines(alice.pool, "SELECT tbl, key FROM strata_sync_outbox") == ["'memos'|'a'"])
        try await aliceSync.sync(with: remote)
        try await bobSync.sync(with: remote)
        #expect(try Self.lines(bob.pool, "SELECT title FROM memos WHERE id = 'a'") == ["'uno'"])
    }

    /// Opening TableSync again on a file whose synced tables have not
    /// changed leaves its schema alone (the triggers it would make are
    /// there already), so no connection prepares its statements again; a
    /// column added since makes the table's triggers again, and is synced.
    @Test func openingAgainLeavesAnUnchangedSchemaAlone() async throws {
        let schema = """
            CREATE TABLE folders(id TEXT PRIMARY KEY NOT NULL, name TEXT);
            CREATE TABLE notes(id TEXT PRIMARY KEY NOT NULL, title TEXT, folder_id TEXT REFERENCES folders(id));
            """
        let (pool, _) = try Self.device(schema, syncing: ["folders", "notes"])
        func version() throws -> Int { try pool.read { try Int.fetchOne($0, sql: "PRAGMA schema_version") ?? -1 } }
        let before = try version()
        _ = try TableSync(pool, tables: ["folders", "notes"])
        #expect(try version() == before)
        try await pool.write { try $0.execute(sql: "ALTER TABLE notes ADD COLUMN pinned INTEGER") }
        let changed = try version()
        let sync = try TableSync(pool, tables: ["folders", "notes"])
        #expect(try version() > changed)
        try await pool.write { try $0.execute(sql: "INSERT INTO notes(id, title, pinned) VALUES ('n1', 'plan', 1)") }
        _ = try await sync.captureLocalChanges()
        #expect(try await sync.documents.document(id: "notes:n1")["pinned"] == 1)
    }

    @Test func aSyncedTablesColumnIsDroppedThroughAlter() async throws {
        let (pool, sync) = try Self.device("""
            CREATE TABLE notes(id TEXT PRIMARY KEY NOT NULL, title TEXT, body TEXT);
            INSERT INTO notes VALUES ('a', 'first', 'text');
            """, syncing: "notes")
        _ = try await sync.captureLocalChanges()
        await #expect(throws: SQLiteError.self) { try await pool.write { try $0.execute(sql: "ALTER TABLE notes DROP COLUMN body") } }
        // A migration that fails inside alter, its error caught, leaves the
        // triggers as they were: a document written after it still reaches
        // its row.
        try await pool.write { db in
            #expect(throws: SQLiteError.self) { try TableSync.alter(db) { try $0.execute(sql: "ALTER TABLE notes DROP COLUMN nosuch") } }
        }
        try await Self.write([["_id": "notes:z", "title": "after a failed migration", "body": "z"]], to: sync, batched: false)
        #expect(try Self.lines(pool, "SELECT title FROM notes WHERE id = 'z'") == ["'after a failed migration'"])
        try await pool.write { db in
            try TableSync.alter(db) { try $0.execute(sql: "ALTER TABLE notes DROP COLUMN body") }
            // Captured while the migration's transaction runs.
            try db.execute(sql: "UPDATE notes SET title = 'edited' WHERE id = 'a'")
        }
        let again = try TableSync(pool, tables: ["notes"])
        #expect(try await again.captureLocalChanges() == 1)
        let a = try await again.documents.document(id: "notes:a")
        #expect(a["title"] == "edited" && a["body"] == "text")
        try await Self.write([["_id": "notes:b", "title": "pulled", "body": "kept in the document"]], to: again, batched: true)
        try await Self.write([["_id": "notes:c", "title": "alone"]], to: again, batched: false)
        #expect(try Self.lines(pool, "SELECT * FROM notes ORDER BY id") == ["'a'|'edited'", "'b'|'pulled'", "'c'|'alone'", "'z'|'after a failed migration'"])
    }

    /// A folder deleted on one device while another put a note in it, with
    /// a foreign key that does not cascade: the deletion is refused there,
    /// reported, and the pull goes on; once the note is gone, the folder
    /// goes too. A folder deleted with its notes is deleted at once.
    @Test func aParentDeletedUnderALocalChildIsRefusedUntilTheChildGoes() async throws {
        let (server, remote) = try await server()
        defer { server.stop() }
        let schema = """
            CREATE TABLE folders(id TEXT PRIMARY KEY NOT NULL, name TEXT);
            CREATE TABLE notes(id TEXT PRIMARY KEY NOT NULL, title TEXT, folder TEXT REFERENCES folders(id));
            """
        let (alice, aliceSync) = try Self.device(schema, syncing: ["folders", "notes"])
        let (bob, bobSync) = try Self.device(schema, syncing: ["folders", "notes"])
        func rows(_ pool: DatabasePool) throws -> [String] {
            try Self.lines(pool, "SELECT 'folder ' || id FROM folders UNION ALL SELECT 'note ' || id FROM notes ORDER BY 1")
        }
        try await alice.write { try $0.execute(sql: "INSERT INTO folders VALUES ('f', 'Work'), ('g', 'Old'); INSERT INTO notes VALUES ('m', 'In g', 'g')") }
        try await aliceSync.sync(with: remote)
        try await bobSync.sync(with: remote)
        #expect(try rows(bob) == ["'folder f'", "'folder g'", "'note m'"])
        // Alice deletes g with its note, and f; Bob meanwhile puts a note in f.
        try await alice.write { try $0.execute(sql: "DELETE FROM notes; DELETE FROM folders") }
        try await bob.write { try $0.execute(sql: "INSERT INTO notes VALUES ('n', 'Mine', 'f')") }
        try await aliceSync.sync(with: remote)
        try await bobSync.sync(with: remote)
        #expect(try rows(bob) == ["'folder f'", "'note n'"])
        #expect(try bobSync.refusedRows(in: "folders").map { "\($0.key): \($0.reason)" }
            == ["f: its deletion arrived while rows of notes refer to it (a foreign key without ON DELETE CASCADE)"])
        try await aliceSync.sync(with: remote)
        #expect(try rows(alice) == [])
        #expect(try aliceSync.waitingRows(in: "notes") == ["n"])
        // Bob deletes his note: the folder's deletion is applied at last.
        try await bob.write { try $0.execute(sql: "DELETE FROM notes") }
        try await bobSync.sync(with: remote)
        try await aliceSync.sync(with: remote)
        #expect(try rows(bob) == [] && rows(alice) == [])
        #expect(try bobSync.refusedRows(in: "folders").isEmpty && aliceSync.waitingRows(in: "notes").isEmpty)
    }

    @Test func valuesKeepTheirTypeAndPrecision() async throws {
        let (server, remote) = try await server()
        defer { server.stop() }
        let alice = try Device()
        try alice.execute("INSERT INTO notes VALUES ('big', 'x', 'tab\tand \"quotes\"', 9007199254740993, 3.0)")
        try alice.execute("INSERT INTO notes VALUES ('min', 'y', '', -9223372036854775808, 1e-300)")
        let bob = try Device()
        try await alice.sync.sync(with: remote)
        try await bob.sync.sync(with: remote)
        let types = "SELECT id, typeof(title), typeof(body), typeof(pinned), typeof(score), pinned, score, body FROM notes ORDER BY id"
        let onAlice = try await alice.pool.read { try Row.fetchAll($0, sql: types).map(\.databaseValues) }
        let onBob = try await bob.pool.read { try Row.fetchAll($0, sql: types).map(\.databaseValues) }
        #expect(onBob == onAlice)
        #expect(onBob.first?[5] == .integer(9007199254740993) && onBob.first?[6] == .real(3.0))
    }

    /// The capture writes documents as any document write does: CouchDB's
    /// revision ids, an update sequence each, the counts kept.
    @Test func capturedDocumentsAreWhatAnyWriteMakes() throws {
        let alice = try Device(rows: "INSERT INTO notes VALUES ('a', 'one', NULL, 1, NULL), ('b', 'two', NULL, 2, 0.5), ('c', 'three', 'x', 3, NULL)")
        #expect(try alice.sync.captureLocalChanges() == 3)
        let documents = alice.sync.documents
        func members(_ id: String) throws -> JSONObject {
            JSONObject(try documents.document(id: id).filter { !$0.key.hasPrefix("_") })
        }
        let first = try ["a", "b", "c"].map { try members("notes:" + $0) }
        try alice.execute("UPDATE notes SET title = 'uno' WHERE id = 'a'")
        try alice.execute("DELETE FROM notes WHERE id = 'b'")
        try alice.execute("INSERT INTO notes VALUES ('d', 'four', NULL, 4, NULL)")
        try alice.execute("UPDATE notes SET title = 'three' WHERE id = 'c'")   // unchanged: no revision
        #expect(try alice.sync.captureLocalChanges() == 3)
        #expect(try alice.sync.pendingChangeCount() == 0)

        // The same writes made one at a time on a plain document database.
        let plain = try DocumentDatabase(DatabaseQueue(), name: "plain")
        var revs: [String: String] = [:]
        for (key, body) in zip(["a", "b", "c"], first) {
            var document = body
            document["_id"] = .string("notes:" + key)
            revs[key] = try plain.put(document).rev
        }
        var edited = try members("notes:a")
        edited["_id"] = "notes:a"
        edited["_rev"] = .string(revs["a"]!)
        _ = try plain.put(edited)
        // A deletion keeps the row's last members.
        var deletion = first[1]
        deletion["_id"] = "notes:b"
        deletion["_rev"] = .string(revs["b"]!)
        deletion["_deleted"] = true
        _ = try plain.put(deletion)
        var added = try members("notes:d")
        added["_id"] = "notes:d"
        _ = try plain.put(added)

        #expect(try documents.changes().results == plain.changes().results)
        let (info, plainInfo) = (try documents.info(), try plain.info())
        #expect(info.documentCount == 3 && plainInfo.documentCount == 3)
        #expect(info.deletedDocumentCount == 1 && plainInfo.deletedDocumentCount == 1)
        #expect(info.updateSequence == plainInfo.updateSequence)
    }

    /// A capture in several transactions (a first sync's, sent as it is
    /// made): each row whole in one of them, in the order of its last
    /// change, each transaction committed before the next, and what
    /// changed meanwhile either in its row's transaction or left for the
    /// next capture.
    @Test func aCaptureInSeveralTransactionsTakesEachRowWhole() async throws {
        let alice = try Device(rows: """
            WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 25)
            INSERT INTO notes SELECT printf('r%02d', i), 'note ' || i, NULL, i, NULL FROM c
            """)
        // r03's last change is the last: it goes in the last transaction.
        try alice.execute("UPDATE notes SET title = 'three again' WHERE id = 'r03'")
        // What the triggers of a table no longer synced leave in the outbox
        // is removed, as a capture in one transaction removes it.
        try alice.execute("INSERT INTO strata_sync_outbox(tbl, key) VALUES ('gone', 'x'), ('notes', NULL)")
        let (pool, documents) = (alice.pool, alice.sync.documents)
        actor Seen { var counts: [Int] = [], documents: [Int] = []
            func add(_ count: Int, _ documents: Int) { counts.append(count); self.documents.append(documents) } }
        let seen = Seen()
        let written = try await alice.sync.captureLocalChanges(inTransactionsOf: 10) { count in
            await seen.add(count, (try? documents.info().documentCount) ?? -1)
            if await seen.counts.count == 1 {
                // A row the first transaction took, and one the last takes.
                try? await pool.write { try $0.execute(sql: "UPDATE notes SET body = 'later' WHERE id IN ('r01', 'r24')") }
            }
        }
        #expect(written == 25)
        #expect(await seen.counts == [10, 10, 5])
        #expect(await seen.documents == [10, 20, 25])
        func document(_ key: String) throws -> JSONObject { try documents.document(id: "notes:" + key) }
        #expect(try document("r03")["title"] == "three again" && document("r03")["_rev"]?.stringValue?.hasPrefix("1-") == true)
        #expect(try document("r24")["body"] == "later" && document("r24")["_rev"]?.stringValue?.hasPrefix("1-") == true)
        #expect(try document("r01")["body"] == .null)
        #expect(try alice.sync.pendingChangeCount() == 1)
        #expect(try await alice.sync.captureLocalChanges() == 1)
        #expect(try document("r01")["body"] == "later" && document("r01")["_rev"]?.stringValue?.hasPrefix("2-") == true)
        #expect(try alice.sync.pendingChangeCount() == 0)
        // The revisions are what one transaction would have made.
        let bob = try Device(rows: """
            WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 25)
            INSERT INTO notes SELECT printf('r%02d', i), 'note ' || i, NULL, i, NULL FROM c;
            UPDATE notes SET title = 'three again' WHERE id = 'r03';
            UPDATE notes SET body = 'later' WHERE id = 'r24'
            """)
        #expect(try await bob.sync.captureLocalChanges() == 25)
        for key in ["r03", "r10", "r24"] {
            let theirs = try await bob.sync.documents.document(id: "notes:" + key) as JSONObject
            #expect(try theirs == document(key))
        }
    }

    @Test func aJoinTableWithACompositeKeySyncs() async throws {
        let (server, remote) = try await server()
        defer { server.stop() }
        let schema = """
            CREATE TABLE favorites(user TEXT NOT NULL, book_id INTEGER NOT NULL, note TEXT, PRIMARY KEY (user, book_id)) WITHOUT ROWID
            """
        func rows(_ pool: DatabasePool) throws -> [String] {
            try Self.lines(pool, "SELECT user, book_id, typeof(book_id), note FROM favorites ORDER BY user, book_id")
        }
        let (alice, aliceSync) = try Self.device(schema, syncing: "favorites")
        let (bob, bobSync) = try Self.device(schema, syncing: "favorites")
        try await alice.write { try $0.execute(sql: "INSERT INTO favorites VALUES ('ann', 12, 'reread'), ('ann', 7, NULL)") }
        try await bob.write { try $0.execute(sql: "INSERT INTO favorites VALUES ('ann', 99, NULL)") }
        try await aliceSync.sync(with: remote)
        try await bobSync.sync(with: remote)
        try await aliceSync.sync(with: remote)
        #expect(try rows(alice) == ["'ann'|7|'integer'|NULL", "'ann'|12|'integer'|'reread'", "'ann'|99|'integer'|NULL"])
        #expect(try rows(bob) == rows(alice))
        #expect(try await remote.document(id: #"favorites:["ann",12]"#)["note"] == "reread")
        // A key that changes is a deletion and a new row.
        try await bob.write { try $0.execute(sql: "UPDATE favorites SET book_id = 8 WHERE book_id = 7") }
        try await bobSync.sync(with: remote)
        try await aliceSync.sync(with: remote)
        #expect(try rows(alice) == ["'ann'|8|'integer'|NULL", "'ann'|12|'integer'|'reread'", "'ann'|99|'integer'|NULL"])
        #expect(try rows(bob) == rows(alice))
    }

    /// A composite key's document that another client spelled otherwise
    /// (`["ann", 7]`, as Python's `json.dumps` writes it, or `7.0` for an
    /// INTEGER column), or
    /// whose id is no key of the table, is kept and not applied, whether it
    /// arrives alone or in a pull's batch: the row keeps one document, so
    /// its changes and its deletion reach every device.
    @Test(arguments: [false, true])
    func aCompositeKeySpelledOtherwiseIsNotARow(batched: Bool) async throws {
        let (pool, sync) = try Self.device("""
            CREATE TABLE favorites(user TEXT NOT NULL, book_id INTEGER NOT NULL, note TEXT, PRIMARY KEY (user, book_id)) WITHOUT ROWID
            """, syncing: "favorites")
        // Spaced; a REAL or a number's text for an INTEGER column and a
        // number for a TEXT one (the row would keep 7 and "7"); three values;
        // not JSON.
        let others = [#"favorites:["ann", 7]"#, #"favorites:["ann",7.0]"#, #"favorites:["ann","7"]"#, #"favorites:["ann"," 7"]"#,
                      #"favorites:[7,7]"#, #"favorites:["ann",7,1]"#, "favorites:ann"]
        let written: [JSONObject] = [["_id": #"favorites:["ann",12]"#, "note": "compact"]] + others.map { ["_id": .string($0), "note": .string($0)] }
        try await Self.write(written, to: sync, batched: batched)
        #expect(try Self.lines(pool, "SELECT user, book_id, note FROM favorites") == ["'ann'|12|'compact'"])
        #expect(try sync.unappliedDocuments(in: "favorites") == others.sorted())
        // The row (ann, 7) made here has one document, and its deletion
        // leaves none of its own live.
        try await pool.write { try $0.execute(sql: "INSERT INTO favorites VALUES ('ann', 7, 'mine')") }
        _ = try await sync.captureLocalChanges()
        #expect(try await sync.documents.document(id: #"favorites:["ann",7]"#)["note"] == "mine")
        try await pool.write { try $0.execute(sql: "DELETE FROM favorites WHERE book_id = 7") }
        _ = try await sync.captureLocalChanges()
        await #expect(throws: DocumentError.self) { try await sync.documents.document(id: #"favorites:["ann",7]"#) }
        // The other spelling's own deletion leaves the row alone.
        try await pool.write { try $0.execute(sql: "INSERT INTO favorites VALUES ('ann', 7, 'again')") }
        let spaced = try await sync.documents.document(id: others[0])
        _ = try await sync.documents.put(["_id": .string(others[0]), "_rev": spaced["_rev"]!, "_deleted": true])
        #expect(try Self.lines(pool, "SELECT user, book_id, note FROM favorites ORDER BY book_id") == ["'ann'|7|'again'", "'ann'|12|'compact'"])
        #expect(try sync.unappliedDocuments(in: "favorites") == Array(others.sorted().dropFirst()))
        #expect(throws: DocumentError.self) { try sync.unappliedDocuments(in: "notes") }
    }

    /// An `INTEGER PRIMARY KEY` shared between devices holds integers only:
    /// a document named with other digits than the row's (`012`, `12.0`)
    /// or with a word is kept and not applied, where the word used to fail
    /// the document's write (and so every pull that brought it).
    @Test(arguments: [false, true])
    func aSharedIntegerKeySpelledOtherwiseIsNotARow(batched: Bool) async throws {
        let pool = try DatabasePool(path: try makeTemporaryPath())
        try await pool.write { try $0.execute(sql: "CREATE TABLE ratings(book_id INTEGER PRIMARY KEY, stars INTEGER)") }
        let sync = try TableSync(pool, tables: ["ratings"], sharedIntegerKeys: ["ratings"])
        let others = ["ratings:012", "ratings:12.0", "ratings:twelve", "ratings: 5"]
        let written: [JSONObject] = [["_id": "ratings:12", "stars": 4], ["_id": "ratings:-3", "stars": 1]]
            + others.map { ["_id": .string($0), "stars": 5] }
        try await Self.write(written, to: sync, batched: batched)
        #expect(try Self.lines(pool, "SELECT book_id, stars FROM ratings ORDER BY book_id") == ["-3|1", "12|4"])
        #expect(try sync.unappliedDocuments(in: "ratings") == others.sorted())
    }

    /// A one-column key of numeric affinity that is not the row id (`INT`,
    /// `REAL`) keeps a number: a document named with other digits than the
    /// ones the row's key is written with (`012` or `12.0` for an INT,
    /// `2` for a REAL's `2.0`) would make a row whose own document is
    /// another one, so it is kept and not applied.
    @Test(arguments: [false, true])
    func aOneColumnNumericKeySpelledOtherwiseIsNotARow(batched: Bool) async throws {
        let (pool, sync) = try Self.device("""
            CREATE TABLE codes(code INT PRIMARY KEY, label TEXT);
            CREATE TABLE levels(level REAL PRIMARY KEY, name TEXT)
            """, syncing: ["codes", "levels"])
        let others = ["codes:012", "codes:12.0", "codes: 12", "codes:1e3", "levels:2"]
        let written: [JSONObject] = [["_id": "codes:12", "label": "twelve"], ["_id": "codes:abc", "label": "a word"], ["_id": "levels:2.0", "name": "two"],
                                     ["_id": "levels:2.5", "name": "two and a half"]]
            + others.map { ["_id": .string($0), "label": .string($0)] }
        try await Self.write(written, to: sync, batched: batched)
        #expect(try Self.lines(pool, "SELECT code, label FROM codes ORDER BY code") == ["12|'twelve'", "'abc'|'a word'"])
        #expect(try Self.lines(pool, "SELECT level, name FROM levels ORDER BY level") == ["2.0|'two'", "2.5|'two and a half'"])
        #expect(try sync.unappliedDocuments(in: "codes") == others.filter { $0.hasPrefix("codes:") }.sorted())
        #expect(try sync.unappliedDocuments(in: "levels") == ["levels:2"])
    }

    /// Counts, from now on, the updates of `pool`'s documents (each time a
    /// waiting row's document is written again, say; a temporary trigger
    /// on the writer's connection): the function returned answers the count
    /// since it was last asked.
    static func documentTouches(_ pool: DatabasePool) async throws -> @Sendable () async throws -> Int {
        try await pool.write { db in
            try db.execute(sql: """
                CREATE TEMP TABLE touches(n INTEGER NOT NULL);
                INSERT INTO touches VALUES (0);
                CREATE TEMP TRIGGER touched AFTER UPDATE ON main.strata_sync_docs BEGIN UPDATE touches SET n = n + 1; END;
                """)
        }
        return {
            try await pool.write { db in
                defer { _ = try? db.execute(sql: "UPDATE touches SET n = 0") }
                return try Int.fetchOne(db, sql: "SELECT n FROM touches") ?? -1
            }
        }
    }

    /// Writes `documents` into `sync`'s document store as another client's
    /// would arrive: in a pull's batch (`bulkPut` of replicated revisions),
    /// or one at a time.
    static func write(_ documents: [JSONObject], to sync: TableSync, batched: Bool) async throws {
        if batched {
            let replicated = documents.map { document in
                var document = document
                document["_rev"] = .string("1-" + String(repeating: "a", count: 32))
                return document
            }
            let results = try await sync.documents.bulkPut(replicated, newEdits: false)
            for result in results { _ = try result.get() }
        } else {
            for document in documents { _ = try await sync.documents.put(document) }
        }
    }

    /// A BLOB column's values are the documents' attachments (of the
    /// column's name): exact bytes both ways, not sent again when only
    /// another column changes, written by any CouchDB client too.
    @Test func blobColumnsSyncAsAttachments() async throws {
        let (server, remote) = try await server()
        defer { server.stop() }
        let schema = "CREATE TABLE photos(id TEXT PRIMARY KEY NOT NULL, caption TEXT, image BLOB, thumbnail)"
        func rows(_ pool: DatabasePool) throws -> [String] {
            try Self.lines(pool, "SELECT id, caption, typeof(image), hex(image), typeof(thumbnail), hex(thumbnail) FROM photos ORDER BY id")
        }
        let (alice, aliceSync) = try Self.device(schema, syncing: "photos")
        let (bob, bobSync) = try Self.device(schema, syncing: "photos")
        let image = Data([0x89, 0x50, 0x4E, 0x47, 0x00, 0x0A, 0xFF, 0x00])
        try await alice.write { try $0.execute(sql: "INSERT INTO photos VALUES ('p', 'Beach', ?, x'00')", arguments: [image]) }
        try await aliceSync.sync(with: remote)
        try await bobSync.sync(with: remote)
        #expect(try rows(bob) == ["'p'|'Beach'|'blob'|'89504E47000AFF00'|'blob'|'00'"])
        let document = try await remote.document(id: "photos:p")
        #expect(document["image"] == nil && document["thumbnail"] == nil)
        let attachments = try #require(document["_attachments"]?.objectValue)
        #expect(attachments["image"]?["content_type"] == "application/octet-stream" && attachments["image"]?["length"] == 8)
        #expect(try await remote.attachment(id: "photos:p", name: "image").data == image)
        // Another column changes: the attachment stays as it was (its revpos).
        try await bob.write { try $0.execute(sql: "UPDATE photos SET caption = 'Beach at noon' WHERE id = 'p'") }
        try await bobSync.sync(with: remote)
        try await aliceSync.sync(with: remote)
        #expect(try rows(alice) == ["'p'|'Beach at noon'|'blob'|'89504E47000AFF00'|'blob'|'00'"])
        #expect(try await remote.document(id: "photos:p")["_attachments"]?["image"]?["revpos"] == 1)
        // Nothing changed: no revision.
        try await alice.write { try $0.execute(sql: "UPDATE photos SET image = image WHERE id = 'p'") }
        #expect(try await aliceSync.captureLocalChanges() == 0)
        // A BLOB set to NULL loses its attachment.
        try await alice.write { try $0.execute(sql: "UPDATE photos SET thumbnail = NULL WHERE id = 'p'") }
        try await aliceSync.sync(with: remote)
        try await bobSync.sync(with: remote)
        #expect(try rows(bob) == ["'p'|'Beach at noon'|'blob'|'89504E47000AFF00'|'null'|''"])
        #expect(try await remote.document(id: "photos:p")["_attachments"]?["thumbnail"] == nil)
        // Any CouchDB client's attachment of the column's name is the BLOB.
        let rev = try #require(try await remote.document(id: "photos:p")["_rev"]?.stringValue)
        _ = try await remote.putAttachment(id: "photos:p", name: "image", rev: rev, contentType: "image/png", data: Data([1, 2, 3]))
        try await bobSync.sync(with: remote)
        #expect(try rows(bob) == ["'p'|'Beach at noon'|'blob'|'010203'|'null'|''"])
    }

    @Test func anObservedQuerySeesRemoteRowsOncePerBatch() async throws {
        let (server, remote) = try await server()
        defer { server.stop() }
        let alice = try Device()
        let bob = try Device()
        try alice.execute("""
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50)
            INSERT INTO notes SELECT 'n' || i, 'note ' || i, NULL, NULL, NULL FROM n
            """)
        try await alice.sync.sync(with: remote)
        // Bob observes his notes' count while the 50 rows arrive in one batch.
        let counts = ValueLog<Int>()
        let observation = ValueObservation { db in try Int.fetchOne(db, sql: "SELECT count(*) FROM notes") ?? 0 }
        let watching = Task {
            for try await count in observation.values(in: bob.pool) {
                counts.append(count)
                if count == 50 { return }
            }
        }
        try await counts.wait(for: 1)
        try await bob.sync.sync(with: remote)
        try await watching.value
        #expect(counts.values == [0, 50])
    }

    @Test func continuousSyncCarriesEachCommitAsItHappens() async throws {
        let (server, remote) = try await server()
        defer { server.stop() }
        let alice = try Device()
        let bob = try Device()
        let aliceSyncing = Task { try await alice.sync.run(with: remote) }
        let bobSyncing = Task { try await bob.sync.run(with: remote) }
        // A commit on one device reaches the other, both ways.
        try alice.execute("INSERT INTO notes VALUES ('live', 'Written on Alice', NULL, NULL, NULL)")
        #expect(try await eventually { try bob.rows() == ["'live'|'Written on Alice'|NULL|NULL|NULL"] })
        try bob.execute("UPDATE notes SET body = 'and edited on Bob' WHERE id = 'live'")
        #expect(try await eventually { try alice.rows() == ["'live'|'Written on Alice'|'and edited on Bob'|NULL|NULL"] })
        // A write by another connection (another process, say), which no
        // observation in this one sees, is carried too.
        let other = try Database(path: alice.pool.path)
        try other.execute(sql: "INSERT INTO notes VALUES ('raw', 'From sqlite3', NULL, NULL, NULL)")
        try other.close()
        #expect(try await eventually { try bob.rows().count == 2 })
        aliceSyncing.cancel()
        bobSyncing.cancel()
        await #expect(throws: CancellationError.self) { try await aliceSyncing.value }
        await #expect(throws: CancellationError.self) { try await bobSyncing.value }
    }

    @Test func strataSyncOnTheCommandLine() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        let path = try makeTemporaryPath()
        let db = try Database(path: path)
        try db.execute(sql: Self.schema + "; INSERT INTO notes VALUES ('cli', 'From the tool', NULL, 1, NULL)")
        try db.close()
        let url = server.base.absoluteString.replacingOccurrences(of: "http://", with: "http://admin:secret@") + "/notes-cli"
        let first = try await runExecutable(try RunningServer.strataBinary(), ["sync", path, url, "--tables", "notes", "--create-target"])
        #expect(first.status == 0, "\(first.standardError)")
        #expect(first.standardOutput == "sent 1 documents, received 0\n")
        let remote = try server.client().database("notes-cli")
        #expect(try await remote.document(id: "notes:cli")["title"] == "From the tool")
        // A document written on the server arrives as a row.
        try await remote.put(["_id": "notes:web", "title": "From the web", "pinned": 0])
        let second = try await runExecutable(try RunningServer.strataBinary(), ["sync", path, url, "--tables", "notes"])
        #expect(second.standardOutput == "sent 0 documents, received 1\n")
        #expect(second.standardError == "")
        #expect(try String.fetchAll(Database(path: path), sql: "SELECT title FROM notes ORDER BY id") == ["From the tool", "From the web"])
        // A row that cannot be written is said so, and the sync succeeds.
        try await remote.put(["_id": "notes:untitled", "title": nil])
        let untitled = try await runExecutable(try RunningServer.strataBinary(), ["sync", path, url, "--tables", "notes"])
        #expect(untitled.status == 0 && untitled.standardOutput == "sent 0 documents, received 1\n")
        #expect(untitled.standardError == "notes: row untitled not written: the document has no value for title, a NOT NULL column\n")
        let untitledRev = try #require(try await remote.document(id: "notes:untitled")["_rev"])
        try await remote.put(["_id": "notes:untitled", "_rev": untitledRev, "_deleted": true])
        _ = try await runExecutable(try RunningServer.strataBinary(), ["sync", path, url, "--tables", "notes"])
        // --selector: only the pinned rows go, both ways.
        try Database(path: path).execute(sql: "INSERT INTO notes VALUES ('draft', 'Not pinned', NULL, 0, NULL), ('pin', 'Pinned', NULL, 1, NULL)")
        try await remote.put(["_id": "notes:web2", "$table": "notes", "title": "Pinned on the web", "pinned": 1])
        try await remote.put(["_id": "notes:web3", "$table": "notes", "title": "Not pinned on the web", "pinned": 0])
        let filtered = try await runExecutable(try RunningServer.strataBinary(),
                                               ["sync", path, url, "--tables", "notes", "--selector", #"{"\\$table": "notes", "pinned": 1}"#])
        #expect(filtered.standardOutput == "sent 1 documents, received 1\n", "\(filtered.standardError)")
        #expect(try String.fetchAll(Database(path: path), sql: "SELECT id FROM notes ORDER BY id") == ["cli", "draft", "pin", "web", "web2"])
        let badSelector = try await runExecutable(try RunningServer.strataBinary(), ["sync", path, url, "--tables", "notes", "--selector", "{"])
        #expect(badSelector.status == 64 && badSelector.standardError.contains("--selector"))
        // A table that cannot be shared is a one-line error.
        let refused = try await runExecutable(try RunningServer.strataBinary(), ["sync", path, url, "--tables", "sqlite_schema"])
        #expect(refused.status == 1)
        #expect(refused.standardError.contains("cannot sync sqlite_schema: it has no primary key but its row id"))
    }

    @Test func aChildBeforeItsParentWaitsForItAndIsReportedMeanwhile() async throws {
        let (server, remote) = try await server()
        defer { server.stop() }
        let schema = """
            CREATE TABLE folders(id TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL);
            CREATE TABLE notes(id TEXT PRIMARY KEY NOT NULL, title TEXT, folder_id TEXT REFERENCES folders(id));
            """
        func rows(_ pool: DatabasePool) throws -> [String] {
            try pool.read { db in
                try String.fetchAll(db, sql: "SELECT 'folder ' || id FROM folders UNION ALL SELECT 'note ' || id || ' in ' || ifnull(folder_id, '-') FROM notes ORDER BY 1")
            }
        }
        let (alice, aliceSync) = try Self.device(schema, syncing: ["folders", "notes"])
        let (bob, bobSync) = try Self.device(schema, syncing: ["folders", "notes"])
        // Alice writes a note before its folder (foreign keys checked at
        // commit), so the note's document comes first in her changes.
        try await alice.write { db in
            try db.execute(sql: "PRAGMA defer_foreign_keys = ON")
            try db.execute(sql: "INSERT INTO notes VALUES ('n1', 'first', 'f1')")
            try db.execute(sql: "INSERT INTO folders VALUES ('f1', 'Work')")
        }
        try await aliceSync.sync(with: remote)
        try await bobSync.sync(with: remote)
        #expect(try rows(bob) == ["folder f1", "note n1 in f1"])
        #expect(try await bob.read { try Row.fetchAll($0, sql: "PRAGMA foreign_key_check") }.isEmpty)

        // A note whose folder has not arrived (another device has not synced
        // it yet) is kept and reported, not dropped.
        try await remote.put(["_id": "notes:n2", "$table": "notes", "id": "n2", "title": "orphan", "folder_id": "f2"])
        try await bobSync.sync(with: remote)
        #expect(try rows(bob) == ["folder f1", "note n1 in f1"])
        #expect(try bobSync.waitingRows(in: "notes") == ["n2"])
        // Edited again before its folder comes, it still waits, whether the
        // revision comes in a pull's batch or written alone (writing its
        // document used to fail on the waiting row already there).
        for title in ["edited", "edited again"] {
            let orphan = try await remote.document(id: "notes:n2")
            try await remote.put(["_id": "notes:n2", "_rev": orphan["_rev"]!, "$table": "notes", "id": "n2", "title": .string(title), "folder_id": "f2"])
        }
        var revisions = DocumentReadOptions()
        revisions.revs = true
        let latest = try await remote.document(id: "notes:n2", options: revisions)
        var previous = DocumentReadOptions()
        previous.revs = true
        let ids = latest["_revisions"]?["ids"]?.arrayValue ?? []
        previous.rev = "\((latest["_revisions"]?["start"]?.intValue ?? 0) - 1)-\(ids.count > 1 ? ids[1].stringValue ?? "" : "")"
        _ = try await bobSync.documents.put(try await remote.document(id: "notes:n2", options: previous), newEdits: false)
        #expect(try bobSync.waitingRows(in: "notes") == ["n2"])
        try await bobSync.sync(with: remote)
        #expect(try bobSync.waitingRows(in: "notes") == ["n2"])
        #expect(try await bobSync.documents.document(id: "notes:n2")["title"] == "edited again")
        try await remote.put(["_id": "folders:f2", "$table": "folders", "id": "f2", "name": "Home"])
        try await bobSync.sync(with: remote)
        #expect(try rows(bob) == ["folder f1", "folder f2", "note n1 in f1", "note n2 in f2"])
        #expect(try bobSync.waitingRows(in: "notes").isEmpty)
        // Nothing arrived was captured to be sent back.
        #expect(try bobSync.pendingChangeCount() == 0)
    }

    /// Rows that each refer to the next (a table that refers to itself: a
    /// folder in a folder, a reply to a reply), arriving deepest first,
    /// each waiting for its parent: they are written once each, every
    /// parent before its children, where each pass over the waiting rows
    /// used to write only the next of them (a chain of 10,000 took 457 s,
    /// now about one). Counted by the touches of their documents: about
    /// one each, not one each per pass.
    /// `integerKeys`: shared `INTEGER PRIMARY KEY`s, which a document's key
    /// spells as text and a member as a number.
    @Test(arguments: [false, true])
    func aChainArrivingDeepestFirstIsWrittenInOnePass(integerKeys: Bool) async throws {
        let count = 400
        let schema = integerKeys
            ? "CREATE TABLE nodes(id INTEGER PRIMARY KEY, parent INTEGER REFERENCES nodes(id), name TEXT NOT NULL)"
            : "CREATE TABLE nodes(id TEXT PRIMARY KEY NOT NULL, parent TEXT REFERENCES nodes(id), name TEXT NOT NULL)"
        let pool = try DatabasePool(path: try makeTemporaryPath())
        try await pool.write { try $0.execute(sql: schema) }
        let sync = try TableSync(pool, tables: ["nodes"], sharedIntegerKeys: integerKeys ? ["nodes"] : [])
        // The root has the largest key, its child the next: the deepest row
        // sorts first, as the documents are read.
        func key(_ depth: Int) -> JSON { integerKeys ? .number(String(1000 + count - depth)) : .string("k\(1000 + count - depth)") }
        func keyText(_ depth: Int) -> String { "\(integerKeys ? "" : "k")\(1000 + count - depth)" }
        func document(_ depth: Int) -> JSONObject {
            ["_id": .string("nodes:" + keyText(depth)), "$table": "nodes", "id": key(depth), "name": .string("n\(depth)"),
             "parent": depth == 0 ? .null : key(depth - 1)]
        }
        let touches = try await Self.documentTouches(pool)
        func check(_ rows: Int) async throws {
            try await pool.read { db in
                #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM nodes") == rows)
                #expect(try Row.fetchAll(db, sql: "PRAGMA foreign_key_check").isEmpty)
                let deepest = try Int.fetchOne(db, sql: """
                    WITH RECURSIVE up(id, parent, depth) AS (SELECT id, parent, 0 FROM nodes WHERE name = ? UNION ALL
                      SELECT n.id, n.parent, depth + 1 FROM nodes AS n JOIN up ON n.id = up.parent)
                    SELECT max(depth) FROM up
                    """, arguments: ["n\(rows - 1)"])
                #expect(deepest == rows - 1)
            }
        }

        // The whole chain in one pull's batch, deepest first.
        let first = (0..<count / 2).reversed().map(document)
        try await Self.write(first, to: sync, batched: true)
        try await check(count / 2)
        #expect(try sync.waitingRowCount() == 0)
        #expect(try await touches() <= count)

        // The rest arrives without its top row: all of it waits, then is
        // written when that row comes (`applyWaitingRows()`).
        let rest = (count / 2 + 1..<count).reversed().map(document)
        try await Self.write(rest, to: sync, batched: true)
        #expect(try sync.waitingRowCount() == rest.count)
        _ = try await touches()
        try await Self.write([document(count / 2)], to: sync, batched: false)
        #expect(try await sync.applyWaitingRows() == rest.count)
        try await check(count)
        #expect(try sync.waitingRowCount() == 0)
        #expect(try await touches() <= 2 * count)
        #expect(try sync.pendingChangeCount() == 0)
    }

    /// Rows refused because their document lacks a NOT NULL column's value
    /// or has another row's value of a UNIQUE one are not tried again by
    /// `applyWaitingRows()` (each sync calls it) while that is still so,
    /// alone or together (as rows swapping values are); a row whose
    /// collision is gone is tried, and written.
    @Test func refusedRowsThatStillCannotFitAreNotTriedAgain() async throws {
        let (pool, sync) = try Self.device("""
            CREATE TABLE people(id TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL, email TEXT UNIQUE);
            INSERT INTO people VALUES ('a', 'Ann', 'ann@example.com'), ('c0', 'Cy', 'cy@example.com');
            """, syncing: "people")
        let touches = try await Self.documentTouches(pool)
        // Every row SQLite is asked to insert into people, even in a
        // savepoint rolled back.
        let attempts = Counter()
        try await pool.write { db in
            try db.add(function: DatabaseFunction("note_attempt", argumentCount: 0) { _ in attempts.add(); return nil })
            try db.execute(sql: "CREATE TEMP TRIGGER attempt BEFORE INSERT ON main.people BEGIN SELECT note_attempt(); END")
        }
        var documents: [JSONObject] = (0..<100).map { ["_id": .string("people:p\($0)"), "email": .string("p\($0)@example.com")] }
        documents.append(["_id": "people:b", "name": "Bob", "email": "ann@example.com"])
        documents.append(["_id": "people:c", "name": "Cyd", "email": "cy@example.com"])
        try await Self.write(documents, to: sync, batched: true)
        #expect(try sync.refusedRows(in: "people").count == 102)
        _ = try await touches()
        _ = attempts.take()
        #expect(try await sync.applyWaitingRows() == 0)
        #expect(try await touches() == 0)
        #expect(attempts.take() == 0)
        #expect(try sync.refusedRows(in: "people").count == 102)

        // Ann's email changes here: Bob's row now fits, is tried, and is
        // written; the others are still not tried.
        try await pool.write { try $0.execute(sql: "UPDATE people SET email = 'ann@example.org' WHERE id = 'a'") }
        _ = try await touches()
        _ = attempts.take()
        #expect(try await sync.applyWaitingRows() == 1)
        #expect(try await touches() == 1)
        #expect(attempts.take() == 1)
        #expect(try Self.lines(pool, "SELECT id, name FROM people ORDER BY id") == ["'a'|'Ann'", "'b'|'Bob'", "'c0'|'Cy'"])
        #expect(try sync.refusedRows(in: "people").map(\.key).filter { !$0.hasPrefix("p") } == ["c"])
    }

    /// Rows a CHECK or a STRICT column's type refused are not tried again
    /// by `applyWaitingRows()` while their document and the schema stay the
    /// same: SQLite would refuse the same values again. After a schema
    /// change each is tried once more. A row an app's trigger refused is
    /// tried every time (a trigger may read other rows). A file whose
    /// refusals table predates this gets the columns it needs.
    @Test(arguments: [false, true])
    func rowsRefusedForTheirOwnValuesWaitForTheirDocumentOrTheSchemaToChange(batched: Bool) async throws {
        let (pool, sync) = try Self.device("""
            CREATE TABLE strata_sync_refused(id TEXT PRIMARY KEY NOT NULL, reason TEXT NOT NULL, deletion INTEGER NOT NULL DEFAULT 0) WITHOUT ROWID;
            CREATE TABLE items(id TEXT PRIMARY KEY NOT NULL, n INTEGER CHECK (n >= 0), k INTEGER) STRICT;
            CREATE TRIGGER unlucky BEFORE INSERT ON items WHEN NEW.k = 13 BEGIN SELECT RAISE(ABORT, 'unlucky'); END;
            """, syncing: "items")
        // Every try of a refused row (its document touched, which writes
        // the row), even in a savepoint rolled back.
        let attempts = Counter()
        try await pool.write { db in
            try db.add(function: DatabaseFunction("note_attempt", argumentCount: 0) { _ in attempts.add(); return nil })
            try db.execute(sql: "CREATE TEMP TRIGGER attempt BEFORE UPDATE ON main.strata_sync_docs BEGIN SELECT note_attempt(); END")
        }
        func touches() -> Int { attempts.take() }
        var documents: [JSONObject] = (0..<20).map { ["_id": .string("items:n\($0)"), "n": -1, "k": .int(100 + $0)] }
        documents += (0..<10).map { ["_id": .string("items:k\($0)"), "n": .int($0), "k": "text"] }
        documents.append(["_id": "items:t", "n": 1, "k": 13])
        try await Self.write(documents, to: sync, batched: batched)
        let refused = try sync.refusedRows(in: "items")
        #expect(refused.count == 31)
        #expect(refused.first { $0.key == "n0" }?.reason.hasPrefix("CHECK constraint failed") == true, "\(refused)")
        #expect(refused.first { $0.key == "t" }?.reason == "unlucky", "\(refused)")
        _ = touches()
        for _ in 0..<2 {
            #expect(try await sync.applyWaitingRows() == 0)
            #expect(touches() == 1)
        }

        // A schema change (an index here): each is tried once, then not.
        try await pool.write { try $0.execute(sql: "CREATE INDEX items_k ON items(k)") }
        #expect(try await sync.applyWaitingRows() == 0)
        #expect(touches() == 31)
        #expect(try await sync.applyWaitingRows() == 0)
        #expect(touches() == 1)

        // The app's trigger goes: its row is written; the rest still wait,
        // and are not tried again in the pass that follows a write.
        try await pool.write { try $0.execute(sql: "DROP TRIGGER unlucky") }
        #expect(try await sync.applyWaitingRows() == 1)
        #expect(touches() == 31)
        #expect(try Self.lines(pool, "SELECT id, n, k FROM items") == ["'t'|1|13"])
        #expect(try await sync.applyWaitingRows() == 0)
        #expect(touches() == 0)

        // A new revision of a refused document that fits is written on
        // arrival, and one that still does not is refused again.
        let n0 = try await sync.documents.document(id: "items:n0")
        _ = try await sync.documents.put(["_id": "items:n0", "_rev": n0["_rev"]!, "n": 3, "k": 100])
        let n1 = try await sync.documents.document(id: "items:n1")
        _ = try await sync.documents.put(["_id": "items:n1", "_rev": n1["_rev"]!, "n": -2, "k": 101])
        #expect(try Self.lines(pool, "SELECT id, n, k FROM items ORDER BY id") == ["'n0'|3|100", "'t'|1|13"])
        #expect(try sync.refusedRows(in: "items").count == 29)
        _ = touches()
        #expect(try await sync.applyWaitingRows() == 0)
        #expect(touches() == 0)
    }

    /// A row refused by a CHECK on a value its document lacks takes the
    /// column's default; when that default may change between writes (a
    /// function's value here, `CURRENT_TIMESTAMP` in an app), the row may
    /// fit later with nothing else changed, so each `applyWaitingRows()`
    /// tries it. A table whose defaults are constant keeps its refused rows
    /// waiting for their document or the schema to change.
    @Test func rowsRefusedThroughADefaultThatMayChangeAreTriedAgain() async throws {
        let (pool, sync) = try Self.device("""
            CREATE TABLE jobs(id TEXT PRIMARY KEY NOT NULL, level INTEGER DEFAULT (current_level()) CHECK (level >= 10));
            CREATE TABLE steady(id TEXT PRIMARY KEY NOT NULL, level INTEGER DEFAULT 3 CHECK (level >= 10));
            """, syncing: ["jobs", "steady"])
        let level = Setting(5), attempts = Counter()
        try await pool.write { db in
            try db.add(function: DatabaseFunction("current_level", argumentCount: 0) { _ in Int64(level.value) })
            try db.add(function: DatabaseFunction("note_attempt", argumentCount: 0) { _ in attempts.add(); return nil })
            try db.execute(sql: "CREATE TEMP TRIGGER attempt BEFORE UPDATE ON main.strata_sync_docs BEGIN SELECT note_attempt(); END")
        }
        try await Self.write([["_id": "jobs:a"], ["_id": "steady:b"]], to: sync, batched: true)
        #expect(try sync.refusedRows(in: "jobs").map(\.key) == ["a"])
        #expect(try sync.refusedRows(in: "steady").map(\.key) == ["b"])
        _ = attempts.take()
        #expect(try await sync.applyWaitingRows() == 0)
        #expect(attempts.take() == 1)
        level.value = 12
        #expect(try await sync.applyWaitingRows() == 1)
        #expect(attempts.take() == 1)
        #expect(try Self.lines(pool, "SELECT id, level FROM jobs") == ["'a'|12"])
        #expect(try sync.refusedRows(in: "steady").map(\.key) == ["b"])
        #expect(try await sync.applyWaitingRows() == 0)
        #expect(attempts.take() == 0)
    }

    /// SQLite's names ignore ASCII case, and so does `TableSync`: a table
    /// made as `notes` and synced as `Notes` is captured (its documents
    /// named `Notes:…`), opened again as `notes` it keeps that spelling (no
    /// second registration, no row sent again under another id), and the
    /// methods that take a table's name take it in any case.
    @Test func tableNamesIgnoreCaseAsSQLiteDoes() async throws {
        let (pool, first) = try Self.device("""
            CREATE TABLE notes(id TEXT PRIMARY KEY NOT NULL, title TEXT NOT NULL);
            CREATE TABLE ratings(book_id INTEGER PRIMARY KEY, stars INTEGER);
            """, syncing: ["Notes"])
        try await pool.write { try $0.execute(sql: "INSERT INTO notes VALUES ('a', 'x')") }
        #expect(try await first.captureLocalChanges() == 1)
        #expect(try await first.documents.document(id: "Notes:a")["title"] == "x")
        let again = try TableSync(pool, tables: ["notes", "RATINGS", "NOTES"], sharedIntegerKeys: ["Ratings"])
        #expect(again.tables.map(\.name) == ["Notes", "RATINGS"])
        #expect(try await again.captureLocalChanges() == 0)
        try await pool.write { try $0.execute(sql: "INSERT INTO notes VALUES ('b', 'y'); INSERT INTO ratings VALUES (7, 5)") }
        #expect(try await again.captureLocalChanges() == 2)
        #expect(try await again.documents.document(id: "Notes:b")["title"] == "y")
        #expect(try await again.documents.document(id: "RATINGS:7")["stars"] == 5)
        // A pulled row that breaks NOT NULL, listed whatever the case asked.
        try await Self.write([["_id": "Notes:c", "$table": "Notes", "title": .null]], to: again, batched: true)
        #expect(try again.refusedRows(in: "NOTES").map(\.key) == ["c"])
        #expect(try again.refusedRows(in: "notes").map(\.key) == ["c"])
        #expect(try again.unappliedDocuments(in: "notes").isEmpty)
        #expect(try again.conflicts(in: "notes").isEmpty)
        #expect(try Self.lines(pool, "SELECT id FROM notes ORDER BY id") == ["'a'", "'b'"])
    }

    /// SQLite folds only ASCII letters in names: `Äpfel` and `äpfel` are two
    /// tables, and one's foreign keys are not the other's.
    @Test func namesBeyondASCIIAreMatchedAsSQLiteMatchesThem() async throws {
        let (pool, sync) = try Self.device("""
            CREATE TABLE folders(id TEXT PRIMARY KEY NOT NULL);
            CREATE TABLE "Äpfel"(id TEXT PRIMARY KEY NOT NULL, folder TEXT REFERENCES folders(id));
            CREATE TABLE "äpfel"(id TEXT PRIMARY KEY NOT NULL, folder TEXT);
            CREATE TABLE notes(id TEXT PRIMARY KEY NOT NULL, apple TEXT REFERENCES "äpfel"(id));
            """, syncing: ["folders", "Äpfel", "äpfel", "notes"])
        #expect(sync.tables.map(\.name) == ["folders", "Äpfel", "äpfel", "notes"])
        try await Self.write([
            ["_id": "Äpfel:a", "$table": "Äpfel", "folder": "nowhere"],
            ["_id": "äpfel:a", "$table": "äpfel", "folder": "nowhere"],
            ["_id": "notes:n", "$table": "notes", "apple": "a"],
        ], to: sync, batched: true)
        // Only `Äpfel` refers to folders: its row waits, the other is written.
        #expect(try sync.waitingRows(in: "Äpfel") == ["a"])
        #expect(try sync.waitingRows(in: "äpfel").isEmpty)
        #expect(try Self.lines(pool, "SELECT id, folder FROM \"äpfel\"") == ["'a'|'nowhere'"])
        #expect(try Self.lines(pool, "SELECT count(*) FROM \"Äpfel\"") == ["0"])
        // The note refers to `äpfel`'s row, which is here.
        #expect(try Self.lines(pool, "SELECT id, apple FROM notes") == ["'n'|'a'"])
        // Deleting `Äpfel`'s row is not held back by the note, which
        // refers to `äpfel`; deleting `äpfel`'s row is.
        try await pool.write { try $0.execute(sql: "INSERT INTO folders VALUES ('nowhere')") }
        #expect(try await sync.captureLocalChanges() == 1)
        _ = try await sync.applyWaitingRows()
        #expect(try Self.lines(pool, "SELECT id FROM \"Äpfel\"") == ["'a'"])
        let rev: JSON = .string("1-" + String(repeating: "a", count: 32))
        _ = try await sync.documents.put(["_id": "Äpfel:a", "_rev": rev, "_deleted": true])
        _ = try await sync.documents.put(["_id": "äpfel:a", "_rev": rev, "_deleted": true])
        #expect(try Self.lines(pool, "SELECT count(*) FROM \"Äpfel\"") == ["0"])
        #expect(try sync.refusedRows(in: "äpfel").map(\.key) == ["a"])
        #expect(try sync.refusedRows(in: "Äpfel").isEmpty)
    }

    /// A precomposed `é` and an `e` with a combining accent are one string
    /// to Swift's `==` and two names to SQLite: two tables, each synced as
    /// itself.
    @Test func namesAreComparedInBytesNotAsCanonicallyEquivalentStrings() async throws {
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        let (pool, first) = try Self.device("""
            CREATE TABLE "\(composed)"(id TEXT PRIMARY KEY NOT NULL, v TEXT);
            CREATE TABLE "\(decomposed)"(id TEXT PRIMARY KEY NOT NULL, v TEXT);
            """, syncing: [composed])
        let both = try TableSync(pool, tables: [composed, decomposed])
        #expect(both.tables.map { Array($0.name.utf8) } == [Array(composed.utf8), Array(decomposed.utf8)])
        try await pool.write { try $0.execute(sql: "INSERT INTO \"\(decomposed)\" VALUES ('k', 'accent apart')") }
        let captured = try await both.captureLocalChanges()
        #expect(captured == 1)
        let ids = try await both.documents.allDocuments().rows.compactMap { $0["id"]?.stringValue }
        #expect(ids.map { Array($0.utf8) } == [Array((decomposed + ":k").utf8)])
        _ = first
    }

    /// A value the test sets and a database function reads.
    final class Setting: @unchecked Sendable {
        // @unchecked: `stored` is only touched under `lock`.
        private let lock = NSLock()
        private var stored: Int

        init(_ value: Int) { stored = value }

        var value: Int {
            get { lock.lock(); defer { lock.unlock() }; return stored }
            set { lock.lock(); stored = newValue; lock.unlock() }
        }
    }

    /// A count that a database function bumps from the writer's thread.
    final class Counter: @unchecked Sendable {
        // @unchecked: `value` is only touched under `lock`.
        private let lock = NSLock()
        private var value = 0

        func add() {
            lock.lock()
            value += 1
            lock.unlock()
        }

        /// The count so far, set back to zero.
        func take() -> Int {
            lock.lock()
            defer { value = 0; lock.unlock() }
            return value
        }
    }

    /// Rows whose parents have not arrived (a selector that leaves the
    /// folders out, another device that has not synced them) are not
    /// written again by each `applyWaitingRows()`, which each sync and each
    /// batch of a continuous one calls; and a chain whose documents spell
    /// the key otherwise than the parent's (a number for a TEXT column),
    /// so that the order cannot be read from them, is still written whole.
    @Test func rowsWaitingForParentsThatHaveNotArrivedAreLeftAlone() async throws {
        let (pool, sync) = try Self.device("""
            CREATE TABLE folders(id TEXT PRIMARY KEY NOT NULL, name TEXT);
            CREATE TABLE notes(id TEXT PRIMARY KEY NOT NULL, title TEXT, folder_id TEXT REFERENCES folders(id));
            CREATE TABLE steps(id TEXT PRIMARY KEY NOT NULL, code TEXT UNIQUE, after TEXT REFERENCES steps(code));
            """, syncing: ["folders", "notes", "steps"])
        let touches = try await Self.documentTouches(pool)
        let orphans: [JSONObject] = (0..<200).map { ["_id": .string("notes:n\($0)"), "title": "lost", "folder_id": "gone"] }
        try await Self.write(orphans, to: sync, batched: true)
        #expect(try sync.waitingRowCount() == 200)
        _ = try await touches()
        #expect(try await sync.applyWaitingRows() == 0)
        #expect(try await touches() == 0)

        // A folder arrives with its notes, the notes first: written, and
        // the orphans still not touched.
        try await Self.write([["_id": "notes:m1", "title": "found", "folder_id": "f1"]], to: sync, batched: true)
        try await Self.write([["_id": "folders:f1", "name": "Work"]], to: sync, batched: false)
        _ = try await touches()
        #expect(try await sync.applyWaitingRows() == 1)
        #expect(try await touches() == 1)
        #expect(try Self.lines(pool, "SELECT id FROM notes") == ["'m1'"])

        // Each step comes after the one whose code it names, given as a
        // number where the column keeps text: deepest first, in one batch.
        let steps = (0..<30).reversed().map { index -> JSONObject in
            let after: JSON = index == 0 ? .null : .number(String(index - 1))
            return ["_id": .string("steps:s\(100 + index)"), "code": .string(String(index)), "after": after]
        }
        try await Self.write(steps, to: sync, batched: true)
        #expect(try Self.lines(pool, "SELECT count(*) FROM steps") == ["30"])
        #expect(try sync.waitingRows(in: "steps").isEmpty)
        #expect(try await pool.read { try Row.fetchAll($0, sql: "PRAGMA foreign_key_check") }.isEmpty)
        #expect(try sync.waitingRowCount() == 200)
    }

    /// A folder deleted on one device while another adds a note to it: the
    /// second device's `ON DELETE CASCADE`, run by the arriving deletion,
    /// takes its note away, and that is synced like any local delete. (It
    /// used to be left uncaptured: the note's document stayed live on the
    /// server and waited for its folder on every other device, for ever.)
    /// `batched`: the deletion arrives in a pull's batch, or written alone
    /// (the documents' triggers apply it).
    @Test(arguments: [true, false])
    func rowsACascadeDeletesOnArrivalAreSyncedToo(batched: Bool) async throws {
        let (server, remote) = try await server()
        defer { server.stop() }
        let schema = """
            CREATE TABLE folders(id TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL);
            CREATE TABLE notes(id TEXT PRIMARY KEY NOT NULL, title TEXT, folder_id TEXT REFERENCES folders(id) ON DELETE CASCADE);
            """
        func rows(_ pool: DatabasePool) throws -> [String] {
            try pool.read { db in
                try String.fetchAll(db, sql: "SELECT 'folder ' || id FROM folders UNION ALL SELECT 'note ' || id FROM notes ORDER BY 1")
            }
        }
        let (alice, aliceSync) = try Self.device(schema, syncing: ["folders", "notes"])
        let (bob, bobSync) = try Self.device(schema, syncing: ["folders", "notes"])
        try await alice.write { try $0.execute(sql: "INSERT INTO folders VALUES ('f1', 'Work'); INSERT INTO notes VALUES ('n1', 'plan', 'f1')") }
        try await aliceSync.sync(with: remote)
        try await bobSync.sync(with: remote)
        #expect(try rows(bob) == ["folder f1", "note n1"])

        // Bob adds a note to the folder and sends it; Alice, who has not
        // seen it, deletes the folder (her cascade takes n1, and is sent).
        try await bob.write { try $0.execute(sql: "INSERT INTO notes VALUES ('n2', 'call', 'f1')") }
        try await bobSync.sync(with: remote)
        try await alice.write { try $0.execute(sql: "DELETE FROM folders WHERE id = 'f1'") }
        try await aliceSync.sync(with: remote)
        #expect(try rows(alice).isEmpty)
        #expect(try aliceSync.waitingRows(in: "notes") == ["n2"])

        // The deletion reaches Bob; his cascade takes n2 away.
        if !batched {
            let leaves = try await remote.openRevisions(id: "folders:f1", revisions: nil, options: DocumentReadOptions(revs: true))
            guard leaves.count == 1, case .ok(let deletion) = leaves[0] else { Issue.record("\(leaves)"); return }
            #expect(deletion["_deleted"] == true)
            _ = try await bobSync.documents.put(deletion, newEdits: false)
            #expect(try rows(bob).isEmpty)
        }
        try await bobSync.sync(with: remote)
        #expect(try rows(bob).isEmpty)
        // Bob's deletion of n2 is a revision like any other: sent, and
        // Alice's waiting note is gone.
        await #expect(throws: (any Error).self) { try await remote.document(id: "notes:n2") }
        try await aliceSync.sync(with: remote)
        for sync in [aliceSync, bobSync] {
            #expect(try sync.waitingRows(in: "notes").isEmpty)
            #expect(try sync.pendingChangeCount() == 0)
            await #expect(throws: (any Error).self) { try await sync.documents.document(id: "notes:n2") }
        }
    }

    @Test func aDeviceKilledMidSyncResumesWithNothingLostOrDoubled() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        let remote = try server.client().database("notes-kill")
        try await remote.create()
        let path = try makeTemporaryPath()
        let count = 10_000
        let db = try Database(path: path)
        try db.execute(sql: Self.schema + """
            ; WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < \(count))
            INSERT INTO notes SELECT printf('%06d', i), 'note ' || i, NULL, i, NULL FROM c
            """)
        try db.close()
        let url = server.base.absoluteString.replacingOccurrences(of: "http://", with: "http://admin:secret@") + "/notes-kill"
        // `strata sync` killed with SIGKILL once the server has some of the rows.
        let process = Process()
        process.executableURL = try RunningServer.strataBinary()
        process.arguments = ["sync", path, url, "--tables", "notes"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        #expect(try await eventually { try await remote.info().documentCount > 0 || !process.isRunning })
        kill(process.processIdentifier, SIGKILL)
        await waitUntilExit(process)
        // Resumed: every row once on the server, and on a second device.
        let again = try await runExecutable(try RunningServer.strataBinary(), ["sync", path, url, "--tables", "notes"])
        #expect(again.status == 0, "\(again.standardError) \(again.standardOutput)")
        #expect(try await remote.info().documentCount == count)
        let bob = try Device()
        try await bob.sync.sync(with: remote)
        let rows = try await bob.pool.read { db in
            try Row.fetchOne(db, sql: "SELECT count(*), count(DISTINCT id), sum(pinned), min(id), max(id) FROM notes")!.databaseValues
        }
        #expect(rows == [.integer(Int64(count)), .integer(Int64(count)), .integer(Int64(count * (count + 1) / 2)), .text("000001"), .text("010000")])
        #expect(try bob.sync.pendingChangeCount() == 0)
    }

    @Test func aTableWhoseKeysDevicesWouldShareIsRefused() throws {
        let pool = try DatabasePool(path: try makeTemporaryPath())
        try pool.write { db in
            try db.execute(sql: """
                CREATE TABLE counters(id INTEGER PRIMARY KEY AUTOINCREMENT, n INTEGER);
                CREATE TABLE ratings(book_id INTEGER PRIMARY KEY, stars INTEGER);
                CREATE TABLE loose(a TEXT, b TEXT);
                CREATE TABLE pairs(a TEXT, b TEXT, PRIMARY KEY (a, b));
                CREATE TABLE files(id TEXT PRIMARY KEY NOT NULL, data BLOB);
                CREATE TABLE blobKeyed(id BLOB PRIMARY KEY NOT NULL);
                CREATE TABLE private(id TEXT PRIMARY KEY NOT NULL, _secret TEXT);
                CREATE TABLE marked(id TEXT PRIMARY KEY NOT NULL, "_\u{301}x" TEXT);
                CREATE TABLE tagged(id TEXT PRIMARY KEY NOT NULL, "$table" TEXT);
                CREATE TABLE cased(id TEXT PRIMARY KEY NOT NULL, "$Table" TEXT);
                CREATE TABLE parts(id TEXT PRIMARY KEY NOT NULL);
                CREATE TABLE "Parts:old"(id TEXT PRIMARY KEY NOT NULL);
                """)
        }
        func reason(_ table: String) -> String? {
            do {
                _ = try TableSync(pool, tables: [table])
                return nil
            } catch let error as DocumentError {
                return error.reason
            } catch {
                return "\(error)"
            }
        }
        #expect(reason("counters") == "cannot sync counters: its key id is AUTOINCREMENT, the row id SQLite hands out, and two devices would hand out the same keys. Give it a primary key of globally unique values, for example `id TEXT PRIMARY KEY NOT NULL` filled with UUID().uuidString")
        #expect(reason("ratings") == "cannot sync ratings: its key book_id is an INTEGER PRIMARY KEY, the row id SQLite hands out, and two devices would hand out the same keys. Give it a primary key of globally unique values, for example `id TEXT PRIMARY KEY NOT NULL` filled with UUID().uuidString (or, if its ids are the same on every device and the app always sets them, name it in sharedIntegerKeys)")
        // Ids the same everywhere (a catalog's), said so: shared.
        #expect(throws: Never.self) { try TableSync(pool, tables: ["ratings"], sharedIntegerKeys: ["ratings"]) }
        #expect(throws: DocumentError.self) { try TableSync(pool, tables: ["counters"], sharedIntegerKeys: ["counters"]) }
        #expect(reason("loose")?.hasPrefix("cannot sync loose: it has no primary key but its row id, and two devices would hand out the same keys") == true)
        // A composite key is the natural key of a join table, and is shared.
        #expect(reason("pairs") == nil)
        // BLOB columns are carried (as attachments), BLOB keys are not.
        #expect(reason("files") == nil)
        #expect(reason("blobKeyed") == "cannot sync blobKeyed: its key column id may hold BLOBs, which cannot name a document; declare it TEXT (a UUID string, say)")
        #expect(reason("private") == "cannot sync private: its column _secret starts with `_`, which CouchDB keeps for its own members")
        // `_` followed by a combining mark is one Character, still `_` first.
        #expect(reason("marked") == "cannot sync marked: its column _\u{301}x starts with `_`, which CouchDB keeps for its own members")
        // The member `$table` names the row's table; a column of that name
        // would overwrite it (a JSON member's name is case-sensitive).
        #expect(reason("tagged") == "cannot sync tagged: its column $table has the name of the member that names a row's table in its document; rename the column")
        #expect(reason("cased") == nil)
        // Two tables whose documents' ids would overlap: `Parts:old:k` is
        // row `k` of one and row `old:k` of the other. Refused together,
        // and one after the other in the same file.
        let overlap = "cannot sync parts and Parts:old in one file: a row of parts whose key starts with \"old:\" would have the document id of a row of Parts:old; rename one of them"
        #expect(throws: DocumentError.self) { try TableSync(pool, tables: ["parts", "Parts:old"]) }
        do {
            _ = try TableSync(pool, tables: ["parts", "Parts:old"])
        } catch let error as DocumentError {
            #expect(error.reason == overlap)
        }
        #expect(reason("parts") == nil)
        #expect(reason("Parts:old") == overlap)
        #expect(reason("nowhere") == "cannot sync nowhere: there is no such table")
    }
}



