import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import Strata
import StrataDocuments
import StrataServerTestHelpers
import StrataTestHelpers
import Testing

/// `/_utils` (the page's files and headers), the table browser's API
/// `/_sqlite`, and the session cookie's protection against other sites.
/// The page itself is driven in Chromium by Tests/Browser/run.
@Suite(.serialized) struct UtilitiesTests {
    let admin = "admin:secret"

    /// A folder with one SQLite file: a table with a `<script>` cell, a
    /// view, and a file that is not SQLite's.
    static func folder() throws -> URL {
        let folder = URL(fileURLWithPath: try makeTemporaryPath("sqlite-folder"))
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let queue = try DatabaseQueue(path: folder.appendingPathComponent("movies.sqlite").path)
        try queue.write { db in
            try db.execute(sql: "CREATE TABLE movies (id INTEGER PRIMARY KEY, title TEXT NOT NULL, year INTEGER, poster BLOB)")
            for (i, (title, year)) in [("Heat", 1995), ("Alien", 1979), ("Ran", 1985), ("<script>alert(1)</script>", 2001)].enumerated() {
                try db.execute(sql: "INSERT INTO movies (id, title, year, poster) VALUES (?, ?, ?, ?)", arguments: [i + 1, title, year, Data([1, 2, 3])])
            }
            try db.execute(sql: "CREATE VIEW old AS SELECT title FROM movies WHERE year < 1990")
        }
        try Data("not a database".utf8).write(to: folder.appendingPathComponent("notes.txt"))
        return folder
    }

