/// DEFLATE's fixed tables (RFC 1951 §3.2.5), as zlib's `tr_static_init`
/// builds them.
enum DeflateTables {
    static let extraLengthBits: [Int] = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]
    static let extraDistanceBits: [Int] = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13]
    static let extraCodeLengthBits: [Int] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 3, 7]
    /// The order code-length codes are sent in.
    static let codeLengthOrder: [Int] = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]

    /// A code table: the code of each value, and each code's first value.
    struct CodeTable {
        var codes: [UInt8]
        var bases: [Int] = []

        /// Adds codes `range` in turn, each for `1 << (extraBits[code] -
        /// shift)` consecutive values from `start`, kept at `codes[offset +
        /// value]`; each code's base is its first value shifted back.
        mutating func add(_ range: Range<Int>, extraBits: [Int], start: Int = 0, shift: Int = 0, offset: Int = 0) {
            var value = start
            for code in range {
                bases.append(value << shift)
                for _ in 0..<(1 << (extraBits[code] - shift)) {
                    codes[offset + value] = UInt8(code)
                    value += 1
                }
            }
        }
    }

    /// Length codes (0…28) of match lengths less 3 (0…255), and each
    /// code's first length less 3 (code 28 is 255 alone).
    static let lengths: CodeTable = {
        var table = CodeTable(codes: [UInt8](repeating: 0, count: 256))
        table.add(0..<28, extraBits: extraLengthBits)
        table.codes[255] = 28
        table.bases.append(255)
        return table
    }()

    /// zlib's `_dist_code`: distance codes of distances less 1, the first
    /// 256 directly, the others at 256 + their value shifted by 7; and each
    /// code's first distance less 1.
    static let distances: CodeTable = {
        var table = CodeTable(codes: [UInt8](repeating: 0, count: 512))
        table.add(0..<16, extraBits: extraDistanceBits)
        table.add(16..<30, extraBits: extraDistanceBits, start: 256 >> 7, shift: 7, offset: 256)
        return table
    }()

    static func distanceCode(_ distance: Int) -> Int {
        Int(distance < 256 ? distances.codes[distance] : distances.codes[256 + (distance >> 7)])
    }

    /// The fixed literal/length tree's code lengths and codes.
    static let fixedLiteralLengths: [Int] = (0..<288).map { $0 < 144 ? 8 : $0 < 256 ? 9 : $0 < 280 ? 7 : 8 }
    static let fixedLiteralCodes: [Int] = HuffmanBlockWriter.codes(lengths: fixedLiteralLengths, maxCode: 287)
    static let fixedDistanceLengths = [Int](repeating: 5, count: 30)
    static let fixedDistanceCodes: [Int] = (0..<30).map { HuffmanBlockWriter.reversed($0, bits: 5) }
}

/// The bits of a DEFLATE stream, least significant first, as bytes.
final class DeflateBitWriter {
    private(set) var bytes: [UInt8] = []
    private var buffer: UInt64 = 0
    private var count = 0

    func write(_ value: Int, bits: Int) {
        buffer |= UInt64(value) << UInt64(count)
        count += bits
        while count >= 8 {
            bytes.append(UInt8(truncatingIfNeeded: buffer))
            buffer >>= 8
            count -= 8
        }
    }

    /// Pads to a byte (zlib's bi_windup).
    func align() {
        if count > 0 {
            bytes.append(UInt8(truncatingIfNeeded: buffer))
            buffer = 0
            count = 0
        }
    }

    func appendBytes(_ more: UnsafeBufferPointer<UInt8>) { bytes.append(contentsOf: more) }

    func take() -> [UInt8] {
        defer { bytes.removeAll(keepingCapacity: true) }
        return bytes
    }
}

/// zlib's trees.c: builds a block's Huffman trees from its symbols'
/// frequencies and writes the block stored, with the fixed trees, or with
/// its own, whichever zlib would choose.
final class HuffmanBlockWriter {
    let bits = DeflateBitWriter()
    var literalFrequencies = [Int](repeating: 0, count: 286)
    var distanceFrequencies = [Int](repeating: 0, count: 30)

    init() { literalFrequencies[256] = 1 }

