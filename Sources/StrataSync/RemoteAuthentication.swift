import Foundation
import Strata
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import StrataDocuments

/// How a client proves who it is to the server.
public enum RemoteAuthentication: Sendable, Equatable {
    /// No credentials: the server's anonymous access.
    case none
    /// HTTP Basic authentication on every request.
    case basic(name: String, password: String)
    /// A session cookie from `POST /_session`, signed in on first use and
    /// again when the server forgets the session.
    case cookie(name: String, password: String)
}
