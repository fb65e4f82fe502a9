import Foundation
import Strata
import StrataDocuments
import StrataTestHelpers
import Testing

/// A batch of replicated documents (`bulkPut`, what a pull writes) reaches
/// the synced tables through a few statements for the whole batch; a
/// document written alone reaches them through the documents' triggers.
/// Both must leave the same rows, waiting rows, noted bases and outbox.
@Suite struct TableSyncBatchApplyTests {
    static let schema = """
        CREATE TABLE folders(id TEXT PRIMARY KEY NOT NULL, name TEXT NOT NULL, parent_id TEXT REFERENCES folders(id));
        CREATE TABLE notes(id TEXT PRIMARY KEY NOT NULL, title TEXT, folder_id TEXT REFERENCES folders(id), data BLOB);
        CREATE TABLE tags(note_id TEXT NOT NULL, tag TEXT NOT NULL, weight INTEGER, PRIMARY KEY (note_id, tag));
        """

    /// A device file with the three tables synced (children listed first,
    /// so the batch must order them itself).
    static func device() throws -> (DatabasePool, TableSync) {
        let pool = try DatabasePool(path: try makeTemporaryPath())
        try pool.write { try $0.execute(sql: schema) }
        return (pool, try TableSync(pool, tables: ["notes", "tags", "folders"]))
    }

    /// Everything the apply writes, a line each.
    static func state(_ pool: DatabasePool) throws -> [String] {
        try pool.read { db in
            try String.fetchAll(db, sql: """
                SELECT 'folder ' || id || ' ' || name || ' in ' || ifnull(parent_id, '-') FROM folders
                UNION ALL SELECT 'note ' || id || ' ' || ifnull(title, '-') || ' in ' || ifnull(folder_id, '-') || ' ' || ifnull(hex(data), '-') FROM notes
                UNION ALL SELECT 'tag ' || note_id || ' ' || tag || ' ' || ifnull(weight, '-') FROM tags
                UNION ALL SELECT 'waiting ' || id FROM strata_sync_waiting
                UNION ALL SELECT 'base ' || id || ' ' || ifnull(rev, '-') FROM strata_sync_bases
                UNION ALL SELECT 'outbox ' || tbl || ' ' || key FROM strata_sync_outbox
                UNION ALL SELECT 'doc ' || id || ' ' || rev || ' ' || deleted || ' ' || leaves FROM strata_sync_docs
                ORDER BY 1
                """)
        }
    }

