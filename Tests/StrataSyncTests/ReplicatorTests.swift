import Foundation
import StrataDocuments
import StrataSync
import StrataServerTestHelpers
import StrataTestHelpers
import Testing

/// The replicator between local stores and `strata serve`, both ways,
/// one-shot and continuous.
@Suite(.serialized) struct ReplicatorTests {
    /// A device's database: a WAL file of its own.
    func device(_ name: String = "device") throws -> DocumentDatabase {
        try DocumentDatabase(path: makeTemporaryPath("\(name).sqlite"))
    }

    /// Every document with its full history and conflicts, by id, the way
    /// two sides are compared after a replication.
    func state(_ db: DocumentDatabase) throws -> [String: JSON] {
        var state: [String: JSON] = [:]
        for change in try db.changes(ChangesOptions(style: .allDocs)).results {
            let leaves = try db.openRevisions(id: change.id, revisions: nil, options: DocumentReadOptions(revs: true, attachments: true))
            state[change.id] = .array(leaves.map { if case .ok(let doc) = $0 { .object(doc) } else { .null } }.sorted { $0.text < $1.text })
        }
        return state
    }

    func state(_ db: RemoteDatabase) async throws -> [String: JSON] {
        var state: [String: JSON] = [:]
        for change in try await db.changes(ChangesOptions(style: .allDocs)).results {
            let leaves = try await db.openRevisions(id: change.id, revisions: nil, options: DocumentReadOptions(revs: true, attachments: true))
            state[change.id] = .array(leaves.map { if case .ok(let doc) = $0 { .object(doc) } else { .null } }.sorted { $0.text < $1.text })
        }
        return state
    }

    @Test func aDeviceToTheServerAndBackToAnother() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        let remote = try server.client().database("notes")
        let phone = try device("phone")
        for i in 0..<120 { try await phone.put(["_id": .string(String(format: "note%03d", i)), "n": .int(i)]) }
        let edited = try await phone.put(["_id": "note000", "_rev": .string(try phone.document(id: "note000")["_rev"]!.stringValue!), "n": 1000])
        let withPicture = try await phone.putAttachment(id: "note001", name: "picture.png", rev: try phone.document(id: "note001")["_rev"]!.stringValue!,
                                                  contentType: "image/png", data: Data([0x89, 0x50, 0x4E, 0x47, 0, 255]))
        try await phone.delete(id: "note002", rev: try phone.document(id: "note002")["_rev"]!.stringValue!)
        try phone.putLocal(["_id": "_local/settings", "theme": "dark"])

        // Push, creating the server's database, in batches of 50.
        var options = ReplicationOptions(createTarget: true, batchSize: 50)
        let batches = ValueLog<ReplicationProgress>()
        let pushed = try await Replicator(source: phone, target: remote, options: options).run { batches.append($0) }
        #expect(pushed.documentsWritten == 120 && pushed.documentWriteFailures == 0 && pushed.caughtUp)
        #expect(batches.values.count >= 3)
        #expect(try await state(remote) == state(phone))
        #expect(try await remote.document(id: "note000")["_rev"] == .string(edited.rev))
        #expect(try await remote.attachment(id: "note001", name: "picture.png").data == Data([0x89, 0x50, 0x4E, 0x47, 0, 255]))
        #expect(try await remote.document(id: "note001")["_rev"] == .string(withPicture.rev))
        // _local documents stay where they are.
        #expect(try await remote.localDocument(id: "settings") == nil)

        // Pull into a second device.
        options.createTarget = false
        let tablet = try device("tablet")
        let pulled = try await Replicator(source: remote, target: tablet, options: options).run()
        #expect(pulled.documentsWritten == 120)
        #expect(try state(tablet) == state(phone))
        #expect(throws: DocumentError.deleted) { try tablet.document(id: "note002") }

