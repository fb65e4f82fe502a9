import Foundation
import StrataDocuments

extension CouchRequest {
    /// CouchDB's request object for design-document functions (update,
    /// show, list, filter), made by the engine from the request as received.
    func functionRequest(_ db: DocumentDatabase, docID: String?) async throws -> JSON {
        let name = databaseName
        var fields: [String: String] = [:]
        for field in headers { fields[field.name.rawName] = field.value }
        var request = UpdateRequest(method: method.rawValue, body: Data(body), contentType: headers[.contentType] ?? "",
                                    query: query, headers: fields)
        request.peer = peer
        request.path = segments
        request.rawPath = rawPath + (rawQuery.isEmpty ? "" : "?" + rawQuery)
        let info = try await offload { try DatabaseHandlers.information(name, db) }.objectValue
        return try await db.requestObject(request, database: name, design: "", function: "", id: docID, info: info, userContext: user.json)
    }
}
