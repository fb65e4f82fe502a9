import CompressNIO
import Foundation
import NIOCore
@testable import StrataDocuments
import Testing

/// The engine's gzip is zlib's at CouchDB's settings (level 8, memory level
/// 8, 32 KiB window), byte for byte: CouchDB's digest of a compressible
/// attachment is the MD5 of these bytes. zlib itself (through CompressNIO,
/// which the server links) is the reference.
@Suite struct GzipTests {
    static func zlib(_ bytes: [UInt8]) throws -> [UInt8] {
        var buffer = ByteBuffer(bytes: bytes)
        let configuration = ZlibConfiguration(windowSize: 15, compressionLevel: 8, memoryLevel: 8, strategy: .default)
        let compressed = try buffer.compress(with: .gzip(configuration: configuration))
        return Array(compressed.readableBytesView)
    }

    /// Inputs of every kind zlib's choices depend on: empty, tiny, text with
    /// repeats near and far, runs, random bytes (stored blocks), and sizes
    /// past the window (slides) and past a block's 16,383 symbols.
    static func inputs() -> [(String, [UInt8])] {
        var generator = SystemRandomNumberGenerator()
        var seeded = SplitMix(seed: 42)
        let words = ["tabs", "spaces", "couch", "strata", "vote", "question", "answer", "{\"_id\":", "\"votes\":[", "]}", "\n"]
        func text(_ count: Int) -> [UInt8] {
            var out: [UInt8] = []
            while out.count < count { out += Array((words[Int(seeded.next() % UInt64(words.count))] + " ").utf8) }
            return Array(out.prefix(count))
        }
        let random = (0..<200_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        var mixed: [UInt8] = []
        for i in 0..<40 { mixed += i % 3 == 0 ? Array(random[(i * 3000)..<(i * 3000 + 2000)]) : text(5000) }
        return [
            ("empty", []),
            ("one byte", [65]),
            ("hello", Array("hello world!".utf8)),
            ("changed on couchdb", Array("changed on couchdb\n".utf8)),
            ("a run", [UInt8](repeating: 97, count: 100_000)),
            ("text, 3 KB", text(3000)),
            ("text, 70 KB", text(70_000)),
            ("text, 300 KB", text(300_000)),
            ("random, 200 KB", random),
            ("text and random", mixed),
            ("JSON lines", Array((0..<20_000).map { "{\"_id\":\"doc\($0)\",\"n\":\($0 * 7 % 1000)}\n" }.joined().utf8)),
        ]
    }

    @Test func compressesAsZlibDoes() throws {
        for (name, input) in Self.inputs() {
            let ours = Gzip.compress(input)
            let theirs = try Self.zlib(input)
            #expect(ours == theirs, "\(name): \(ours.count) bytes, zlib \(theirs.count)")
            #expect(try Gzip.decompress(ours) == input, "\(name) round-trips")
        }
    }

    @Test func piecesGiveTheSameBytes() throws {
        let input = Self.inputs().first { $0.0 == "text and random" }!.1
        let encoder = GzipEncoder()
        var out: [UInt8] = []
        var offset = 0, piece = 1
        while offset < input.count {
            let end = min(input.count, offset + piece)
            out += encoder.write(input[offset..<end])
            offset = end
            piece = piece * 3 % 10_007 + 1
        }
        out += encoder.finish()
        #expect(out == (try Self.zlib(input)))
    }

    @Test func decompressesWhatZlibWritesAndRefusesTheCorrupt() throws {
        for (name, input) in Self.inputs() {
            var buffer = ByteBuffer(bytes: input)
            let fast = Array(try buffer.compress(with: .gzip(configuration: ZlibConfiguration(compressionLevel: 1))).readableBytesView)
            #expect(try Gzip.decompress(fast) == input, "\(name)")
        }
        var damaged = Gzip.compress(Array("a text attachment, gzipped".utf8))
        damaged[damaged.count - 6] ^= 0xFF
        #expect(throws: DocumentError.self) { try Gzip.decompress(damaged) }
        #expect(throws: DocumentError.self) { try Gzip.decompress(Array("not gzip at all, plain text".utf8)) }
        #expect(throws: DocumentError.self) { try Gzip.decompress(Array(Gzip.compress([UInt8](repeating: 1, count: 1000)).dropLast(9))) }
        #expect(throws: DocumentError.self) { try Gzip.decompress(Gzip.compress([UInt8](repeating: 1, count: 10_000)), limit: 100) }
    }
}

/// A small seeded generator: the same inputs every run.
struct SplitMix: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
