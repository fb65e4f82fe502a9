import Foundation
import Strata

/// One answer of `open_revs`: the revision's document, or the revision that
/// is missing.
public enum OpenRevision: Sendable, Equatable {
    /// The revision's document (with `_revisions` when asked for).
    case ok(JSONObject)
    /// A revision the database does not have.
    case missing(String)
}
