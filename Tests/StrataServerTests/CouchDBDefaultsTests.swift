import Foundation
@testable import StrataServer
import StrataDocuments
import StrataServerTestHelpers
import StrataTestHelpers
import Testing

/// Security as CouchDB 3.4 ships it (../shared/couchdb/MEASURED-DIFFERENCES.md,
/// "Security and authentication"): new databases for admins only, lockout
/// after repeated wrong passwords, session cookies that expire, and the
/// settings of CouchDB's ini file under CouchDB's names.
@Suite(.serialized) struct CouchDBDefaultsTests {
    let admin = "admin:secret"
    static let adminOnly: JSON = .object(["members": .object(["roles": .array(["_admin"])]), "admins": .object(["roles": .array(["_admin"])])])

    @Test func newDatabasesAreForServerAdminsOnly() async throws {
        let server = try await RunningServer.start(configure: { $0.defaultSecurity = ServerConfiguration(dataDirectory: $0.dataDirectory).defaultSecurity })
        defer { server.stop() }
        #expect(try await server.send("PUT", "/probe", user: admin).0 == 201)
        #expect(try await server.send("GET", "/probe/_security", user: admin).1 == Self.adminOnly)
        #expect(try await server.send("GET", "/probe").0 == 401)
        #expect(try await server.send("PUT", "/probe/anon", json: #"{"x":1}"#).0 == 401)
        #expect(try await server.send("PUT", "/probe/admins", json: #"{"x":1}"#, user: admin).0 == 201)
        // A signed-in user who is not a member: 403.
        #expect(try await server.send("PUT", "/_users/org.couchdb.user:mo", json: #"{"name":"mo","type":"user","roles":[],"password":"pw"}"#).0 == 201)
        #expect(try await server.send("GET", "/probe/admins", user: "mo:pw").0 == 403)
        // The database's admins open it, as the voting example's setup does.
        #expect(try await server.send("PUT", "/probe/_security", json: #"{"members":{"names":[],"roles":[]},"admins":{"names":[],"roles":[]}}"#, user: admin).0 == 200)
        #expect(try await server.send("PUT", "/probe/anon", json: #"{"x":1}"#).0 == 201)
        // The same for a replication's create_target.
        #expect(try await server.send("POST", "/_replicate", json: #"{"source":"probe","target":"made","create_target":true}"#, user: admin).0 == 200)
        #expect(try await server.send("GET", "/made/_security", user: admin).1 == Self.adminOnly)
        #expect(try await server.send("GET", "/made/anon").0 == 401)
        // `_users` keeps its own rules: signing up still works anonymously.
        #expect(try await server.send("PUT", "/_users/org.couchdb.user:new", json: #"{"name":"new","type":"user","roles":[],"password":"pw"}"#).0 == 201)
    }

    @Test func everyoneOpensNewDatabasesAsCouchDB2Did() async throws {
        let server = try await RunningServer.start(configure: { $0.defaultSecurity = .everyone })
        defer { server.stop() }
        #expect(try await server.send("PUT", "/open", user: admin).0 == 201)
        #expect(try await server.send("GET", "/open/_security", user: admin).1 == .object([:]))
        #expect(try await server.send("PUT", "/open/anon", json: #"{"x":1}"#).0 == 201)
        // Design documents stay the database admins'.
        #expect(try await server.send("PUT", "/open/_design/d", json: #"{"views":{}}"#).0 == 401)
    }

