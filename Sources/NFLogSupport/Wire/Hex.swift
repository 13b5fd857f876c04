/// Hex digits: key hashes in keys files, ETags, encryption keys, UUIDs.
@_spi(NFLogShared) public enum Hex {
    /// Lowercase hex.
    @_spi(NFLogShared) public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Exactly `byteCount` bytes written as hex digits (either case), or `nil`.
    @_spi(NFLogShared) public static func decode(_ text: String, byteCount: Int) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count == 2 * byteCount else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(byteCount)
        for pair in stride(from: 0, to: digits.count, by: 2) {
            guard let high = value(digits[pair]), let low = value(digits[pair + 1]) else { return nil }
            bytes.append(high << 4 | low)
        }
        return bytes
    }

    /// One hex digit's value (either case), or `nil`.
    @inline(__always)
    static func value(_ digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
