import Foundation
import Strata

/// What a write answers: CouchDB's `{"ok":true,"id","rev"}`.
public struct DocumentWriteResult: Sendable, Equatable {
    /// The document's id.
    public var id: String
    /// The revision the write made.
    public var rev: String

    /// A write's answer.
    public init(id: String, rev: String) {
        self.id = id
        self.rev = rev
    }
}
