import Foundation
import Strata
import StrataDocuments
import StrataTestHelpers
import Testing

/// `open_revs` for many documents (a replicator's read, `_bulk_get`) reads
/// the documents whose tree is one revision without attachments from their
/// rows in one query: it must answer exactly what the read of each
/// document's tree answers.
@Suite struct OpenRevisionsBatchTests {
    @Test func aBatchReadAnswersAsEachDocumentsRead() throws {
        let db = try DocumentDatabase(path: try makeTemporaryPath())
        let hash = "0123456789abcdef0123456789abcdef"
        let first = try db.put(["_id": "first", "title": "one revision", "n": 1]).rev
        try db.put(["_id": "edited", "v": 1])
        let edited = try db.put(["_id": "edited", "_rev": .string(try db.document(id: "edited")["_rev"]!.stringValue!), "v": 2]).rev
        // A tombstone that arrived alone, at depth 1.
        try db.put(["_id": "tombstone", "_rev": .string("1-" + hash), "_deleted": true, "_revisions": ["start": 1, "ids": [.string(hash)]]], newEdits: false)
        // Two first revisions: a conflict.
        try db.put(["_id": "conflicted", "_rev": "1-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "side": "a"], newEdits: false)
        try db.put(["_id": "conflicted", "_rev": "1-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", "side": "b"], newEdits: false)
        try db.put(["_id": "attached", "_attachments": ["a.txt": ["content_type": "text/plain", "data": .string(Data("hi".utf8).base64EncodedString())]]])
        let other = "1-ffffffffffffffffffffffffffffffff"
        var requests: [(id: String, revisions: [String]?)] = []
        for id in ["first", "edited", "tombstone", "conflicted", "attached", "absent"] {
            requests.append((id, nil))
            requests.append((id, [other, "not a revision"]))
        }
        requests.append(("first", [first, first, other]))
        requests.append(("edited", [edited]))
        requests.append(("tombstone", ["1-" + hash]))
        var options: [DocumentReadOptions] = [DocumentReadOptions(), DocumentReadOptions(revs: true, attachments: true, latest: true),
                                              DocumentReadOptions(revs: true, conflicts: true, deletedConflicts: true),
                                              DocumentReadOptions(revsInfo: true), DocumentReadOptions(localSequence: true)]
        var since = DocumentReadOptions(revs: true, attachments: true)
        since.attachmentsSince = [first]
        options.append(since)
        for option in options {
            let batch = try db.openRevisions(requests, options: option)
            for (request, answer) in zip(requests, batch) {
                let alone = Result { try db.openRevisions(id: request.id, revisions: request.revisions, options: option) }
                    .mapError { $0 as? DocumentError ?? DocumentError(.badRequest, "\($0)") }
                #expect("\(answer)" == "\(alone)", "\(request)")
            }
        }
        // The batch read did answer from the rows it should.
        let answers = try db.openRevisions([("first", nil)], options: DocumentReadOptions(revs: true))
        #expect(answers.first.flatMap { try? $0.get() } == [.ok(["_id": "first", "_rev": .string(first), "title": "one revision", "n": 1,
                                                                     "_revisions": ["start": 1, "ids": .array([.string(String(first.dropFirst(2)))])]])])
    }
}
