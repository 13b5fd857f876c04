import Foundation

/// A batch on its way to the collector: its rows are marked with the batch in the database, so
/// a retry, even after a crash, sends the same batch id with the same events.
struct OutgoingBatch: Sendable {
    let rowID: Int64
    let id: UUID
    let eventCount: Int
    /// The events, their JSON each (for the quarantine of a single refused event) and the
    /// batch's JSON before compression: empty in a batch kept for its retry (``retained``).
    let events: [StoredEvent]
    let encodedEvents: [[UInt8]]
    let body: [UInt8]
    /// The diagnostic record this batch carries (prune counts, database resets), as JSON.
    let diagnostics: [UInt8]?

    init(rowID: Int64, id: UUID, events: [StoredEvent], body: [UInt8], encodedEvents: [[UInt8]], diagnostics: [UInt8]?) {
        self.rowID = rowID
        self.id = id
        self.eventCount = events.count
        self.events = events
        self.encodedEvents = encodedEvents
        self.body = body
        self.diagnostics = diagnostics
    }

    private init(slimming batch: OutgoingBatch) {
        rowID = batch.rowID
        id = batch.id
        eventCount = batch.eventCount
        let quarantinable = batch.eventCount == 1
        events = quarantinable ? batch.events : []
        encodedEvents = quarantinable ? batch.encodedEvents : []
        body = []
        diagnostics = batch.diagnostics
    }

    /// What a failed batch keeps beside the compressed bytes it is sent again with: its identity,
    /// its count and its diagnostics, which are all that settling it needs unless it is a single
    /// event the collector may refuse (then the event too). A few hundred bytes, not a batch.
    var retained: OutgoingBatch { OutgoingBatch(slimming: self) }
}
