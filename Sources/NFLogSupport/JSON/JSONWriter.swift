public import Foundation

/// Appends compact JSON to a byte buffer: what the SDK writes (parameters, batches) and what the
/// collector writes (exports, reports) go through the same escaping.
///
/// The buffer is its own memory, written through a pointer: each write makes room once, then
/// stores its bytes. An `Array`'s `append` checks uniqueness and capacity and updates the count
/// on every call, which cost more than the few bytes most writes copy. Non-copyable: one owner
/// frees the memory, and ``bytes`` hands out a copy.
@_spi(NFLogShared) public struct JSONWriter: ~Copyable {
    /// Invariant: `start` holds `capacity` bytes, of which the first `count` are written.
    private var start: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    /// The bytes written so far.
    @_spi(NFLogShared) public private(set) var count: Int
    /// A bound the owner may check (the SDK's parameter limit); the writer itself never refuses.
    @_spi(NFLogShared) public let maxBytes: Int

    @_spi(NFLogShared) public init(capacity: Int, maxBytes: Int = .max) {
        self.capacity = max(capacity, 16)
        start = .allocate(capacity: self.capacity)
        count = 0
        self.maxBytes = maxBytes
    }

    deinit { start.deallocate() }

    /// What was written, as an array (a copy).
    @_spi(NFLogShared) public var bytes: [UInt8] {
        Array(UnsafeBufferPointer(start: start, count: count))
    }

    /// Forgets what was written and keeps the memory, for the next document.
    @_spi(NFLogShared) public mutating func removeAll() { count = 0 }

    /// Forgets what was written after the first `length` bytes (a piece that did not fit).
    @_spi(NFLogShared) public mutating func truncate(to length: Int) { count = max(0, min(count, length)) }

    /// Where the next `extra` bytes go; there is room for them. The caller stores at most that
    /// many and moves ``count`` past them.
    @inline(__always)
    private mutating func room(_ extra: Int) -> UnsafeMutablePointer<UInt8> {
        if capacity - count < extra { grow(toHold: extra) }
        return start + count
    }

    private mutating func grow(toHold extra: Int) {
        let newCapacity = max(capacity * 2, count + extra)
        let newStart = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        newStart.initialize(from: start, count: count)
        start.deallocate()
        start = newStart
        capacity = newCapacity
    }

    /// Copies `buffer`'s bytes at the end.
    private mutating func append(_ buffer: UnsafeBufferPointer<UInt8>) {
        guard let source = buffer.baseAddress, !buffer.isEmpty else { return }
        room(buffer.count).update(from: source, count: buffer.count)
        count += buffer.count
    }

    @_spi(NFLogShared) public mutating func writeByte(_ byte: UInt8) {
        room(1).pointee = byte
        count += 1
    }

    @_spi(NFLogShared) public mutating func writeLiteral(_ text: StaticString) {
        append(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    @_spi(NFLogShared) public mutating func writeNumber(_ text: String) {
        writeRaw(text.utf8)
    }

    /// Writes the digits straight into the buffer: no String is allocated per number.
    @_spi(NFLogShared) public mutating func writeInteger(_ value: Int64) {
        var magnitude = value.magnitude
        var digits = 1
        var scale: UInt64 = 10
        while digits < 20 && magnitude >= scale { digits += 1; scale &*= 10 }
        let sign = value < 0 ? 1 : 0
        let out = room(digits + sign)
        if sign == 1 { out.pointee = UInt8(ascii: "-") }
        var at = out + sign + digits
        repeat {
            at -= 1
            at.pointee = UInt8(ascii: "0") + UInt8(magnitude % 10)
            magnitude /= 10
        } while magnitude > 0
        count += digits + sign
    }

    /// Writes a finite Double as the shortest text that reads back as the same value; JSON has
    /// no NaN or infinity, so those are written as `null`.
    @_spi(NFLogShared) public mutating func writeDouble(_ value: Double) {
        if value.isFinite { writeNumber(value.description) } else { writeLiteral("null") }
    }

    /// Copies bytes that are already JSON.
    @_spi(NFLogShared) public mutating func writeRaw(_ raw: some Collection<UInt8>) {
        let length = raw.count
        guard length > 0 else { return }
        let out = room(length)
        let copied = raw.withContiguousStorageIfAvailable { buffer in
            if let source = buffer.baseAddress { out.update(from: source, count: buffer.count) }
            return true
        } ?? false
        if !copied {
            var at = out
            for byte in raw { at.pointee = byte; at += 1 }
        }
        count += length
    }

    /// Writes `"key":` for keys that are the protocol's own, never input.
    @_spi(NFLogShared) public mutating func writeKey(_ key: StaticString) {
        let length = key.utf8CodeUnitCount
        let out = room(length + 3)
        out.pointee = UInt8(ascii: "\"")
        (out + 1).update(from: key.utf8Start, count: length)
        out[length + 1] = UInt8(ascii: "\"")
        out[length + 2] = UInt8(ascii: ":")
        count += length + 3
    }

    /// Writes a UUID as a lowercase JSON string without building an intermediate String.
    @_spi(NFLogShared) public mutating func writeUUID(_ id: UUID) {
        let hex: StaticString = "0123456789abcdef"
        let text = room(38)
        text[0] = UInt8(ascii: "\"")
        var at = 1
        withUnsafeBytes(of: id.uuid) { raw in
            let digits = hex.utf8Start
            for index in 0..<16 {
                if index == 4 || index == 6 || index == 8 || index == 10 { text[at] = UInt8(ascii: "-"); at += 1 }
                text[at] = digits[Int(raw[index] >> 4)]
                text[at + 1] = digits[Int(raw[index] & 0x0F)]
                at += 2
            }
        }
        text[at] = UInt8(ascii: "\"")
        count += at + 1
    }

    /// Writes a JSON string, escaping quotes, backslashes and control characters; `before` and
    /// `after` (a member's `,` and `:`) are written with it.
    ///
    /// Room for the worst case (six bytes out for each byte in) is made once, then the string is
    /// escaped straight into it.
    @_spi(NFLogShared) public mutating func writeString(_ string: String, before: UInt8? = nil, after: UInt8? = nil) {
        let out = room(string.utf8.count * 6 + 4)
        var at = out
        if let before { at.pointee = before; at += 1 }
        at.pointee = UInt8(ascii: "\""); at += 1
        // Native and small strings lend their UTF-8 in place; any other is made native first.
        at = string.utf8.withContiguousStorageIfAvailable { Self.escape($0, to: at) } ?? {
            var native = string
            return native.withUTF8 { Self.escape($0, to: at) }
        }()
        at.pointee = UInt8(ascii: "\""); at += 1
        if let after { at.pointee = after; at += 1 }
        count += at - out
    }

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
