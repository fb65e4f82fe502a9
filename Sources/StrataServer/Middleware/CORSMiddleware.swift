import Foundation
import Hummingbird
import HTTPTypes

/// CouchDB's CORS (`chttpd_cors`): preflights answered for the configured
/// origins, and the `Access-Control-*` headers on their answers (errors
/// included). A request without `Origin` pays nothing for it. It wraps
/// ``CouchHeadersMiddleware``, so that the headers a page may read include
/// those.
struct CORSMiddleware: RouterMiddleware {
    typealias Context = CouchContext
    let configuration: CORSConfiguration

    /// The response headers a browser may read without being told: CORS's
    /// simple response headers.
    static let simpleResponseHeaders = ["cache-control", "content-language", "content-type", "expires", "last-modified", "pragma"]
    /// Content types a page may read without `content-type` being exposed.
    static let simpleContentTypes = ["application/x-www-form-urlencoded", "multipart/form-data", "text/plain"]

    func handle(_ request: Request, context: CouchContext, next: (Request, CouchContext) async throws -> Response) async throws -> Response {
        guard let origin = request.headers[.origin] else { return try await next(request, context) }
        if let preflight = preflight(request, origin: origin) {
            return Response(status: .noContent, headers: preflight, body: ResponseBody())
        }
        var response = try await next(request, context)
        addHeaders(&response.headers, origin: origin)
        return response
    }

    /// The headers of the 204 that answers a CORS preflight, nil when the
    /// request is not one this server accepts (then it is answered as any
    /// other `OPTIONS`): CORS is on, the `Origin` is allowed, the method it
    /// asks for is in the list and each header it asks for too.
    func preflight(_ request: Request, origin: String) -> HTTPFields? {
        guard request.method == .options, configuration.enabled, configuration.allows(origin),
              let method = request.headers[.accessControlRequestMethod], configuration.methods.contains(method) else { return nil }
        let requested = request.headers[.accessControlRequestHeaders] ?? ""
        let names = requested.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }.filter { !$0.isEmpty }
        guard names.allSatisfy(configuration.headers.contains) else { return nil }
        var headers: HTTPFields = [:]
        headers[.accessControlAllowOrigin] = origin
        if configuration.credentials { headers[.accessControlAllowCredentials] = "true" }
        headers[.accessControlMaxAge] = String(configuration.maxAge)
        headers[.accessControlAllowMethods] = configuration.methods.joined(separator: ", ")
        headers[.accessControlAllowHeaders] = requested
        headers[.server] = CouchHeadersMiddleware.serverName
        return headers
    }

    /// Adds CORS's answer headers for a page of `origin`, when CORS is on
    /// and the origin allowed: the origin itself (never `*`), credentials
    /// when configured, and the headers the page may read, as CouchDB
    /// lists them (`content-type` first unless it is a simple type, the
    /// answer's simple headers, then CouchDB's own).
    func addHeaders(_ headers: inout HTTPFields, origin: String) {
        guard configuration.allows(origin) else { return }
        headers[.accessControlAllowOrigin] = origin
        if configuration.credentials { headers[.accessControlAllowCredentials] = "true" }
        var exposed = headers.map { $0.name.canonicalName.lowercased() }.filter(Self.simpleResponseHeaders.contains)
        var seen = Set<String>()
        exposed = exposed.filter { seen.insert($0).inserted }
        let contentType = headers[.contentType]?.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        if !(contentType.map(Self.simpleContentTypes.contains) ?? false) {
            exposed.removeAll { $0 == "content-type" }
            exposed.insert("content-type", at: 0)
        }
        headers[.accessControlExposeHeaders] = (exposed + configuration.exposedHeaders).joined(separator: ", ")
    }
}
