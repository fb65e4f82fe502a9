import Hummingbird

/// The whole server as Hummingbird runs it: CouchDB's middleware, outermost
/// first, then the router.
///
/// - ``CORSMiddleware``: preflights, and `Access-Control-*` on every answer;
/// - ``CouchHeadersMiddleware``: `Server` and `Cache-Control`;
/// - ``ErrorMiddleware``: every error becomes CouchDB's JSON answer here;
/// - ``AuthenticationMiddleware``: who is asking, before any body is read;
/// - ``DecompressionMiddleware``: gzip and deflate request bodies;
/// - ``CouchRouter``: the route table, access checks, the handlers.
@available(macOS 14, iOS 17, tvOS 17, *)
struct CouchResponder<Middleware: RouterMiddleware<CouchContext>>: HTTPResponder {
    typealias Context = CouchContext
    let middleware: Middleware
    let router: CouchRouter

    func respond(to request: Request, context: CouchContext) async throws -> Response {
        try await middleware.handle(request, context: context) { request, context in
            try await router.respond(to: request, context: context)
        }
    }
}

@available(macOS 14, iOS 17, tvOS 17, *)
extension CouchServer {
    /// The responder for this server's configuration.
    func makeResponder() -> some HTTPResponder<CouchContext> {
        CouchResponder(middleware: middleware(), router: CouchRouter(server: self))
    }

    @MiddlewareFixedTypeBuilder<Request, Response, CouchContext>
    func middleware() -> some RouterMiddleware<CouchContext> {
        CORSMiddleware(configuration: configuration.cors)
        CouchHeadersMiddleware()
        ErrorMiddleware(dataDirectory: configuration.dataDirectory)
        AuthenticationMiddleware(authenticator: authenticator, sessions: sessions, cors: configuration.cors)
        DecompressionMiddleware(maximumBodySize: Self.maximumBodySize)
    }
}
