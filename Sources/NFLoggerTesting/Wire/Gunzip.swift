/// Reads one gzip member (RFC 1952) in Swift alone, so this product needs nothing but NFLogger:
/// the SDK's zlib sits in an internal target, and Foundation inflates only on Apple platforms.
/// Every block type of RFC 1951 is read (stored, fixed and dynamic Huffman codes), so bodies
/// compressed at any `Configuration.Upload.gzipLevel` are read; the CRC-32 and the length in
/// the trailer are checked. Written for clarity, after Mark Adler's `puff.c`, not for speed:
/// codes are decoded a bit at a time, which is plenty for a test's batches.
enum Gunzip {
    /// Inflates `input`, one gzip member and nothing after it, refusing to produce more than
    /// `maxOutputBytes`.
    static func decompress(_ input: [UInt8], maxOutputBytes: Int) throws(WireFormatError) -> [UInt8] {
        func fail(_ reason: String) -> WireFormatError { WireFormatError(path: nil, "not valid gzip data: \(reason)") }
        guard input.count >= 18 else { throw fail("\(input.count) bytes is shorter than any gzip member") }
        guard input[0] == 0x1F, input[1] == 0x8B else { throw fail("the gzip magic bytes are missing") }
        guard input[2] == 8 else { throw fail("compression method \(input[2]) is not deflate") }
        let flags = input[3]
        guard flags & 0xE0 == 0 else { throw fail("reserved header flags are set") }
        var position = 10
        if flags & 0x04 != 0 {  // FEXTRA: a length, then that many bytes
            guard position + 2 <= input.count else { throw fail("the header is cut short") }
            position += 2 + (Int(input[position]) | Int(input[position + 1]) << 8)
        }
        for flag: UInt8 in [0x08, 0x10] where flags & flag != 0 {  // FNAME, FCOMMENT: zero-terminated
            while position < input.count, input[position] != 0 { position += 1 }
            position += 1
        }
        if flags & 0x02 != 0 { position += 2 }  // FHCRC
        guard position <= input.count else { throw fail("the header is cut short") }

        var inflater = Inflater(input: input, position: position, maxOutputBytes: maxOutputBytes)
        do throws(Inflater.Failure) { try inflater.run() } catch { throw fail(error.reason) }
        let trailer = inflater.position
        guard trailer + 8 <= input.count else { throw fail("the data ends before the gzip trailer") }
        func word(at offset: Int) -> UInt32 {
            (0..<4).reduce(UInt32(0)) { $0 | UInt32(input[offset + $1]) << (8 * $1) }
        }
        let output = inflater.output
        guard word(at: trailer) == CRC32.checksum(output) else { throw fail("the CRC-32 does not match the data") }
        guard word(at: trailer + 4) == UInt32(truncatingIfNeeded: output.count) else {
            throw fail("the length in the trailer does not match the data")
        }
        guard trailer + 8 == input.count else { throw fail("\(input.count - trailer - 8) bytes follow the gzip member") }
        return output
    }
}

/// A raw deflate stream (RFC 1951) decoder.
private struct Inflater {
    struct Failure: Error {
        let reason: String
        init(_ reason: String) { self.reason = reason }
    }

    let input: [UInt8]
    /// The next byte to read; after ``run()``, the first byte after the deflate stream.
    private(set) var position: Int
    let maxOutputBytes: Int
    private(set) var output: [UInt8] = []
    private var bitBuffer: UInt32 = 0
    private var bitCount = 0

    init(input: [UInt8], position: Int, maxOutputBytes: Int) {
        self.input = input
        self.position = position
        self.maxOutputBytes = maxOutputBytes
    }

    /// Reads every block up to and including the one marked last.
    mutating func run() throws(Failure) {
        var last = false
        while !last {
            last = try bits(1) == 1
            switch try bits(2) {
            case 0: try stored()
            case 1:
                // Never nil (the fixed codes are valid); checked rather than forced all the same.
                guard let lengths = Huffman.fixedLengths, let distances = Huffman.fixedDistances else {
                    throw Failure("the fixed Huffman codes")
                }
                try codes(lengths, distances)
            case 2: try dynamic()
            default: throw Failure("a block of the reserved type 3")
            }
        }
        // Whatever is left in the bit buffer is padding of the last byte; the trailer follows.
        bitBuffer = 0
        bitCount = 0
    }

    /// The next `count` bits (at most 16), least significant first.
    private mutating func bits(_ count: Int) throws(Failure) -> Int {
        while bitCount < count {
            guard position < input.count else { throw Failure("the deflate data is cut short") }
            bitBuffer |= UInt32(input[position]) << bitCount
            position += 1
            bitCount += 8
        }
        let value = Int(bitBuffer & ((1 << count) - 1))
        bitBuffer >>= count
        bitCount -= count
        return value
    }

    private mutating func stored() throws(Failure) {
        bitBuffer = 0  // a stored block starts at a byte boundary
        bitCount = 0
        guard position + 4 <= input.count else { throw Failure("a stored block's header is cut short") }
        let length = Int(input[position]) | Int(input[position + 1]) << 8
        let complement = Int(input[position + 2]) | Int(input[position + 3]) << 8
        guard length == ~complement & 0xFFFF else { throw Failure("a stored block's length does not match its complement") }
        position += 4
        guard position + length <= input.count else { throw Failure("a stored block is cut short") }
        try reserve(length)
        output.append(contentsOf: input[position..<position + length])
        position += length
    }

    private func reserve(_ count: Int) throws(Failure) {
        guard output.count + count <= maxOutputBytes else { throw Failure("it inflates to more than \(maxOutputBytes) bytes") }
    }

