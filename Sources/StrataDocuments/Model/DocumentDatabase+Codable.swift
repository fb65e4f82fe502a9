import Foundation
import Strata

/// A Codable document: the type carries its own `_id` and `_rev`.
///
/// ```swift
/// struct Vote: Document {
///     var _id: String
///     var _rev: String?
///     var question: String
///     var answer: Int
/// }
/// var vote = Vote(_id: "v1", _rev: nil, question: "q1", answer: 2)
/// vote._rev = try votes.put(vote).rev
/// let again = try votes.document(Vote.self, id: "v1")
/// ```
public protocol Document: Codable, Sendable {
    /// The document id.
    var _id: String { get }
    /// The revision this value was read at, nil for a new document.
    var _rev: String? { get }
}

extension DocumentDatabase {
    /// Saves a Codable value as a document (its `_id` and `_rev` are its
    /// own members). Throws `conflict` when `_rev` is not the current leaf.
    @discardableResult
    public func put<T: Encodable>(_ value: T) throws -> DocumentWriteResult {
        try put(DocumentStores.object(value))
    }

    /// The document `id` decoded as `T`; throws `notFound` when missing or deleted.
    public func document<T: Decodable>(_ type: T.Type, id: String, options: DocumentReadOptions = DocumentReadOptions()) throws -> T {
        try DocumentStores.decode(T.self, from: document(id: id, options: options))
    }

    /// The documents a Mango query finds, decoded as `T`.
    public func find<T: Decodable>(_ type: T.Type, _ query: FindQuery) throws -> [T] {
        try find(query).docs.map { try DocumentStores.decode(T.self, from: $0) }
    }

    /// The changes feed, live: the changes after `options.since`, then each
    /// new change as it is committed, until the task is cancelled.
    ///
    /// ```swift
    /// for try await change in votes.liveChanges() { print(change.id) }
    /// ```
    public func liveChanges(_ options: ChangesOptions = ChangesOptions()) -> AsyncThrowingStream<Change, any Error> {
        let tables = self.tables
        let writer = self.writer
        let sequence = ValueObservation { db in try tables.updateSequence(db) }
        return AsyncThrowingStream { continuation in
            let task = Task {
                var options = options
                options.descending = false
                options.limit = nil
                do {
                    for try await _ in sequence.values(in: writer) {
                        let batch = try await writer.read { [options] db in try tables.changes(db, options) }
                        for change in batch.results { continuation.yield(change) }
                        options.since = batch.lastSeq
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
