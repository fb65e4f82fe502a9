import Foundation

/// A value that is only read or changed under its lock: the package's one
/// lock type, instead of an `NSLock` written beside the state it guards
/// (and an `@unchecked Sendable` promise) in every class that shares state
/// between threads.
///
/// ```swift
/// let counts = Locked([String: Int]())
/// counts.withLock { $0["votes", default: 0] += 1 }
/// let now = counts.value
/// ```
package final class Locked<Value>: @unchecked Sendable {
    // @unchecked: `stored` is only touched under `lock`.
    private let lock = NSLock()
    private var stored: Value

    package init(_ value: Value) {
        stored = value
    }

    /// Runs `body` on the value, under the lock. Keep the body short: it
    /// must not wait on anything that takes the same lock.
    package func withLock<T>(_ body: (inout Value) throws -> T) rethrows -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(&stored)
    }

    /// A copy of the value, read under the lock; set, it is replaced
    /// under the lock (a change that depends on the value is one
    /// ``withLock(_:)``).
    package var value: Value {
        get { withLock { $0 } }
        set { withLock { $0 = newValue } }
    }
}
