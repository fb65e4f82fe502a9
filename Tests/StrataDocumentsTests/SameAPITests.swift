import Foundation
import StrataDocuments
import StrataSync
import StrataTestHelpers
import Testing

/// What a local store and a remote one share: local documents named the
/// same way (with the `_local/` prefix or without) and `_security` read and
/// written from Swift, with the same errors.
@Suite struct SameAPITests {
    @Test func localDocumentsAndSecurityInAnEmbeddedStore() throws {
        let db = try makeTemporaryPath("same.sqlite")
        let store = try DocumentDatabase(path: db)
        try store.putLocal(id: "checkpoint", ["seq": 3])
        #expect(try store.localDocument(id: "checkpoint")["seq"] == 3)
        #expect(try store.localDocument(id: "_local/checkpoint")["_id"] == "_local/checkpoint")
        try store.putLocal(id: "_local/checkpoint", ["seq": 4])
        #expect(try store.localDocument(id: "checkpoint")["_rev"] == "0-2")
        try store.deleteLocal(id: "checkpoint")
        #expect(throws: DocumentError.missing) { try store.localDocument(id: "_local/checkpoint") }

        #expect(try store.security() == [:])
        let security: JSONObject = ["admins": ["names": ["ann"], "roles": []], "members": ["names": [], "roles": ["staff"]]]
        try store.setSecurity(security)
        #expect(try store.security() == security)
        #expect(throws: DocumentError(.badRequest, "names must be a JSON list of strings")) {
            try store.setSecurity(["admins": ["names": "ann"]])
        }
        #expect(throws: DocumentError(.badRequest, "admins or members must be a JSON list of strings")) {
            try store.setSecurity(["members": ["staff"]])
        }
        #expect(try store.security() == security)
    }

    @Test func localDocumentsAndSecurityOnAServer() async throws {
        let server = try await RunningServer.start()
        defer { server.stop() }
        let remote = try server.client().database("same")
        try await remote.create()
        try await remote.putLocal(id: "_local/checkpoint", ["seq": 3])
        #expect(try await remote.localDocument(id: "checkpoint")?["seq"] == 3)
        #expect(try await remote.localDocument(id: "_local/checkpoint")?["_id"] == "_local/checkpoint")
        try await remote.deleteLocal(id: "checkpoint")
        #expect(try await remote.localDocument(id: "checkpoint") == nil)

        #expect(try await remote.security() == [:])
        let security: JSONObject = ["admins": ["names": ["ann"], "roles": []], "members": ["names": [], "roles": ["staff"]]]
        try await remote.setSecurity(security)
        #expect(try await remote.security() == security)
        await #expect(throws: RemoteError(status: 400, error: "bad_request", reason: "names must be a JSON list of strings")) {
            try await remote.setSecurity(["admins": ["names": "ann"]])
        }
        #expect(try await remote.security() == security)
    }
}
