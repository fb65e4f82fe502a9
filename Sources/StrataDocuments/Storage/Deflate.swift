/// DEFLATE (RFC 1951) as zlib writes it at compression level 8 with 8 for
/// its memory level and a 32 KiB window (`deflateInit2(8, Z_DEFLATED, 31,
/// 8, Z_DEFAULT_STRATEGY)`), which is how CouchDB gzips a compressible
/// attachment (`couch_stream:gzip_init`). The output is zlib's to the byte:
/// CouchDB's attachment digest is the MD5 of these bytes, so a replica here
/// must produce the same ones (the same lazy matching, hash chains, block
/// boundaries and Huffman trees as zlib 1.2.13's `deflate_slow` and
/// `trees.c`). Written here because the engine links nothing but SQLite.
///
/// Input is given in pieces (`write`), as CouchDB's stream gives it; the
/// output does not depend on where the pieces end.
final class Deflate {
    // Level 8 (zlib's configuration table) and memory level 8.
    private static let goodLength = 32, maxLazy = 128, niceLength = 258, maxChain = 1024
    private static let windowBits = 15, windowSize = 1 << 15, windowMask = (1 << 15) - 1
    private static let hashBits = 15, hashSize = 1 << 15, hashMask = (1 << 15) - 1, hashShift = 5
    private static let minMatch = 3, maxMatch = 258, minLookahead = 258 + 3 + 1
    private static let maxDistance = (1 << 15) - (258 + 3 + 1)
    private static let tooFar = 4096
    /// Symbols a block holds before it is written (`lit_bufsize - 1`).
    private static let symbolLimit = (1 << (8 + 6)) - 1

    private let window: UnsafeMutablePointer<UInt8>
    private let previous: UnsafeMutablePointer<UInt16>
    private let head: UnsafeMutablePointer<UInt16>
    /// The block's symbols: literal (distance 0) or (distance, length - 3).
    private var symbolDistances: [UInt16] = []
    private var symbolLengths: [UInt8] = []

    private var hash = 0
    private var strStart = 0
    private var blockStart = 0
    private var lookahead = 0
    private var matchStart = 0
    private var matchLength = Deflate.minMatch - 1
    private var previousLength = Deflate.minMatch - 1
    private var previousMatch = 0
    private var matchAvailable = false

    private var pendingInput: [UInt8] = []
    private var inputOffset = 0
    private let trees = HuffmanBlockWriter()

    init() {
        window = .allocate(capacity: 2 * Self.windowSize)
        window.initialize(repeating: 0, count: 2 * Self.windowSize)
        previous = .allocate(capacity: Self.windowSize)
        previous.initialize(repeating: 0, count: Self.windowSize)
        head = .allocate(capacity: Self.hashSize)
        head.initialize(repeating: 0, count: Self.hashSize)
        symbolDistances.reserveCapacity(Self.symbolLimit)
        symbolLengths.reserveCapacity(Self.symbolLimit)
    }

    deinit {
        window.deallocate()
        previous.deallocate()
        head.deallocate()
    }

    /// The compressed bytes written so far, taken.
    func takeOutput() -> [UInt8] { trees.bits.take() }

    /// Compresses `bytes` (what can be, keeping the last few for the
    /// matches that may span into the next piece).
    func write(_ bytes: some Collection<UInt8>) {
        pendingInput.removeFirst(inputOffset)
        inputOffset = 0
        pendingInput.append(contentsOf: bytes)
        run(finishing: false)
    }

    /// Compresses what is left and ends the stream (the last block, padded
    /// to a byte).
    func finish() {
        run(finishing: true)
    }

    // MARK: - zlib's deflate_slow

    private var availableInput: Int { pendingInput.count - inputOffset }

    private func updateHash(_ byte: UInt8) {
        hash = ((hash << Self.hashShift) ^ Int(byte)) & Self.hashMask
    }

    /// Inserts the string at `position` in the hash chains; answers the
    /// previous head of its chain.
    private func insertString(_ position: Int) -> Int {
        updateHash(window[position + Self.minMatch - 1])
        let matchHead = Int(head[hash])
        previous[position & Self.windowMask] = UInt16(matchHead)
        head[hash] = UInt16(position)
        return matchHead
    }

