/// The rule for event names and types, shared by the SDK (which refuses bad names) and the
/// collector (which refuses batches carrying them): 1…`maxBytes` bytes of dot-separated parts,
/// each non-empty and made of ASCII letters, digits, `_` and `-`.
@_spi(NFLogShared) public enum EventNameRules {
    @_spi(NFLogShared) public static let maxNameBytes = 256
    @_spi(NFLogShared) public static let maxTypeBytes = 64
    /// A parameter's key (and an aggregate rule's dimension) is 1…this many bytes of UTF-8.
    @_spi(NFLogShared) public static let maxParameterKeyBytes = 256

    @inline(__always)
    @_spi(NFLogShared) public static func isPartByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
            true
        default:
            false
        }
    }

    /// What is wrong with `text` as a name, or `nil` if nothing is.
    @_spi(NFLogShared) public static func problem(in text: String, maxBytes: Int) -> String? {
        var text = text
        return text.withUTF8 { bytes -> String? in
            if bytes.isEmpty { return "it is empty" }
            if bytes.count > maxBytes { return "it is \(bytes.count) bytes long; the limit is \(maxBytes)" }
            var partLength = 0
            for byte in bytes {
                if byte == UInt8(ascii: ".") {
                    if partLength == 0 { return "it has an empty part (a leading, trailing or doubled '.')" }
                    partLength = 0
                } else if isPartByte(byte) {
                    partLength += 1
                } else {
                    return "only ASCII letters, digits, '_', '-' and '.' between parts are allowed"
                }
            }
            return partLength == 0 ? "it has an empty part (a leading, trailing or doubled '.')" : nil
        }
    }
}
