import Foundation

/// An event read back from its table for upload, exactly as stored.
struct StoredEvent: Sendable {
    let kind: RecordKind
    let rowID: Int64
    let id: UUID
    let sessionRowID: Int64
    let name: String
    let type: String
    /// JSON object text, as stored.
    var parameters: [UInt8]?
    /// A point event's time, or a span's start, in Unix milliseconds.
    let timestamp: Int64
    /// Span only.
    let end: Int64?
    let durationNanoseconds: Int64?
    var endParameters: [UInt8]?
    /// A span closed by the SDK (after a crash or its timeout), not by the app.
    var abandoned = false
    /// The transaction it belongs to and the span it was logged under, if any.
    var transaction: UUID? = nil
    var parentSpan: UInt64? = nil
    /// Aggregate only: its rule's window; `parameters` is its folded state, `timestamp` and
    /// `end` the range it covers.
    var windowSeconds: Int64? = nil
    /// The origin of the web page that logged it (``ScriptBridge``), if web content did.
    var webOrigin: String? = nil
}
