public import Foundation
public import NFLogCollector
public import NFLoggerTesting

/// An event the collector stored, as it exports it (`docs/PROTOCOL.md`, "Export format"): the
/// event as the SDK sent it, typed as the recording transport types it, and where and when the
/// collector stored it.
public struct ExportedEvent: Sendable, Hashable {
    /// The app whose key uploaded it.
    public let app: String
    /// The batch it arrived in (the first, if it was sent more than once).
    public let batchID: UUID
    /// When the collector stored it (its clock, to the millisecond).
    public let receivedAt: Date
    /// The standard properties of the app instance that sent it.
    public let context: RecordedContext
    /// The event itself.
    public let event: RecordedEvent
    /// The transaction the event belongs to (`transaction` on the wire), if it carried one.
    /// Here rather than on ``event`` because `RecordedEvent` does not carry it yet.
    public let transaction: UUID?
    /// The span the event was logged under (`parent_span` on the wire), if it carried one.
    public let parentSpan: SpanID?
}

extension ExportedEvent {
    /// One line of the export.
    init(line: [UInt8]) throws(WireFormatError) {
        let wire = try WireObject(json: line)
        app = try wire.string("app")
        batchID = try wire.uuid("batch_id")
        receivedAt = try wire.date("received_at")
        let context = try wire.object("context")
        self.context = try RecordedContext(wire: context, sdkName: context.string("sdk_name"),
                                           sdkVersion: context.string("sdk_version"))
        event = try RecordedEvent(wire: wire)
        transaction = wire.contains("transaction") ? try wire.uuid("transaction") : nil
        if wire.contains("parent_span") {
            guard let parent = SpanID(hex: try wire.string("parent_span")) else {
                throw WireFormatError(path: wire.path(of: "parent_span"), "must be 16 lowercase hex digits, not all zeros")
            }
            parentSpan = parent
        } else {
            parentSpan = nil
        }
    }
}