    /// Random replicated revisions of folders (some naming a parent that
    /// comes later, or in the same batch), notes (some in folders not yet
    /// there, some with a BLOB as an attachment, some deleted) and tags (a
    /// composite key), with conflicts (a revision on an older one); and
    /// local edits made on both devices before a batch arrives.
    @Test(arguments: Array(1...20) as [UInt64])
    func aBatchAppliesAsDocumentsAppliedOneByOne(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let (batched, batchedSync) = try Self.device()
        let (single, singleSync) = try Self.device()
        // Each document's revisions: rev → its ancestry, newest first.
        var revisions: [String: [String: [String]]] = [:]
        var leaves: [String: [String]] = [:]
        func hash() -> String { String((0..<4).map { _ in String(format: "%08x", UInt32.random(in: 0...UInt32.max, using: &random)) }.joined()) }
        func revision(_ id: String, body: JSONObject, deleted: Bool = false, attachment: Data? = nil) -> JSONObject {
            // A revision on a leaf mostly, on an older one sometimes (a
            // conflict).
            let known = revisions[id, default: [:]]
            let parent: [String]? = known.isEmpty ? nil
                : Int.random(in: 0..<5, using: &random) == 0 ? known.keys.sorted().randomElement(using: &random).flatMap { known[$0] }
                : leaves[id]?.randomElement(using: &random).flatMap { known[$0] }
            let ancestry = [hash()] + (parent ?? [])
            let rev = "\(ancestry.count)-\(ancestry[0])"
            revisions[id, default: [:]][rev] = ancestry
            leaves[id, default: []].removeAll { parent.map { "\($0.count)-\($0[0])" } == $0 }
            leaves[id, default: []].append(rev)
            var document = body
            document["_id"] = .string(id)
            document["_rev"] = .string(rev)
            document["_revisions"] = ["start": .int(ancestry.count), "ids": .array(ancestry.map(JSON.string))]
            if deleted { document["_deleted"] = true }
            if let attachment {
                document["_attachments"] = ["data": ["content_type": "application/octet-stream", "data": .string(attachment.base64EncodedString())]]
            }
            return document
        }
        var seen: Set<String> = []
        let folders = (0..<12).map { "f\($0)" }
        let notes = (0..<30).map { "n\($0)" }
        for round in 0..<40 {
            // Local edits on both devices, not yet captured: an arriving
            // revision of the row must not overwrite them.
            if Int.random(in: 0..<3, using: &random) == 0 {
                let note = notes.randomElement(using: &random)!
                let edit = Int.random(in: 0..<2, using: &random) == 0
                    ? "UPDATE notes SET title = 'local \(round)' WHERE id = '\(note)'"
                    : "INSERT OR IGNORE INTO notes(id, title) VALUES ('\(note)', 'made here \(round)')"
                for pool in [batched, single] { try pool.write { try $0.execute(sql: edit) } }
            }
            if Int.random(in: 0..<4, using: &random) == 0 {
                let a = try batchedSync.captureLocalChanges()
                let b = try singleSync.captureLocalChanges()
                #expect(a == b)
            }
            // A document once a batch, as in a replicator's batch: the
            // triggers would show a revision a later one in the batch
            // replaces (a row that then waits for a parent keeps it), where
            // the batch goes from before it to after it.
            var batch: [JSONObject] = []
            var inBatch: Set<String> = []
            func add(_ document: @autoclosure () -> JSONObject, id: String) {
                if inBatch.insert(id).inserted { batch.append(document()) }
            }
            for _ in 0..<Int.random(in: 1...25, using: &random) {
                switch Int.random(in: 0..<10, using: &random) {
                case 0..<3:
                    let id = folders.randomElement(using: &random)!
                    let parent: JSON = Int.random(in: 0..<2, using: &random) == 0 ? .null : .string(folders.randomElement(using: &random)!)
                    add(revision("folders:\(id)", body: ["$table": "folders", "id": .string(id), "name": .string("folder \(round)"),
                                                          "parent_id": parent == .string(id) ? .null : parent]), id: "folders:\(id)")
                case 3..<8:
                    let id = notes.randomElement(using: &random)!
                    let folder: JSON = Int.random(in: 0..<3, using: &random) == 0 ? .null : .string(folders.randomElement(using: &random)!)
                    let blob = Int.random(in: 0..<4, using: &random) == 0 ? Data("blob \(round)".utf8) : nil
                    let deleted = Int.random(in: 0..<5, using: &random) == 0
                    add(revision("notes:\(id)", body: ["$table": "notes", "id": .string(id), "title": .string("title \(round)"), "folder_id": folder],
                                 deleted: deleted, attachment: blob), id: "notes:\(id)")
                default:
                    let note = notes.randomElement(using: &random)!
                    let tag = ["red", "blue", "green"].randomElement(using: &random)!
                    let deleted = Int.random(in: 0..<6, using: &random) == 0
                    add(revision("tags:[\"\(note)\",\"\(tag)\"]", body: ["$table": "tags", "note_id": .string(note), "tag": .string(tag), "weight": .int(round)],
                                 deleted: deleted), id: "tags:[\"\(note)\",\"\(tag)\"]")
                }
            }
            // The batch in one `bulkPut` on one device, a `put` each on the
            // other.
            let results = try batchedSync.documents.bulkPut(batch, newEdits: false)
            #expect(results.allSatisfy { if case .success = $0 { true } else { false } })
            for document in batch { try singleSync.documents.put(document, newEdits: false) }
            // A child that came before its parent waits on one device and
            // not the other until the waiting rows are applied.
            try batchedSync.applyWaitingRows()
            try singleSync.applyWaitingRows()
            // The lines of one device's state the other's lacks.
            let (a, b) = (Set(try Self.state(batched)), Set(try Self.state(single)))
            let (onlyBatched, onlyOneByOne) = (a.subtracting(b).sorted(), b.subtracting(a).sorted())
            #expect(onlyBatched == onlyOneByOne, "round \(round)")
            if a != b { return }
            for line in a {
                let kind = String(line.prefix { $0 != " " })
                switch kind {
                case "folder" where !line.hasSuffix(" in -"), "note" where !line.contains(" in - "): seen.insert(kind + " in a parent")
                default: seen.insert(kind)
                }
            }
        }
        // The rounds reached the cases: rows waiting, rows in their parent,
        // a composite key; and with the first seed, a noted base.
        #expect(seen.isSuperset(of: ["waiting", "folder in a parent", "note in a parent", "tag"] + (seed == 1 ? ["base"] : [])), "\(seen)")
        #expect(try batched.read { try Row.fetchAll($0, sql: "PRAGMA foreign_key_check") }.isEmpty)
    }

    /// Two revisions of a folder in one batch, the second naming a parent
    /// that has not arrived: the triggers write the first to the row, then
    /// keep it while the second waits; the batch writes only the winner, so
    /// the row waits without the first. What tells the two paths apart.
    static func folderEditedTwiceInOneBatch() -> [JSONObject] {
        let (first, second) = ("1f0c5a9e3b8d4c7a9e1f0c5a9e3b8d4c", "2a7b3c9d1e5f4a6b8c2d7e3f9a1b5c4d")
        return [
            ["_id": "folders:f1", "_rev": .string("1-" + first), "_revisions": ["start": 1, "ids": [.string(first)]],
             "$table": "folders", "id": "f1", "name": "Work", "parent_id": .null],
            ["_id": "folders:f1", "_rev": .string("2-" + second), "_revisions": ["start": 2, "ids": [.string(second), .string(first)]],
             "$table": "folders", "id": "f1", "name": "Work", "parent_id": "not yet here"],
        ]
    }

    @Test func aPullsBatchTakesTheBatchPath() throws {
        let (pool, sync) = try Self.device()
        _ = try sync.documents.bulkPut(Self.folderEditedTwiceInOneBatch(), newEdits: false)
        #expect(try Self.state(pool).filter { !$0.hasPrefix("doc ") } == ["waiting folders:f1"])
    }

    /// A file whose tables were synced by an earlier open and are not all
    /// named now: the batch would leave the others' rows out, so the
    /// documents' triggers apply it.
    @Test func aTableSyncedByAnEarlierOpenStillGetsItsRows() throws {
        let (pool, _) = try Self.device()
        let fewer = try TableSync(pool, tables: ["tags"])
        _ = try fewer.documents.bulkPut(Self.folderEditedTwiceInOneBatch(), newEdits: false)
        #expect(try Self.state(pool).filter { !$0.hasPrefix("doc ") } == ["folder f1 Work in -", "waiting folders:f1"])
    }
}
