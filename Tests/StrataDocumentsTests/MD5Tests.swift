import Foundation
@testable import StrataDocuments
import Testing

/// The MD5 that revision ids and attachment digests rest on.
@Suite struct MD5Tests {
    /// RFC 1321's test suite, and inputs around the block boundaries.
    @Test func matchesRFC1321() {
        let vectors: [(String, String)] = [
            ("", "d41d8cd98f00b204e9800998ecf8427e"),
            ("a", "0cc175b9c0f1b6a831c399e269772661"),
            ("abc", "900150983cd24fb0d6963f7d28e17f72"),
            ("message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
            ("abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"),
            ("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", "d174ab98d277d9f5a5611c2c9f419d9f"),
            (String(repeating: "1234567890", count: 8), "57edf4a22be3c955ac49da2e2107b67a"),
        ]
        for (input, expected) in vectors {
            #expect(MD5.hex(Array(input.utf8)) == expected, "\(input)")
        }
    }

    /// Fed in pieces of every size, the digest is the one of the whole.
    @Test func piecesGiveTheDigestOfTheWhole() {
        let data = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let whole = MD5.digest(data)
        for piece in [1, 7, 63, 64, 65, 200] {
            var md5 = MD5()
            var start = 0
            while start < data.count {
                md5.update(data[start..<min(start + piece, data.count)])
                start += piece
            }
            #expect(md5.finish() == whole, "pieces of \(piece)")
        }
        #expect(Data(MD5.digest(Data("hello world".utf8))).base64EncodedString() == "XrY7u+Ae7tCTyyK7j1rNww==")
    }
}
