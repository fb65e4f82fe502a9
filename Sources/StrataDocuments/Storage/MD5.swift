import Foundation

/// MD5 (RFC 1321), which CouchDB uses for attachment digests
/// (`md5-<base64>`) and revision ids. Not used for anything secret.
///
/// Every document write hashes its canonical body and every attachment is
/// hashed whole, so whole 64-byte blocks are read straight from the input.
package struct MD5 {
    private var state: (UInt32, UInt32, UInt32, UInt32) = (0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476)
    /// Bytes of an unfinished block, at most 63.
    private var pending: [UInt8] = []
    private var length: UInt64 = 0

    private static let shifts: [UInt32] = [
        7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22,
        5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20,
        4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23,
        6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
    ]

    private static let table: [UInt32] = (0..<64).map { i in
        UInt32(truncatingIfNeeded: Int64(abs(sin(Double(i + 1))) * 4294967296.0))
    }

    mutating func update<S: Sequence>(_ bytes: S) where S.Element == UInt8 {
        let done: Void? = bytes.withContiguousStorageIfAvailable { update(UnsafeRawBufferPointer($0)) }
        if done == nil {
            let copy = Array(bytes)
            copy.withUnsafeBytes { update($0) }
        }
    }

    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        length &+= UInt64(bytes.count)
        var offset = 0
        if !pending.isEmpty {
            let take = min(64 - pending.count, bytes.count)
            pending.append(contentsOf: bytes[0..<take])
            offset = take
            guard pending.count == 64 else { return }
            pending.withUnsafeBytes { processBlock($0) }
            pending.removeAll(keepingCapacity: true)
        }
        while bytes.count - offset >= 64 {
            processBlock(UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + 64)]))
            offset += 64
        }
        pending.append(contentsOf: bytes[offset...])
    }

    mutating func finish() -> [UInt8] {
        let bitLength = length &* 8
        var tail: [UInt8] = [0x80]
        while (pending.count + tail.count) % 64 != 56 { tail.append(0) }
        for i in 0..<8 { tail.append(UInt8(truncatingIfNeeded: bitLength >> (8 * UInt64(i)))) }
        tail.withUnsafeBytes { update($0) }
        var digest: [UInt8] = []
        digest.reserveCapacity(16)
        for word in [state.0, state.1, state.2, state.3] {
            for i in 0..<4 { digest.append(UInt8(truncatingIfNeeded: word >> (8 * UInt32(i)))) }
        }
        return digest
    }

    private mutating func processBlock(_ block: UnsafeRawBufferPointer) {
        withUnsafeTemporaryAllocation(of: UInt32.self, capacity: 16) { m in
            for i in 0..<16 {
                m[i] = UInt32(littleEndian: block.loadUnaligned(fromByteOffset: 4 * i, as: UInt32.self))
            }
            var (a, b, c, d) = state
            for i in 0..<64 {
                var f: UInt32
                let g: Int
                switch i {
                case 0..<16: f = (b & c) | (~b & d); g = i
                case 16..<32: f = (d & b) | (~d & c); g = (5 * i + 1) % 16
                case 32..<48: f = b ^ c ^ d; g = (3 * i + 5) % 16
                default: f = c ^ (b | ~d); g = (7 * i) % 16
                }
                f = f &+ a &+ MD5.table[i] &+ m[g]
                a = d
                d = c
                c = b
                b = b &+ ((f << MD5.shifts[i]) | (f >> (32 - MD5.shifts[i])))
            }
            state = (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d)
        }
    }

    package static func digest<S: Sequence>(_ bytes: S) -> [UInt8] where S.Element == UInt8 {
        var md5 = MD5()
        md5.update(bytes)
        return md5.finish()
    }

    package static func hex<S: Sequence>(_ bytes: S) -> String where S.Element == UInt8 {
        digest(bytes).hexString
    }
}

extension [UInt8] {
    /// The bytes as lowercase hex, two digits each.
    package var hexString: String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(count * 2)
        for byte in self {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
