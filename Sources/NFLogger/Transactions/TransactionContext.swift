public import Foundation

/// Where an event belongs in a transaction that may span processes: the transaction's id (the
/// W3C trace id) and the span it was logged under (the W3C parent span id).
///
/// An app gets one from a ``TransactionHandle`` or a ``SpanHandle`` started in a transaction;
/// a backend reads one from the `traceparent` header of the app's request
/// (``init(traceparent:)``) and logs into it with
/// ``NFLogger/logEvent(name:type:parameters:in:completion:)`` and
/// ``NFLogger/startEvent(name:type:parameters:in:completion:)``.
public struct TransactionContext: Sendable, Hashable, CustomStringConvertible {
    /// The transaction's id: the uuid of the span that began it, and the W3C trace id.
    public let transactionID: UUID
    /// The W3C span id (8 bytes) of the span this context stands for, if any.
    public let parentSpanID: UInt64?

    public init(transactionID: UUID, parentSpanID: UInt64? = nil) {
        self.transactionID = transactionID
        self.parentSpanID = parentSpanID == 0 ? nil : parentSpanID
    }

    /// Reads a W3C `traceparent` header (`00-<32 hex>-<16 hex>-<2 hex>`); `nil` if it is not one
    /// (another version with more fields is read by its first four, as the W3C asks).
    public init?(traceparent: String) {
        let fields = traceparent.split(separator: "-", omittingEmptySubsequences: false)
        guard fields.count >= 4, fields[0].utf8.count == 2, fields[0] != "ff",
              fields[0] != "00" || fields.count == 4,
              fields[1].utf8.count == 32, fields[2].utf8.count == 16, fields[3].utf8.count == 2,
              let trace = Self.hexBytes(fields[1]), trace.contains(where: { $0 != 0 }),
              let span = Self.hexBytes(fields[2]), span.contains(where: { $0 != 0 }),
              Self.hexBytes(fields[0]) != nil, Self.hexBytes(fields[3]) != nil else { return nil }
        transactionID = UUID(uuid: (trace[0], trace[1], trace[2], trace[3], trace[4], trace[5], trace[6], trace[7],
                                    trace[8], trace[9], trace[10], trace[11], trace[12], trace[13], trace[14], trace[15]))
        parentSpanID = span.reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// The `traceparent` a request made under this context carries: this transaction, this span
    /// (or, without one, the transaction's own span), sampled.
    public var traceparent: String {
        let span = parentSpanID ?? Self.spanID(of: transactionID)
        return "00-" + Self.hex(transactionID) + "-" + Self.hex(span) + "-01"
    }

    public var description: String { traceparent }

    /// A span's W3C span id: the last 8 bytes of its uuid (docs/PROTOCOL.md, "Transactions").
    public static func spanID(of id: UUID) -> UInt64 {
        withUnsafeBytes(of: id.uuid) { bytes in bytes[8...].reduce(0) { $0 << 8 | UInt64($1) } }
    }

    static func hex(_ id: UUID) -> String {
        withUnsafeBytes(of: id.uuid) { bytes in bytes.map(Self.hexByte).joined() }
    }

    static func hex(_ span: UInt64) -> String {
        (0..<8).map { Self.hexByte(UInt8(truncatingIfNeeded: span >> (56 - 8 * $0))) }.joined()
    }

    private static func hexByte(_ byte: UInt8) -> String {
        let digits = Array("0123456789abcdef")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }

    /// Lowercase hex only, as the W3C requires.
    private static func hexBytes(_ text: Substring) -> [UInt8]? {
        var bytes: [UInt8] = []
        var high: UInt8?
        for character in text.utf8 {
            let value: UInt8
            switch character {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): value = character - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): value = character - UInt8(ascii: "a") + 10
            default: return nil
            }
            if let pending = high { bytes.append(pending << 4 | value); high = nil } else { high = value }
        }
        return high == nil ? bytes : nil
    }
}
