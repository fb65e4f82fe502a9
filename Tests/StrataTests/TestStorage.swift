import Foundation
import Testing
import Strata
import StrataTestHelpers

/// Where a storage-dependent test keeps its database.
enum TestStorage: String, CustomStringConvertible, CaseIterable {
    case memory
    case temporaryFile

    var description: String { rawValue }

    /// A fresh location: in memory, or a new file in a new temporary folder.
    func makeLocation() throws -> DatabaseLocation {
        switch self {
        case .memory:
            return .inMemory
        case .temporaryFile:
            return .path(try makeTemporaryPath())
        }
    }

    func makeDatabase(configuration: Configuration = Configuration()) throws -> Database {
        try Database(location: makeLocation(), configuration: configuration)
    }

    func makeQueue(configuration: Configuration = Configuration()) throws -> DatabaseQueue {
        try DatabaseQueue(location: makeLocation(), configuration: configuration)
    }
}

/// Expects `body` to throw a ``SQLiteError`` whose code matches `code` (a
/// primary code matches its whole family, as in `catch SQLiteError.constraint`).
@discardableResult
func expectError<R>(
    _ code: ResultCode, sourceLocation: Testing.SourceLocation = #_sourceLocation, _ body: () throws -> R
) -> SQLiteError? {
    let error = #expect(throws: SQLiteError.self, sourceLocation: sourceLocation) { try body() }
    if let error {
        #expect(code ~= error.code, "got \(error)", sourceLocation: sourceLocation)
    }
    return error
}
