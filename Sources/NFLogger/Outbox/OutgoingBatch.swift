import Foundation

/// A batch on its way to the collector: its rows are marked with the batch in the database, so
/// a retry, even after a crash, sends the same batch id with the same events.
struct OutgoingBatch: Sendable {
    let rowID: Int64
    let id: UUID
    let eventCount: Int
    /// The events, their JSON (for the quarantine of a single refused event, and for an app's
    /// output) and the batch's JSON before compression: empty in a batch kept for its retry
    /// (``retained``).
    let events: [StoredEvent]
    let encoded: EncodedEvents
    let body: [UInt8]
    /// The diagnostic record this batch carries (prune counts, database resets), as JSON.
    let diagnostics: [UInt8]?

    init(rowID: Int64, id: UUID, events: [StoredEvent], body: [UInt8], encoded: EncodedEvents, diagnostics: [UInt8]?) {
        self.rowID = rowID
        self.id = id
        self.eventCount = events.count
        self.events = events
        self.encoded = encoded
        self.body = body
        self.diagnostics = diagnostics
    }

    private init(slimming batch: OutgoingBatch) {
        rowID = batch.rowID
        id = batch.id
        eventCount = batch.eventCount
        let quarantinable = batch.eventCount == 1
        events = quarantinable ? batch.events : []
        encoded = quarantinable ? batch.encoded : EncodedEvents()
        body = []
        diagnostics = batch.diagnostics
    }

    /// What a failed batch keeps beside the compressed bytes it is sent again with: its identity,
    /// its count and its diagnostics, which are all that settling it needs unless it is a single
    /// event the collector may refuse (then the event too). A few hundred bytes, not a batch.
    var retained: OutgoingBatch { OutgoingBatch(slimming: self) }
}

/// A batch's events as JSON objects, one after another in one buffer, and where each ends: what
/// the body's lists copy, written by one writer rather than an array per event.
struct EncodedEvents: Sendable {
    private(set) var bytes: [UInt8] = []
    /// Where each object ends in ``bytes`` (the next begins there).
    private(set) var ends: [Int] = []

    init() {}

    init(bytes: [UInt8], ends: [Int]) {
        self.bytes = bytes
        self.ends = ends
    }

    var count: Int { ends.count }

    subscript(index: Int) -> ArraySlice<UInt8> {
        bytes[(index == 0 ? 0 : ends[index - 1])..<ends[index]]
    }
}

extension OutgoingBatch {
    /// Each event's JSON as an array of its own, in the order of ``events``.
    var encodedEvents: [[UInt8]] { (0..<encoded.count).map { Array(encoded[$0]) } }
}
