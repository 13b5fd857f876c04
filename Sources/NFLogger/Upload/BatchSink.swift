import Foundation
@_spi(NFLogShared) import NFLogSupport

/// Where one ``Uploader``'s batches go: a collector over HTTP, or an app's ``DurableOutput``.
/// A sink answers in the collector's terms (a ``TransportResponse``, read by ``UploadVerdict``),
/// so one state machine batches, backs off, splits and quarantines for every durable output.
protocol BatchSink: Sendable {
    /// Whether the batch travels gzip-compressed; a failed batch's compressed body is then kept
    /// and sent again as it was, without reading its events again.
    var sendsCompressedBody: Bool { get }
    /// Sends `batch` (its compressed `body` when ``sendsCompressedBody``). Throws for a failure
    /// that may pass (the network); answers for everything else.
    func send(_ batch: OutgoingBatch, body: Data) async throws -> TransportResponse
}

/// A collector's `POST /v1/events` through the logger's transport.
struct CollectorSink: BatchSink {
    let transport: any HTTPTransport
    let url: URL
    let appKey: String

    var sendsCompressedBody: Bool { true }

    func send(_ batch: OutgoingBatch, body: Data) async throws -> TransportResponse {
        try await transport.send(TransportRequest(url: url, method: "POST", headers: [
            "Content-Type": "application/json",
            "Content-Encoding": "gzip",
            WireProtocol.appKeyHeader: appKey,
            "User-Agent": "\(NFLogger.sdkName)/\(NFLogger.sdkVersion)",
        ], body: body))
    }
}

/// An app's ``DurableOutput``: handed the batch's events and JSON. Returning is a delivery (200);
/// an ``OutputRefusal`` refuses the batch as a collector refuses an event (422 on `events[0]`:
/// split, and a single event quarantined with the reason); anything else thrown is retried.
struct DurableOutputSink: BatchSink {
    let output: any DurableOutput

    var sendsCompressedBody: Bool { false }

    func send(_ batch: OutgoingBatch, body: Data) async throws -> TransportResponse {
        var events: [OutputEvent] = []
        events.reserveCapacity(batch.events.count)
        for (event, json) in zip(batch.events, batch.encodedEvents) {
            events.append(OutputEvent(event, json: json))
        }
        do {
            try await output.deliver(OutputBatch(id: batch.id, events: events, json: Data(batch.body)))
        } catch let refusal as OutputRefusal {
            let error: [String: Any] = ["error": ["message": refusal.reason, "path": "events[0]"]]
            return TransportResponse(status: 422, body: (try? JSONSerialization.data(withJSONObject: error)) ?? Data())
        }
        return TransportResponse(status: 200)
    }
}

extension OutputEvent {
    /// A stored event as an output receives it, with its wire JSON.
    init(_ event: StoredEvent, json: [UInt8]) {
        self.init(id: event.id, kind: Kind(event.kind), name: event.name, type: event.type,
                  timestamp: Date(timeIntervalSince1970: Double(event.timestamp) / 1_000),
                  json: String(decoding: json, as: UTF8.self))
    }
}

extension OutputEvent.Kind {
    init(_ kind: RecordKind) {
        switch kind {
        case .point: self = .point
        case .span: self = .span
        case .aggregate: self = .aggregate
        }
    }
}
