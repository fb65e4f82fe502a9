import Foundation
import Strata

/// One lock per view group, so that one caller at a time brings an index up
/// to date (the others wait, then find it current).
final class ViewLocks: Sendable {
    private let locks = Locked<[String: Locked<Void>]>([:])

    func withLock<T>(_ key: String, _ body: () throws -> T) rethrows -> T {
        let groupLock = locks.withLock { locks -> Locked<Void> in
            if let l = locks[key] { return l }
            let l = Locked(())
            locks[key] = l
            return l
        }
        return try groupLock.withLock { _ in try body() }
    }
}