    /// One tree's working arrays (zlib's ct_data and tree_desc).
    private struct Tree {
        var frequency: [Int]
        var parent: [Int]
        var length: [Int]
        var code: [Int]
        var maxCode = -1

        init(frequencies: [Int], nodes: Int) {
            frequency = frequencies + [Int](repeating: 0, count: nodes - frequencies.count)
            parent = [Int](repeating: 0, count: nodes)
            length = [Int](repeating: 0, count: nodes)
            code = [Int](repeating: 0, count: nodes)
        }
    }

    private var heap = [Int](repeating: 0, count: 2 * 286 + 1)
    private var heapLength = 0
    private var heapMax = 0
    private var depth = [Int](repeating: 0, count: 2 * 286 + 1)
    private var lengthCounts = [Int](repeating: 0, count: 16)
    private var optimalLength = 0
    private var staticLength = 0

    static func reversed(_ code: Int, bits: Int) -> Int {
        var code = code, result = 0
        for _ in 0..<bits {
            result = (result << 1) | (code & 1)
            code >>= 1
        }
        return result
    }

    /// zlib's gen_codes: canonical codes for `lengths`, bit-reversed.
    static func codes(lengths: [Int], maxCode: Int) -> [Int] {
        var counts = [Int](repeating: 0, count: 16)
        for n in 0...maxCode { counts[lengths[n]] += 1 }
        counts[0] = 0
        return codes(lengths: lengths, maxCode: maxCode, counts: counts)
    }

    private static func codes(lengths: [Int], maxCode: Int, counts: [Int]) -> [Int] {
        var next = [Int](repeating: 0, count: 16)
        var code = 0
        for bits in 1...15 {
            code = (code + counts[bits - 1]) << 1
            next[bits] = code
        }
        var result = [Int](repeating: 0, count: lengths.count)
        for n in 0...max(maxCode, 0) where n < lengths.count {
            let length = lengths[n]
            if length == 0 { continue }
            result[n] = reversed(next[length], bits: length)
            next[length] += 1
        }
        return result
    }

    private func smaller(_ tree: Tree, _ n: Int, _ m: Int) -> Bool {
        tree.frequency[n] < tree.frequency[m] || (tree.frequency[n] == tree.frequency[m] && depth[n] <= depth[m])
    }

    private func downHeap(_ tree: Tree, _ start: Int) {
        var k = start
        let v = heap[k]
        var j = k << 1
        while j <= heapLength {
            if j < heapLength && smaller(tree, heap[j + 1], heap[j]) { j += 1 }
            if smaller(tree, v, heap[j]) { break }
            heap[k] = heap[j]
            k = j
            j <<= 1
        }
        heap[k] = v
    }

