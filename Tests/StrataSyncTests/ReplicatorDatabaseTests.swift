import Foundation
import StrataDocuments
import StrataServer
import StrataSync
import StrataServerTestHelpers
import StrataTestHelpers
import Testing

/// The `_replicator` database: documents there start, show and stop
/// replications, as in CouchDB 3.
@Suite(.serialized) struct ReplicatorDatabaseTests {
    let admin = "admin:secret"

    @Test func aDocumentRunsAOneShotReplicationAndRecordsItsEnd() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        let client = try server.client()
        #expect(try await client.allDatabases().contains("_replicator"))
        let source = client.database("src")
        try await source.create()
        _ = try await source.bulkPut((0..<20).map { ["_id": .string("d\($0)"), "n": .int($0)] })

        let (status, _) = try await server.send("PUT", "/_replicator/copy-src", json: #"{"source":"src","target":"copy","create_target":true}"#, user: admin)
        #expect(status == 201)
        let replicator = client.database("_replicator")
        #expect(await eventually { (try? await replicator.document(id: "copy-src"))?["_replication_state"] == "completed" })
        let document = try await replicator.document(id: "copy-src")
        #expect(document["_replication_stats"]?["docs_written"] == 20)
        #expect(document["_replication_state_time"]?.stringValue?.hasSuffix("Z") == true)
        #expect(try await client.database("copy").info().documentCount == 20)

        let (_, shown) = try await server.send("GET", "/_scheduler/docs/_replicator/copy-src", user: admin)
        #expect(shown?["state"] == "completed" && shown?["doc_id"] == "copy-src" && shown?["database"] == "_replicator")
        let (_, all) = try await server.send("GET", "/_scheduler/docs", user: admin)
        #expect(all?["total_rows"] == 1)
        #expect(try await server.send("GET", "/_scheduler/docs/_replicator/absent", user: admin).0 == 404)
        #expect(try await server.send("GET", "/_scheduler/docs").0 == 401)

        // A completed document is not run again, even when the server reads
        // it again; removing its state runs it again.
        _ = try await source.put(["_id": "later"])
        var again = document
        for name in ["_replication_state", "_replication_state_time", "_replication_stats"] { again[name] = nil }
        _ = try await replicator.put(again)
        #expect(await eventually { (try? await client.database("copy").document(id: "later")) != nil })
    }

    @Test func aContinuousDocumentFollowsUntilDeleted() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        let other = try await RunningServer.start()
        defer { other.stop() }
        let client = try server.client()
        let source = client.database("src")
        try await source.create()
        _ = try await source.put(["_id": "first"])

        // The target on another server, with its credentials in the URL.
        var target = URLComponents(url: other.base.appendingPathComponent("mirror"), resolvingAgainstBaseURL: false)!
        target.user = "admin"
        target.password = "secret"
        let replicator = client.database("_replicator")
        let written = try await replicator.put(["_id": "mirror", "source": "src", "target": .string(target.string!),
                                                "create_target": true, "continuous": true])
        let mirror = try other.client().database("mirror")
        #expect(await eventually { (try? await mirror.document(id: "first")) != nil })
        let late = try await source.put(["_id": "late"])
        #expect(await eventually { (try? await mirror.document(id: "late"))?["_rev"] == .string(late.rev) })

        // Shown while it runs, the password hidden; nothing written into the document.
        let (_, tasks) = try await server.send("GET", "/_active_tasks", user: admin)
        let task = tasks?.arrayValue?.first { $0["doc_id"] == "mirror" }
        #expect(task?["continuous"] == true && task?["database"] == "_replicator")
        #expect(task?["target"]?.stringValue?.contains("secret") == false)
        let (_, docs) = try await server.send("GET", "/_scheduler/docs/_replicator/mirror", user: admin)
        #expect(docs?["state"] == "running" && docs?["id"]?.stringValue?.hasSuffix("+continuous") == true)
        let (_, jobs) = try await server.send("GET", "/_scheduler/jobs", user: admin)
        #expect(jobs?["jobs"]?.arrayValue?.first?["doc_id"] == "mirror")
        #expect(try await replicator.document(id: "mirror")["_replication_state"] == nil)

