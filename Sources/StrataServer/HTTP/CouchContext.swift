import Hummingbird
import StrataDocuments

/// Hummingbird's per-request context: the client's address (the `peer` of
/// CouchDB's request object), and who is asking, once the authentication
/// middleware has looked.
struct CouchContext: RequestContext {
    var coreContext: CoreRequestContextStorage
    let peer: String?
    /// The user the request's credentials name (anonymous without any).
    var user = UserContext.anonymous
    /// Whether the session cookie the request came with is due for a
    /// refresh (the answer then carries a new one).
    var renewsSession = false

    init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        peer = source.channel.remoteAddress?.ipAddress
    }
}
