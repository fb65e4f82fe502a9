import Foundation
@testable import Strata
import Testing

/// The package's one lock type: changes made on many threads at once are
/// none of them lost, and a change that reads and writes is one step.
@Suite struct LockedTests {
    @Test func concurrentChangesAreNotLost() async {
        let counts = Locked([String: Int]())
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    for _ in 0..<10_000 { counts.withLock { $0["n", default: 0] += 1 } }
                    counts.withLock { $0["task \(task)"] = 1 }
                }
            }
        }
        #expect(counts.value["n"] == 80_000)
        #expect(counts.value.count == 9)
    }

    @Test func aValueIsReadAndReplacedWhole() throws {
        let flag = Locked(false)
        #expect(flag.value == false)
        flag.value = true
        #expect(flag.value)
        struct Refused: Error {}
        #expect(throws: Refused.self) { try flag.withLock { _ in throw Refused() } }
        #expect(flag.withLock { value -> Bool in
            defer { value = false }
            return value
        })
        #expect(flag.value == false)
    }
}
