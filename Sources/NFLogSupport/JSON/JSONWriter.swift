public import Foundation

/// Appends compact JSON to a byte buffer: what the SDK writes (parameters, batches) and what the
/// collector writes (exports, reports) go through the same escaping.
@_spi(NFLogShared) public struct JSONWriter {
    @_spi(NFLogShared) public var bytes: [UInt8]
    /// A bound the owner may check (the SDK's parameter limit); the writer itself never refuses.
    @_spi(NFLogShared) public let maxBytes: Int

    @_spi(NFLogShared) public init(capacity: Int, maxBytes: Int = .max) {
        bytes = []
        bytes.reserveCapacity(capacity)
        self.maxBytes = maxBytes
    }

    @_spi(NFLogShared) public mutating func writeLiteral(_ text: StaticString) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    @_spi(NFLogShared) public mutating func writeNumber(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }

    /// Writes the digits straight into the buffer: no String is allocated per number.
    @_spi(NFLogShared) public mutating func writeInteger(_ value: Int64) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 20) { digits in
            var start = digits.count
            repeat {
                start -= 1
                digits[start] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: digits[start...]))
        }
    }

    /// Writes a finite Double as the shortest text that reads back as the same value; JSON has
    /// no NaN or infinity, so those are written as `null`.
    @_spi(NFLogShared) public mutating func writeDouble(_ value: Double) {
        if value.isFinite { writeNumber(value.description) } else { writeLiteral("null") }
    }

    /// Copies bytes that are already JSON.
    @_spi(NFLogShared) public mutating func writeRaw(_ raw: some Collection<UInt8>) {
        bytes.append(contentsOf: raw)
    }

    /// Writes `"key":` for keys that are the protocol's own, never input.
    @_spi(NFLogShared) public mutating func writeKey(_ key: StaticString) {
        bytes.append(UInt8(ascii: "\""))
        writeLiteral(key)
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
    }

    /// Writes a UUID as a lowercase JSON string without building an intermediate String: its 38
    /// bytes are made on the stack and appended at once.
    @_spi(NFLogShared) public mutating func writeUUID(_ id: UUID) {
        let hex: StaticString = "0123456789abcdef"
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 38) { text in
            text[0] = UInt8(ascii: "\"")
            var at = 1
            withUnsafeBytes(of: id.uuid) { raw in
                hex.withUTF8Buffer { digits in
                    for index in 0..<16 {
                        if index == 4 || index == 6 || index == 8 || index == 10 { text[at] = UInt8(ascii: "-"); at += 1 }
                        text[at] = digits[Int(raw[index] >> 4)]
                        text[at + 1] = digits[Int(raw[index] & 0x0F)]
                        at += 2
                    }
                }
            }
            text[at] = UInt8(ascii: "\"")
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: text[0...at]))
        }
    }

    /// Writes a JSON string, escaping quotes, backslashes and control characters; `before` and
    /// `after` (a member's `,` and `:`) go in the same append.
    ///
    /// The string is quoted and escaped into a stack buffer, a chunk at a time, and each chunk
    /// appended at once: three or more appends per string (each checking the array's uniqueness
    /// and capacity), and a loop indexing the string byte by byte, cost more than the string.
    @_spi(NFLogShared) public mutating func writeString(_ string: String, before: UInt8? = nil, after: UInt8? = nil) {
        var string = string
        string.withUTF8 { utf8 in
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Self.chunkBytes * 6 + 4) { buffer in
                guard let start = buffer.baseAddress else { return }
                let input = utf8.baseAddress ?? UnsafePointer(start)  // an empty string: nothing is read
                var at = start
                if let before { at.pointee = before; at += 1 }
                at.pointee = UInt8(ascii: "\""); at += 1
                var next = input
                let end = input + utf8.count
                while true {
                    let piece = min(end - next, Self.chunkBytes)
                    at = Self.escape(UnsafeBufferPointer(start: next, count: piece), to: at)
                    next += piece
                    if next == end { break }
                    bytes.append(contentsOf: UnsafeBufferPointer(start: start, count: at - start))
                    at = start
                }
                at.pointee = UInt8(ascii: "\""); at += 1
                if let after { at.pointee = after; at += 1 }
                bytes.append(contentsOf: UnsafeBufferPointer(start: start, count: at - start))
            }
        }
    }

    /// Input bytes escaped per stack chunk (up to 6 bytes out for each: `\u00XX`).
    private static let chunkBytes = 64

    /// Writes `input` escaped at `out`; returns the byte after the last written.
    private static func escape(_ input: UnsafeBufferPointer<UInt8>, to out: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        var at = out
        for byte in input {
            guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else {
                at.pointee = byte
                at += 1
                continue
            }
            at.pointee = UInt8(ascii: "\\")
            switch byte {
            case UInt8(ascii: "\""): at[1] = UInt8(ascii: "\""); at += 2
            case UInt8(ascii: "\\"): at[1] = UInt8(ascii: "\\"); at += 2
            case UInt8(ascii: "\n"): at[1] = UInt8(ascii: "n"); at += 2
            case UInt8(ascii: "\r"): at[1] = UInt8(ascii: "r"); at += 2
            case UInt8(ascii: "\t"): at[1] = UInt8(ascii: "t"); at += 2
            default:
                let hex: StaticString = "0123456789abcdef"
                at[1] = UInt8(ascii: "u")
                at[2] = UInt8(ascii: "0")
                at[3] = UInt8(ascii: "0")
                hex.withUTF8Buffer { digits in
                    at[4] = digits[Int(byte >> 4)]
                    at[5] = digits[Int(byte & 0xF)]
                }
                at += 6
            }
        }
        return at
    }
}
