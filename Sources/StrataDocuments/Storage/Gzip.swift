/// gzip (RFC 1952) as CouchDB writes and reads attachments: compression
/// byte for byte as zlib's at level 8 (``Deflate``), with zlib's header
/// (no name, no time, OS 3), and decompression of any valid stream.
package enum Gzip {
    /// The gzip form of `bytes`, as CouchDB stores a compressible
    /// attachment.
    package static func compress(_ bytes: some Collection<UInt8>) -> [UInt8] {
        let encoder = GzipEncoder()
        return encoder.write(bytes) + encoder.finish()
    }

    /// The bytes a gzip stream holds (several members one after the other
    /// are read as one, as zlib's gunzip does).
    ///
    /// - Throws: ``DocumentError`` `bad_request` when the stream is not
    ///   gzip, is cut short, fails its CRC or length, or holds more than
    ///   `limit` bytes.
    package static func decompress(_ bytes: [UInt8], limit: Int = .max) throws -> [UInt8] {
        var output: [UInt8] = []
        var offset = 0
        repeat {
            offset = try member(bytes, at: offset, into: &output, limit: limit)
        } while offset < bytes.count
        return output
    }

    private static func corrupt(_ why: String) -> DocumentError {
        DocumentError(.badRequest, "The gzip data is corrupt: \(why)")
    }

    private static func member(_ bytes: [UInt8], at start: Int, into output: inout [UInt8], limit: Int) throws -> Int {
        guard bytes.count - start >= 18, bytes[start] == 0x1F, bytes[start + 1] == 0x8B, bytes[start + 2] == 8 else {
            throw corrupt("no gzip header")
        }
        let flags = bytes[start + 3]
        var offset = start + 10
        if flags & 4 != 0 {
            guard offset + 2 <= bytes.count else { throw corrupt("cut short") }
            offset += 2 + Int(bytes[offset]) + Int(bytes[offset + 1]) << 8
        }
        for flag: UInt8 in [8, 16] where flags & flag != 0 {
            while offset < bytes.count, bytes[offset] != 0 { offset += 1 }
            offset += 1
        }
        if flags & 2 != 0 { offset += 2 }
        guard offset <= bytes.count else { throw corrupt("cut short") }
        let first = output.count
        var inflater = Inflater(bytes, at: offset, limit: limit)
        try inflater.run(into: &output)
        offset = inflater.nextByte
        guard offset + 8 <= bytes.count else { throw corrupt("no trailer") }
        var crc = CRC32()
        output.withUnsafeBufferPointer { crc.update(UnsafeBufferPointer(rebasing: $0[first...])) }
        let storedCRC = UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16 | UInt32(bytes[offset + 3]) << 24
        let storedSize = UInt32(bytes[offset + 4]) | UInt32(bytes[offset + 5]) << 8 | UInt32(bytes[offset + 6]) << 16 | UInt32(bytes[offset + 7]) << 24
        guard storedCRC == crc.value else { throw corrupt("its CRC does not match") }
        guard storedSize == UInt32(truncatingIfNeeded: output.count - first) else { throw corrupt("its length does not match") }
        return offset + 8
    }
}

