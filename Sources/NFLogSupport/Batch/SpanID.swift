public import Foundation

/// A W3C span id (docs/PROTOCOL.md, "Transactions"): 8 bytes, written as 16 lowercase hex
/// digits, never all zeros. A span's own id is the last 8 bytes of its uuid; an event's
/// `parent_span` names the span it was logged under.
@_spi(NFLogShared) public struct SpanID: Sendable, Hashable, CustomStringConvertible {
    /// The 8 bytes, big-endian (the first hex digit is the most significant).
    @_spi(NFLogShared) public let rawValue: UInt64

    /// `nil` for 0, which W3C trace context reserves as invalid.
    @_spi(NFLogShared) public init?(rawValue: UInt64) {
        guard rawValue != 0 else { return nil }
        self.rawValue = rawValue
    }

    /// Exactly 16 lowercase hex digits, not all zeros; `nil` otherwise. Lowercase only, as
    /// W3C trace context writes them, so each span id has one spelling.
    @_spi(NFLogShared) public init?(hex text: String) {
        var value: UInt64 = 0
        var count = 0
        for digit in text.utf8 {
            count += 1
            guard count <= 16 else { return nil }
            switch digit {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = value << 4 | UInt64(digit - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = value << 4 | UInt64(digit - UInt8(ascii: "a") + 10)
            default: return nil
            }
        }
        guard count == 16 else { return nil }
        self.init(rawValue: value)
    }

    /// The span id of the span whose uuid this is: its last 8 bytes. `nil` when they are all
    /// zeros (no UUIDv7 has that; such a span cannot be named as a parent).
    @_spi(NFLogShared) public init?(spanUUID id: UUID) {
        let value = withUnsafeBytes(of: id.uuid) { raw in
            raw[8...].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        }
        self.init(rawValue: value)
    }

    /// The 8 bytes as a signed integer, bit for bit: how SQLite stores it.
    @_spi(NFLogShared) public var storedValue: Int64 { Int64(bitPattern: rawValue) }

    /// 16 lowercase hex digits, as on the wire.
    @_spi(NFLogShared) public var description: String {
        let hex = String(rawValue, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
