import Foundation
import StrataDocuments
import StrataServer
import StrataServerTestHelpers
import StrataTestHelpers
import Testing

/// CouchDB's `[cors]` as the headers show it (a browser's enforcement of
/// them is tested in Chromium by Tests/Browser/run).
@Suite(.serialized) struct CORSTests {
    let admin = "admin:secret"
    let app = "http://127.0.0.1:8000"
    /// CouchDB 3.4.3's answer to a GET of a document with CORS on
    /// (MEASURED-DIFFERENCES.md, "CORS").
    let couchExposed = "content-type, cache-control, accept-ranges, etag, server, x-couch-request-id, x-couch-update-newrev, x-couchdb-body-time"

    @Test func offByDefault() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        #expect(try await server.send("PUT", "/db", user: admin).0 == 201)
        let (status, _, headers) = try await server.sendWithHeaders("OPTIONS", "/db/doc", headers: ["Origin": app, "Access-Control-Request-Method": "PUT"])
        #expect(status == 405)
        #expect(headers.keys.filter { $0.hasPrefix("access-control") }.isEmpty)
        let (_, _, got) = try await server.sendWithHeaders("GET", "/db", user: admin, headers: ["Origin": app])
        #expect(got.keys.filter { $0.hasPrefix("access-control") }.isEmpty)
    }

    @Test func preflightsAndAnswersForAnAllowedOrigin() async throws {
        let server = try await RunningServer.start(configure: { $0.cors = CORSConfiguration(origins: [app], credentials: true) })
        defer { server.stop() }
        #expect(try await server.send("PUT", "/db", user: admin).0 == 201)
        #expect(try await server.send("PUT", "/db/doc", json: "{}", user: admin).0 == 201)

        let (status, body, preflight) = try await server.sendWithHeaders("OPTIONS", "/db/doc", headers: [
            "Origin": app, "Access-Control-Request-Method": "PUT", "Access-Control-Request-Headers": "authorization, content-type",
        ])
        #expect(status == 204 && body == nil)
        #expect(preflight["access-control-allow-origin"] == app)
        #expect(preflight["access-control-allow-credentials"] == "true")
        #expect(preflight["access-control-allow-methods"] == "CONNECT, COPY, DELETE, GET, HEAD, OPTIONS, POST, PUT, TRACE")
        #expect(preflight["access-control-allow-headers"] == "authorization, content-type")
        #expect(preflight["access-control-max-age"] == "600")

        let (got, _, headers) = try await server.sendWithHeaders("GET", "/db/doc", user: admin, headers: ["Origin": app])
        #expect(got == 200)
        #expect(headers["access-control-allow-origin"] == app)
        #expect(headers["access-control-allow-credentials"] == "true")
        #expect(headers["access-control-expose-headers"] == couchExposed)

        // Another origin, a method or a header not allowed: no CORS at all.
        let (other, _, otherHeaders) = try await server.sendWithHeaders("OPTIONS", "/db/doc", headers: ["Origin": "http://evil.example", "Access-Control-Request-Method": "PUT"])
        #expect(other == 405 && otherHeaders["access-control-allow-origin"] == nil)
        let (_, _, notAllowed) = try await server.sendWithHeaders("GET", "/db/doc", user: admin, headers: ["Origin": "http://evil.example"])
        #expect(notAllowed["access-control-allow-origin"] == nil)
        let (header, _, _) = try await server.sendWithHeaders("OPTIONS", "/db/doc", headers: ["Origin": app, "Access-Control-Request-Method": "PUT", "Access-Control-Request-Headers": "x-secret"])
        #expect(header == 405)
    }

    @Test func anAllowedOriginsWritesCarryTheirCredentialsOthersDoNot() async throws {
        let server = try await RunningServer.start(configure: {
            $0.cors = CORSConfiguration(origins: [app], credentials: true)
            $0.defaultSecurity = .adminOnly
        })
        defer { server.stop() }
        #expect(try await server.send("PUT", "/db", user: admin).0 == 201)
        // A page of the allowed origin writes as the user it signed in as.
        #expect(try await server.send("PUT", "/db/mine", json: "{}", user: admin, headers: ["Origin": app]).0 == 201)
        // A page of any other site still writes as nobody (the database is
        // the admins': 401), whatever the browser attaches.
        #expect(try await server.send("PUT", "/db/theirs", json: "{}", user: admin, headers: ["Origin": "http://evil.example"]).0 == 401)
    }

    @Test func anyOriginIsNamedNeverStar() async throws {
        let server = try await RunningServer.start(configure: { $0.cors = CORSConfiguration(origins: ["*"], credentials: true) })
        defer { server.stop() }
        let (_, _, headers) = try await server.sendWithHeaders("GET", "/", headers: ["Origin": "http://any.example"])
        #expect(headers["access-control-allow-origin"] == "http://any.example")
        #expect(headers["access-control-allow-credentials"] == "true")
    }
}
