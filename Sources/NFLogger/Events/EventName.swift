/// The rules for event names and types, checked on the caller's thread.
///
/// A name is 1…256 bytes of dot-separated parts; each part is non-empty and made of ASCII
/// letters, digits, `_` and `-`: `ui.tap`, `net.request.login`, `form-signup.step_2`.
/// A type follows the same rules with a limit of 64 bytes.
enum EventName {
    static let maxNameBytes = 256
    static let maxTypeBytes = 64

    static func validateName(_ name: String) throws(NFLoggerError) {
        if let reason = problem(in: name, maxBytes: maxNameBytes) {
            throw .invalidName(name, reason: reason)
        }
    }

    static func validateType(_ type: String) throws(NFLoggerError) {
        if let reason = problem(in: type, maxBytes: maxTypeBytes) {
            throw .invalidType(type, reason: reason)
        }
    }

    @inline(__always)
    static func isPartByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "-"):
            true
        default:
            false
        }
    }

    /// Returns what is wrong with `text`, or `nil` if it is a valid name.
    static func problem(in text: String, maxBytes: Int) -> String? {
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
