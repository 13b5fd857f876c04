import Foundation

/// `span_events`: one row per span, written when the span starts (so a crash leaves evidence)
/// and completed when it ends.
final class SpanEventTable: EventTable {
    let kind = EventKind.span
    private let connection: SQLiteConnection
    private let insertStatement: SQLiteStatement
    private let findStatement: SQLiteStatement
    private let endStatement: SQLiteStatement

    init(connection: SQLiteConnection) throws(StorageError) {
        self.connection = connection
        insertStatement = try connection.prepare("""
            INSERT INTO span_events (uuid, session_id, name, type, parameters, start_ms, start_mono_ns, clock_epoch)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            """)
        findStatement = try connection.prepare("""
            SELECT id, start_ms, start_mono_ns, clock_epoch, end_ms FROM span_events WHERE uuid = ?
            """)
        endStatement = try connection.prepare("""
            UPDATE span_events SET end_ms = ?, duration_ns = ?, end_parameters = ? WHERE id = ?
            """)
    }

    func insert(_ event: EventRecord, sessionRowID: Int64) throws(StorageError) {
        let statement = insertStatement
        event.id.withBytes { statement.bindBlob($0, at: 1) }
        statement.bind(sessionRowID, at: 2)
        statement.bind(event.draft.name, at: 3)
        statement.bind(event.draft.type, at: 4)
        statement.bindText(event.draft.parameters, at: 5)
        statement.bind(event.draft.wallMilliseconds, at: 6)
        statement.bind(Int64(bitPattern: event.draft.monotonicNanoseconds), at: 7)
        statement.bind(processClockEpoch, at: 8)
        try statement.run()
    }

    enum EndOutcome: Equatable {
        case ended
        case unknown
        case alreadyEnded
    }

    /// Completes an open span. Changes nothing if the span is unknown or already ended.
    func end(_ end: SpanEnd) throws(StorageError) -> EndOutcome {
        let find = findStatement
        defer { find.reset() }
        end.id.withBytes { find.bindBlob($0, at: 1) }
        guard try find.step() else { return .unknown }
        guard find.isNull(at: 4) else { return .alreadyEnded }
        let rowID = find.int64(at: 0)
        let startMilliseconds = find.int64(at: 1)
        let startMonotonic = UInt64(bitPattern: find.int64(at: 2))
        let sameClock = find.int64(at: 3) == processClockEpoch && end.monotonicNanoseconds >= startMonotonic
        // The monotonic clock is exact but only comparable within one process; across a restart
        // the wall clock is all there is.
        let duration = sameClock
            ? Int64(clamping: end.monotonicNanoseconds - startMonotonic)
            : max(0, end.wallMilliseconds - startMilliseconds) &* 1_000_000
        find.reset()

        let update = endStatement
        update.bind(end.wallMilliseconds, at: 1)
        update.bind(duration, at: 2)
        update.bindText(end.parameters, at: 3)
        update.bind(rowID, at: 4)
        try update.run()
        return .ended
    }

    func count() throws(StorageError) -> Int {
        Int(try connection.scalarInt("SELECT count(*) FROM span_events"))
    }

    func openCount() throws(StorageError) -> Int {
        Int(try connection.scalarInt("SELECT count(*) FROM span_events WHERE end_ms IS NULL"))
    }
}