    @Test func repeatedWrongPasswordsLockTheNameOut() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        #expect(try await server.send("PUT", "/_users/org.couchdb.user:lockuser", json: #"{"name":"lockuser","type":"user","roles":[],"password":"right"}"#).0 == 201)
        for _ in 0..<5 {
            #expect(try await server.send("GET", "/_session", user: "lockuser:wrong").0 == 401)
        }
        let (status, body) = try await server.send("GET", "/_session", user: "lockuser:wrong")
        #expect(status == 403)
        #expect(body?["reason"] == "Account is temporarily locked due to multiple authentication failures")
        // Even the right password, and through POST /_session.
        #expect(try await server.send("GET", "/_session", user: "lockuser:right").0 == 403)
        #expect(try await server.send("POST", "/_session", json: #"{"name":"lockuser","password":"right"}"#).0 == 403)
        // Another name from the same address is not locked; its session
        // answers as CouchDB 3.4's does (no authentication_db).
        let (signedIn, session) = try await server.send("GET", "/_session", user: admin)
        #expect(signedIn == 200)
        #expect(session?["info"] == .object(["authentication_handlers": .array(["cookie", "default"]), "authenticated": "default"]))
    }

    @Test func aLockoutEndsAfterItsLifetimeAndCanBeOff() async throws {
        // A lifetime a loaded machine (ThreadSanitizer, PBKDF2) cannot use up
        // before the third request, short enough to wait for.
        let server = try await RunningServer.start(configure: { $0.lockout = LockoutConfiguration(threshold: 2, lifetime: .seconds(15)) })
        defer { server.stop() }
        for _ in 0..<2 { #expect(try await server.send("GET", "/_session", user: "admin:wrong").0 == 401) }
        #expect(try await server.send("GET", "/_session", user: admin).0 == 403)
        #expect(try await eventually { try await server.send("GET", "/_session", user: admin).0 == 200 })

        let off = try await RunningServer.start(configure: { $0.lockout.mode = .off })
        defer { off.stop() }
        for _ in 0..<8 { #expect(try await off.send("GET", "/_session", user: "admin:wrong").0 == 401) }
        #expect(try await off.send("GET", "/_session", user: admin).0 == 200)
    }

    /// The `AuthSession` value a response sets, "" when it clears it.
    func token(_ headers: [String: String]) -> String? {
        guard let cookie = headers["set-cookie"], let range = cookie.range(of: "AuthSession=") else { return nil }
        return String(cookie[range.upperBound...].prefix { $0 != ";" })
    }

    @Test func sessionCookiesExpireAndAreRefreshedOnUse() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        let (status, _, headers) = try await server.sendWithHeaders("POST", "/_session", json: #"{"name":"admin","password":"secret"}"#)
        #expect(status == 200)
        let cookie = try #require(headers["set-cookie"])
        for attribute in ["Version=1", "Max-Age=600", "Path=/", "HttpOnly", "SameSite=Strict", "Expires="] {
            #expect(cookie.contains(attribute), "\(cookie)")
        }
        // A failed sign-in clears the browser's session.
        let (refused, _, cleared) = try await server.sendWithHeaders("POST", "/_session", json: #"{"name":"admin","password":"wrong"}"#)
        #expect(refused == 401)
        #expect(token(cleared) == "")

        // A timeout short enough to watch it end; what must hold while a
        // cookie lives is only asserted when the request was answered
        // within its life (a machine stalled past it proves nothing).
        let timeout = Duration.seconds(10)
        let short = try await RunningServer.start(configure: { $0.sessionTimeout = timeout })
        defer { short.stop() }
        let signedInAt = ContinuousClock.now
        let (_, _, signedIn) = try await short.sendWithHeaders("POST", "/_session", json: #"{"name":"admin","password":"secret"}"#)
        let first = try #require(token(signedIn))
        #expect(signedIn["set-cookie"]?.contains("Max-Age=10") == true)
        func name(_ token: String) async throws -> (JSON?, String?) {
            let (_, body, headers) = try await short.sendWithHeaders("GET", "/_session", headers: ["Cookie": "AuthSession=\(token)"])
            return (body?["userCtx"]?["name"], self.token(headers))
        }
        let (firstUser, _) = try await name(first)
        if ContinuousClock.now - signedInAt < timeout { #expect(firstUser == "admin") }
        // Past a tenth of its life, a request that uses it gets a new one.
        var refreshed: String?
        var refreshedAt = ContinuousClock.now
        var answeredInItsLife = 0
        _ = try await eventually {
            refreshedAt = ContinuousClock.now
            let (user, next) = try await name(first)
            guard ContinuousClock.now - signedInAt < timeout else { return true }
            answeredInItsLife += 1
            if user == "admin", let next { refreshed = next }
            return refreshed != nil
        }
        // Only a machine too slow to ask a few times in ten seconds may
        // see no refresh.
        #expect(refreshed != nil || answeredInItsLife < 5, "no new cookie after \(answeredInItsLife) requests")
        if let second = refreshed {
            #expect(second != first)
            let (secondUser, _) = try await name(second)
            if ContinuousClock.now - refreshedAt < timeout { #expect(secondUser == "admin") }
        }
        // Unused, a cookie ends with its timeout.
        #expect(try await eventually { try await name(first).0 == .null })
    }

    @Test func theIniFileSaysWhatCouchDBsDoes() async throws {
        let file = try makeFile("local.ini", """
            [couchdb]
            single_node = true
            default_security = everyone

            [chttpd]
            enable_cors = true ; for the app

            [cors]
            origins = http://app.example, http://127.0.0.1:8000
            credentials = true
            max_age = 60

            [chttpd_auth]
            timeout = 120

            [chttpd_auth_lockout]
            mode = warn
            threshold = 3
            max_lifetime = 60000

            [admins]
            boss = hunter2
            """)
        var configuration = ServerConfiguration(dataDirectory: URL(fileURLWithPath: try makeTemporaryPath("couch")))
        try configuration.read(iniFile: file)
        #expect(configuration.defaultSecurity == .everyone)
        #expect(configuration.cors.enabled && configuration.cors.credentials)
        #expect(configuration.cors.origins == ["http://app.example", "http://127.0.0.1:8000"])
        #expect(configuration.cors.maxAge == 60)
        #expect(configuration.sessionTimeout == .seconds(120))
        #expect(configuration.lockout == LockoutConfiguration(mode: .warn, threshold: 3, lifetime: .seconds(60)))
        #expect(configuration.adminFile == file)
        // The admin in the file signs in, and the settings apply.
        configuration.passwordIterations = 1000
        #expect(ServerConfiguration(dataDirectory: file).defaultSecurity == .adminOnly)
        let server = try await RunningServer.start(try CouchServer(configuration))
        defer { server.stop() }
        #expect(try await server.send("PUT", "/open", user: "boss:hunter2").0 == 201)
        #expect(try await server.send("PUT", "/open/anon", json: "{}").0 == 201)

        // A value Strata cannot read names the file, the section and the key.
        let bad = try makeFile("bad.ini", "[couchdb]\ndefault_security = nobody\n")
        #expect {
            try configuration.read(iniFile: bad)
        } throws: { error in
            "\(error)".contains("[couchdb] default_security = nobody") && "\(error)".contains("bad.ini")
        }
    }
}