        // Again: the checkpoints say everything is there; nothing is read.
        let again = try await Replicator(source: phone, target: remote, options: options).run()
        #expect(again.revisionsChecked == 0 && again.documentsWritten == 0)
        // One more change: only it travels.
        try await phone.put(["_id": "new", "n": 1])
        let one = try await Replicator(source: phone, target: remote, options: options).run()
        #expect(one.revisionsChecked == 1 && one.documentsWritten == 1)
    }

    @Test func serverToServerOneShotAndContinuous() async throws {
        let first = try await RunningServer.start()
        defer { first.stop() }
        let second = try await RunningServer.start()
        defer { second.stop() }
        let source = try first.client().database("voting")
        let target = try second.client().database("voting")
        try await source.create()
        try await source.put(try JSON(parsing: SeedVoting.design).objectValue!)
        _ = try await source.bulkPut((0..<300).map { ["_id": .string("v\($0)"), "answer": .int($0 % 3)] })
        let once = try await Replicator(source: source, target: target, options: ReplicationOptions(createTarget: true)).run()
        #expect(once.documentsWritten == 301)
        #expect(try await state(target) == state(source))

        // Continuous: a write on the first server arrives on the second.
        let replication = Task {
            var options = ReplicationOptions(continuous: true)
            options.heartbeat = .seconds(5)
            return try await Replicator(source: source, target: target, options: options).run()
        }
        var question = try JSON(parsing: SeedVoting.question).objectValue!
        question["_id"] = "late"
        let written = try await source.put(question)
        #expect(await eventually { (try? await target.document(id: "late"))?["_rev"] == .string(written.rev) })
        // The seed's update handler, run on the first server; the vote travels.
        let vote = try await source.update(design: "voting", function: "addvote", id: "late", body: Data(#"{"answer":"0","uid":"d"}"#.utf8))
        #expect(vote.status == 201)
        #expect(await eventually { (try? await target.document(id: "late"))?["_rev"] == vote.newRevision.map(JSON.string) })
        replication.cancel()
        await #expect(throws: CancellationError.self) { try await replication.value }
    }

    @Test func conflictsEndTheSameEverywhere() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        let remote = try server.client().database("shared")
        try await remote.create()
        try await remote.put(["_id": "list", "items": ["milk"]])
        let alice = try device("alice")
        let bob = try device("bob")
        for device in [alice, bob] { try await Replicator.sync(device, remote) }
        // Both edit the same document offline.
        let base = try await alice.document(id: "list")["_rev"]!
        try await alice.put(["_id": "list", "_rev": base, "items": ["milk", "eggs"]])
        try await bob.put(["_id": "list", "_rev": base, "items": ["milk", "bread"]])
        try await bob.put(["_id": "bob-only", "n": 1])
        // Each syncs; Alice once more to pick up Bob's edit.
        try await Replicator.sync(alice, remote)
        try await Replicator.sync(bob, remote)
        try await Replicator.sync(alice, remote)
        let conflicts = DocumentReadOptions(conflicts: true)
        let onServer = try await remote.document(id: "list", options: conflicts)
        let onAlice = try await alice.document(id: "list", options: conflicts)
        let onBob = try await bob.document(id: "list", options: conflicts)
        #expect(onServer == onAlice && onAlice == onBob)
        #expect(onServer["_conflicts"]?.arrayValue?.count == 1)
        #expect(onServer["_rev"]?.stringValue?.hasPrefix("2-") == true)
        #expect(try await alice.document(id: "bob-only")["n"] == 1)
        #expect(try await state(remote) == state(alice))
        #expect(try state(alice) == state(bob))

        // Resolving on one device (deleting the loser) reaches the others.
        let loser = onAlice["_conflicts"]!.arrayValue![0].stringValue!
        try await alice.delete(id: "list", rev: loser)
        try await Replicator.sync(alice, remote)
        try await Replicator.sync(bob, remote)
        #expect(try await bob.document(id: "list", options: conflicts)["_conflicts"] == nil)
        #expect(try state(alice) == state(bob))
    }

    @Test func filteredReplication() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        let remote = try server.client().database("mixed")
        try await remote.create()
        _ = try await remote.bulkPut((0..<20).map { ["_id": .string("d\($0)"), "type": .string($0 % 2 == 0 ? "vote" : "question"), "n": .int($0)] })
        try await remote.put(["_id": "_design/app", "filters": ["votes": "function(doc, req) { return doc.type == req.query.type; }"]])

        let byIDs = try device()
        try await Replicator(source: remote, target: byIDs, options: ReplicationOptions(filter: .documentIDs(["d1", "d4"]))).run()
        #expect(try await byIDs.allDocuments().rows.compactMap { $0["id"]?.stringValue } == ["d1", "d4"])

        let bySelector = try device()
        try await Replicator(source: remote, target: bySelector,
                             options: ReplicationOptions(filter: .selector(["n": ["$gte": 17]]))).run()
        #expect(try await bySelector.allDocuments().rows.compactMap { $0["id"]?.stringValue } == ["d17", "d18", "d19"])

        let byFunction = try device()
        try await Replicator(source: remote, target: byFunction,
                             options: ReplicationOptions(filter: .function("app/votes", parameters: ["type": "question"]))).run()
        #expect(try await byFunction.info().documentCount == 10)
        #expect(try await byFunction.find(FindQuery(selector: ["type": "vote"])).docs.isEmpty)

        // A Swift filter registered on a local source.
        let source = try device()
        for i in 0..<6 { try await source.put(["_id": .string("x\(i)"), "keep": .bool(i < 2)]) }
        var functions = DesignFunctions()
        functions.filters["kept"] = { doc, _ in doc["keep"]?.boolValue == true }
        try source.register(design: "app", functions)
        let kept = try device()
        try await Replicator(source: source, target: kept, options: ReplicationOptions(filter: .function("app/kept"))).run()
        #expect(try await kept.allDocuments().rows.compactMap { $0["id"]?.stringValue } == ["x0", "x1"])
    }

    @Test func refusalsAreCountedOrEndTheReplication() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        let remote = try server.client().database("guarded")
        try await remote.create()
        try await remote.put(["_id": "_design/guard", "validate_doc_update":
            "function(newDoc, oldDoc, userCtx) { if (newDoc.bad) throw({forbidden: 'no bad documents'}); }"])
        let phone = try device()
        try await phone.put(["_id": "good", "n": 1])
        try await phone.put(["_id": "bad", "bad": true])
        let done = try await Replicator(source: phone, target: remote).run()
        #expect(done.documentWriteFailures == 1 && done.documentsWritten == 1)
        await #expect(throws: RemoteError.self) { try await remote.document(id: "bad") }

        // A wrong password ends the replication at once, with the reason.
        let wrong = try server.client(.basic(name: "admin", password: "wrong")).database("guarded")
        let started = ContinuousClock.now
        do {
            try await Replicator(source: phone, target: wrong).run()
            Issue.record("replicated with a wrong password")
        } catch let error as ReplicationError {
            #expect(error.underlying?.status == 401)
            #expect(error.reason.contains("check the user and password"))
        }
        // No retries with backoff (those would take seconds).
        #expect(ContinuousClock.now - started < .seconds(30))

        // A missing target without createTarget.
        await #expect(throws: ReplicationError.self) {
            try await Replicator(source: phone, target: try server.client().database("absent")).run()
        }
    }

    @Test func continuousSyncBothWays() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        let remote = try server.client().database("live")
        try await remote.create()
        let phone = try device()
        var options = ReplicationOptions(continuous: true)
        options.heartbeat = .seconds(2)
        let sync = Task { try await Replicator.sync(phone, remote, options: options) }
        defer { sync.cancel() }
        let local = try await phone.put(["_id": "from-phone"])
        #expect(await eventually { (try? await remote.document(id: "from-phone"))?["_rev"] == .string(local.rev) })
        let fromServer = try await remote.put(["_id": "from-server"])
        #expect(await eventually { (try? phone.document(id: "from-server"))?["_rev"] == .string(fromServer.rev) })
        sync.cancel()
        await #expect(throws: CancellationError.self) { try await sync.value }
    }

    /// The seed's flow with 50 devices voting through the update handler at
    /// once, each with its own client: every vote counted.
    @Test func fiftyDevicesVoteAtOnce() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        let admin = try server.client()
        let voting = admin.database("voting")
        try await voting.create()
        try await voting.put(try JSON(parsing: SeedVoting.design).objectValue!)
        var question = try JSON(parsing: SeedVoting.question).objectValue!
        question["_id"] = "q1"
        try await voting.put(question)
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for device in 0..<50 {
                group.addTask {
                    let client = try CouchClient(url: server.base)
                    let answer = try await client.database("voting").update(design: "voting", function: "addvote", id: "q1",
                                                                           body: Data(#"{"answer":"\#(device % 2)","uid":"device-\#(device)"}"#.utf8))
                    return answer.status
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: 201, count: 50))
        let stored = try await voting.document(id: "q1")
        let votes = (stored["answers"]?.arrayValue ?? []).flatMap { $0["votes"]?.arrayValue ?? [] }
        #expect(votes.count == 50)
    }

    /// 20 devices vote offline, each into its own database, then all sync at
    /// once: every vote on the server and on every device.
    @Test func twentyDevicesVoteOfflineThenSync() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        let remote = try server.client().database("voting")
        try await remote.create()
        let devices = try (0..<20).map { try device("d\($0)") }
        for (i, device) in devices.enumerated() {
            try await device.put(["_id": .string("vote:q1:device-\(i)"), "type": "vote", "question": "q1", "answer": .int(i % 2), "device": .string("device-\(i)")])
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for device in devices {
                group.addTask { try await Replicator.sync(device, remote) }
            }
            try await group.waitForAll()
        }
        #expect(try await remote.find(FindQuery(selector: ["type": "vote"], limit: 100)).docs.count == 20)
        // Each device, synced again, has every vote.
        for device in devices { try await Replicator.sync(device, remote) }
        for device in devices { #expect(try await device.find(FindQuery(selector: ["type": "vote"], limit: 100)).docs.count == 20) }
    }

    /// `strata replicate` killed with SIGKILL mid-way, then run again:
    /// nothing lost, and what was already checkpointed is not carried again.
    /// The push and the pull of a first sync ask the new store for its
    /// identity at once: both must get the same one, or the checkpoints
    /// of one are kept under an id the file no longer has, and the next
    /// sync checks every revision again.
    @Test func aFirstSyncsCheckpointsServeTheNext() async throws {
        for round in 0..<8 {
            let phone = try device("phone\(round)")
            let laptop = try device("laptop\(round)")
            _ = try await phone.bulkPut((0..<50).map { ["_id": .string("p\($0)")] })
            _ = try await laptop.bulkPut((0..<30).map { ["_id": .string("l\($0)")] })
            let first = try await Replicator.sync(phone, laptop)
            #expect(first.push.documentsWritten == 50 && first.pull.documentsWritten == 30)
            let phoneID = try await phone.identity()
            let laptopID = try await laptop.identity()
            _ = try await laptop.put(["_id": "later"])
            let next = try await Replicator.sync(phone, laptop)
            // Each direction may see again what the other wrote while it
            // ran (the 30 pulled in and `later`, the 50 pushed out), never
            // its own: a lost checkpoint checks all 81.
            #expect(next.push.revisionsChecked <= 31, "round \(round): the push checked \(next.push.revisionsChecked) revisions again")
            #expect(next.pull.revisionsChecked <= 51, "round \(round): the pull checked \(next.pull.revisionsChecked) revisions again")
            #expect(next.pull.documentsWritten == 1 && next.push.documentsWritten == 0)
            let phoneAgain = try await phone.identity()
            let laptopAgain = try await laptop.identity()
            #expect(phoneAgain == phoneID && laptopAgain == laptopID)
        }
    }

    @Test func aKilledReplicationResumesFromItsCheckpoint() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        let remote = try server.client().database("big")
        try await remote.create()
        let total = 10_000
        for start in stride(from: 0, to: total, by: 5000) {
            _ = try await remote.bulkPut((start..<start + 5000).map { ["_id": .string(String(format: "doc%05d", $0)), "n": .int($0)] })
        }
        let path = try makeTemporaryPath("killed.sqlite")
        let process = Process()
        process.executableURL = try RunningServer.strataBinary()
        var sourceURL = URLComponents(url: server.base, resolvingAgainstBaseURL: false)!
        sourceURL.user = "admin"
        sourceURL.password = "secret"
        sourceURL.path = "/big"
        process.arguments = ["replicate", sourceURL.url!.absoluteString, path, "--batch-size", "100", "--checkpoint-interval", "0"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Kill it once a few batches are in.
        var landed = 0
        let started = await eventually {
            guard FileManager.default.fileExists(atPath: path), let db = try? DocumentDatabase(path: path) else { return false }
            landed = (try? db.info().documentCount) ?? 0
            return landed >= 1000 || !process.isRunning
        }
        #expect(started)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal, "the replication ended before it was killed")

        let target = try DocumentDatabase(path: path)
        let before = try await target.info().documentCount
        #expect(before >= 1000 && before < total)
        let resumed = try await Replicator(source: remote, target: target, options: ReplicationOptions(batchSize: 1000)).run()
        // Nothing lost, nothing written twice, and the checkpoint skipped most of what was there.
        #expect(try await target.info().documentCount == total)
        #expect(resumed.documentsWritten == total - before)
        #expect(resumed.revisionsChecked <= total - before + 100)
        #expect(try await remote.allDocuments().rows == target.allDocuments().rows)
    }
}

