import Foundation
import Hummingbird
import HTTPTypes

/// CouchDB's CORS (`chttpd_cors`): preflights answered for the configured
/// origins, and the `Access-Control-*` headers on their answers.
@available(macOS 14, iOS 17, tvOS 17, *)
extension CouchResponder {
    /// The response headers a browser may read without being told: CORS's
    /// simple response headers.
    static let simpleResponseHeaders = ["cache-control", "content-language", "content-type", "expires", "last-modified", "pragma"]
    /// Content types a page may read without `content-type` being exposed.
    static let simpleContentTypes = ["application/x-www-form-urlencoded", "multipart/form-data", "text/plain"]

    /// The headers of the 204 that answers a CORS preflight, nil when the
    /// request is not one this server accepts (then it is answered as any
    /// other `OPTIONS`): CORS is on, the `Origin` is allowed, the method it
    /// asks for is in the list and each header it asks for too.
    func corsPreflight(_ request: Request) -> HTTPFields? {
        guard request.method == .options else { return nil }
        let cors = server.configuration.cors
        guard cors.enabled, let origin = request.headers[.origin], cors.allows(origin),
              let method = request.headers[.accessControlRequestMethod], cors.methods.contains(method) else { return nil }
        let requested = request.headers[.accessControlRequestHeaders] ?? ""
        let names = requested.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
        guard names.allSatisfy(cors.headers.contains) else { return nil }
        var headers: HTTPFields = [:]
        headers[.accessControlAllowOrigin] = origin
        if cors.credentials { headers[.accessControlAllowCredentials] = "true" }
        headers[.accessControlMaxAge] = String(cors.maxAge)
        headers[.accessControlAllowMethods] = cors.methods.joined(separator: ", ")
        headers[.accessControlAllowHeaders] = requested
        headers[.server] = "CouchDB/3.4.3 (Strata)"
        return headers
    }

    /// Adds CORS's answer headers for a page of `origin`, when CORS is on
    /// and the origin allowed: the origin itself (never `*`), credentials
    /// when configured, and the headers the page may read, as CouchDB
    /// lists them (`content-type` first unless it is a simple type, the
    /// answer's simple headers, then CouchDB's own).
    func addCORSHeaders(_ headers: inout HTTPFields, origin: String?) {
        guard let origin else { return }
        let cors = server.configuration.cors
        guard cors.allows(origin) else { return }
        headers[.accessControlAllowOrigin] = origin
        if cors.credentials { headers[.accessControlAllowCredentials] = "true" }
        var exposed = headers.map { $0.name.canonicalName.lowercased() }.filter(Self.simpleResponseHeaders.contains)
        var seen = Set<String>()
        exposed = exposed.filter { seen.insert($0).inserted }
        let contentType = headers[.contentType]?.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        if !(contentType.map(Self.simpleContentTypes.contains) ?? false) {
            exposed.removeAll { $0 == "content-type" }
            exposed.insert("content-type", at: 0)
        }
        headers[.accessControlExposeHeaders] = (exposed + cors.exposedHeaders).joined(separator: ", ")
    }
}