    /// zlib's build_tree, gen_bitlen and gen_codes for one tree.
    private func build(_ tree: inout Tree, elements: Int, staticLengths: [Int]?, extraBits: [Int], extraBase: Int, maxLength: Int) {
        heapLength = 0
        heapMax = 2 * 286 + 1
        var maxCode = -1
        for n in 0..<elements {
            if tree.frequency[n] != 0 {
                heapLength += 1
                heap[heapLength] = n
                maxCode = n
                depth[n] = 0
            } else {
                tree.length[n] = 0
            }
        }
        // At least two codes of non-zero frequency.
        while heapLength < 2 {
            let chosen: Int
            if maxCode < 2 {
                maxCode += 1
                chosen = maxCode
            } else {
                chosen = 0
            }
            heapLength += 1
            heap[heapLength] = chosen
            tree.frequency[chosen] = 1
            depth[chosen] = 0
            optimalLength -= 1
            if let staticLengths { staticLength -= staticLengths[chosen] }
        }
        tree.maxCode = maxCode
        for n in stride(from: heapLength / 2, through: 1, by: -1) { downHeap(tree, n) }
        var node = elements
        repeat {
            let n = heap[1]
            heap[1] = heap[heapLength]
            heapLength -= 1
            downHeap(tree, 1)
            let m = heap[1]
            heapMax -= 1
            heap[heapMax] = n
            heapMax -= 1
            heap[heapMax] = m
            tree.frequency[node] = tree.frequency[n] + tree.frequency[m]
            depth[node] = max(depth[n], depth[m]) + 1
            tree.parent[n] = node
            tree.parent[m] = node
            heap[1] = node
            node += 1
            downHeap(tree, 1)
        } while heapLength >= 2
        heapMax -= 1
        heap[heapMax] = heap[1]

        // gen_bitlen: the optimal lengths, held to maxLength.
        for bits in 0...15 { lengthCounts[bits] = 0 }
        tree.length[heap[heapMax]] = 0
        var overflow = 0
        var h = heapMax + 1
        while h < 2 * 286 + 1 {
            let n = heap[h]
            var bits = tree.length[tree.parent[n]] + 1
            if bits > maxLength {
                bits = maxLength
                overflow += 1
            }
            tree.length[n] = bits
            h += 1
            if n > maxCode { continue }
            lengthCounts[bits] += 1
            let extra = n >= extraBase ? extraBits[n - extraBase] : 0
            let frequency = tree.frequency[n]
            optimalLength += frequency * (bits + extra)
            if let staticLengths { staticLength += frequency * (staticLengths[n] + extra) }
        }
        if overflow > 0 {
            repeat {
                var bits = maxLength - 1
                while lengthCounts[bits] == 0 { bits -= 1 }
                lengthCounts[bits] -= 1
                lengthCounts[bits + 1] += 2
                lengthCounts[maxLength] -= 1
                overflow -= 2
            } while overflow > 0
            h = 2 * 286 + 1
            for bits in stride(from: maxLength, through: 1, by: -1) {
                var count = lengthCounts[bits]
                while count != 0 {
                    h -= 1
                    let m = heap[h]
                    if m > maxCode { continue }
                    if tree.length[m] != bits {
                        optimalLength += (bits - tree.length[m]) * tree.frequency[m]
                        tree.length[m] = bits
                    }
                    count -= 1
                }
            }
        }
        tree.code = Self.codes(lengths: tree.length, maxCode: maxCode, counts: lengthCounts)
    }

    /// A tree's code lengths in DEFLATE's code-length alphabet, as zlib's
    /// scan_tree counts and send_tree writes them: each symbol (a length,
    /// or 16, 17, 18 for a run) with its extra bits.
    private static func runs(_ lengths: [Int], maxCode: Int) -> [(symbol: Int, extra: Int, extraBits: Int)] {
        var out: [(symbol: Int, extra: Int, extraBits: Int)] = []
        var previous = -1
        var next = lengths[0]
        var count = 0
        var maxCount = 7, minCount = 4
        if next == 0 { (maxCount, minCount) = (138, 3) }
        for n in 0...maxCode {
            let current = next
            next = n + 1 <= maxCode ? lengths[n + 1] : 0xFFFF
            count += 1
            if count < maxCount && current == next { continue }
            if count < minCount {
                out += repeatElement((symbol: current, extra: 0, extraBits: 0), count: count)
            } else if current != 0 {
                if current != previous {
                    out.append((current, 0, 0))
                    count -= 1
                }
                out.append((16, count - 3, 2))
            } else if count <= 10 {
                out.append((17, count - 3, 3))
            } else {
                out.append((18, count - 11, 7))
            }
            count = 0
            previous = current
            if next == 0 { (maxCount, minCount) = (138, 3) }
            else if current == next { (maxCount, minCount) = (6, 3) }
            else { (maxCount, minCount) = (7, 4) }
        }
        return out
    }

