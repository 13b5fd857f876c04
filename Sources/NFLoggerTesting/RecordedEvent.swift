public import Foundation
public import NFLogger

/// One event as the SDK uploaded it, decoded from the wire format of `docs/PROTOCOL.md`.
///
/// ```swift
/// let checkout = try #require(transport.events(named: "flow.checkout").first)
/// #expect(checkout.kind == .span)
/// #expect(checkout.parameters["items"] == 3)
/// #expect(checkout.endParameters["result"] == "paid")
/// #expect((checkout.duration ?? 0) >= 0)
/// ```
public struct RecordedEvent: Sendable, Hashable, Identifiable {
    /// What an event records: a moment, or something that took time.
    public enum Kind: String, Sendable, Hashable {
        /// Something happened (`NFLogger.logEvent(name:type:parameters:in:completion:)`).
        case point
        /// Something took time, from `NFLogger.startEvent(name:type:parameters:in:completion:)`
        /// to its end. Only ended spans are uploaded.
        case span
    }

    /// The event's uuid, chosen when it was logged; the same on every attempt to upload it.
    public let id: UUID
    /// The session (foreground period of the app) it was logged in.
    public let sessionID: UUID
    public let name: String
    public let kind: Kind
    /// The category given when it was logged (`"event"` unless the call said otherwise).
    public let type: String
    /// A point's time, or a span's start (the wall clock, to the millisecond).
    public let timestamp: Date
    /// The parameters given when it was logged; empty when there were none.
    public let parameters: [String: LogValue]
    /// A span's end (the wall clock, to the millisecond); `nil` for a point. It may come before
    /// ``timestamp`` if the device's clock was set back during the span: ``duration`` is its length.
    public let end: Date?
    /// A span's length in seconds, measured with a monotonic clock (to the microsecond); `nil`
    /// for a point.
    public let duration: TimeInterval?
    /// The parameters given when the span ended; empty for a point and when there were none.
    public let endParameters: [String: LogValue]
    /// Whether the SDK closed the span itself (its process stopped without closing the logger,
    /// or the span stayed open past `Configuration.Limits.spanTimeout`).
    public let isAbandoned: Bool
    /// The transaction it was logged in (`TransactionHandle.id`, or the one a backend read from
    /// a `traceparent`), if any.
    public let transactionID: UUID?
    /// The W3C span id of the span it was logged under, if any.
    public let parentSpanID: UInt64?
    /// The origin of the web page that logged it through a `ScriptBridge` (`source: web`), if one did.
    public let webOrigin: String?
}
