public import Foundation
import NFLogCollector
@_spi(NFLogShared) public import NFLoggerTesting

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
    /// The event itself (with its `transactionID` and `parentSpanID`).
    public let event: RecordedEvent
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
    }
}