    /// zlib's _tr_flush_block, then a fresh block's frequencies.
    func writeBlock(distances: [UInt16], lengths: [UInt8], stored: UnsafeBufferPointer<UInt8>?, last: Bool) {
        optimalLength = 0
        staticLength = 0
        var literals = Tree(frequencies: literalFrequencies, nodes: 2 * 286 + 1)
        var distanceTree = Tree(frequencies: distanceFrequencies, nodes: 2 * 30 + 1)
        build(&literals, elements: 286, staticLengths: DeflateTables.fixedLiteralLengths, extraBits: DeflateTables.extraLengthBits,
              extraBase: 257, maxLength: 15)
        build(&distanceTree, elements: 30, staticLengths: DeflateTables.fixedDistanceLengths, extraBits: DeflateTables.extraDistanceBits,
              extraBase: 0, maxLength: 15)
        var codeLengthFrequencies = [Int](repeating: 0, count: 19)
        let literalRuns = Self.runs(literals.length, maxCode: literals.maxCode)
        let distanceRuns = Self.runs(distanceTree.length, maxCode: distanceTree.maxCode)
        for run in literalRuns + distanceRuns { codeLengthFrequencies[run.symbol] += 1 }
        var codeLengthTree = Tree(frequencies: codeLengthFrequencies, nodes: 2 * 19 + 1)
        build(&codeLengthTree, elements: 19, staticLengths: nil, extraBits: DeflateTables.extraCodeLengthBits, extraBase: 0, maxLength: 7)
        var maxIndex = 18
        while maxIndex >= 3, codeLengthTree.length[DeflateTables.codeLengthOrder[maxIndex]] == 0 { maxIndex -= 1 }
        optimalLength += 3 * (maxIndex + 1) + 5 + 5 + 4

        var optimalBytes = (optimalLength + 3 + 7) >> 3
        let staticBytes = (staticLength + 3 + 7) >> 3
        if staticBytes <= optimalBytes { optimalBytes = staticBytes }
        let lastBit = last ? 1 : 0
        if let stored, stored.count + 4 <= optimalBytes {
            bits.write(0 << 1 | lastBit, bits: 3)
            bits.align()
            bits.write(stored.count & 0xFFFF, bits: 16)
            bits.write(~stored.count & 0xFFFF, bits: 16)
            bits.appendBytes(stored)
        } else if staticBytes == optimalBytes {
            bits.write(1 << 1 | lastBit, bits: 3)
            compress(distances, lengths, literalCodes: DeflateTables.fixedLiteralCodes, literalLengths: DeflateTables.fixedLiteralLengths,
                     distanceCodes: DeflateTables.fixedDistanceCodes, distanceLengths: DeflateTables.fixedDistanceLengths)
        } else {
            bits.write(2 << 1 | lastBit, bits: 3)
            let literalCount = literals.maxCode + 1, distanceCount = distanceTree.maxCode + 1
            bits.write(literalCount - 257, bits: 5)
            bits.write(distanceCount - 1, bits: 5)
            bits.write(maxIndex + 1 - 4, bits: 4)
            for rank in 0...maxIndex { bits.write(codeLengthTree.length[DeflateTables.codeLengthOrder[rank]], bits: 3) }
            for run in literalRuns + distanceRuns {
                bits.write(codeLengthTree.code[run.symbol], bits: codeLengthTree.length[run.symbol])
                if run.extraBits > 0 { bits.write(run.extra, bits: run.extraBits) }
            }
            compress(distances, lengths, literalCodes: literals.code, literalLengths: literals.length,
                     distanceCodes: distanceTree.code, distanceLengths: distanceTree.length)
        }
        for n in literalFrequencies.indices { literalFrequencies[n] = 0 }
        for n in distanceFrequencies.indices { distanceFrequencies[n] = 0 }
        literalFrequencies[256] = 1
        if last { bits.align() }
    }

    /// zlib's compress_block: the block's symbols in the chosen trees.
    private func compress(_ distances: [UInt16], _ lengths: [UInt8], literalCodes: [Int], literalLengths: [Int],
                          distanceCodes: [Int], distanceLengths: [Int]) {
        for i in distances.indices {
            let distance = Int(distances[i])
            let value = Int(lengths[i])
            if distance == 0 {
                bits.write(literalCodes[value], bits: literalLengths[value])
                continue
            }
            let code = Int(DeflateTables.lengths.codes[value])
            bits.write(literalCodes[code + 257], bits: literalLengths[code + 257])
            let extra = DeflateTables.extraLengthBits[code]
            if extra != 0 { bits.write(value - DeflateTables.lengths.bases[code], bits: extra) }
            let d = distance - 1
            let dCode = DeflateTables.distanceCode(d)
            bits.write(distanceCodes[dCode], bits: distanceLengths[dCode])
            let dExtra = DeflateTables.extraDistanceBits[dCode]
            if dExtra != 0 { bits.write(d - DeflateTables.distances.bases[dCode], bits: dExtra) }
        }
        bits.write(literalCodes[256], bits: literalLengths[256])
    }
}
