import Foundation
import StrataDocuments
import StrataSync
import StrataServerTestHelpers
import StrataTestHelpers
import Testing

/// The transcripts played in reverse: the Strata replicator takes the place
/// of the CouchDB and PouchDB replicators that were recorded, and a fake
/// peer (`FakePeer`, not Strata's server) answers as the recorded peer did.
/// Each call the replicator makes, with the status it got, must be one the
/// logs show; the replication must end with both sides holding the same
/// documents, revisions and conflicts.
@Suite(.serialized) struct ReplicationReplayTests {
    /// `(step, status)` pairs of the recorded logs: `GET /src/_local/x -> 404`
    /// is `GET _local 404`.
    static func recorded() throws -> Set<String> {
        var pairs = Set<String>()
        for name in ["couchdb-replicator.log", "pouchdb-replicator.log"] {
            for line in try Transcripts.text(name).split(separator: "\n") {
                if let pair = pair(line) { pairs.insert(pair) }
            }
        }
        return pairs
    }

    static func pair(_ line: Substring) -> String? {
        guard let arrow = line.range(of: " -> "), let step = ReplicationProtocolTests.step(line[..<arrow.lowerBound]) else { return nil }
        return "\(step) \(line[arrow.upperBound...].prefix(3))"
    }

    /// The peer's requests that no recorded peer answered that way.
    static func unrecorded(_ peer: FakePeer, allowing extra: Set<String> = []) throws -> [String] {
        let known = try recorded().union(extra)
        return peer.log.filter { pair(Substring($0)).map { !known.contains($0) } ?? true }
    }

    /// The source's documents the way a replication must leave the target:
    /// each id's winning revision, its conflicts, and whether it is deleted.
    static func state(_ db: DocumentDatabase) throws -> [String: String] {
        var state: [String: String] = [:]
        let changes = try db.changes(ChangesOptions(style: .allDocs))
        for change in changes.results {
            let leaves = try db.openRevisions(id: change.id, revisions: nil).compactMap { revision -> String? in
                guard case .ok(let doc) = revision else { return nil }
                return (doc["_rev"]?.stringValue ?? "") + (doc["_deleted"] == true ? " deleted" : "")
            }
            state[change.id] = leaves.sorted().joined(separator: ", ")
        }
        return state
    }

    /// A source with what replication must carry: plain documents, a design
    /// document, a deletion and a conflict (two leaves).
    static func fill(_ db: DocumentDatabase) throws {
        for i in 0..<3 { try db.put(["_id": .string("m\(i)"), "n": .int(i)]) }
        try db.put(["_id": "_design/app", "views": ["all": ["map": "function(doc) { emit(doc._id, null); }"]]])
        let gone = try db.put(["_id": "gone"])
        _ = try db.delete(id: "gone", rev: gone.rev)
        try db.put(["_id": "both", "_rev": "2-aaaa", "side": "a", "_revisions": ["start": 2, "ids": ["aaaa", "1111"]]], newEdits: false)
        try db.put(["_id": "both", "_rev": "2-bbbb", "side": "b", "_revisions": ["start": 2, "ids": ["bbbb", "1111"]]], newEdits: false)
    }

    @Test func pullingFromAPeerAsCouchDBDid() async throws {
        let peer = FakePeer()
        try await peer.start()
        let source = try peer.database("src")
        try Self.fill(source)
        let local = try DocumentDatabase(path: makeTemporaryPath("pulled.sqlite"))
        let remote = try CouchClient(url: peer.base).database("src")
        let replicator = Replicator(source: remote, target: local)
        let first = try await replicator.run()
        #expect(first.documentsWritten == 7)
        #expect(try Self.state(local) == Self.state(source))
        #expect(try Self.unrecorded(peer) == [])
        #expect(peer.log.contains { $0.hasPrefix("POST /src/_bulk_get") })

        // Again after one more change: the checkpoint is found on the peer
        // (200) and the changes are read from its opaque sequence.
        try await source.put(["_id": "m3"])
        let before = peer.log.count
        let second = try await replicator.run()
        #expect(second.documentsWritten == 1 && second.revisionsChecked == 1)
        let again = Array(peer.log[before...])
        #expect(again.contains { $0.hasPrefix("GET /src/_local/") && $0.hasSuffix("200") }, "\(again)")
        #expect(again.contains { $0.hasPrefix("GET /src/_changes") && $0.contains("since=\(first.lastSequence.description)".addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(["=", "-"]))!) }, "\(again)")
        #expect(try Self.state(local) == Self.state(source))
        await peer.stop()
    }

    @Test func aPeerWithoutBulkGetIsReadWithOpenRevs() async throws {
        let peer = FakePeer(bulkGet: false)
        try await peer.start()
        let source = try peer.database("src")
        try Self.fill(source)
        let local = try DocumentDatabase(path: makeTemporaryPath("pulled.sqlite"))
        let remote = try CouchClient(url: peer.base).database("src")
        let progress = try await Replicator(source: remote, target: local).run()
        #expect(progress.documentsWritten == 7)
        #expect(try Self.state(local) == Self.state(source))
        // One _bulk_get refused, then open_revs per document, as CouchDB's
        // log reads `_design/app` and as PouchDB falls back.
        let log = peer.log
        #expect(log.filter { $0.hasPrefix("POST /src/_bulk_get") }.count == 1)
        let reads = log.filter { $0.contains("open_revs=") }
        #expect(reads.count == 6, "\(log)")  // one per document
        #expect(reads.allSatisfy { $0.contains("revs=true") && $0.contains("latest=true") && $0.hasSuffix("200") })
        #expect(try Self.unrecorded(peer) == [log.first { $0.hasPrefix("POST /src/_bulk_get") }!], "a refused _bulk_get is the one call no recorded peer answered")
        await peer.stop()
    }

    @Test func pushingToAMissingPeerDatabaseAsPouchDBDid() async throws {
        let peer = FakePeer()
        try await peer.start()
        let local = try DocumentDatabase(path: makeTemporaryPath("votes.sqlite"))
        try Self.fill(local)
        let remote = try CouchClient(url: peer.base).database("dst")
        let progress = try await Replicator(source: local, target: remote, options: ReplicationOptions(createTarget: true)).run()
        #expect(progress.documentsWritten == 7)
        let target = try #require(peer.existing("dst"))
        #expect(try Self.state(target) == Self.state(local))
        let log = peer.log
        // The protocol's order on the target: create it, look for the
        // checkpoint, ask what it lacks, write, commit, checkpoint.
        func index(_ prefix: String) -> Int? { log.firstIndex { $0.hasPrefix(prefix) } }
        let order = ["PUT /dst", "GET /dst/_local/", "POST /dst/_revs_diff", "POST /dst/_bulk_docs", "POST /dst/_ensure_full_commit", "PUT /dst/_local/"].map(index)
        #expect(order.allSatisfy { $0 != nil } && order.compactMap { $0 } == order.compactMap { $0 }.sorted(), "\(log)")
        #expect(try Self.unrecorded(peer) == [])
        await peer.stop()
    }
}