    @Test func thePageIsServedWithItsProtections() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        let (status, data, headers) = try await server.sendRaw("GET", "/_utils/")
        #expect(status == 200 && headers["content-type"]?.hasPrefix("text/html") == true)
        let page = String(decoding: data, as: UTF8.self)
        #expect(page.contains("<script src=\"app.js\" defer></script>"))
        // No inline script may run, nothing loads from elsewhere, no framing.
        #expect(headers["content-security-policy"]?.contains("script-src 'self'") == true)
        #expect(headers["x-frame-options"] == "DENY" && headers["x-content-type-options"] == "nosniff")
        for file in ["app.js", "style.css", "favicon.svg"] {
            #expect(try await server.sendRaw("GET", "/_utils/" + file).0 == 200)
        }
        let script = String(decoding: try await server.sendRaw("GET", "/_utils/app.js").1, as: UTF8.self)
        #expect(!script.contains("innerHTML") && !script.contains("http://") && !script.contains("https://"))
        // `/_utils` without the slash lands on the page too (301, followed).
        #expect(try await server.sendRaw("GET", "/_utils").0 == 200)
        #expect(try await server.sendRaw("GET", "/_utils/../_users").0 != 200)
        #expect(try await server.sendRaw("GET", "/_utils/secret.txt").0 == 404)
    }

    @Test func theSessionCookieIsHttpOnlyAndRefusedFromAnotherSite() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        let (status, _, headers) = try await server.sendRaw("POST", "/_session", json: #"{"name":"admin","password":"secret"}"#)
        #expect(status == 200)
        let cookie = try #require(headers["set-cookie"])
        #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"))
        let token = String(cookie.split(separator: ";")[0])
        let host = server.base.host! + ":" + String(server.base.port!)
        // From the page itself: allowed.
        #expect(try await server.sendRaw("PUT", "/mine", headers: ["Cookie": token, "Origin": "http://" + host]).0 == 201)
        // From another site's page (a form or a script there): anonymous.
        #expect(try await server.sendRaw("PUT", "/theirs", headers: ["Cookie": token, "Origin": "http://evil.example"]).0 == 401)
        #expect(try await server.sendRaw("DELETE", "/mine", headers: ["Cookie": token, "Origin": "null"]).0 == 401)
        #expect(try await server.sendRaw("GET", "/mine", headers: ["Cookie": token]).0 == 200)
    }

    @Test func theTableBrowserListsPagesSortsFiltersAndExports() async throws {
        let folder = try Self.folder()
        let server = try await RunningServer.start(sqlite: folder)
        defer { server.stop() }
        #expect(try await server.send("GET", "/_sqlite").0 == 401)
        let (_, files) = try await server.send("GET", "/_sqlite", user: admin)
        #expect(files?["files"]?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["movies.sqlite"])
        #expect(files?["writable"] == false)

        let (_, schema) = try await server.send("GET", "/_sqlite/movies.sqlite", user: admin)
        let tables = schema?["tables"]?.arrayValue ?? []
        #expect(tables.map { $0["name"] } == ["movies", "old"])
        #expect(tables.first?["rows"] == 4 && tables.last?["type"] == "view" && tables.last?["rows"] == 2)
        #expect(tables.first?["columns"]?.arrayValue?.first?["pk"] == 1)

        var (status, page) = try await server.send("GET", "/_sqlite/movies.sqlite/movies?sort=year&limit=2", user: admin)
        #expect(status == 200 && page?["total_rows"] == 4)
        #expect(page?["rows"]?.arrayValue?.map { $0.arrayValue?[1] } == [.string("Alien"), .string("Ran")])
        (_, page) = try await server.send("GET", "/_sqlite/movies.sqlite/movies?sort=year&descending=true&limit=2&skip=1", user: admin)
        #expect(page?["rows"]?.arrayValue?.map { $0.arrayValue?[1] } == [.string("Heat"), .string("Ran")])
        #expect(page?["rows"]?.arrayValue?.first?.arrayValue?[3]["bytes"] == 3)
        // The filter's value is bound: a quote or SQL in it is only a value.
        (_, page) = try await server.send("GET", "/_sqlite/movies.sqlite/movies?column=year&value=1979", user: admin)
        #expect(page?["rows"]?.arrayValue?.map { $0.arrayValue?[1] } == [.string("Alien")])
        // With no column, a row matches when any column equals the value.
        (_, page) = try await server.send("GET", "/_sqlite/movies.sqlite/movies?value=Heat&sort=year&limit=1", user: admin)
        #expect(page?["total_rows"] == 1 && page?["rows"]?.arrayValue?.map { $0.arrayValue?[1] } == [.string("Heat")])
        (_, page) = try await server.send("GET", "/_sqlite/movies.sqlite/movies?value=1979", user: admin)
        #expect(page?["rows"]?.arrayValue?.map { $0.arrayValue?[1] } == [.string("Alien")])
        // Filters combine; numbers compare as numbers; NULL tests need no value.
        func filtered(_ filters: String, sort: String = "year") async throws -> [JSON?] {
            let encoded = filters.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let (status, page) = try await server.send("GET", "/_sqlite/movies.sqlite/movies?sort=\(sort)&filters=\(encoded)", user: admin)
            #expect(status == 200, "\(filters): \(page?.text ?? "")")
            return page?["rows"]?.arrayValue?.map { $0.arrayValue?[1] } ?? []
        }
        #expect(try await filtered(#"[["year", ">", "1980"], ["year", "<=", "1995"]]"#) == [.string("Ran"), .string("Heat")])
        #expect(try await filtered(#"[["title", "contains", "a"]]"#) == [.string("Ran"), .string("Heat"), .string("<script>alert(1)</script>")])
        #expect(try await filtered(#"[["title", "starts", "Al"]]"#) == [.string("Alien")])
        #expect(try await filtered(#"[["title", "!=", "Heat"], ["year", ">=", "1985"]]"#) == [.string("Ran"), .string("<script>alert(1)</script>")])
        #expect(try await filtered(#"[["year", "null"]]"#) == [])
        #expect(try await filtered(#"[["year", "notnull"], ["title", "=", "Alien"]]"#) == [.string("Alien")])
        #expect(try await server.send("GET", "/_sqlite/movies.sqlite/movies?filters=%5B%5B%22nope%22%2C%22%3D%22%2C%221%22%5D%5D", user: admin).0 == 400)
        #expect(try await server.send("GET", "/_sqlite/movies.sqlite/movies?filters=%5B%5B%22year%22%2C%22like%22%2C%221%22%5D%5D", user: admin).0 == 400)
        #expect(try await server.send("GET", "/_sqlite/movies.sqlite/movies?filters=nope", user: admin).0 == 400)
        // The export carries them.
        let csvFilters = #"[["year", "<", "1990"]]"#.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let (_, filteredCSV, _) = try await server.sendRaw("GET", "/_sqlite/movies.sqlite/movies?format=csv&sort=year&filters=\(csvFilters)", headers: ["Authorization": "Basic " + Data(admin.utf8).base64EncodedString()])
        #expect(String(decoding: filteredCSV, as: UTF8.self).split(separator: "\n").count == 3)
        let injected = "1' OR '1'='1".addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        (_, page) = try await server.send("GET", "/_sqlite/movies.sqlite/movies?column=title&value=\(injected)", user: admin)
        #expect(page?["total_rows"] == 0)
        #expect(try await server.send("GET", "/_sqlite/movies.sqlite/movies?sort=nope", user: admin).0 == 400)
        #expect(try await server.send("GET", "/_sqlite/movies.sqlite/absent", user: admin).0 == 404)
        #expect(try await server.send("GET", "/_sqlite/notes.txt", user: admin).0 == 404)
        #expect(try await server.send("GET", "/_sqlite/..%2Fescape.sqlite", user: admin).0 == 404)

        // Export through the export code: the filtered, sorted rows.
        let (exported, csv, headers) = try await server.sendRaw("GET", "/_sqlite/movies.sqlite/movies?sort=year&format=csv", user: admin)
        #expect(exported == 200 && headers["content-disposition"]?.contains("movies.csv") == true)
        let lines = String(decoding: csv, as: UTF8.self).split(separator: "\n")
        #expect(lines.first == "id,title,year,poster" && lines.count == 5 && lines[1].hasPrefix("2,Alien,1979"))
        let (_, json, _) = try await server.sendRaw("POST", "/_sqlite/movies.sqlite/_query?format=json", json: #"{"sql":"SELECT title FROM old ORDER BY title"}"#, user: admin)
        #expect(try JSON(parsing: json) == [["title": "Alien"], ["title": "Ran"]])
    }

    @Test func theSQLBoxIsReadOnlyTimeLimitedAndSaysWhatSQLiteSays() async throws {
        let folder = try Self.folder()
        let server = try await RunningServer.start(sqlite: folder, sqliteTimeLimit: .milliseconds(300))
        defer { server.stop() }
        let path = "/_sqlite/movies.sqlite/_query"
        var (status, answer) = try await server.send("POST", path, json: #"{"sql":"SELECT count(*) AS n, max(year) FROM movies"}"#, user: admin)
        #expect(status == 200 && answer?["columns"] == ["n", "max(year)"] && answer?["rows"] == [[4, 2001]])
        (status, answer) = try await server.send("POST", path, json: #"{"sql":"SELEC 1"}"#, user: admin)
        #expect(status == 400 && answer?["reason"]?.stringValue?.contains("near \"SELEC\": syntax error") == true)
        (status, answer) = try await server.send("POST", path, json: #"{"sql":"DELETE FROM movies"}"#, user: admin)
        #expect(status == 403 && answer?["reason"]?.stringValue?.contains("read-only") == true)
        (status, answer) = try await server.send("POST", path, json: #"{"sql":"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"}"#, user: admin)
        #expect(status == 400 && answer?["reason"]?.stringValue?.contains("time limit") == true)
        // Nothing was lost.
        (_, answer) = try await server.send("POST", path, json: #"{"sql":"SELECT count(*) FROM movies"}"#, user: admin)
        #expect(answer?["rows"] == [[4]])

        let writable = try await RunningServer.start(sqlite: folder, sqliteWritable: true)
        defer { writable.stop() }
        (status, answer) = try await writable.send("POST", path, json: #"{"sql":"UPDATE movies SET year = 1996 WHERE id = 1"}"#, user: admin)
        #expect(status == 200 && answer?["changes"] == 1)
    }

    @Test func withoutAFolderTheTableBrowserSaysHowToGetOne() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        let (status, answer) = try await server.send("GET", "/_sqlite", user: admin)
        #expect(status == 404 && answer?["reason"]?.stringValue?.contains("--sqlite") == true)
    }
}
