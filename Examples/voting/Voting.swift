import ArgumentParser
import ExampleSupport
import Foundation
import StrataDocuments
import StrataSync

/// `voting`: the seed's voting device. Questions live in a CouchDB-protocol
/// server's `voting` database; a vote is the seed's call to the
/// `_design/voting` update handler, or, offline, a document in a local
/// database that `voting sync` replicates later.
@main
struct Voting: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "voting",
        abstract: "Ask questions and count votes from many devices, online or offline.",
        subcommands: [Setup.self, Ask.self, Vote.self, Sync.self, Results.self]
    )
}

/// The seed's design document, verbatim.
let votingDesign = #"""
{
   "_id": "_design/voting",
   "updates": {
       "addvote": "function(doc, req) { var json = JSON.parse(req.body); doc.answers[parseInt(json.answer)].votes.push(json.uid); return [doc, toJSON(doc)]}"
   }
}
"""#

/// The questions `setup` creates, in the seed's shape: each answer keeps
/// the ids of the devices that chose it.
let questions: [JSONObject] = [
    ["_id": "tabs-or-spaces", "question": "Tabs or spaces?",
     "answers": [["answer": "Tabs", "votes": []], ["answer": "Spaces", "votes": []]]],
    ["_id": "best-season", "question": "Which season do you like best?",
     "answers": [["answer": "Spring", "votes": []], ["answer": "Summer", "votes": []],
                 ["answer": "Autumn", "votes": []], ["answer": "Winter", "votes": []]]],
]

/// A view counting both kinds of votes by `[question, answer]`: the seed's
/// (device ids in the question's `answers[i].votes`) and the offline ones
/// (a document per device and question).
let tallyDesign: JSONObject = [
    "_id": "_design/tally",
    "views": ["votes": [
        "map": """
            function(doc) {
              if (doc.answers) { for (var i = 0; i < doc.answers.length; i++) emit([doc._id, i], doc.answers[i].votes.length); }
              if (doc.type == 'vote') emit([doc.question, doc.answer], 1);
            }
            """,
        "reduce": "_sum",
    ]],
]

/// The same view in Swift, for a device's local database (which runs no
/// JavaScript).
let tallyFunctions: DesignFunctions = {
    var functions = DesignFunctions()
    functions.views["votes"] = DesignFunctions.View(map: { doc, emit in
        if let answers = doc["answers"]?.arrayValue, let id = doc["_id"] {
            for (i, answer) in answers.enumerated() { emit([id, .int(i)], .int(answer["votes"]?.arrayValue?.count ?? 0)) }
        }
        if doc["type"] == "vote", let question = doc["question"], let answer = doc["answer"] { emit([question, answer], 1) }
    }, reduce: .sum)
    return functions
}()

/// Where the questions are: a server's `voting` database.
struct ServerOptions: ParsableArguments {
    @Option(name: .long, help: "The server, e.g. http://127.0.0.1:5984 (credentials may be in the URL).")
    var server: String

    @Option(name: .long, help: "A user name on the server.")
    var user: String?

    @Option(name: .long, help: "Its password.")
    var password: String?

    func database() throws -> RemoteDatabase {
        guard let url = URL(string: server) else { throw ValidationError("--server: not a URL: \(server)") }
        let authentication: RemoteAuthentication = user.map { .basic(name: $0, password: password ?? "") } ?? .none
        return try CouchClient(url: url, authentication: authentication).database("voting")
    }
}

/// A device's local database, with the tally view registered.
func openDevice(_ path: String) throws -> DocumentDatabase {
    let db = try DocumentDatabase(path: path)
    try db.register(design: "tally", tallyFunctions)
    return db
}

struct Setup: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create the voting database with two questions and the seed's design document (needs a server admin).")
    @OptionGroup var options: ServerOptions

    func run() async throws {
        try await reportingErrors("voting") {
            let db = try options.database()
            do {
                try await db.create()
                print("created database voting")
            } catch let error as RemoteError where error.status == 412 {
                print("database voting exists")
            }
            // CouchDB 3 (and `strata serve`) make a new database its admins'
            // only; the seed's devices vote without signing in, so the
            // voting database is opened to everyone on purpose. Design
            // documents stay the admins' to write.
            try await db.setSecurity(["admins": ["names": [], "roles": []], "members": ["names": [], "roles": []]])
            print("opened voting to devices that do not sign in")
            let design = try JSON(parsing: votingDesign).objectValue!
            for document in questions + [design, tallyDesign] {
                let id = document["_id"]!.stringValue!
                do {
                    try await db.put(document)
                    print("saved \(id)")
                } catch let error as RemoteError where error.status == 409 {
                    print("\(id) exists")
                }
            }
        }
    }
}

struct Ask: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show a random question and its numbered answers (the seed's chooseQuestion).")
    @OptionGroup var options: ServerOptions

    func run() async throws {
        try await reportingErrors("voting") {
            let db = try options.database()
            // The seed: _all_docs, a random id not starting with "_", then that
            // document. Offline votes (`vote:…`) are documents too; skip them.
            let ids = try await db.allDocuments().rows.compactMap { $0["id"]?.stringValue }
                .filter { !$0.hasPrefix("_") && !$0.hasPrefix("vote:") }
            guard let id = ids.randomElement() else { throw ValidationError("there are no questions (run voting setup)") }
            let question = try await db.document(id: id)
            print("\(question["question"]?.stringValue ?? id) [\(id)]")
            for (i, answer) in (question["answers"]?.arrayValue ?? []).enumerated() {
                print("  \(i). \(answer["answer"]?.stringValue ?? "")")
            }
        }
    }
}

struct Vote: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Vote: the seed's update call on the server, or with --local a vote kept on this device until voting sync.")
    @Option(name: .long, help: "The server, e.g. http://127.0.0.1:5984.") var server: String?
    @Option(name: .long, help: "A device database file: vote offline.") var local: String?
    @Option(name: .long, help: "The question's id.") var question: String
    @Option(name: .long, help: "The answer's number, from 0.") var answer: Int
    @Option(name: .long, help: "This device's id (default: a new one, or the device database's own).") var device: String?

    func validate() throws {
        guard (server == nil) != (local == nil) else { throw ValidationError("give one of --server and --local") }
        guard answer >= 0 else { throw ValidationError("--answer is a number from 0") }
    }

    func run() async throws {
        try await reportingErrors("voting") {
            if let local { return try voteOffline(local) }
            guard let url = URL(string: server!) else { throw ValidationError("--server: not a URL") }
            let db = try CouchClient(url: url).database("voting")
            let uid = device ?? UUID().uuidString
            // The seed's call, as it sends it.
            let body = JSON.object(["answer": .string(String(answer)), "uid": .string(uid)]).text
            do {
                _ = try await db.update(design: "voting", function: "addvote", id: question, body: Data(body.utf8))
                print("Thanks for voting")
            } catch let error as RemoteError where error.status == 500 {
                throw ValidationError("the server refused the vote (is \(answer) an answer of \(question)?): \(error.reason)")
            }
        }
    }

    func voteOffline(_ path: String) throws {
        let db = try openDevice(path)
        let uid = try device ?? deviceID(db)
        // A question this device has seen (after a sync) is checked.
        if let known = try? db.document(id: question), let answers = known["answers"]?.arrayValue, answer >= answers.count {
            throw ValidationError("\(question) has answers 0 to \(answers.count - 1)")
        }
        // One document per device and question: devices never conflict, and
        // voting again changes this device's vote.
        let id = "vote:\(question):\(uid)"
        var vote: JSONObject = ["_id": .string(id), "type": "vote", "question": .string(question), "answer": .int(answer), "device": .string(uid)]
        if let existing = try? db.document(id: id) { vote["_rev"] = existing["_rev"] }
        try db.put(vote)
        print("Thanks for voting (kept on this device until voting sync)")
    }

    /// The device's id, made once and kept in its database.
    func deviceID(_ db: DocumentDatabase) throws -> String {
        if let known = try db.localDocument(id: "device"), let id = known["id"]?.stringValue { return id }
        let id = UUID().uuidString.lowercased()
        try db.putLocal(id: "device", ["id": .string(id)])
        return id
    }
}

struct Sync: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Replicate a device database with the server, both ways: offline votes up, questions and votes down.")
    @Option(name: .long, help: "The device database file.") var local: String
    @OptionGroup var options: ServerOptions

    func run() async throws {
        try await reportingErrors("voting") {
            let device = try openDevice(local)
            let (push, pull) = try await Replicator.sync(device, try options.database())
            print("sent \(push.documentsWritten), received \(pull.documentsWritten)")
            if push.documentWriteFailures + pull.documentWriteFailures > 0 {
                throw ValidationError("\(push.documentWriteFailures + pull.documentWriteFailures) documents were refused")
            }
        }
    }
}

struct Results: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Count the votes of each answer, the seed's and the offline ones, on the server or on a device.")
    @Option(name: .long, help: "The server, e.g. http://127.0.0.1:5984.") var server: String?
    @Option(name: .long, help: "A device database file (what it has seen at its last sync).") var local: String?
    @Option(name: .long, help: "Only this question.") var question: String?

    func validate() throws {
        guard (server == nil) != (local == nil) else { throw ValidationError("give one of --server and --local") }
    }

    func run() async throws {
        try await reportingErrors("voting") {
            let query = ViewQueryOptions(startKey: question.map { [.string($0)] }, endKey: question.map { [.string($0), .object([:])] }, group: true)
            // The device and the server answer the same calls.
            let db: any DocumentStore
            if let local {
                db = try openDevice(local)
            } else {
                guard let url = URL(string: server!) else { throw ValidationError("--server: not a URL") }
                db = try CouchClient(url: url).database("voting")
            }
            let rows = try await db.view(design: "tally", view: "votes", options: query).rows
            var counts: [String: [Int: Int]] = [:]
            for row in rows {
                guard let key = row["key"]?.arrayValue, key.count == 2, let id = key[0].stringValue,
                      let answer = key[1].intValue ?? key[1].stringValue.flatMap({ Int($0) }) else { continue }
                counts[id, default: [:]][answer, default: 0] += row["value"]?.intValue ?? 0
            }
            if counts.isEmpty { print("no votes yet") }
            for id in counts.keys.sorted() {
                let document = try? await db.document(id: id)
                print("\(document?["question"]?.stringValue ?? id) [\(id)]")
                let answers = document?["answers"]?.arrayValue ?? []
                for i in Set(counts[id]!.keys).union(answers.indices).sorted() {
                    let name = i < answers.count ? answers[i]["answer"]?.stringValue ?? "" : "answer \(i)"
                    print("  \(i). \(name): \(counts[id]![i] ?? 0)")
                }
            }
        }
    }
}