    private func run(finishing: Bool) {
        while true {
            if lookahead < Self.minLookahead {
                fillWindow()
                if lookahead < Self.minLookahead && !finishing { return }
                if lookahead == 0 { break }
            }
            var hashHead = 0
            if lookahead >= Self.minMatch { hashHead = insertString(strStart) }
            previousLength = matchLength
            previousMatch = matchStart
            matchLength = Self.minMatch - 1
            if hashHead != 0 && previousLength < Self.maxLazy && strStart - hashHead <= Self.maxDistance {
                matchLength = longestMatch(hashHead)
                if matchLength <= 5 && matchLength == Self.minMatch && strStart - matchStart > Self.tooFar {
                    matchLength = Self.minMatch - 1
                }
            }
            if previousLength >= Self.minMatch && matchLength <= previousLength {
                let maxInsert = strStart + lookahead - Self.minMatch
                let flush = tally(distance: strStart - 1 - previousMatch, length: previousLength - Self.minMatch)
                lookahead -= previousLength - 1
                previousLength -= 2
                repeat {
                    strStart += 1
                    if strStart <= maxInsert { _ = insertString(strStart) }
                    previousLength -= 1
                } while previousLength != 0
                matchAvailable = false
                matchLength = Self.minMatch - 1
                strStart += 1
                if flush { flushBlock(last: false) }
            } else if matchAvailable {
                if tally(literal: window[strStart - 1]) { flushBlock(last: false) }
                strStart += 1
                lookahead -= 1
            } else {
                matchAvailable = true
                strStart += 1
                lookahead -= 1
            }
        }
        if matchAvailable {
            _ = tally(literal: window[strStart - 1])
            matchAvailable = false
        }
        flushBlock(last: true)
    }

    /// zlib's longest_match: the longest match along the hash chain from
    /// `start` (at most `maxChain` links, a quarter of them when the
    /// previous match was good), stopping at a nice length.
    private func longestMatch(_ start: Int) -> Int {
        var chainLength = Self.maxChain
        var currentMatch = start
        var bestLength = previousLength
        var niceMatch = Self.niceLength
        let limit = strStart > Self.maxDistance ? strStart - Self.maxDistance : 0
        let scan = window + strStart
        var scanEnd1 = scan[bestLength - 1]
        var scanEnd = scan[bestLength]
        if previousLength >= Self.goodLength { chainLength >>= 2 }
        if niceMatch > lookahead { niceMatch = lookahead }
        repeat {
            let match = window + currentMatch
            if match[bestLength] == scanEnd && match[bestLength - 1] == scanEnd1 && match[0] == scan[0] && match[1] == scan[1] {
                // Byte 2 is equal when bytes 0 and 1 are, the hashes being equal.
                var length = 3
                while length < Self.maxMatch && scan[length] == match[length] { length += 1 }
                if length > bestLength {
                    matchStart = currentMatch
                    bestLength = length
                    if length >= niceMatch { break }
                    scanEnd1 = scan[bestLength - 1]
                    scanEnd = scan[bestLength]
                }
            }
            currentMatch = Int(previous[currentMatch & Self.windowMask])
            chainLength -= 1
        } while currentMatch > limit && chainLength != 0
        return bestLength <= lookahead ? bestLength : lookahead
    }

    /// zlib's fill_window: slides the window by its half when the current
    /// string nears its end, and reads input into it.
    private func fillWindow() {
        repeat {
            var more = 2 * Self.windowSize - lookahead - strStart
            if strStart >= Self.windowSize + Self.maxDistance {
                (window).update(from: window + Self.windowSize, count: Self.windowSize - more)
                matchStart -= Self.windowSize
                strStart -= Self.windowSize
                blockStart -= Self.windowSize
                slideHash()
                more += Self.windowSize
            }
            if availableInput == 0 { break }
            let count = min(more, availableInput)
            pendingInput.withUnsafeBufferPointer { input in
                (window + strStart + lookahead).update(from: input.baseAddress! + inputOffset, count: count)
            }
            inputOffset += count
            lookahead += count
            if lookahead >= Self.minMatch {
                hash = Int(window[strStart])
                updateHash(window[strStart + 1])
            }
        } while lookahead < Self.minLookahead && availableInput != 0
    }

    private func slideHash() {
        for n in 0..<Self.hashSize {
            let m = Int(head[n])
            head[n] = UInt16(m >= Self.windowSize ? m - Self.windowSize : 0)
        }
        for n in 0..<Self.windowSize {
            let m = Int(previous[n])
            previous[n] = UInt16(m >= Self.windowSize ? m - Self.windowSize : 0)
        }
    }

    // MARK: - The block's symbols

    private func tally(literal: UInt8) -> Bool {
        symbolDistances.append(0)
        symbolLengths.append(literal)
        trees.literalFrequencies[Int(literal)] += 1
        return symbolDistances.count == Self.symbolLimit
    }

    private func tally(distance: Int, length: Int) -> Bool {
        symbolDistances.append(UInt16(distance))
        symbolLengths.append(UInt8(length))
        trees.literalFrequencies[Int(DeflateTables.lengths.codes[length]) + 257] += 1
        trees.distanceFrequencies[DeflateTables.distanceCode(distance - 1)] += 1
        return symbolDistances.count == Self.symbolLimit
    }

    /// zlib's FLUSH_BLOCK: the block from `blockStart` to the current
    /// string, stored, fixed or dynamic, whichever is shortest.
    private func flushBlock(last: Bool) {
        let storedLength = strStart - blockStart
        let stored = blockStart >= 0 ? UnsafeBufferPointer(start: window + blockStart, count: storedLength) : nil
        trees.writeBlock(distances: symbolDistances, lengths: symbolLengths, stored: stored, last: last)
        symbolDistances.removeAll(keepingCapacity: true)
        symbolLengths.removeAll(keepingCapacity: true)
        blockStart = strStart
    }
}
