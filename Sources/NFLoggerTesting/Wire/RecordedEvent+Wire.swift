import Foundation
import NFLogger

extension RecordedEvent {
    /// An event object of a batch, or a line of the collector's export (which carries the same
    /// fields, and a few more).
    @_spi(NFLogShared) public init(wire: WireObject) throws(WireFormatError) {
        id = try wire.uuid("uuid")
        sessionID = try wire.uuid("session")
        name = try wire.string("name")
        let kindName = try wire.string("kind")
        guard let kind = Kind(rawValue: kindName) else {
            throw WireFormatError(path: wire.path(of: "kind"), "must be \"point\" or \"span\", not \"\(kindName)\"")
        }
        self.kind = kind
        type = try wire.string("type")
        timestamp = try wire.date("timestamp")
        parameters = try wire.parameters("parameters")
        switch kind {
        case .point:
            end = nil
            duration = nil
        case .span:
            end = try wire.date("end")
            duration = try wire.number("duration_ms") / 1_000
        }
        endParameters = try wire.parameters("end_parameters")
        isAbandoned = try wire.optionalBool("abandoned") ?? false
        transactionID = wire.contains("transaction") ? try wire.uuid("transaction") : nil
        webOrigin = wire.contains("origin") ? try wire.string("origin") : nil
        if wire.contains("parent_span") {
            let text = try wire.string("parent_span")
            guard text.utf8.count == 16, let span = UInt64(text, radix: 16) else {
                throw WireFormatError(path: wire.path(of: "parent_span"), "must be 16 hex digits")
            }
            parentSpanID = span
        } else {
            parentSpanID = nil
        }
    }
}
