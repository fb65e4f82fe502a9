import Hummingbird
import HTTPTypes

/// The header CouchDB puts on every answer: its `Server`.
/// (`Cache-Control: must-revalidate` comes with the answers that have it,
/// ``HTTPAnswer/revalidates``.)
struct CouchHeadersMiddleware: RouterMiddleware {
    typealias Context = CouchContext

    static let serverName = "CouchDB/3.4.3 (Strata)"

    func handle(_ request: Request, context: CouchContext, next: (Request, CouchContext) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        response.headers[.server] = Self.serverName
        return response
    }
}
