import CStrataDigest
import CompressNIO
import Foundation
import NIOCore
@testable import StrataServer
import StrataDocuments
import StrataServerTestHelpers
import StrataTestHelpers
import Testing

/// CouchDB 3's security: server admins, `_users` documents with PBKDF2
/// hashes, Basic and cookie sign-in, `_security` admins and members by name
/// and role, and 401 / 403 as CouchDB gives them.
@Suite(.serialized) struct AuthorizationTests {
    @Test func pbkdf2MatchesTheRFCVectorWithTheSaltAsText() {
        // RFC 7914 §11 (PBKDF2-HMAC-SHA256, P="passwd", S="salt", c=1).
        let derived = PasswordHash.derive("passwd", salt: "salt", iterations: 1, function: .sha256, length: 64).hexString
        #expect(derived == "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc49ca9cccf179b645991664b39d77ef317c71b845b1e30bd509112041d3a19783")
        // RFC 6070 (PBKDF2-HMAC-SHA1), the hash of older CouchDB user documents.
        #expect(PasswordHash.derive("password", salt: "salt", iterations: 2, function: .sha1, length: 20).hexString == "ea6c014dc72d6f8ccd1ed92ace1d41f0d8de8957")
    }

    /// The server's own SHA-1, SHA-256, HMAC and PBKDF2 (CStrataDigest)
    /// against the standards' vectors: FIPS 180's messages (empty, one
    /// block, two, a million bytes fed across block edges), RFC 4231 and
    /// RFC 2202's keys longer than a block, RFC 6070's output longer than a
    /// digest, and RFC 7914's 80,000 rounds.
    @Test(arguments: [true, false]) func digestsMatchTheStandardsVectors(extensions: Bool) {
        // Both ways: the processor's SHA extensions where it has them, and
        // the portable code every other machine runs.
        strata_digest_use_extensions(extensions ? 1 : 0)
        defer { strata_digest_use_extensions(1) }
        func sha1(_ bytes: [UInt8]) -> String {
            var out = [UInt8](repeating: 0, count: 20)
            strata_sha1(bytes, bytes.count, &out)
            return out.hexString
        }
        func hmac(_ function: strata_digest_function, _ key: [UInt8], _ message: String) -> String {
            var out = [UInt8](repeating: 0, count: function == STRATA_DIGEST_SHA1 ? 20 : 32)
            let bytes = Array(message.utf8)
            strata_hmac(function, key, key.count, bytes, bytes.count, &out)
            return out.hexString
        }
        let twoBlocks = Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)
        let million = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        #expect(PasswordHash.sha256([]).hexString == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(PasswordHash.sha256(Array("abc".utf8)).hexString == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(PasswordHash.sha256(twoBlocks).hexString == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(PasswordHash.sha256(million).hexString == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
        #expect(sha1([]) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        #expect(sha1(Array("abc".utf8)) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        #expect(sha1(twoBlocks) == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
        #expect(sha1(million) == "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
        #expect(hmac(STRATA_DIGEST_SHA256, [UInt8](repeating: 0x0b, count: 20), "Hi There") == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        let longerThanABlock = "Test Using Larger Than Block-Size Key - Hash Key First"
        #expect(hmac(STRATA_DIGEST_SHA256, [UInt8](repeating: 0xaa, count: 131), longerThanABlock) == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
        #expect(hmac(STRATA_DIGEST_SHA1, [UInt8](repeating: 0xaa, count: 80), longerThanABlock) == "aa4ae5e15272d00e95705637ce8a3b55ed402112")
        #expect(PasswordHash.derive("password", salt: "salt", iterations: 4096, function: .sha1, length: 20).hexString == "4b007901b765489abead49d926f721d065a429c1")
        #expect(PasswordHash.derive("passwordPASSWORDpassword", salt: "saltSALTsaltSALTsaltSALTsaltSALTsalt", iterations: 4096, function: .sha1, length: 25).hexString
                == "3d2eec4fe41c849b80c8d83662c0e44a8b291a964cf2f07038")
        #expect(PasswordHash.derive("Password", salt: "NaCl", iterations: 80_000, function: .sha256, length: 64).hexString
                == "4ddcd8f60b98be21830cee5ef22701f9641a4418d04c0414aeff08876b34ab56a1d425a1225833549adb841b51c9b3176a272bdebba1d078478f62b397f33c8d")
        // No rounds is no key, never an empty derivation taken for a match.
        #expect(PasswordHash.derive("pw", salt: "s", iterations: 0, function: .sha256, length: 32).isEmpty)
    }

    @Test func hashesReadBackAndCheckPasswords() throws {
        let hash = PasswordHash(password: "s3cret", iterations: 10)
        #expect(hash.salt.count == 32 && hash.derivedKey.count == 64)
        #expect(hash.matches("s3cret") && !hash.matches("s3cret "))
        #expect(PasswordHash(configValue: hash.configValue) == hash)
        var doc: JSONObject = [:]
        for (key, value) in hash.userDocumentFields { doc[key] = value }
        #expect(PasswordHash(userDocument: doc) == hash)
        #expect(PasswordHash(configValue: "plain") == nil)
    }

    @Test func theConfigFileKeepsHashesOnlyAndSignsTheAdminIn() async throws {
        let directory = URL(fileURLWithPath: try makeTemporaryPath("couch"))
        let config = URL(fileURLWithPath: try makeTemporaryPath("local.ini"))
        try "[couchdb]\nsingle_node = true\n\n[admins]\nboss = hunter2\n".write(to: config, atomically: true, encoding: .utf8)
        var configuration = ServerConfiguration(dataDirectory: directory)
        try configuration.read(iniFile: config)
        configuration.passwordIterations = 1000
        _ = try CouchServer(configuration)
        let text = try String(contentsOf: config, encoding: .utf8)
        #expect(!text.contains("hunter2"))
        #expect(text.contains("boss = -pbkdf2:sha256-"))
        #expect(text.contains("single_node = true"))
        // Started again from the hashed file, the same password signs in.
        let server = try await RunningServer.start(admins: [:], configFile: config)
        defer { server.stop() }
        #expect(try await server.send("PUT", "/db", user: "boss:hunter2").0 == 201)
        #expect(try await server.send("PUT", "/db2", user: "boss:hunter3").0 == 401)
    }

    @Test func usersSignUpAndSignInWithBasicAndCookies() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        // Anyone may sign up, without roles.
        var (status, body) = try await server.send("PUT", "/_users/org.couchdb.user:bob",
                                                  json: #"{"name":"bob","type":"user","roles":[],"password":"apple"}"#)
        #expect(status == 201)
        let rev = try #require(body?["rev"]?.stringValue)
        #expect(try await server.send("PUT", "/_users/org.couchdb.user:eve",
                                      json: #"{"name":"eve","type":"user","roles":["_admin"],"password":"x"}"#).0 == 403)
        #expect(try await server.send("PUT", "/_users/org.couchdb.user:mallory",
                                      json: #"{"name":"bob","type":"user","roles":[],"password":"x"}"#).0 == 403)
        // The password is stored hashed, never as given.
        (status, body) = try await server.send("GET", "/_users/org.couchdb.user:bob", user: "admin:secret")
        #expect(status == 200 && body?["password"] == nil)
        #expect(body?["password_scheme"] == .string("pbkdf2") && body?["pbkdf2_prf"] == .string("sha256"))
        #expect(body?["derived_key"]?.stringValue?.count == 64)
        // Basic auth as the user; a wrong password is refused outright.
        (status, body) = try await server.send("GET", "/_session", user: "bob:apple")
        #expect(body?["userCtx"] == .object(["name": .string("bob"), "roles": .array([])]))
        #expect(body?["info"]?["authenticated"] == .string("default"))
        #expect(try await server.send("GET", "/", user: "bob:pear").0 == 401)
        // A user reads and updates their own document, not the listing nor
        // someone else's, and cannot give themselves roles.
        #expect(try await server.send("GET", "/_users/org.couchdb.user:bob", user: "bob:apple").0 == 200)
        #expect(try await server.send("GET", "/_users/_all_docs", user: "bob:apple").0 == 403)
        #expect(try await server.send("GET", "/_users/_all_docs").0 == 401)
        #expect(try await server.send("GET", "/_users/org.couchdb.user:bob").0 == 401)
        #expect(try await server.send("PUT", "/_users/org.couchdb.user:bob", json: #"{"_rev":"\#(rev)","name":"bob","type":"user","roles":["boss"]}"#, user: "bob:apple").0 == 403)
        // An anonymous PUT naming a revision cannot take over an account.
        #expect(try await server.send("PUT", "/_users/org.couchdb.user:bob", json: #"{"_rev":"\#(rev)","name":"bob","type":"user","roles":[],"password":"mine"}"#).0 == 401)
        (status, body) = try await server.send("PUT", "/_users/org.couchdb.user:bob", json: #"{"_rev":"\#(rev)","name":"bob","type":"user","roles":[],"password":"banana"}"#, user: "bob:apple")
        #expect(status == 201)
        #expect(try await server.send("GET", "/", user: "bob:apple").0 == 401)
        #expect(try await server.send("GET", "/", user: "bob:banana").0 == 200)
        // A session cookie, HttpOnly and SameSite, signs the user in.
        let (sessionStatus, signedIn, headers) = try await server.sendWithHeaders("POST", "/_session", json: #"{"name":"bob","password":"banana"}"#)
        #expect(sessionStatus == 200 && signedIn?["name"] == .string("bob"))
        let cookie = try #require(headers["set-cookie"])
        #expect(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"))
        let token = try #require(cookie.split(separator: ";").first.map(String.init))
        (status, body) = try await server.send("GET", "/_session", headers: ["Cookie": token])
        #expect(body?["userCtx"]?["name"] == .string("bob"))
        #expect(body?["info"]?["authenticated"] == .string("cookie"))
        #expect(try await server.send("POST", "/_session", json: #"{"name":"bob","password":"apple"}"#).0 == 401)
    }

    /// Every route as anonymous, a signed-in stranger, a member, a
    /// database admin (by name and by role) and a server admin.
    @Test func eachRouteAsEachKindOfUser() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        let admin = "admin:secret"
        for (name, roles) in [("stranger", "[]"), ("member", "[]"), ("owner", "[]"), ("boss", #"["managers"]"#), ("reader", #"["readers"]"#)] {
            let (status, _) = try await server.send("PUT", "/_users/org.couchdb.user:\(name)", json: #"{"name":"\#(name)","type":"user","roles":\#(roles),"password":"pw"}"#, user: admin)
            #expect(status == 201)
        }
        #expect(try await server.send("PUT", "/db", user: admin).0 == 201)
        #expect(try await server.send("PUT", "/db/_security", json: #"{"admins":{"names":["owner"],"roles":["managers"]},"members":{"names":["member"],"roles":["readers"]}}"#, user: admin).0 == 200)
        #expect(try await server.send("PUT", "/db/doc", json: #"{"n":1}"#, user: admin).0 == 201)

        let anonymous: String? = nil
        let stranger = "stranger:pw", member = "member:pw", reader = "reader:pw", owner = "owner:pw", boss = "boss:pw"
        // Reading: members and admins; anonymous 401, a stranger 403.
        for path in ["/db", "/db/doc", "/db/_all_docs", "/db/_changes", "/db/_security"] {
            #expect(try await server.send("GET", path, user: anonymous).0 == 401, "\(path)")
            #expect(try await server.send("GET", path, user: stranger).0 == 403, "\(path)")
            for user in [member, reader, owner, boss, admin] {
                #expect(try await server.send("GET", path, user: user).0 == 200, "\(path) as \(user)")
            }
        }
        #expect(try await server.send("POST", "/db/_find", json: #"{"selector":{}}"#, user: stranger).0 == 403)
        #expect(try await server.send("POST", "/db/_find", json: #"{"selector":{}}"#, user: reader).0 == 200)
        // Writing documents: members.
        #expect(try await server.send("PUT", "/db/a", json: "{}", user: stranger).0 == 403)
        #expect(try await server.send("PUT", "/db/a", json: "{}", user: member).0 == 201)
        // Design documents, _security, indexes and compaction: database
        // admins. A signed-in user without the right is 403, as in CouchDB.
        for user in [member, reader] {
            #expect(try await server.send("PUT", "/db/_design/app", json: "{}", user: user).0 == 403)
            let (bulk, rows) = try await server.send("POST", "/db/_bulk_docs", json: #"{"docs":[{"_id":"_design/x"}]}"#, user: user)
            #expect(bulk == 201 && rows?.arrayValue?.first?["error"] == "forbidden", "a design document in a batch is refused alone")
            #expect(try await server.send("PUT", "/db/_security", json: "{}", user: user).0 == 403)
            #expect(try await server.send("POST", "/db/_index", json: #"{"index":{"fields":["n"]}}"#, user: user).0 == 403)
            #expect(try await server.send("POST", "/db/_compact", json: "{}", user: user).0 == 403)
        }
        #expect(try await server.send("PUT", "/db/_design/app", json: "{}", user: owner).0 == 201)
        #expect(try await server.send("PUT", "/db/_design/other", json: "{}", user: boss).0 == 201)
        #expect(try await server.send("POST", "/db/_index", json: #"{"index":{"fields":["n"]}}"#, user: owner).0 == 200)
        // Creating and deleting databases, listing them: server admins only.
        for user in [anonymous, member, owner, boss] {
            #expect(try await server.send("PUT", "/other", user: user).0 == 401)
            #expect(try await server.send("DELETE", "/db", user: user).0 == 401)
            #expect(try await server.send("GET", "/_all_dbs", user: user).0 == 401)
        }
        #expect(try await server.send("GET", "/_all_dbs", user: admin).1 == .array([.string("_replicator"), .string("_users"), .string("db")]))
        // Nothing refused was written.
        let (_, info) = try await server.send("GET", "/db", user: admin)
        #expect(info?["doc_count"] == .int(4))
        let (_, designs) = try await server.send("GET", "/db/_design_docs", user: admin)
        #expect(designs?["rows"]?.arrayValue?.compactMap { $0["id"]?.stringValue }.filter { $0 == "_design/x" } == [])
        // A database without members is public again.
        #expect(try await server.send("PUT", "/db/_security", json: #"{"admins":{"names":["owner"]}}"#, user: owner).0 == 200)
        #expect(try await server.send("GET", "/db/doc").0 == 200)
        #expect(try await server.send("PUT", "/db/_design/app2", json: "{}").0 == 401)
    }

    /// ibmcloudant gzips its bodies; a corrupt or oversized one is a 4xx.
    @Test func gzipRequestBodiesAreRead() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        #expect(try await server.send("PUT", "/db", user: "admin:secret").0 == 201)
        var plain = ByteBuffer(string: #"{"docs":[{"_id":"zipped","n":1}]}"#)
        let zipped = try plain.compress(with: .gzip())
        let (status, body) = try await server.send("POST", "/db/_bulk_docs", headers: ["Content-Type": "application/json", "Content-Encoding": "gzip"], body: Data(zipped.readableBytesView))
        #expect(status == 201 && body?.arrayValue?.first?["id"] == .string("zipped"))
        #expect(try await server.send("GET", "/db/zipped").1?["n"] == .int(1))
        let corrupt = try await server.send("POST", "/db/_bulk_docs", headers: ["Content-Type": "application/json", "Content-Encoding": "gzip"], body: Data("not gzip".utf8))
        #expect(corrupt.0 == 400 && corrupt.1?["error"] == .string("bad_request"))
        let unknown = try await server.send("POST", "/db/_bulk_docs", headers: ["Content-Type": "application/json", "Content-Encoding": "br"], body: Data("{}".utf8))
        #expect(unknown.0 == 415)
    }
}
