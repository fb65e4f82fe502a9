import Foundation

/// A string compared and hashed by its bytes (UTF-8).
///
/// Swift's `String` equality is canonical equivalence: a precomposed `é`
/// equals `e` followed by a combining accent. SQLite and CouchDB compare
/// bytes, so to them these are two SQL texts, two table names, two
/// document ids or two member names. Keys that stand for what SQLite or
/// CouchDB compares (a statement cache's SQL, a JSON object's member names)
/// are compared as they are.
package struct ExactString: Hashable {
    package let string: String

    @inlinable
    package init(_ string: String) { self.string = string }

    /// Whether two strings hold the same bytes; at once when they are the
    /// same string (one storage, or the same small string), as a name given
    /// again usually is.
    @inlinable @inline(__always)
    package static func same(_ lhs: String, _ rhs: String) -> Bool {
        if MemoryLayout<String>.size == 2 * MemoryLayout<UInt>.size,
            unsafeBitCast(lhs, to: (UInt, UInt).self) == unsafeBitCast(rhs, to: (UInt, UInt).self) {
            return true
        }
        return sameBytes(lhs, rhs)
    }

    @usableFromInline
    static func sameBytes(_ lhs: String, _ rhs: String) -> Bool {
        let lhsUTF8 = lhs.utf8, rhsUTF8 = rhs.utf8
        guard lhsUTF8.count == rhsUTF8.count else { return false }
        return lhsUTF8.withContiguousStorageIfAvailable { left in
            rhsUTF8.withContiguousStorageIfAvailable { right in
                left.isEmpty || memcmp(left.baseAddress!, right.baseAddress!, left.count) == 0
            }
        }.flatMap { $0 } ?? lhsUTF8.elementsEqual(rhsUTF8)
    }

    @inlinable
    package static func == (lhs: ExactString, rhs: ExactString) -> Bool {
        same(lhs.string, rhs.string)
    }

    package func hash(into hasher: inout Hasher) {
        let utf8 = string.utf8
        if utf8.withContiguousStorageIfAvailable({ hasher.combine(bytes: UnsafeRawBufferPointer($0)) }) == nil {
            for byte in utf8 { hasher.combine(byte) }
        }
    }
}
