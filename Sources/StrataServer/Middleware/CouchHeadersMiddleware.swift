import Hummingbird
import HTTPTypes

/// The headers CouchDB puts on every answer: its `Server`, and
/// `Cache-Control: must-revalidate` unless the handler chose otherwise (or
/// the answer is a 304, which says nothing but its ETag).
struct CouchHeadersMiddleware: RouterMiddleware {
    typealias Context = CouchContext

    static let serverName = "CouchDB/3.4.3 (Strata)"

    func handle(_ request: Request, context: CouchContext, next: (Request, CouchContext) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        response.headers[.server] = Self.serverName
        if response.headers[.cacheControl] == nil, response.status != .notModified {
            response.headers[.cacheControl] = "must-revalidate"
        }
        return response
    }
}
