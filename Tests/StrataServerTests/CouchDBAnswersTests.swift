import Foundation
@testable import StrataServer
import StrataDocuments
import StrataServerTestHelpers
import StrataTestHelpers
import Testing

/// Answers that differed from CouchDB 3.4.3's for the same request
/// (MEASURED-DIFFERENCES.md, "Server and databases").
@Suite(.serialized) struct CouchDBAnswersTests {
    let admin = "admin:secret"

    @Test func serverAndDatabaseAnswers() async throws {
        let server = try await RunningServer.start(configure: { $0.defaultSecurity = .adminOnly })
        defer { server.stop() }
        // DELETE / is not the welcome.
        let (deleted, body, headers) = try await server.sendWithHeaders("DELETE", "/", user: admin)
        #expect(deleted == 405 && body?["error"] == "method_not_allowed" && headers["allow"] == "GET,HEAD")
        #expect(try await server.send("GET", "/").0 == 200)
        // A path CouchDB has no handler for names no database.
        let (missing, why) = try await server.send("GET", "/_nonexistent", user: admin)
        #expect(missing == 404 && why == .object(["error": "not_found", "reason": "Database does not exist."]))
        // ?rev= on a database's DELETE is a script's mistake: nothing deleted.
        #expect(try await server.send("PUT", "/probe", user: admin).0 == 201)
        let (refused, reason) = try await server.send("DELETE", "/probe?rev=1-abc", user: admin)
        #expect(refused == 400 && reason?["reason"] == "You tried to DELETE a database with a ?=rev parameter. Did you mean to DELETE a document instead?")
        #expect(try await server.send("GET", "/probe", user: admin).0 == 200)
        // Temporary views are gone since CouchDB 2.
        let (gone, answer) = try await server.send("POST", "/probe/_temp_view", json: #"{"map":"function(d){emit(d._id)}"}"#, user: admin)
        #expect(gone == 410 && answer == .object(["error": "gone", "reason": "Temporary views are not supported in CouchDB"]))
    }

    /// MEASURED-DIFFERENCES.md, "Documents".
    @Test func documentAnswers() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        #expect(try await server.send("PUT", "/db", user: admin).0 == 201)
        let (created, first) = try await server.send("PUT", "/db/doc2", json: #"{"v":1}"#)
        #expect(created == 201)
        let rev = first?["rev"]?.stringValue ?? ""
        // ?rev= and the body's _rev disagree: 400, nothing written.
        let (mismatch, why) = try await server.send("PUT", "/db/doc2?rev=\(rev)", json: #"{"_rev":"2-00000000000000000000000000000000","v":2}"#)
        #expect(mismatch == 400 && why?["reason"] == "Document rev from request body and query string have different values")
        let (etag, etagWhy) = try await server.send("PUT", "/db/doc2?rev=\(rev)", json: #"{"v":2}"#, headers: ["If-Match": "\"2-abc\""])
        #expect(etag == 400 && etagWhy?["reason"] == "Document rev and etag have different values")
        #expect(try await server.send("GET", "/db/doc2").1?["v"] == 1)
        // CouchDB's error names and reasons.
        let (special, specialWhy) = try await server.send("PUT", "/db/doc3", json: #"{"_foo":1}"#)
        #expect(special == 400 && specialWhy == .object(["error": "doc_validation", "reason": "Bad special document member: _foo"]))
        let (array, arrayWhy) = try await server.send("PUT", "/db/doc4", json: "[1]")
        #expect(array == 400 && arrayWhy?["reason"] == "Document must be a JSON object")
        // A JSON endpoint takes JSON only.
        for path in ["/db", "/db/_compact", "/db/_bulk_docs", "/db/_find"] {
            let (refused, body) = try await server.send("POST", path, user: admin, headers: ["Content-Type": "text/plain"], body: Data(#"{"x":1}"#.utf8))
            #expect(refused == 415 && body?["error"] == "bad_content_type", "\(path)")
        }
    }

    @Test func bulkDocsRefusesABatchWithAnIllegalIDAndAllOrNothing() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        #expect(try await server.send("PUT", "/db", user: admin).0 == 201)
        let (status, body) = try await server.send("POST", "/db/_bulk_docs", json: #"{"docs":[{"_id":"b1"},{"_id":"doc1"},{"_id":"_bad"}]}"#)
        #expect(status == 400 && body?["error"] == "illegal_docid")
        #expect(try await server.send("GET", "/db/b1").0 == 404)
        let (special, _) = try await server.send("POST", "/db/_bulk_docs", json: #"{"docs":[{"_id":"b2"},{"_id":"b3","_foo":1}]}"#)
        #expect(special == 400)
        #expect(try await server.send("GET", "/db/b2").0 == 404)
        // CouchDB 3 does not implement all_or_nothing: 417 for every
        // document, and nothing written.
        let (aborted, rows) = try await server.send("POST", "/db/_bulk_docs", json: #"{"all_or_nothing":true,"docs":[{"_id":"c1"},{"_id":"c2","_rev":"1-abc"}]}"#)
        #expect(aborted == 417)
        #expect(rows == .array([
            .object(["id": "c1", "rev": "0-", "error": "not_implemented", "reason": "all_or_nothing is not supported"]),
            .object(["id": "c2", "rev": "1-abc", "error": "not_implemented", "reason": "all_or_nothing is not supported"]),
        ]))
        #expect(try await server.send("GET", "/db/c1").0 == 404)
        // The query parameter (pycouchdb sends it) is not CouchDB's switch.
        #expect(try await server.send("POST", "/db/_bulk_docs?all_or_nothing=true", json: #"{"docs":[{"_id":"c3"}]}"#).0 == 201)
    }

    /// MEASURED-DIFFERENCES.md, "Attachments": a text attachment is kept as
    /// CouchDB keeps it (gzip-encoded, its digest the MD5 of the gzip
    /// bytes, zlib's at level 8), a binary one as it is.
    @Test func attachmentsAnswerAsCouchDBs() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        #expect(try await server.send("PUT", "/db", user: admin).0 == 201)
        let (_, _, written) = try await server.sendWithHeaders("PUT", "/db/withatt/hello.txt", headers: ["Content-Type": "text/plain"], body: Data("hello world\n".utf8))
        #expect(written["location"]?.hasSuffix("/db/withatt/hello.txt") == true)
        // CouchDB's digest and encoding, measured on a real CouchDB 3.4.3.
        let stub = try await server.send("GET", "/db/withatt?att_encoding_info=true").1?["_attachments"]?["hello.txt"]
        #expect(stub?["digest"] == "md5-krClooQzs84+5tAahLRQjA==" && stub?["length"] == 12)
        #expect(stub?["encoding"] == "gzip" && stub?["encoded_length"] == 32)
        #expect(try await server.send("GET", "/db/withatt").1?["_attachments"]?["hello.txt"]?["encoding"] == nil)
        let (head, _, headers) = try await server.sendRaw("HEAD", "/db/withatt/hello.txt", headers: ["Accept-Encoding": "identity"])
        #expect(head == 200 && headers["content-length"] == "12" && headers["etag"] == "\"krClooQzs84+5tAahLRQjA==\"")
        let (_, _, gzipHead) = try await server.sendRaw("HEAD", "/db/withatt/hello.txt", headers: ["Accept-Encoding": "gzip"])
        #expect(gzipHead["content-length"] == "32" && gzipHead["content-encoding"] == "gzip")
        #expect(headers["accept-ranges"] == "none")
        let (plain, text, _) = try await server.sendRaw("GET", "/db/withatt/hello.txt", headers: ["Accept-Encoding": "identity"])
        #expect(plain == 200 && text == Data("hello world\n".utf8))
        // A client that takes gzip gets the bytes the digest names.
        let (zipped, gzipped, zippedHeaders) = try await server.sendRaw("GET", "/db/withatt/hello.txt", headers: ["Accept-Encoding": "gzip"])
        #expect(zipped == 200 && (zippedHeaders["content-encoding"] == "gzip" || gzipped == Data("hello world\n".utf8)))
        let tag = try #require(headers["etag"])
        let (notModified, empty, notModifiedHeaders) = try await server.sendRaw("GET", "/db/withatt/hello.txt", headers: ["If-None-Match": tag])
        #expect(notModified == 304 && empty.isEmpty && notModifiedHeaders["etag"] == tag && notModifiedHeaders["content-type"] == nil)
        // A binary attachment as it is: its plain MD5, and byte ranges.
        let rev = try await server.send("GET", "/db/withatt").1?["_rev"]?.stringValue ?? ""
        #expect(try await server.send("PUT", "/db/withatt/data.bin?rev=\(rev)", headers: ["Content-Type": "application/octet-stream"], body: Data("0123456789ab".utf8)).0 == 201)
        let (partial, bytes, partialHeaders) = try await server.sendRaw("GET", "/db/withatt/data.bin", headers: ["Range": "bytes=6-"])
        #expect(partial == 206 && String(decoding: bytes, as: UTF8.self) == "6789ab" && partialHeaders["content-range"] == "bytes 6-11/12")
        #expect(partialHeaders["accept-ranges"] == "bytes")
        // A new attachment comes first, as CouchDB puts it.
        let names = try await server.send("GET", "/db/withatt").1?["_attachments"]?.objectValue?.map(\.key)
        #expect(names == ["data.bin", "hello.txt"])
        // A document's 304 says nothing but its ETag either.
        let (_, _, documentHeaders) = try await server.sendWithHeaders("GET", "/db/withatt")
        let (documentStatus, _, documentNotModified) = try await server.sendRaw("GET", "/db/withatt", headers: ["If-None-Match": documentHeaders["etag"] ?? ""])
        #expect(documentStatus == 304 && documentNotModified["cache-control"] == nil)
    }

    /// CouchDB compiles a design document's views when it is written.
    @Test func aMapFunctionThatDoesNotCompileIsRefused() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        #expect(try await server.send("PUT", "/db", user: admin).0 == 201)
        let (status, body) = try await server.send("PUT", "/db/_design/bad", json: #"{"views":{"v":{"map":"function(doc) { emit(doc._id, }"}}}"#, user: admin)
        #expect(status == 400 && body?["error"] == "compilation_error")
        #expect(body?["reason"]?.stringValue?.hasPrefix("Compilation of the map function in the 'v' view failed:") == true)
        #expect(try await server.send("GET", "/db/_design/bad", user: admin).0 == 404)
        let (reduce, reduceBody) = try await server.send("PUT", "/db/_design/bad", json: #"{"views":{"v":{"map":"function(doc) { emit(1, 1) }","reduce":"_median"}}}"#, user: admin)
        #expect(reduce == 400 && reduceBody == .object(["error": "invalid_design_doc", "reason": "`_median` is not a supported reduce function."]))
        #expect(try await server.send("PUT", "/db/_design/good", json: #"{"views":{"v":{"map":"function(doc) { emit(1, 1) }","reduce":"_sum"}}}"#, user: admin).0 == 201)
    }

    /// MEASURED-DIFFERENCES.md, "`_all_docs` and `_changes` shapes".
    @Test func listingsCountAsCouchDBs() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        #expect(try await server.send("PUT", "/db", user: admin).0 == 201)
        #expect(try await server.send("POST", "/db/_bulk_docs", json: #"{"docs":[{"_id":"a"},{"_id":"b"},{"_id":"c"},{"_id":"d","n":1}]}"#).0 == 201)
        #expect(try await server.send("PUT", "/db/_design/v", json: #"{"views":{"n":{"map":"function(doc) { if (doc.n) emit(doc.n, null) }"},"all":{"map":"function(doc) { emit(doc._id, null) }"}}}"#, user: admin).0 == 201)
        #expect(try await server.send("PUT", "/db/_local/check", json: #"{"x":1}"#).0 == 201)
        // key= is a range of one id: no row when missing, a numeric offset.
        let missing = try await server.send("GET", "/db/_all_docs?key=%22%C3%A9%22").1
        #expect(missing?["rows"] == .array([]) && missing?["offset"] == 5)
        let found = try await server.send("GET", "/db/_all_docs?key=%22b%22").1
        #expect(found?["rows"]?.arrayValue?.count == 1 && found?["offset"] == 2, "_design/v and a sort before b")
        // keys= is a row per id, and offset null.
        let keyed = try await server.send("POST", "/db/_all_docs", json: #"{"keys":["b","zz"]}"#).1
        #expect(keyed?["offset"] == .null && keyed?["rows"]?.arrayValue?.last == .object(["key": "zz", "error": "not_found"]))
        // _design_docs counts the design documents.
        let designs = try await server.send("GET", "/db/_design_docs").1
        #expect(designs?["total_rows"] == 1 && designs?["offset"] == 0 && designs?["rows"]?.arrayValue?.count == 1)
        // _local_docs lists the local ones, uncounted as CouchDB's.
        let locals = try await server.send("GET", "/db/_local_docs?include_docs=true").1
        #expect(locals?["total_rows"] == .null && locals?["rows"]?.arrayValue?.first?["id"] == "_local/check")
        #expect(locals?["rows"]?.arrayValue?.first?["doc"]?["x"] == 1)
        // A view queried with keys says its offset.
        let view = try await server.send("POST", "/db/_design/v/_view/all?reduce=false", json: #"{"keys":["b"]}"#).1
        #expect(view?["offset"] == 1 && view?["rows"]?.arrayValue?.count == 1, "a is before b")
    }

    @Test func changesCountWhatIsPending() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        #expect(try await server.send("PUT", "/db", user: admin).0 == 201)
        for i in 0..<7 { #expect(try await server.send("PUT", "/db/d\(i)", json: #"{"n":\#(i)}"#).0 == 201) }
        #expect(try await server.send("PUT", "/db/_design/v", json: #"{"views":{"odd":{"map":"function(doc) { if (doc.n % 2) emit(doc.n, null) }"}}}"#, user: admin).0 == 201)
        func pending(_ query: String) async throws -> JSON? { try await server.send("GET", "/db/_changes?" + query).1?["pending"] }
        #expect(try await pending("") == 0)
        #expect(try await pending("limit=2") == 6)
        #expect(try await pending("descending=true&limit=2") == 6)
        // CouchDB looks at the named documents only: the others stay pending.
        #expect(try await pending("filter=_doc_ids&doc_ids=%5B%22d1%22%5D") == 7)
        #expect(try await pending("filter=_design") == 7)
        // A filter function with a limit: the changes after the last kept.
        #expect(try await pending("filter=_view&view=v/odd&limit=1") == 6)
        let (_, feed, _) = try await server.sendRaw("GET", "/db/_changes?feed=continuous&limit=2&timeout=100")
        let lines = String(decoding: feed, as: UTF8.self).split(separator: "\n")
        #expect(try JSON(parsing: String(lines.last ?? ""))["pending"] == 6)
        // filter=_view: the documents the view's map emits for.
        let odd = try await server.send("GET", "/db/_changes?filter=_view&view=v/odd").1?["results"]?.arrayValue?.compactMap { $0["id"]?.stringValue }
        #expect(odd == ["d1", "d3", "d5"])
        #expect(try await server.send("GET", "/db/_changes?filter=_view").0 == 400)
        // seq_interval=2: every other row carries its seq (CouchDB counts a
        // remaining limit down from 10^15); last_seq always does.
        let interval = try await server.send("GET", "/db/_changes?seq_interval=2").1
        let seqs = interval?["results"]?.arrayValue?.map { $0["seq"] == .null } ?? []
        #expect(seqs == [false, true, false, true, false, true, false, true])
        #expect(interval?["last_seq"] != .null)
        // An event stream's ids are its sequences as JSON, never cached.
        let (_, events, eventHeaders) = try await server.sendRaw("GET", "/db/_changes?feed=eventsource&limit=1&timeout=100")
        #expect(String(decoding: events, as: UTF8.self).contains("\nid: \"1\"\n") && eventHeaders["cache-control"] == "no-cache")
    }

    /// `_purge` as CouchDB 3: server admins forget leaf revisions.
    @Test func purgeForgetsLeafRevisions() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        #expect(try await server.send("PUT", "/db", user: admin).0 == 201)
        let rev1 = try await server.send("PUT", "/db/a", json: #"{"v":1}"#).1?["rev"]?.stringValue ?? ""
        let rev2 = try await server.send("PUT", "/db/a?rev=\(rev1)", json: #"{"v":2}"#).1?["rev"]?.stringValue ?? ""
        // A conflicting branch, as a replication brings one.
        let other = "1-" + String(repeating: "f", count: 32)
        #expect(try await server.send("POST", "/db/_bulk_docs", json: #"{"new_edits":false,"docs":[{"_id":"a","_rev":"\#(other)","v":"other"}]}"#).0 == 201)
        #expect(try await server.send("PUT", "/db/b", json: #"{"v":1}"#).0 == 201)
        let bRev = try await server.send("GET", "/db/b").1?["_rev"]?.stringValue ?? ""
        #expect(try await server.send("PUT", "/db/_design/v", json: #"{"views":{"all":{"map":"function(doc) { emit(doc._id, doc.v) }"}}}"#, user: admin).0 == 201)
        #expect(try await server.send("GET", "/db/_design/v/_view/all").1?["total_rows"] == 2)
        // Server admins only, as CouchDB's chttpd_auth_request.
        #expect(try await server.send("POST", "/db/_purge", json: #"{"a":["\#(rev2)"]}"#).0 == 401)
        let (status, purged) = try await server.send("POST", "/db/_purge", json: #"{"a":["\#(rev2)", "\#(rev1)"],"b":["\#(bRev)"]}"#, user: admin)
        #expect(status == 201)
        #expect(purged == .object(["purge_seq": .null, "purged": .object(["a": .array([.string(rev2)]), "b": .array([.string(bRev)])])]))
        // a: its other branch wins now; rev1 went with rev2 (only rev2 descended from it).
        let a = try await server.send("GET", "/db/a?revs_info=true").1
        #expect(a?["_rev"] == .string(other) && a?["v"] == "other")
        #expect(try await server.send("GET", "/db/a?rev=\(rev1)").0 == 404)
        // b: gone from the document, the listing, the feed and the view.
        #expect(try await server.send("GET", "/db/b").0 == 404)
        #expect(try await server.send("GET", "/db/_all_docs").1?["rows"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["_design/v", "a"])
        let feed = try await server.send("GET", "/db/_changes").1?["results"]?.arrayValue?.compactMap { $0["id"]?.stringValue }
        #expect(feed?.contains("b") == false && feed?.last == "a")
        let view = try await server.send("GET", "/db/_design/v/_view/all").1
        #expect(view?["rows"]?.arrayValue?.map { $0["value"] } == ["other"])
        #expect(try await server.send("GET", "/db", user: admin).1?["purge_seq"] == "2")
        // A revision that is not a leaf is not purged.
        #expect(try await server.send("POST", "/db/_purge", json: #"{"a":["1-00000000000000000000000000000000"]}"#, user: admin).1?["purged"] == .object(["a": .array([])]))
        // The purge-history limit: read and set by server admins.
        #expect(try await server.send("GET", "/db/_purged_infos_limit", user: admin).1 == 1000)
        #expect(try await server.send("PUT", "/db/_purged_infos_limit", json: "10", user: admin).0 == 200)
        #expect(try await server.send("GET", "/db/_purged_infos_limit", user: admin).1 == 10)
        #expect(try await server.send("PUT", "/db/_purged_infos_limit", json: "0", user: admin).0 == 400)
        #expect(try await server.send("GET", "/db/_purged_infos_limit").0 == 401)
        // Ids are bytes: café with a precomposed é and with e and a
        // combining accent are two documents, purged together.
        let composed = try await server.send("PUT", "/db/caf%C3%A9", json: "{}").1?["rev"]?.stringValue ?? ""
        let decomposed = try await server.send("PUT", "/db/cafe%CC%81", json: "{}").1?["rev"]?.stringValue ?? ""
        let both = try await server.send("POST", "/db/_purge", json: "{\"caf\u{E9}\":[\"\(composed)\"],\"cafe\u{301}\":[\"\(decomposed)\"]}", user: admin)
        #expect(both.0 == 201 && both.1?["purged"]?.objectValue?.count == 2)
        #expect(try await server.send("GET", "/db/caf%C3%A9").0 == 404)
        #expect(try await server.send("GET", "/db/cafe%CC%81").0 == 404)
    }

    @Test func missingRevisionsQueriesAndMeta() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        #expect(try await server.send("PUT", "/db", user: admin).0 == 201)
        let rev = try await server.send("PUT", "/db/a", json: #"{"n":1}"#).1?["rev"]?.stringValue ?? ""
        #expect(try await server.send("PUT", "/db/b", json: #"{"n":2}"#).0 == 201)
        let missing = try await server.send("POST", "/db/_missing_revs", json: #"{"a":["\#(rev)","3-abc"],"b":[]}"#).1
        #expect(missing == .object(["missing_revs": .object(["a": ["3-abc"]])]))
        let listings = try await server.send("POST", "/db/_all_docs/queries", json: #"{"queries":[{"keys":["b"]},{"limit":1,"skip":1}]}"#).1
        #expect(listings?["results"]?.arrayValue?.map { $0["rows"]?.arrayValue?.first?["id"] } == ["b", "b"])
        #expect(try await server.send("PUT", "/db/_design/v", json: #"{"views":{"n":{"map":"function(doc) { emit(doc.n, null) }","reduce":"_count"}}}"#, user: admin).0 == 201)
        let views = try await server.send("POST", "/db/_design/v/_view/n/queries", json: #"{"queries":[{"key":2,"reduce":false},{}]}"#).1
        #expect(views?["results"]?.arrayValue?.first?["rows"]?.arrayValue?.map { $0["id"] } == ["b"])
        #expect(views?["results"]?.arrayValue?.last?["rows"] == .array([.object(["key": .null, "value": 2])]))
        // meta=true: revs_info, conflicts and deleted_conflicts.
        let meta = try await server.send("GET", "/db/a?meta=true").1
        #expect(meta?["_revs_info"]?.arrayValue?.count == 1)
    }

    /// The seed's update function sees `_revisions`, as CouchDB hands the
    /// document over: its newest 20 ids (CouchDB 3's `[query_server_config]
    /// revs_limit`), to update and show functions alike; a function that
    /// breaks says what and where.
    @Test func updateFunctionsSeeRevisionsAndTheirErrorsTheStack() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        #expect(try await server.send("PUT", "/db", user: admin).0 == 201)
        #expect(try await server.send("PUT", "/db/_design/voting", json: #"""
            {"updates":{"addvote":"function(doc, req) { doc.votes = (doc.votes || 0) + 1; return [doc, toJSON(doc)]; }",
                        "broken":"function(doc, req) { return doc.nothing.here; }"},
             "shows":{"revisions":"function(doc, req) { return toJSON(doc._revisions); }"}}
            """#, user: admin).0 == 201)
        #expect(try await server.send("PUT", "/db/q", json: #"{"votes":0}"#).0 == 201)
        let (_, first, _) = try await server.sendRaw("POST", "/db/_design/voting/_update/addvote/q")
        let seen = try JSON(parsing: first)
        #expect(seen["_revisions"]?["start"] == 1 && seen["_revisions"]?["ids"]?.arrayValue?.count == 1)
        // The next call sees the revision the first wrote on the path.
        let (_, second, _) = try await server.sendRaw("POST", "/db/_design/voting/_update/addvote/q")
        #expect(try JSON(parsing: second)["_revisions"]?["ids"]?.arrayValue?.count == 2)
        // Past 20 revisions, a function sees the newest 20.
        var last = JSON.null
        for _ in 3...25 { last = try JSON(parsing: try await server.sendRaw("POST", "/db/_design/voting/_update/addvote/q").1) }
        let path = try await server.send("GET", "/db/q?revs=true").1?["_revisions"]?["ids"]?.arrayValue ?? []
        #expect(path.count == 26)
        #expect(last["_revisions"]?["start"] == 25 && last["_revisions"]?["ids"]?.arrayValue == Array(path[1...20]))
        let shown = try JSON(parsing: try await server.sendRaw("GET", "/db/_design/voting/_show/revisions/q").1)
        #expect(shown["start"] == 26 && shown["ids"]?.arrayValue == Array(path.prefix(20)))
        let (status, broken) = try await server.send("POST", "/db/_design/voting/_update/broken/q")
        #expect(status == 500 && broken?["error"] == "render_error")
        let reason = broken?["reason"]?.stringValue ?? ""
        #expect(reason.hasPrefix("function raised error: TypeError") && reason.contains("\nstacktrace: "), "\(reason)")
    }

    /// `validate_doc_update` gets the documents as CouchDB 3.4.3's query
    /// servers do (`couch_query_servers:validate_doc_update/6`): the new one
    /// with `_revisions` naming the revision it was made on, the old one
    /// with its newest 20 revision ids; a new document has no `_revisions`.
    @Test func validationSeesRevisionsAsCouchDBHandsThem() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        #expect(try await server.send("PUT", "/db", user: admin).0 == 201)
        #expect(try await server.send("PUT", "/db/_design/rules", json: #"""
            {"validate_doc_update":"function(doc, old) { if (doc.probe) throw({forbidden: JSON.stringify([doc._rev || null, doc._revisions || null, old ? old._revisions : null])}); }"}
            """#, user: admin).0 == 201)
        let (fresh, refusal) = try await server.send("PUT", "/db/new", json: #"{"probe":true}"#)
        #expect(fresh == 403 && refusal?["reason"] == "[null,null,null]")
        var rev = try await server.send("PUT", "/db/d", json: #"{"n":0}"#).1?["rev"]?.stringValue ?? ""
        for n in 1..<25 {
            rev = try await server.send("PUT", "/db/d", json: #"{"_rev":"\#(rev)","n":\#(n)}"#).1?["rev"]?.stringValue ?? ""
        }
        let path = try await server.send("GET", "/db/d?revs=true").1?["_revisions"]?["ids"]?.arrayValue ?? []
        #expect(path.count == 25)
        let (status, probed) = try await server.send("PUT", "/db/d", json: #"{"_rev":"\#(rev)","probe":true}"#)
        let seen = try JSON(parsing: probed?["reason"]?.stringValue ?? "").arrayValue ?? []
        #expect(status == 403)
        #expect(seen == [.string(rev), ["start": 25, "ids": .array([path[0]])], ["start": 25, "ids": .array(Array(path.prefix(20)))]])
    }

    /// A filter function sees `_revisions` too (CouchDB 3.4.3's
    /// `couch_query_servers:filter_docs`: the newest 20 ids), on a live
    /// document and on a deletion.
    @Test func filterFunctionsSeeRevisionsAsCouchDBHandsThem() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        #expect(try await server.send("PUT", "/db", user: admin).0 == 201)
        #expect(try await server.send("PUT", "/db/_design/f", json: #"""
            {"filters":{"deep":"function(doc, req) { return !!doc._revisions && doc._revisions.start >= 3 && doc._revisions.ids.length === Math.min(doc._revisions.start, 20) && doc._revisions.ids[0] === doc._rev.split('-')[1]; }"}}
            """#, user: admin).0 == 201)
        var rev = try await server.send("PUT", "/db/long", json: #"{"n":0}"#).1?["rev"]?.stringValue ?? ""
        for n in 1..<24 {
            rev = try await server.send("PUT", "/db/long", json: #"{"_rev":"\#(rev)","n":\#(n)}"#).1?["rev"]?.stringValue ?? ""
        }
        #expect(try await server.send("PUT", "/db/short", json: #"{"n":0}"#).0 == 201)
        var gone = try await server.send("PUT", "/db/gone", json: #"{"n":0}"#).1?["rev"]?.stringValue ?? ""
        gone = try await server.send("PUT", "/db/gone", json: #"{"_rev":"\#(gone)","n":1}"#).1?["rev"]?.stringValue ?? ""
        #expect(try await server.send("DELETE", "/db/gone?rev=\(gone)").0 == 200)
        let answer = try await server.send("GET", "/db/_changes?filter=f/deep")
        let changes = answer.1?["results"]?.arrayValue ?? []
        #expect(answer.0 == 200, "\(String(describing: answer.1))")
        #expect(changes.compactMap { $0["id"]?.stringValue }.sorted() == ["gone", "long"])
    }

    /// MEASURED-DIFFERENCES.md, "Design documents and Mango".
    @Test func mangoAnswersAsCouchDBs() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        #expect(try await server.send("PUT", "/db", user: admin).0 == 201)
        let docs = (0..<30).map { #"{"_id":"d\#($0)","n":\#($0)}"# }.joined(separator: ",")
        #expect(try await server.send("POST", "/db/_bulk_docs", json: #"{"docs":[\#(docs)]}"#).0 == 201)
        // No result: the bookmark is "nil".
        let none = try await server.send("POST", "/db/_find", json: #"{"selector":{"n":{"$gt":100}}}"#).1
        #expect(none?["docs"] == .array([]) && none?["bookmark"] == "nil")
        // Thirty documents examined for one: both of CouchDB's warnings.
        let one = try await server.send("POST", "/db/_find", json: #"{"selector":{"n":7}}"#).1
        #expect(one?["warning"] == .string("No matching index found, create an index to optimize query time.\nThe number of documents examined is high in proportion to the number of results returned. Consider adding a more specific index to improve this."))
        #expect(try await server.send("POST", "/db/_index", json: #"{"index":{"fields":["n"]},"name":"by-n"}"#, user: admin).0 == 200)
        let listing = try await server.send("GET", "/db/_index").1?["indexes"]?.arrayValue
        #expect(listing?.last?["partitioned"] == false && listing?.first?["partitioned"] == nil)
        let explained = try await server.send("POST", "/db/_explain", json: #"{"selector":{"n":{"$gt":5}}}"#).1
        #expect(explained?["partitioned"] == false && explained?["index"]?["name"] == "by-n")
        #expect(explained?["opts"]?["r"] == 1 && explained?["opts"]?["allow_fallback"] == true && explained?["opts"]?["sort"] == .object([:]))
    }

    /// MEASURED-DIFFERENCES.md, "ETag and Cache-Control".
    @Test func etagsAndCachingAsCouchDBs() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        #expect(try await server.send("PUT", "/db", user: admin).0 == 201)
        let (_, _, put) = try await server.sendWithHeaders("PUT", "/db/a", json: #"{"n":1}"#)
        #expect(put["etag"] != nil)
        let (_, _, posted) = try await server.sendWithHeaders("POST", "/db", json: #"{"_id":"b"}"#)
        #expect(posted["etag"] == nil && posted["location"] != nil)
        let (_, _, plain) = try await server.sendWithHeaders("GET", "/db/a")
        #expect(plain["etag"] != nil && plain["cache-control"] == "must-revalidate")
        for query in ["revs_info=true", "meta=true", "local_seq=true"] {
            #expect(try await server.sendWithHeaders("GET", "/db/a?\(query)").2["etag"] == nil, "\(query)")
        }
        // A normal _changes feed has an ETag, and 304 while nothing changed.
        let (_, _, feed) = try await server.sendWithHeaders("GET", "/db/_changes")
        let tag = try #require(feed["etag"])
        #expect(try await server.sendRaw("GET", "/db/_changes", headers: ["If-None-Match": tag]).0 == 304)
        #expect(try await server.send("PUT", "/db/c", json: "{}").0 == 201)
        #expect(try await server.sendRaw("GET", "/db/_changes", headers: ["If-None-Match": tag]).0 == 200)
        // A design function's answer says what the function says of caching.
        #expect(try await server.send("PUT", "/db/_design/f", json: #"""
            {"updates":{"u":"function(doc, req) { return [null, 'done']; }"},"shows":{"s":"function(doc, req) { return 'shown'; }"}}
            """#, user: admin).0 == 201)
        let (_, _, updated) = try await server.sendRaw("POST", "/db/_design/f/_update/u")
        #expect(updated["cache-control"] == nil)
        let (_, _, shown) = try await server.sendRaw("GET", "/db/_design/f/_show/s/a")
        let shownTag = try #require(shown["etag"])
        #expect(try await server.sendRaw("GET", "/db/_design/f/_show/s/a", headers: ["If-None-Match": shownTag]).0 == 304)
    }
}