    private static let lengthBases = [3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31,
                                      35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258]
    private static let lengthExtraBits = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2,
                                          3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]
    private static let distanceBases = [1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193,
                                        257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145,
                                        8193, 12289, 16385, 24577]
    private static let distanceExtraBits = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6,
                                            7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13]

    /// A block's literals and back-references, up to its end-of-block symbol.
    private mutating func codes(_ lengths: Huffman, _ distances: Huffman) throws(Failure) {
        while true {
            let symbol = try decode(lengths)
            if symbol < 256 {
                try reserve(1)
                output.append(UInt8(symbol))
            } else if symbol == 256 {
                return
            } else {
                let lengthIndex = symbol - 257
                guard lengthIndex < Self.lengthBases.count else { throw Failure("an invalid length symbol") }
                let length = Self.lengthBases[lengthIndex] + (try bits(Self.lengthExtraBits[lengthIndex]))
                let distanceIndex = try decode(distances)
                guard distanceIndex < Self.distanceBases.count else { throw Failure("an invalid distance symbol") }
                let distance = Self.distanceBases[distanceIndex] + (try bits(Self.distanceExtraBits[distanceIndex]))
                guard distance <= output.count else { throw Failure("a distance reaches before the start of the data") }
                try reserve(length)
                let start = output.count - distance
                for offset in 0..<length { output.append(output[start + offset]) }  // may overlap what it writes
            }
        }
    }

    /// Reads one symbol, a bit at a time, as `puff.c` does: canonical codes of each length are
    /// consecutive, so the code read so far is compared with the range of codes of its length.
    private mutating func decode(_ huffman: Huffman) throws(Failure) -> Int {
        var code = 0, first = 0, index = 0
        for length in 1...Huffman.maxBits {
            code |= try bits(1)
            let count = huffman.counts[length]
            if code - first < count { return huffman.symbols[index + code - first] }
            index += count
            first = (first + count) << 1
            code <<= 1
        }
        throw Failure("a code that the block's Huffman table does not have")
    }

    private static let codeLengthOrder = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]

    /// A block with its own Huffman tables, themselves Huffman-coded.
    private mutating func dynamic() throws(Failure) {
        let lengthCount = try bits(5) + 257
        let distanceCount = try bits(5) + 1
        let codeLengthCount = try bits(4) + 4
        guard lengthCount <= 286, distanceCount <= 30 else { throw Failure("too many codes in a dynamic block") }
        var codeLengths = [Int](repeating: 0, count: 19)
        for index in 0..<codeLengthCount { codeLengths[Self.codeLengthOrder[index]] = try bits(3) }
        let codeLengthCode = try Huffman(lengths: codeLengths[...])

        var lengths: [Int] = []
        lengths.reserveCapacity(lengthCount + distanceCount)
        while lengths.count < lengthCount + distanceCount {
            let symbol = try decode(codeLengthCode)
            let (value, repeats): (Int, Int)
            switch symbol {
            case 0..<16: (value, repeats) = (symbol, 1)
            case 16:
                guard let previous = lengths.last else { throw Failure("a repeat with no length before it") }
                (value, repeats) = (previous, 3 + (try bits(2)))
            case 17: (value, repeats) = (0, 3 + (try bits(3)))
            default: (value, repeats) = (0, 11 + (try bits(7)))
            }
            guard lengths.count + repeats <= lengthCount + distanceCount else { throw Failure("code lengths repeat past the table") }
            lengths.append(contentsOf: repeatElement(value, count: repeats))
        }
        guard lengths[256] != 0 else { throw Failure("a dynamic block without an end-of-block code") }
        let literals = try Huffman(lengths: lengths[0..<lengthCount])
        let distances = try Huffman(lengths: lengths[lengthCount...])
        try codes(literals, distances)
    }
}

/// A canonical Huffman code: how many codes each length has, and the symbols in code order.
/// An incomplete code is accepted (zlib writes one for a block with a single distance); reading
/// a code it lacks is an error then.
private struct Huffman {
    static let maxBits = 15
    var counts = [Int](repeating: 0, count: maxBits + 1)
    var symbols: [Int] = []

    init(lengths: ArraySlice<Int>) throws(Inflater.Failure) {
        for length in lengths { counts[length] += 1 }
        var left = 1
        for length in 1...Self.maxBits {
            left = left << 1 - counts[length]
            guard left >= 0 else { throw Inflater.Failure("an over-subscribed Huffman code") }
        }
        let used = lengths.count - counts[0]
        var offsets = [Int](repeating: 0, count: Self.maxBits + 1)
        for length in 1..<Self.maxBits { offsets[length + 1] = offsets[length] + counts[length] }
        symbols = [Int](repeating: 0, count: used)
        for (symbol, length) in lengths.enumerated() where length != 0 {
            symbols[offsets[length]] = symbol
            offsets[length] += 1
        }
    }

    /// The fixed codes of block type 1 (RFC 1951 §3.2.6); neither is over-subscribed.
    static let fixedLengths = try? Huffman(
        lengths: ArraySlice([Int](repeating: 8, count: 144) + [Int](repeating: 9, count: 112)
                            + [Int](repeating: 7, count: 24) + [Int](repeating: 8, count: 8)))
    static let fixedDistances = try? Huffman(lengths: ArraySlice([Int](repeating: 5, count: 30)))
}

/// The CRC-32 of gzip's trailer (the reflected polynomial 0xEDB88320).
enum CRC32 {
    private static let table: [UInt32] = (0..<256).map { index in
        (0..<8).reduce(UInt32(index)) { crc, _ in crc & 1 == 1 ? 0xEDB8_8320 ^ (crc >> 1) : crc >> 1 }
    }

    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        ~bytes.reduce(~UInt32(0)) { crc, byte in table[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
    }
}