/// A gzip stream written a piece at a time: the output of each piece can be
/// taken as it comes (an attachment's digest is read without holding its
/// compressed form).
package final class GzipEncoder {
    private let deflate = Deflate()
    private var crc = CRC32()
    private var size: UInt32 = 0
    private var header: [UInt8]? = [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 3]

    package init() {}

    /// Compresses `bytes`; answers the compressed bytes ready so far.
    @discardableResult
    package func write(_ bytes: some Collection<UInt8>) -> [UInt8] {
        let array = Array(bytes)
        array.withUnsafeBufferPointer { crc.update($0) }
        size &+= UInt32(truncatingIfNeeded: array.count)
        deflate.write(array)
        return take()
    }

    /// Ends the stream; answers its last bytes (all of them when nothing
    /// was taken before).
    package func finish() -> [UInt8] {
        deflate.finish()
        var last = take()
        for value in [crc.value, size] {
            for shift in stride(from: 0, to: 32, by: 8) { last.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
        }
        return last
    }

    private func take() -> [UInt8] {
        var out = header ?? []
        header = nil
        out += deflate.takeOutput()
        return out
    }
}

/// CRC-32 (ISO 3309, gzip's).
struct CRC32 {
    private(set) var value: UInt32 = 0

    private static let table: [UInt32] = (0..<256).map { n -> UInt32 in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    mutating func update(_ bytes: UnsafeBufferPointer<UInt8>) {
        var c = ~value
        Self.table.withUnsafeBufferPointer { table in
            for byte in bytes { c = table[Int((c ^ UInt32(byte)) & 0xFF)] ^ (c >> 8) }
        }
        value = ~c
    }
}

/// DEFLATE decompression (RFC 1951): stored, fixed and dynamic blocks.
struct Inflater {
    private let input: [UInt8]
    private(set) var nextByte: Int
    private var bitBuffer = 0
    private var bitCount = 0
    private let limit: Int

    init(_ input: [UInt8], at offset: Int, limit: Int) {
        self.input = input
        nextByte = offset
        self.limit = limit
    }

    private static func corrupt(_ why: String) -> DocumentError {
        DocumentError(.badRequest, "The gzip data is corrupt: \(why)")
    }

    private mutating func bits(_ count: Int) throws -> Int {
        while bitCount < count {
            guard nextByte < input.count else { throw Self.corrupt("cut short") }
            bitBuffer |= Int(input[nextByte]) << bitCount
            nextByte += 1
            bitCount += 8
        }
        let value = bitBuffer & ((1 << count) - 1)
        bitBuffer >>= count
        bitCount -= count
        return value
    }

    /// A canonical Huffman code as counts per length and symbols in order.
    private struct Code {
        var counts = [Int](repeating: 0, count: 16)
        var symbols: [Int] = []

        init(lengths: [Int]) throws {
            for length in lengths { counts[length] += 1 }
            counts[0] = 0
            var left = 1
            for length in 1...15 {
                left <<= 1
                left -= counts[length]
                if left < 0 { throw Inflater.corrupt("an over-subscribed code") }
            }
            var offsets = [Int](repeating: 0, count: 16)
            for length in 1..<15 { offsets[length + 1] = offsets[length] + counts[length] }
            symbols = [Int](repeating: 0, count: lengths.count)
            for (symbol, length) in lengths.enumerated() where length != 0 {
                symbols[offsets[length]] = symbol
                offsets[length] += 1
            }
        }
    }

    private mutating func decode(_ code: Code) throws -> Int {
        var value = 0, first = 0, index = 0
        for length in 1...15 {
            value |= try bits(1)
            let count = code.counts[length]
            if value - count < first { return code.symbols[index + (value - first)] }
            index += count
            first += count
            first <<= 1
            value <<= 1
        }
        throw Self.corrupt("an invalid code")
    }

    private static let fixedLiteral: Code? = try? Code(lengths: DeflateTables.fixedLiteralLengths)
    private static let fixedDistance: Code? = try? Code(lengths: DeflateTables.fixedDistanceLengths)

    mutating func run(into output: inout [UInt8]) throws {
        var last = false
        repeat {
            last = try bits(1) == 1
            switch try bits(2) {
            case 0:
                bitBuffer = 0
                bitCount = 0
                guard nextByte + 4 <= input.count else { throw Self.corrupt("cut short") }
                let length = Int(input[nextByte]) | Int(input[nextByte + 1]) << 8
                let complement = Int(input[nextByte + 2]) | Int(input[nextByte + 3]) << 8
                guard length == ~complement & 0xFFFF else { throw Self.corrupt("a stored block's length") }
                nextByte += 4
                guard nextByte + length <= input.count else { throw Self.corrupt("cut short") }
                guard output.count + length <= limit else { throw Self.tooLarge(limit) }
                output.append(contentsOf: input[nextByte..<(nextByte + length)])
                nextByte += length
            case 1:
                try codes(&output, literal: Self.fixedLiteral!, distance: Self.fixedDistance!)
            case 2:
                let literalCount = try bits(5) + 257, distanceCount = try bits(5) + 1, codeLengthCount = try bits(4) + 4
                var codeLengths = [Int](repeating: 0, count: 19)
                for rank in 0..<codeLengthCount { codeLengths[DeflateTables.codeLengthOrder[rank]] = try bits(3) }
                let codeLengthCode = try Code(lengths: codeLengths)
                var lengths: [Int] = []
                while lengths.count < literalCount + distanceCount {
                    let symbol = try decode(codeLengthCode)
                    switch symbol {
                    case 0..<16: lengths.append(symbol)
                    case 16:
                        guard let previous = lengths.last else { throw Self.corrupt("a repeat with nothing before") }
                        lengths += repeatElement(previous, count: 3 + (try bits(2)))
                    case 17: lengths += repeatElement(0, count: 3 + (try bits(3)))
                    default: lengths += repeatElement(0, count: 11 + (try bits(7)))
                    }
                }
                guard lengths.count == literalCount + distanceCount, lengths[256] != 0 else { throw Self.corrupt("its code lengths") }
                try codes(&output, literal: Code(lengths: Array(lengths[0..<literalCount])), distance: Code(lengths: Array(lengths[literalCount...])))
            default:
                throw Self.corrupt("an invalid block type")
            }
        } while !last
        // The trailer starts at the next byte.
        bitBuffer = 0
        bitCount = 0
    }

    private static func tooLarge(_ limit: Int) -> DocumentError {
        DocumentError(.tooLarge, "the gzip data holds more than \(limit) bytes")
    }

    private mutating func codes(_ output: inout [UInt8], literal: Code, distance: Code) throws {
        while true {
            let symbol = try decode(literal)
            if symbol < 256 {
                guard output.count < limit else { throw Self.tooLarge(limit) }
                output.append(UInt8(symbol))
                continue
            }
            if symbol == 256 { return }
            let code = symbol - 257
            guard code < 29 else { throw Self.corrupt("an invalid length") }
            let length = DeflateTables.lengths.bases[code] + 3 + (try bits(DeflateTables.extraLengthBits[code]))
            let distanceCode = try decode(distance)
            guard distanceCode < 30 else { throw Self.corrupt("an invalid distance") }
            let back = DeflateTables.distances.bases[distanceCode] + 1 + (try bits(DeflateTables.extraDistanceBits[distanceCode]))
            guard back <= output.count else { throw Self.corrupt("a distance too far back") }
            guard output.count + length <= limit else { throw Self.tooLarge(limit) }
            let start = output.count - back
            for i in 0..<length { output.append(output[start + i]) }
        }
    }
}