/// `POST /_replicate` on `strata serve`: between its own databases and to
/// another server, one-shot and continuous.
@Suite(.serialized) struct ReplicateEndpointTests {
    @Test func oneShotContinuousAndCancel() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        let other = try await RunningServer.start()
        defer { other.stop() }
        let admin = "admin:secret"
        let client = try server.client()
        let source = client.database("src")
        try await source.create()
        _ = try await source.bulkPut((0..<50).map { ["_id": .string("d\($0)"), "n": .int($0)] })

        // By name, creating the target; CouchDB's answer.
        let (status, answer) = try await server.send("POST", "/_replicate", json: #"{"source":"src","target":"copy","create_target":true}"#, user: admin)
        #expect(status == 200 && answer?["ok"] == true)
        #expect(answer?["history"]?.arrayValue?.first?["docs_written"] == 50)
        #expect(try await client.database("copy").info().documentCount == 50)

        // To another server by URL with credentials in an object, filtered.
        let target = #"{"url":"\#(other.base.absoluteString)/remote","auth":{"basic":{"username":"admin","password":"secret"}}}"#
        let (toOther, _) = try await server.send("POST", "/_replicate", json: #"{"source":"src","target":\#(target),"create_target":true,"doc_ids":["d1","d2"]}"#, user: admin)
        #expect(toOther == 200)
        #expect(try await other.client().database("remote").info().documentCount == 2)

        // Continuous: 202, then new documents follow until cancelled.
        let body = #"{"source":"src","target":"copy","continuous":true}"#
        let (started, startAnswer) = try await server.send("POST", "/_replicate", json: body, user: admin)
        #expect(started == 202 && startAnswer?["_local_id"]?.stringValue?.hasSuffix("+continuous") == true)
        let (_, tasks) = try await server.send("GET", "/_active_tasks", user: admin)
        #expect(tasks?.arrayValue?.first?["type"] == "replication")
        let late = try await source.put(["_id": "late"])
        #expect(await eventually { (try? await client.database("copy").document(id: "late"))?["_rev"] == .string(late.rev) })
        let (cancelled, _) = try await server.send("POST", "/_replicate", json: #"{"source":"src","target":"copy","continuous":true,"cancel":true}"#, user: admin)
        #expect(cancelled == 200)
        let (again, _) = try await server.send("POST", "/_replicate", json: #"{"source":"src","target":"copy","continuous":true,"cancel":true}"#, user: admin)
        #expect(again == 404)
        #expect(try await server.send("GET", "/_active_tasks", user: admin).1 == .array([]))

        // Refusals: anonymous users, a missing source, a missing target.
        #expect(try await server.send("POST", "/_replicate", json: #"{"source":"src","target":"x"}"#).0 == 401)
        #expect(try await server.send("POST", "/_replicate", json: #"{"source":"nope","target":"copy"}"#, user: admin).0 == 404)
        #expect(try await server.send("POST", "/_replicate", json: #"{"source":"src","target":"absent"}"#, user: admin).0 == 404)
        #expect(try await server.send("POST", "/_replicate", json: #"{"source":"src"}"#, user: admin).0 == 400)
    }
}

/// The Strata replicator's requests, recorded, against the requests
/// CouchDB 3.4.3's and PouchDB's replicators sent in
/// transcripts/couchdb-replicator.log and pouchdb-replicator.log: the same
/// calls, in the protocol's order, resuming from the checkpoint.
@Suite(.serialized) struct ReplicationProtocolTests {
    /// A request line reduced to the protocol step it is:
    /// `GET /src/_changes?…` → `GET _changes`, `PUT /dst/_local/x` → `PUT _local`.
    static func step(_ line: Substring) -> String? {
        let parts = line.split(separator: " ")
        guard parts.count >= 2, ["GET", "PUT", "POST", "HEAD", "DELETE"].contains(String(parts[0])) else { return nil }
        let path = parts[1].split(separator: "?")[0].split(separator: "/").map(String.init)
        guard let db = path.first else { return "\(parts[0]) /" }
        _ = db
        if path.count == 1 { return "\(parts[0]) db" }
        if path[1].hasPrefix("_") { return "\(parts[0]) \(path[1])" }
        return "\(parts[0]) doc"
    }

    /// The steps a recorded replicator took.
    static func recordedSteps(_ transcript: String) throws -> Set<String> {
        let text = try Transcripts.text(transcript)
        return Set(text.split(separator: "\n").compactMap(step))
    }

    @Test func theRequestsFollowTheRecordedReplicators() async throws {
        let first = try await RunningServer.start()
        defer { first.stop() }
        let second = try await RunningServer.start()
        defer { second.stop() }
        let sourceClient = try first.client()
        let targetClient = try second.client()
        let sent = ValueLog<String>()
        sourceClient.observeRequests { sent.append("source " + $0) }
        targetClient.observeRequests { sent.append("target " + $0) }
        let source = sourceClient.database("src")
        let target = targetClient.database("dst")
        try await source.create()
        for i in 0..<3 { try await source.put(["_id": .string("m\(i)"), "n": .int(i)]) }
        let replicator = Replicator(source: source, target: target, options: ReplicationOptions(createTarget: true))
        let firstRun = try await replicator.run()
        #expect(firstRun.documentsWritten == 3)

        // Every step the Strata replicator took is one CouchDB's or PouchDB's took.
        let known = try Self.recordedSteps("couchdb-replicator.log").union(Self.recordedSteps("pouchdb-replicator.log"))
        let lines = sent.values
        let steps = lines.map { line -> String in
            let side = line.split(separator: " ", maxSplits: 1)
            return Self.step(side[1]) ?? String(side[1])
        }
        #expect(Set(steps).isSubset(of: known), "not in the transcripts: \(Set(steps).subtracting(known))")

        // The protocol's order within the run.
        func index(_ prefix: String) -> Int? { lines.firstIndex { $0.hasPrefix(prefix) } }
        let order = ["source GET /src/_local/", "source GET /src/_changes", "target POST /dst/_revs_diff",
                     "source POST /src/_bulk_get", "target POST /dst/_bulk_docs", "target POST /dst/_ensure_full_commit",
                     "target PUT /dst/_local/", "source PUT /src/_local/"].map(index)
        #expect(order.allSatisfy { $0 != nil }, "\(lines)")
        #expect(order.compactMap { $0 } == order.compactMap { $0 }.sorted(), "\(lines)")
        let changes = try #require(lines.first { $0.hasPrefix("source GET /src/_changes") })
        #expect(changes.contains("style=all_docs") && changes.contains("since=0"))
        let bulkGet = try #require(lines.first { $0.hasPrefix("source POST /src/_bulk_get") })
        #expect(bulkGet.contains("revs=true") && bulkGet.contains("latest=true"))

        // A second run after one more change starts from the checkpoint.
        let before = lines.count
        try await source.put(["_id": "m3", "n": 3])
        let secondRun = try await replicator.run()
        #expect(secondRun.documentsWritten == 1 && secondRun.revisionsChecked == 1)
        let resumed = try #require(sent.values[before...].first { $0.hasPrefix("source GET /src/_changes") })
        #expect(resumed.contains("since=\(firstRun.lastSequence.description)"), "\(resumed)")
        // Both sides end the same, and both hold the checkpoint.
        #expect(try await target.allDocuments().rows == source.allDocuments().rows)
        let checkpoint = try #require(sent.values.last { $0.hasPrefix("target PUT /dst/_local/") })
        let id = String(checkpoint.split(separator: "/").last!)
        #expect(try await source.localDocument(id: id)?["source_last_seq"] == target.localDocument(id: id)?["source_last_seq"])
    }
}

/// Document ids are bytes to the replicator, as to CouchDB.
@Suite struct ReplicatedIDBytesTests {
    /// Ids spelled with a precomposed `é` and with `e` and a combining
    /// accent are two documents to CouchDB (bytes), though Swift's `==`
    /// takes the strings for one: both replicate, between local stores and
    /// through `strata serve`.
    @Test func idsThatDifferOnlyInTheirUnicodeFormBothReplicate() async throws {
        let composed = "caf\u{E9}", decomposed = "cafe\u{301}"
        let phone = try DocumentDatabase(path: makeTemporaryPath("phone.sqlite"))
        try await phone.put(["_id": .string(composed), "v": 1])
        try await phone.put(["_id": .string(decomposed), "v": 2])
        let tablet = try DocumentDatabase(path: makeTemporaryPath("tablet.sqlite"))
        let local = try await Replicator(source: phone, target: tablet, options: ReplicationOptions()).run()
        #expect(local.documentsWritten == 2)
        #expect(try await tablet.document(id: composed)["v"] == 1)
        #expect(try await tablet.document(id: decomposed)["v"] == 2)
        // A replication of just these two ids, and the server's changes
        // feed asked for both.
        var byIDs = ReplicationOptions()
        byIDs.filter = .documentIDs([composed, decomposed])
        let watch = try DocumentDatabase(path: makeTemporaryPath("watch.sqlite"))
        let filtered = try await Replicator(source: phone, target: watch, options: byIDs).run()
        #expect(filtered.documentsWritten == 2)
        #expect(try await watch.document(id: decomposed)["v"] == 2)
        let server = try await RunningServer.start()
        defer { server.stop() }
        let remote = try server.client().database("menu")
        let pushed = try await Replicator(source: phone, target: remote, options: ReplicationOptions(createTarget: true)).run()
        #expect(pushed.documentsWritten == 2)
        #expect(try await remote.document(id: composed)["v"] == 1)
        #expect(try await remote.document(id: decomposed)["v"] == 2)
        let changes = try await remote.changes(ChangesOptions(documentIDs: [decomposed, composed])).results.map { Array($0.id.utf8) }
        #expect(changes.count == 2 && Set(changes) == [Array(composed.utf8), Array(decomposed.utf8)])
        let laptop = try DocumentDatabase(path: makeTemporaryPath("laptop.sqlite"))
        let pulled = try await Replicator(source: remote, target: laptop, options: ReplicationOptions()).run()
        #expect(pulled.documentsWritten == 2)
        #expect(try await laptop.document(id: composed)["v"] == 1)
        #expect(try await laptop.document(id: decomposed)["v"] == 2)
    }
}