        // Deleting the document stops the replication.
        _ = try await replicator.delete(id: "mirror", rev: written.rev)
        #expect(try await eventually { try await server.send("GET", "/_active_tasks", user: admin).1 == .array([]) })
        #expect(try await server.send("GET", "/_scheduler/docs/_replicator/mirror", user: admin).0 == 404)
    }

    /// A continuous replication whose database is deleted ends, as CouchDB
    /// drops it, instead of failing on a closed file in `_active_tasks`
    /// forever.
    @Test func aContinuousReplicationOfADeletedDatabaseEnds() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        let admin = "admin:secret"
        for name in ["from", "to"] { #expect(try await server.send("PUT", "/\(name)", user: admin).0 == 201) }
        #expect(try await server.send("PUT", "/from/d", json: "{}", user: admin).0 == 201)
        let (status, _) = try await server.send("POST", "/_replicate", json: #"{"source":"from","target":"to","continuous":true}"#, user: admin)
        #expect(status == 202)
        #expect(try await eventually { try await server.send("GET", "/to/d", user: admin).0 == 200 })
        #expect(try await server.send("GET", "/_active_tasks", user: admin).1?.arrayValue?.count == 1)
        #expect(try await server.send("DELETE", "/from", user: admin).0 == 200)
        #expect(try await eventually { try await server.send("GET", "/_active_tasks", user: admin).1 == .array([]) })
        #expect(try await server.send("GET", "/_scheduler/jobs", user: admin).1?["jobs"] == .array([]))
    }

    @Test func badDocumentsAreRefusedOrMarkedFailed() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        let client = try server.client()

        // Refused when written: no target, a wrong type, a non-admin.
        #expect(try await server.send("PUT", "/_replicator/a", json: #"{"source":"src"}"#, user: admin).0 == 403)
        #expect(try await server.send("PUT", "/_replicator/b", json: #"{"source":"src","target":"t","continuous":"yes"}"#, user: admin).0 == 403)
        #expect(try await server.send("PUT", "/_replicator/c", json: #"{"source":"src","target":"t"}"#).0 == 401)
        #expect(try await server.send("PUT", "/_users/org.couchdb.user:bob", json: #"{"name":"bob","type":"user","roles":[],"password":"apple"}"#).0 == 201)
        #expect(try await server.send("PUT", "/_replicator/c", json: #"{"source":"src","target":"t"}"#, user: "bob:apple").0 == 403)
        // Design documents are not replications.
        #expect(try await server.send("PUT", "/_replicator/_design/mine", json: #"{"views":{}}"#, user: admin).0 == 201)

        // Accepted, but its source does not exist: marked failed, with why.
        #expect(try await server.send("PUT", "/_replicator/missing", json: #"{"source":"nope","target":"t"}"#, user: admin).0 == 201)
        let replicator = client.database("_replicator")
        #expect(await eventually { (try? await replicator.document(id: "missing"))?["_replication_state"] == "failed" })
        let failed = try await replicator.document(id: "missing")
        #expect(failed["_replication_state_reason"]?.stringValue?.contains("nope") == true)
        #expect(try await server.send("GET", "/_scheduler/docs/_replicator/missing", user: admin).1?["state"] == "failed")
    }

    @Test func aJobThatCannotReachItsPeerIsCrashingAndRetried() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        let gone = try await RunningServer.start()
        await gone.stopped()
        let client = try server.client()
        try await client.database("src").create()
        let body = #"{"source":"src","target":"\#(gone.base.absoluteString)/x"}"#
        #expect(try await server.send("PUT", "/_replicator/unreachable", json: body, user: admin).0 == 201)
        #expect(try await eventually {
            let shown = try await server.send("GET", "/_scheduler/docs/_replicator/unreachable", user: admin).1
            return shown?["state"] == "crashing" && (shown?["error_count"]?.intValue ?? 0) >= 1 && shown?["info"]?["error"] != nil
        })
        // Not a terminal state: nothing is written into the document.
        #expect(try await client.database("_replicator").document(id: "unreachable")["_replication_state"] == nil)
    }

    /// As CouchDB opens the source first: a source that cannot be reached
    /// leaves no new, empty target, through `_replicate` and through a
    /// `_replicator` document; once it answers, the target is made.
    @Test func anUnreachableSourceCreatesNoTarget() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        let gone = try await RunningServer.start()
        await gone.stopped()
        let unreachable = gone.base.absoluteString + "/x"
        let (status, answer) = try await server.send(
            "POST", "/_replicate", json: #"{"source":"\#(unreachable)","target":"made-now","create_target":true}"#, user: admin)
        #expect(status == 500 && answer?["error"] == "replication_failed", "\(answer?.text ?? "")")
        #expect(try await server.send("GET", "/made-now", user: admin).0 == 404)
        // A local source that does not exist: 404, and no target either.
        #expect(try await server.send(
            "POST", "/_replicate", json: #"{"source":"absent","target":"made-now","create_target":true}"#, user: admin).0 == 404)
        #expect(try await server.send("GET", "/made-now", user: admin).0 == 404)

        let body = #"{"source":"\#(unreachable)","target":"made-later","create_target":true}"#
        #expect(try await server.send("PUT", "/_replicator/later", json: body, user: admin).0 == 201)
        #expect(try await eventually {
            let shown = try await server.send("GET", "/_scheduler/docs/_replicator/later", user: admin).1
            return shown?["state"] == "crashing" && (shown?["error_count"]?.intValue ?? 0) >= 1
        })
        #expect(try await server.send("GET", "/made-later", user: admin).0 == 404)
        // The same job with a source that answers makes its target.
        let client = try server.client()
        try await client.database("src").create()
        let replicator = client.database("_replicator")
        var document = try await replicator.document(id: "later")
        document["source"] = "src"
        _ = try await replicator.put(document)
        #expect(await eventually { (try? await replicator.document(id: "later"))?["_replication_state"] == "completed" })
        #expect(try await server.send("GET", "/made-later", user: admin).0 == 200)
    }

    @Test func continuousJobsStartAgainWithTheServerFromTheirCheckpoints() async throws {
        let directory = URL(fileURLWithPath: try makeTemporaryPath("couch"))
        let first = try await RunningServer.start(directory: directory)
        let client = try first.client()
        let source = client.database("src")
        try await source.create()
        _ = try await source.bulkPut((0..<30).map { ["_id": .string("d\($0)")] })
        #expect(try await first.send("PUT", "/_replicator/keep", json: #"{"source":"src","target":"copy","create_target":true,"continuous":true}"#, user: admin).0 == 201)
        // Progress is shown after each batch's checkpoint is saved.
        #expect(try await eventually {
            let tasks = try await first.send("GET", "/_active_tasks", user: admin).1?.arrayValue ?? []
            return tasks.first { $0["doc_id"] == "keep" }?["docs_written"] == 30
        })
        await first.stopped()

        let second = try await RunningServer.start(directory: directory)
        defer { second.stop() }
        let again = try second.client()
        _ = try await again.database("src").put(["_id": "after-restart"])
        #expect(await eventually { (try? await again.database("copy").document(id: "after-restart")) != nil })
        // Only the new document was looked at: the job resumed from its checkpoint.
        #expect(try await eventually {
            let tasks = try await second.send("GET", "/_active_tasks", user: admin).1?.arrayValue ?? []
            return tasks.first { $0["doc_id"] == "keep" }?["docs_written"] == 1
        })
        let tasks = try await second.send("GET", "/_active_tasks", user: admin).1?.arrayValue ?? []
        #expect(tasks.first { $0["doc_id"] == "keep" }?["revisions_checked"] == 1)
        #expect(try await again.database("copy").info().documentCount == 31)
    }
}
