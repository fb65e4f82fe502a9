import Foundation
import Strata
@testable import StrataDocuments
import StrataTestHelpers
import Testing

func makeDocuments() throws -> DocumentDatabase {
    try DocumentDatabase(path: try makeTemporaryPath())
}

func obj(_ text: String) throws -> JSONObject {
    try #require(try JSON(parsing: text).objectValue)
}

@Suite struct DocumentDatabaseTests {
    @Test func createReadUpdateAndConflict() throws {
        let db = try makeDocuments()
        let first = try db.put(obj(#"{"_id":"poll1","question":"Tabs or spaces?","votes":{"tabs":0}}"#))
        #expect(first.rev.hasPrefix("1-"))
        #expect(first.rev.count == 34)
        let doc = try db.document(id: "poll1")
        #expect(doc.keys == ["_id", "_rev", "question", "votes"])
        #expect(doc["_rev"] == .string(first.rev))

        var edit = doc
        edit["votes"] = .object(["tabs": .int(1)])
        let second = try db.put(edit)
        #expect(second.rev.hasPrefix("2-"))
        // The first revision is no longer a leaf: editing it again is a conflict.
        #expect(throws: DocumentError(.conflict, "Document update conflict.")) { try db.put(edit) }
        // A new document with an existing id and no rev is a conflict too.
        #expect(throws: DocumentError.self) { try db.put(obj(#"{"_id":"poll1"}"#)) }
        #expect(try db.document(id: "poll1")["votes"] == .object(["tabs": .int(1)]))
    }

    /// Revision ids are CouchDB 3's (`couch_db:new_revid`: the MD5 of
    /// `term_to_binary([Deleted, OldStart, OldRev, Body, Atts])`), so the
    /// same edit made here and on a CouchDB gets the same id. The expected
    /// ids come from CouchDB itself: its documentation (`{}`), its test
    /// fixtures (`couch_mrview_test_util`'s `{"val": 1}` and
    /// `{"views": {}}`), a real CouchDB 3.4.3 (`{"v": 1}`,
    /// MEASURED-DIFFERENCES.md), and for the rest Erlang/OTP 25's
    /// `term_to_binary` of the terms CouchDB builds (jiffy's decoding of the
    /// same JSON).
    @Test func revisionIDsAreCouchDBs() throws {
        let db = try makeDocuments()
        #expect(try db.put(obj(#"{"_id":"empty"}"#)).rev == "1-967a00dff5e02add41819138abb3284d")
        #expect(try db.put(obj(#"{"_id":"1","val":1}"#)).rev == "1-08d53a5760b95fce6df2e2c5b008be39")
        #expect(try db.put(obj(#"{"_id":"same-identical","v":1}"#)).rev == "1-7a7e4b29f3af401e69b6f86e4c26b727")
        #expect(try db.put(obj(#"{"_id":"_design/bar01","views":{}}"#)).rev == "1-0b24e44a44af45e51e562fd124ce3007")
        // Every kind of JSON value: strings with escapes and non-ASCII,
        // floats, integers of each size, nesting, empty containers.
        let text = #"{"_id":"complex","é":1,"b":"a\"b\\c\n\r\t\b\f\u0001\u001f\u2028\u2029é😀","a":[null,true,false,1.5e3,{"z":1,"Z":2}],"#
            + #""big":123456789012345678901234567890,"neg":-5,"int32":100000,"neg64":-9000000000,"float":0.1,"empty":{},"list":[]}"#
        #expect(try db.put(obj(text)).rev == "1-be297df4ed411aa4e69b26de9838139d")
        // A second revision names its parent; a deletion says so.
        #expect(try db.put(obj(#"{"_id":"empty","_rev":"1-967a00dff5e02add41819138abb3284d","v":2}"#)).rev == "2-39d6b69a215997ebb2e6c0b28fbd5a08")
        #expect(try db.put(obj(#"{"_id":"x","_rev":"1-abc","x":true}"#), newEdits: false).rev == "1-abc")
        #expect(try db.put(obj(#"{"_id":"x","_rev":"1-abc","x":true}"#)).rev == "2-83febb7838b59851e71cd58d1d841d1d")
        try db.put(obj(#"{"_id":"gone","_rev":"2-0123456789abcdef0123456789abcdef"}"#), newEdits: false)
        #expect(try db.delete(id: "gone", rev: "2-0123456789abcdef0123456789abcdef").rev == "3-b494ba4eb33071c6821dfa5ac2bac849")
        // Attachments by name, type and digest (a text one's digest is of
        // its gzip form), in the document's order.
        let attached = try db.put(obj(#"{"_id":"att","n":1,"_attachments":{"a.txt":{"content_type":"text/plain","data":"aGVsbG8gd29ybGQK"},"b.bin":{"content_type":"application/octet-stream","data":"AAECA/8="}}}"#))
        #expect(attached.rev == "1-267d3b6c90834446005039b3862f47aa")
        let stubs = try db.document(id: "att")["_attachments"]
        #expect(stubs?["a.txt"]?["digest"] == "md5-krClooQzs84+5tAahLRQjA==" && stubs?["b.bin"]?["digest"] == "md5-tZEhNBqyZ2Zym38df34MLw==")
        // The same edit in two databases is one revision, as between CouchDBs;
        // members in another order are another edit, as in CouchDB.
        let other = try makeDocuments()
        #expect(try other.put(obj(#"{"_id":"same-identical","v":1}"#)).rev == "1-7a7e4b29f3af401e69b6f86e4c26b727")
        #expect(try other.put(obj(#"{"_id":"y","m":[1,2],"n":1}"#)).rev != (try other.put(obj(#"{"_id":"z","n":1,"m":[1,2]}"#)).rev))
    }

    /// The counts `info` and `_all_docs` give are kept as documents are
    /// written, deleted, recreated and replicated, and equal a full count;
    /// a file from before they were kept gets them counted when opened.
    @Test func documentCountsFollowEveryWrite() throws {
        let path = try makeTemporaryPath()
        var db = try DocumentDatabase(path: path)
        func scanned(_ db: DocumentDatabase) throws -> [Int] {
            try db.writer.read { conn in
                let row = try Row.fetchOne(conn, sql: #"SELECT count(*) FILTER (WHERE deleted = 0), count(*) FILTER (WHERE deleted = 1), coalesce(sum(length(body)), 0) FROM "couch_docs""#)!
                return [try row[0], try row[1], try row[2]]
            }
        }
        func counted(_ db: DocumentDatabase) throws -> [Int] {
            let info = try db.info()
            return [info.documentCount, info.deletedDocumentCount, info.activeSize]
        }
        let a = try db.put(obj(#"{"_id":"a","n":1}"#))
        _ = try db.put(obj(#"{"_id":"b","text":"a longer body than a's"}"#))
        let a2 = try db.put(obj(#"{"_id":"a","_rev":"\#(a.rev)","n":2,"more":true}"#))
        _ = try db.delete(id: "a", rev: a2.rev)
        _ = try db.bulkPut([obj(#"{"_id":"c"}"#), obj(#"{"_id":"d"}"#)])
        _ = try db.put(obj(#"{"_id":"b","_rev":"9-ffffffffffffffffffffffffffffffff","winner":1}"#), newEdits: false)
        _ = try db.put(obj(#"{"_id":"a"}"#))
        #expect(try counted(db) == scanned(db))
        #expect(try counted(db)[0] == 4 && db.allDocuments().totalRows == 4)
        // A file from before the counts were kept.
        try db.writer.write { conn in
            try conn.execute(sql: #"DROP TRIGGER "couch_docs_inserted"; DROP TRIGGER "couch_docs_updated"; DROP TRIGGER "couch_docs_deleted"; DROP TABLE "couch_counts""#)
        }
        db = try DocumentDatabase(path: path)
        #expect(try counted(db) == scanned(db))
        _ = try db.put(obj(#"{"_id":"e"}"#))
        #expect(try counted(db) == scanned(db))
    }

    @Test func deleteThenRecreate() throws {
        let db = try makeDocuments()
        let r1 = try db.put(obj(#"{"_id":"d","v":1}"#))
        let r2 = try db.delete(id: "d", rev: r1.rev)
        #expect(r2.rev.hasPrefix("2-"))
        #expect(throws: DocumentError(.notFound, "deleted")) { try db.document(id: "d") }
        #expect(throws: DocumentError(.notFound, "missing")) { try db.document(id: "nope") }
        // An old revision stays readable by rev until compaction.
        #expect(try db.document(id: "d", options: DocumentReadOptions(rev: r1.rev))["v"] == .int(1))
        let r3 = try db.put(obj(#"{"_id":"d","v":3}"#))
        #expect(r3.rev.hasPrefix("3-"))
        #expect(try db.info().documentCount == 1)
        try db.compact()
        #expect(throws: DocumentError.self) { try db.document(id: "d", options: DocumentReadOptions(rev: r1.rev)) }
    }

    @Test func badInputGetsCouchDBsErrors() throws {
        let db = try makeDocuments()
        #expect(throws: DocumentError(status: 400, error: "doc_validation", reason: "Bad special document member: _foo")) { try db.put(obj(#"{"_id":"a","_foo":1}"#)) }
        #expect(throws: DocumentError(.illegalDocumentID, "Only reserved document ids may start with underscore.")) { try db.put(obj(#"{"_id":"_x"}"#)) }
        #expect(throws: DocumentError(.badRequest, "Invalid rev format")) { try db.put(obj(#"{"_id":"a","_rev":"nonsense"}"#)) }
        #expect(throws: DocumentError(.badRequest, "Invalid rev format")) { try db.put(obj(#"{"_id":"a","_rev":"1-zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"}"#)) }
        #expect(throws: DocumentError(.conflict, "Document update conflict.")) { try db.put(obj(#"{"_id":"a","_rev":"1-abc"}"#)) }
        #expect(try db.info().updateSequence == 0)
    }

    /// CouchDB reads a leading `_` in bytes: `_` followed by a combining
    /// mark (one Character, not `_`, to Swift's `hasPrefix`) is still a
    /// reserved id, a special member or a prohibited attachment name, and
    /// `_design/` or `_local/` followed by one is still that namespace.
    @Test func aLeadingUnderscoreIsReadInBytes() throws {
        let db = try makeDocuments()
        let mark = "\u{301}"
        #expect(throws: DocumentError(.illegalDocumentID, "Only reserved document ids may start with underscore.")) {
            try db.put(["_id": .string("_" + mark + "x")])
        }
        #expect(throws: DocumentError(status: 400, error: "doc_validation", reason: "Bad special document member: _\(mark)x")) {
            try db.put(["_id": "a", .init("_" + mark + "x"): 1])
        }
        #expect(throws: DocumentError(.badRequest, "Attachment name '_\(mark)a' starts with prohibited character '_'")) {
            try db.put(["_id": "a", "_attachments": .object([.init("_" + mark + "a"): ["content_type": "text/plain", "data": "aGk="]])])
        }
        _ = try db.put(["_id": .string("_design/" + mark + "d"), "views": [:]])
        #expect(try db.document(id: "_design/" + mark + "d")["_id"] == .string("_design/" + mark + "d"))
        _ = try db.put(["_id": .string("_local/" + mark + "l"), "v": 1])
        #expect(try db.info().updateSequence == 1)
    }

    /// The transcript's injection: `3-aaaa…` by new_edits=false beats `3-15c3…`
    /// and the loser is listed as a conflict.
    @Test func replicatedBranchWinsByHashAndTheLoserIsAConflict() throws {
        let db = try makeDocuments()
        let revisions = #"{"start":3,"ids":["15c35d29cdc2e473f3d0cf7e0a0da534","526cbea2d46ef4388db1b43c19cda5b3","0e55d91f157385d2d3ed04658664b83a"]}"#
        try db.put(obj(#"{"_id":"poll1","_rev":"3-15c35d29cdc2e473f3d0cf7e0a0da534","question":"Tabs or spaces?","_revisions":\#(revisions)}"#), newEdits: false)
        let conflicting = #"{"start":3,"ids":["aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","526cbea2d46ef4388db1b43c19cda5b3","0e55d91f157385d2d3ed04658664b83a"]}"#
        let doc = try obj(#"{"_id":"poll1","_rev":"3-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","question":"conflicting","_revisions":\#(conflicting)}"#)
        try db.put(doc, newEdits: false)
        try db.put(doc, newEdits: false) // idempotent
        let winner = try db.document(id: "poll1", options: DocumentReadOptions(conflicts: true))
        #expect(winner["_rev"] == .string("3-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"))
        #expect(winner["_conflicts"] == .array([.string("3-15c35d29cdc2e473f3d0cf7e0a0da534")]))
        let revs = try db.document(id: "poll1", options: DocumentReadOptions(revs: true))
        #expect(revs["_revisions"] == .object(try obj(conflicting)))
        let leaves = try db.openRevisions(id: "poll1", revisions: nil)
        #expect(leaves.count == 2)
        // A deleted leaf loses to a live one whatever its depth.
        try db.put(obj(#"{"_id":"poll1","_rev":"4-ffffffffffffffffffffffffffffffff","_deleted":true,"_revisions":{"start":4,"ids":["ffffffffffffffffffffffffffffffff","aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"]}}"#), newEdits: false)
        #expect(try db.document(id: "poll1")["_rev"] == .string("3-15c35d29cdc2e473f3d0cf7e0a0da534"))
        let deletedConflicts = try db.document(id: "poll1", options: DocumentReadOptions(deletedConflicts: true))["_deleted_conflicts"]
        #expect(deletedConflicts == .array([.string("4-ffffffffffffffffffffffffffffffff")]))
        // Non-hex, short revs are stored as given when replicated.
        try db.put(obj(#"{"_id":"odd","_rev":"1-abc"}"#), newEdits: false)
        #expect(try db.document(id: "odd") == obj(#"{"_id":"odd","_rev":"1-abc"}"#))
    }

    @Test func revsDiffGivesMissingAndPossibleAncestors() throws {
        let db = try makeDocuments()
        try db.put(obj(#"{"_id":"poll1","_rev":"3-15c35d29cdc2e473f3d0cf7e0a0da534","_revisions":{"start":3,"ids":["15c35d29cdc2e473f3d0cf7e0a0da534","526cbea2d46ef4388db1b43c19cda5b3"]}}"#), newEdits: false)
        try db.put(obj(#"{"_id":"poll1","_rev":"3-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","_revisions":{"start":3,"ids":["aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa","526cbea2d46ef4388db1b43c19cda5b3"]}}"#), newEdits: false)
        let diff = try db.revisionsDiff([
            "poll1": ["4-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", "3-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"],
            "zzz": ["1-cccccccccccccccccccccccccccccccc"],
        ])
        #expect(diff["poll1"]?.missing == ["4-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"])
        #expect(diff["poll1"]?.possibleAncestors == ["3-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "3-15c35d29cdc2e473f3d0cf7e0a0da534"])
        #expect(diff["zzz"]?.missing == ["1-cccccccccccccccccccccccccccccccc"])
        #expect(diff["zzz"]?.possibleAncestors == [])
    }

    @Test func stemmingKeepsRevsLimitAncestors() throws {
        let db = try makeDocuments()
        try db.setRevisionsLimit(3)
        var rev = try db.put(obj(#"{"_id":"s","n":0}"#)).rev
        for n in 1...6 {
            rev = try db.put(obj(#"{"_id":"s","_rev":"\#(rev)","n":\#(n)}"#)).rev
        }
        let doc = try db.document(id: "s", options: DocumentReadOptions(revs: true))
        #expect(doc["_revisions"]?["start"] == .int(7))
        #expect(doc["_revisions"]?["ids"]?.arrayValue?.count == 3)
        #expect(doc["n"] == .int(6))
    }

    /// Edits of a document's only leaf skip the tree (and stem every 64
    /// revisions); they must give the same revisions and the same history
    /// as the full write path (a file whose leaf counts are unknown takes it).
    @Test func editingTheOnlyLeafMatchesTheFullWritePath() throws {
        let path = try makeTemporaryPath()
        var histories: [[JSON]] = []
        for fullPath in [false, true] {
            let queue = try DatabaseQueue(path: fullPath ? path : try makeTemporaryPath())
            let db = try DocumentDatabase(queue, name: "docs")
            try db.setRevisionsLimit(4)
            var rev = try db.put(obj(#"{"_id":"s","n":0}"#)).rev
            for n in 1...69 {
                if fullPath { try queue.write { try $0.execute(sql: #"UPDATE "docs_docs" SET leaves = NULL"#) } }
                rev = try db.put(obj(#"{"_id":"s","_rev":"\#(rev)","n":\#(n)}"#)).rev
            }
            let doc = try db.document(id: "s", options: DocumentReadOptions(revs: true, revsInfo: true))
            histories.append([.string(rev), doc["_revisions"] ?? .null, doc["_revs_info"] ?? .null, doc["n"] ?? .null])
            let roots = try queue.read { try Int.fetchOne($0, sql: #"SELECT count(*) FROM "docs_revs" WHERE doc = 's' AND parent IS NULL"#) }
            #expect(roots == 1)
            // Stemmed at revision 64 to 61...64 on the short path, then five more; at each write on the full one.
            #expect(try queue.read { try Int.fetchOne($0, sql: #"SELECT count(*) FROM "docs_revs" WHERE doc = 's'"#) } == (fullPath ? 4 : 10))
        }
        #expect(histories[0] == histories[1])
        #expect(histories[0][1]["start"] == .int(70))
        #expect(histories[0][1]["ids"]?.arrayValue?.count == 4)
        // A conflict makes two leaves: writes take the full path, and both leaves stay.
        let db = try makeDocuments()
        let first = try db.put(obj(#"{"_id":"c","n":1}"#)).rev
        try db.put(obj(#"{"_id":"c","_rev":"1-ffffffffffffffffffffffffffffffff","n":2}"#), newEdits: false)
        let winner = try db.document(id: "c", options: DocumentReadOptions(conflicts: true))
        let edited = try db.put(obj(#"{"_id":"c","_rev":"\#(winner["_rev"]!.stringValue!)","n":3}"#)).rev
        let after = try db.document(id: "c", options: DocumentReadOptions(conflicts: true))
        #expect(after["_rev"] == .string(edited))
        #expect(after["_conflicts"]?.arrayValue?.count == 1)
        #expect([first, "1-ffffffffffffffffffffffffffffffff"].contains(after["_conflicts"]?.arrayValue?.first?.stringValue ?? ""))
    }

    @Test func localDocumentsHaveNoHistoryAndLastWriteWins() throws {
        let db = try makeDocuments()
        #expect(try db.putLocal(obj(#"{"_id":"_local/ck","last_seq":"1"}"#)).rev == "0-1")
        #expect(try db.localDocument(id: "_local/ck") == obj(#"{"_id":"_local/ck","_rev":"0-1","last_seq":"1"}"#))
        // A stale or missing _rev is accepted.
        #expect(try db.putLocal(obj(#"{"_id":"_local/ck","_rev":"0-0","last_seq":"2"}"#)).rev == "0-2")
        // Local documents are not in the changes feed or _all_docs.
        #expect(try db.changes().results.isEmpty)
        #expect(try db.allDocuments().totalRows == 0)
        try db.deleteLocal(id: "_local/ck")
        #expect(try db.localDocument(id: "_local/ck") == nil)
    }

    @Test func attachmentsAreDeduplicatedByDigestAndKeptAsStubs() throws {
        let db = try makeDocuments()
        let data = Data("hello world".utf8)
        let r1 = try db.putAttachment(id: "a", name: "greeting.txt", rev: nil, contentType: "text/plain", data: data)
        let r2 = try db.putAttachment(id: "b", name: "same.txt", rev: nil, contentType: "text/plain", data: data)
        let doc = try db.document(id: "a")
        let stub = try #require(doc["_attachments"]?["greeting.txt"])
        // CouchDB's digest of a text attachment: the MD5 of its gzip form.
        #expect(stub["digest"] == .string("md5-7mkg+nM0HN26sZkLN8KVSA=="))
        #expect(stub["length"] == .int(11))
        #expect(stub["stub"] == .bool(true))
        #expect(stub["revpos"] == .int(1))
        // An edit that keeps the stub keeps the attachment.
        var edit = doc
        edit["title"] = .string("t")
        let r3 = try db.put(edit)
        #expect(try db.attachment(id: "a", name: "greeting.txt").data == data)
        #expect(try db.document(id: "a")["_attachments"]?["greeting.txt"]?["revpos"] == .int(1))
        let blobs = try db.writer.read { try Int.fetchOne($0, sql: #"SELECT count(*) FROM "couch_attachments""#) }
        #expect(blobs == 1)
        let inline = try db.document(id: "b", options: DocumentReadOptions(attachments: true))
        #expect(inline["_attachments"]?["same.txt"]?["data"] == .string(data.base64EncodedString()))
        #expect(r1.id == "a" && r2.id == "b" && r3.rev.hasPrefix("2-"))
        try db.deleteAttachment(id: "a", name: "greeting.txt", rev: r3.rev)
        #expect(throws: DocumentError.self) { try db.attachment(id: "a", name: "greeting.txt") }
        // A stub naming nothing is refused.
        #expect(throws: DocumentError.self) { try db.put(obj(#"{"_id":"c","_attachments":{"x":{"stub":true}}}"#)) }
    }

    /// An attachment from a file goes into SQLite and comes back a range at
    /// a time (incremental BLOB I/O), with the digest and revision ids the
    /// in-memory form gives.
    @Test func attachmentsStreamFromFilesAndReadBackInRanges() throws {
        let db = try makeDocuments()
        let bytes = Data((0..<(3 << 20) + 123).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 7) })
        let file = URL(fileURLWithPath: try makeTemporaryPath("upload.bin"))
        try bytes.write(to: file)
        let fromFile = try db.putAttachment(id: "f", name: "big.bin", rev: nil, contentType: "application/octet-stream", contentsOf: file)
        let inMemory = try makeDocuments().putAttachment(id: "f", name: "big.bin", rev: nil, contentType: "application/octet-stream", data: bytes)
        #expect(fromFile.rev == inMemory.rev)
        #expect(FileManager.default.fileExists(atPath: file.path))
        let content = try db.attachmentContent(id: "f", name: "big.bin")
        #expect(content.length == bytes.count && content.contentType == "application/octet-stream" && content.revpos == 1)
        #expect(content.digest == "md5-" + Data(MD5.digest(bytes)).base64EncodedString())
        var read = Data()
        while read.count < content.length { read += try content.read(at: read.count, count: 1 << 20) }
        #expect(read == bytes)
        #expect(try content.read(at: 10, count: 5) == bytes[10..<15])
        #expect(try db.attachment(id: "f", name: "big.bin").data == bytes)

        // Replaced under the same name on the next revision: a new digest and revpos.
        try Data("small".utf8).write(to: file)
        let second = try db.putAttachment(id: "f", name: "big.bin", rev: fromFile.rev, contentType: "text/plain", contentsOf: file)
        let replaced = try db.attachmentContent(id: "f", name: "big.bin")
        #expect(second.rev.hasPrefix("2-") && replaced.length == 5 && replaced.revpos == 2 && replaced.contentType == "text/plain")
        #expect(try replaced.read(at: 0, count: 100) == Data("small".utf8))
        // The first revision's content is still there, by its revision.
        #expect(try db.attachmentContent(id: "f", name: "big.bin", rev: fromFile.rev).length == bytes.count)
        // A missing file is an error and writes nothing.
        #expect(throws: (any Error).self) {
            try db.putAttachment(id: "g", name: "x", rev: nil, contentType: "text/plain", contentsOf: URL(fileURLWithPath: "/nonexistent/file"))
        }
        #expect(throws: DocumentError.self) { try db.document(id: "g") }
        #expect(throws: DocumentError.self) { try db.attachmentContent(id: "f", name: "nope") }
    }

    /// Files written before incremental BLOB I/O kept attachments in a
    /// WITHOUT ROWID table: opening one moves them, and they stream.
    @Test func anOlderFilesAttachmentsAreMovedToARowidTable() throws {
        let path = try makeTemporaryPath("old.sqlite")
        let old = try DocumentDatabase(path: path)
        let r = try old.putAttachment(id: "a", name: "t.txt", rev: nil, contentType: "text/plain", data: Data("hello world".utf8))
        try old.writer.write { db in
            try db.execute(sql: #"""
                CREATE TABLE "couch_attachments_old" (digest TEXT PRIMARY KEY NOT NULL, data BLOB NOT NULL) WITHOUT ROWID;
                INSERT INTO "couch_attachments_old" SELECT digest, data FROM "couch_attachments";
                DROP TABLE "couch_attachments";
                ALTER TABLE "couch_attachments_old" RENAME TO "couch_attachments";
                """#)
        }
        let reopened = try DocumentDatabase(path: path)
        let content = try reopened.attachmentContent(id: "a", name: "t.txt")
        #expect(try content.read(at: 6, count: 5) == Data("world".utf8))
        let sql = try reopened.writer.read { try String.fetchOne($0, sql: "SELECT sql FROM sqlite_master WHERE name = 'couch_attachments'") }
        #expect(sql?.contains("WITHOUT ROWID") == false)
        #expect(try reopened.document(id: "a")["_rev"] == .string(r.rev))
    }

    @Test func changesFeedInSequenceOrder() throws {
        let db = try makeDocuments()
        let a = try db.put(obj(#"{"_id":"a"}"#))
        try db.put(obj(#"{"_id":"b","type":"ballot"}"#))
        try db.put(obj(#"{"_id":"_design/app"}"#))
        try db.put(obj(#"{"_id":"a","_rev":"\#(a.rev)","v":2}"#))
        let all = try db.changes()
        #expect(all.results.map(\.id) == ["b", "_design/app", "a"])
        #expect(all.results.map(\.seq) == [2, 3, 4])
        #expect(all.lastSeq == 4)
        let since = try db.changes(ChangesOptions(since: 2, limit: 1))
        #expect(since.results.map(\.id) == ["_design/app"])
        #expect(since.pending == 1)
        #expect(since.lastSeq == 3)
        #expect(try db.changes(ChangesOptions(descending: true)).results.map(\.id) == ["a", "_design/app", "b"])
        #expect(try db.changes(ChangesOptions(documentIDs: ["a"])).results.map(\.id) == ["a"])
        #expect(try db.changes(ChangesOptions(designOnly: true)).results.map(\.id) == ["_design/app"])
        #expect(try db.changes(ChangesOptions(selector: .object(["type": .string("ballot")]))).results.map(\.id) == ["b"])
        let withDocs = try db.changes(ChangesOptions(since: 3, includeDocs: true))
        #expect(withDocs.results.first?.doc?["v"] == .int(2))
    }

    /// A replicated batch reads no tree for documents it is the first to
    /// bring; a document brought twice in it (two conflicting leaves) and
    /// one already here still merge with what is there.
    @Test func aReplicatedBatchMergesNewAndKnownDocuments() throws {
        let db = try makeDocuments()
        _ = try db.bulkPut([try obj(#"{"_id":"known","_rev":"1-11","_revisions":{"start":1,"ids":["11"]}}"#)], newEdits: false)
        var batch = try (0..<8).map { try obj(#"{"_id":"d\#($0)","_rev":"1-aa","_revisions":{"start":1,"ids":["aa"]}}"#) }
        batch.insert(try obj(#"{"_id":"twice","_rev":"2-aa","_revisions":{"start":2,"ids":["aa","11"]}}"#), at: 3)
        batch.insert(try obj(#"{"_id":"twice","_rev":"2-bb","_revisions":{"start":2,"ids":["bb","11"]}}"#), at: 6)
        batch.append(try obj(#"{"_id":"known","_rev":"2-cc","_revisions":{"start":2,"ids":["cc","11"]}}"#))
        batch.append(try obj(#"{"_id":"known","_rev":"2-dd","_revisions":{"start":2,"ids":["dd","11"]}}"#))
        let results = try db.bulkPut(batch, newEdits: false)
        #expect(results.allSatisfy { (try? $0.get()) != nil })
        let twice = try db.document(id: "twice", options: DocumentReadOptions(conflicts: true))
        #expect(twice["_rev"] == "2-bb" && twice["_conflicts"] == ["2-aa"])
        let known = try db.document(id: "known", options: DocumentReadOptions(revs: true, conflicts: true))
        #expect(known["_rev"] == "2-dd" && known["_conflicts"] == ["2-cc"])
        #expect(known["_revisions"]?["ids"] == ["dd", "11"])
        #expect(try db.info().documentCount == 10)
        #expect(try db.info().updateSequence == 13)
    }

    /// `style=all_docs` lists every leaf, the winner first (a document
    /// with one leaf is listed from its row, without its tree).
    @Test func theAllDocsStyleListsEveryLeaf() throws {
        let db = try makeDocuments()
        let single = try db.put(obj(#"{"_id":"single","kind":"note"}"#))
        _ = try db.bulkPut([try obj(#"{"_id":"both","_rev":"2-aa","_revisions":{"start":2,"ids":["aa","11"]}}"#),
                            try obj(#"{"_id":"both","_rev":"2-bb","_revisions":{"start":2,"ids":["bb","11"]}}"#)], newEdits: false)
        let gone = try db.put(obj(#"{"_id":"gone"}"#))
        let deletion = try db.delete(id: "gone", rev: gone.rev)
        let changes = try db.changes(ChangesOptions(style: .allDocs)).results
        #expect(changes.map(\.id) == ["single", "both", "gone"])
        #expect(changes.map(\.changes) == [[single.rev], ["2-bb", "2-aa"], [deletion.rev]])
        #expect(try db.changes(ChangesOptions(style: .mainOnly)).results.map(\.changes) == [[single.rev], ["2-bb"], [deletion.rev]])
        // A Swift filter and a selector still see the bodies.
        var options = ChangesOptions(style: .allDocs)
        options.filter = { $0["kind"] == "note" || $0["_id"] == "both" }
        #expect(try db.changes(options).results.map(\.changes) == [[single.rev], ["2-bb", "2-aa"]])
        options.filter = nil
        options.selector = ["kind": "note"]
        #expect(try db.changes(options).results.map(\.id) == ["single"])
    }

    /// As CouchDB's `_selector` filter: a deleted winner is matched too,
    /// with its body and `_deleted: true`, so a deletion that kept the
    /// members passes, a bare one does not, and a selector may ask for
    /// deletions.
    @Test func aSelectorSeesDeletionsWithTheirMembers() throws {
        let db = try makeDocuments()
        let kept = try db.put(obj(#"{"_id":"kept","type":"ballot"}"#))
        let bare = try db.put(obj(#"{"_id":"bare","type":"ballot"}"#))
        try db.put(obj(#"{"_id":"live","type":"ballot"}"#))
        try db.put(obj(#"{"_id":"kept","_rev":"\#(kept.rev)","_deleted":true,"type":"ballot"}"#))
        try db.put(obj(#"{"_id":"bare","_rev":"\#(bare.rev)","_deleted":true}"#))
        let ballots = try db.changes(ChangesOptions(selector: .object(["type": .string("ballot")])))
        #expect(ballots.results.map(\.id) == ["live", "kept"])
        #expect(ballots.results.map(\.deleted) == [false, true])
        let deletions = try db.changes(ChangesOptions(selector: .object(["_deleted": true])))
        #expect(deletions.results.map(\.id) == ["kept", "bare"])
    }

    @Test func liveChangesDeliverNewWrites() async throws {
        let db = try makeDocuments()
        try await db.put(obj(#"{"_id":"before"}"#))
        var iterator = db.liveChanges().makeAsyncIterator()
        let first = try await iterator.next()
        #expect(first?.id == "before")
        try await db.put(obj(#"{"_id":"after"}"#))
        let second = try await iterator.next()
        #expect(second?.id == "after")
    }

    @Test func allDocsPagesByID() throws {
        let db = try makeDocuments()
        for id in ["c", "a", "b", "d"] { try db.put(obj(#"{"_id":"\#(id)"}"#)) }
        let page = try db.allDocuments(AllDocumentsOptions(startKey: "b", limit: 2))
        #expect(page.totalRows == 4)
        #expect(page.offset == 1)
        #expect(page.rows.compactMap { $0["id"]?.stringValue } == ["b", "c"])
        let keyed = try db.allDocuments(AllDocumentsOptions(keys: ["d", "zz"], includeDocs: true))
        #expect(keyed.offset == nil)
        #expect(keyed.rows[1] == .object(["key": .string("zz"), "error": .string("not_found")]))
        #expect(keyed.rows[0]["doc"]?["_id"] == .string("d"))
        let desc = try db.allDocuments(AllDocumentsOptions(endKey: "b", inclusiveEnd: false, descending: true))
        #expect(desc.rows.compactMap { $0["id"]?.stringValue } == ["d", "c"])
    }

    @Test func bulkWritesReportEachDocument() throws {
        let db = try makeDocuments()
        try db.put(obj(#"{"_id":"taken"}"#))
        let results = try db.bulkPut([try obj(#"{"_id":"new"}"#), try obj(#"{"_id":"taken"}"#), try obj(#"{"v":1}"#)])
        #expect(results.count == 3)
        if case .failure(let e) = results[1] { #expect(e.kind == .conflict) } else { Issue.record("expected a conflict") }
        #expect(try db.info().documentCount == 3)
        // A sequence each for the written ones (a batch takes them without
        // a statement each, and records the last).
        #expect(try db.info().updateSequence == 3)
        #expect(try db.changes(ChangesOptions()).results.map(\.seq) == [1, 2, 3] as [ChangeSequence])
        #expect(throws: DocumentError.self) {
            try db.bulkPut([try obj(#"{"_id":"n2"}"#), try obj(#"{"_id":"taken"}"#)], allOrNothing: true)
        }
        #expect(try db.info().documentCount == 3)
        #expect(try db.info().updateSequence == 3)
        _ = try db.bulkPut([try obj(#"{"_id":"n3"}"#), try obj(#"{"_id":"taken"}"#)])
        #expect(try db.info().updateSequence == 4)
        #expect(try db.put(obj(#"{"_id":"n4"}"#)).rev.hasPrefix("1-"))
        #expect(try db.info().updateSequence == 5)
    }

    /// A batch shares one savepoint; a document refused after it wrote
    /// something (an attachment's content stored, then a stub that names
    /// nothing) sends the batch again with a savepoint a document.
    @Test func aDocumentRefusedAfterWritingLeavesNothingOfIt() throws {
        let db = try makeDocuments()
        try db.put(obj(#"{"_id":"taken"}"#))
        let content = Data("kept only if written".utf8).base64EncodedString()
        let refused = try obj(#"{"_id":"half","_attachments":{"a.txt":{"content_type":"text/plain","data":"\#(content)"},"b.txt":{"stub":true}}}"#)
        let blobs = { try db.writer.read { try Int.fetchOne($0, sql: #"SELECT count(*) FROM "couch_attachments""#) } }
        let results = try db.bulkPut([try obj(#"{"_id":"first"}"#), try obj(#"{"_id":"taken"}"#), refused, try obj(#"{"_id":"last"}"#)])
        #expect(results.map { (try? $0.get()) != nil } == [true, false, false, true])
        if case .failure(let e) = results[1] { #expect(e.kind == .conflict) }
        if case .failure(let e) = results[2] { #expect(e.kind == .badRequest && e.reason.contains("stub")) }
        #expect(try blobs() == 0)
        #expect(throws: DocumentError.self) { try db.document(id: "half") }
        #expect(try db.document(id: "first")["_rev"] == results[0].map { .string($0.rev) }.get())
        #expect(try db.info().documentCount == 3)
        // The writes done before the batch was sent again took no sequence.
        #expect(try db.info().updateSequence == 3)
        #expect(try db.changes(ChangesOptions()).results.map(\.id) == ["taken", "first", "last"])
        #expect(try db.changes(ChangesOptions()).results.map(\.seq) == [1, 2, 3] as [ChangeSequence])
        // The same in a group of writers (a server's concurrent requests).
        let grouped = try db.putEach([(try obj(#"{"_id":"g1"}"#), true, nil), (refused, true, nil), (try obj(#"{"_id":"taken"}"#), true, nil), (try obj(#"{"_id":"g2"}"#), true, nil)])
        #expect(grouped.map { (try? $0.get()) != nil } == [true, false, false, true])
        #expect(try blobs() == 0)
        #expect(try db.info().documentCount == 5)
        // All or nothing: nothing of the batch.
        #expect(throws: DocumentError.self) { try db.bulkPut([try obj(#"{"_id":"n1"}"#), refused], allOrNothing: true) }
        #expect(try db.info().documentCount == 5)
        #expect(try blobs() == 0)
    }

    struct Vote: Document, Equatable {
        var _id: String
        var _rev: String?
        var question: String
        var answer: Int
    }

    @Test func codableDocuments() throws {
        let db = try makeDocuments()
        var vote = Vote(_id: "v1", _rev: nil, question: "q1", answer: 2)
        vote._rev = try db.put(vote).rev
        #expect(try db.document(Vote.self, id: "v1") == vote)
        vote.answer = 3
        vote._rev = try db.put(vote).rev
        #expect(vote._rev?.hasPrefix("2-") == true)
        let found = try db.find(Vote.self, FindQuery(selector: .object(["answer": .object(["$gt": .int(2)])])))
        #expect(found == [vote])
    }

    @Test func documentsLiveBesideRelationalTables() throws {
        let queue = try DatabaseQueue()
        try queue.write { try $0.execute(sql: "CREATE TABLE notes(id INTEGER PRIMARY KEY, title TEXT)") }
        let docs = try DocumentDatabase(queue, name: "votes")
        try docs.put(obj(#"{"_id":"v"}"#))
        let tables = try queue.read { try String.fetchAll($0, sql: "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name") }
        #expect(tables.contains("notes") && tables.contains("votes_docs") && tables.contains("votes_revs"))
    }
}

/// Document ids are bytes, as CouchDB's are: `café` with a precomposed `é`
/// and `café` with `e` and a combining accent are two documents, though
/// Swift's `==` takes the two strings for one.
@Suite struct DocumentIDBytesTests {
    static let composed = "caf\u{E9}", decomposed = "cafe\u{301}"

    @Test func idsThatSwiftTakesForEqualAreTwoDocuments() throws {
        let db = try makeDocuments()
        let results = try db.bulkPut([["_id": .string(Self.composed), "v": 1], ["_id": .string(Self.decomposed), "v": 2]])
        #expect(results.count == 2)
        for result in results { _ = try result.get() }
        #expect(try db.document(id: Self.composed)["v"] == 1)
        #expect(try db.document(id: Self.decomposed)["v"] == 2)
        let first = try db.put(["_id": .string(Self.composed), "v": 10, "_rev": db.document(id: Self.composed)["_rev"]!])
        #expect(first.rev.hasPrefix("2-"))
        #expect(try db.document(id: Self.decomposed)["v"] == 2)
        // Replicated revisions of both in one batch.
        let replicated = try db.bulkPut([
            ["_id": .string(Self.composed), "_rev": .string("3-" + String(repeating: "c", count: 32)), "v": 30,
             "_revisions": ["start": 3, "ids": [.string(String(repeating: "c", count: 32)), .string(String(first.rev.dropFirst(2)))]]],
            ["_id": .string(Self.decomposed), "_rev": .string("5-" + String(repeating: "d", count: 32)), "v": 50],
        ], newEdits: false)
        for result in replicated { _ = try result.get() }
        #expect(try db.document(id: Self.composed)["v"] == 30)
        #expect(try db.document(id: Self.decomposed)["v"] == 50)
    }
}

extension DocumentIDBytesTests {
    /// A JSON object's members are named in bytes: the two spellings are two
    /// members, kept with their values through a write and a read, and a
    /// `_revs_diff` of the two ids answers for each.
    @Test func memberNamesThatSwiftTakesForEqualAreTwoMembers() throws {
        let text = "{\"\(Self.composed)\":1,\"\(Self.decomposed)\":2}"
        let object = try obj(text)
        #expect(object.count == 2)
        #expect(object[Self.composed] == 1 && object[Self.decomposed] == 2)
        #expect(JSON.object(object).text == text)
        let db = try makeDocuments()
        var document = object
        document["_id"] = "menu"
        _ = try db.put(document)
        let read = try db.document(id: "menu")
        #expect(read[Self.composed] == 1 && read[Self.decomposed] == 2)
        // Equal objects only when the names are the same bytes.
        #expect(JSONObject([(Self.composed, 1)]) != JSONObject([(Self.decomposed, 1)]))
        let many = JSONObject((0..<40).map { (key: "k\($0)", value: JSON.int($0)) } + [(Self.composed, 1), (Self.decomposed, 2), ("k3", 33)])
        #expect(many.count == 42 && many["k3"] == 33 && many[Self.decomposed] == 2)
    }
}

extension DocumentIDBytesTests {
    /// A batch large enough to find its new documents in one query: an
    /// edit of `café` (precomposed) beside a new `café` (combining accent)
    /// is an edit, not a new document.
    @Test func aBatchTellsAnEditFromANewDocumentSpelledTheOtherWay() throws {
        let db = try makeDocuments()
        let first = try db.put(["_id": .string(Self.composed), "v": 1])
        var batch: [JSONObject] = [["_id": .string(Self.composed), "_rev": .string(first.rev), "v": 10], ["_id": .string(Self.decomposed), "v": 2]]
        batch += (0..<8).map { ["_id": .string("filler\($0)")] }
        for result in try db.bulkPut(batch) { _ = try result.get() }
        #expect(try db.document(id: Self.composed)["v"] == 10)
        #expect(try db.document(id: Self.composed)["_rev"]?.stringValue?.hasPrefix("2-") == true)
        #expect(try db.document(id: Self.decomposed)["v"] == 2)
    }
}

extension DocumentIDBytesTests {
    /// A purge of both spellings in one request purges both documents.
    @Test func aPurgeOfBothSpellingsPurgesBoth() throws {
        let db = try makeDocuments()
        let first = try db.put(["_id": .string(Self.composed)])
        let second = try db.put(["_id": .string(Self.decomposed)])
        let purged = try db.purge([(id: Self.composed, revisions: [first.rev]), (id: Self.decomposed, revisions: [second.rev])])
        #expect(purged.map { Array($0.id.utf8) } == [Array(Self.composed.utf8), Array(Self.decomposed.utf8)])
        #expect(purged.map(\.revisions) == [[first.rev], [second.rev]])
        #expect(throws: DocumentError.self) { try db.document(id: Self.composed) }
        #expect(throws: DocumentError.self) { try db.document(id: Self.decomposed) }
    }
}
