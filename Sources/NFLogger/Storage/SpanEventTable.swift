import Foundation
@_spi(NFLogShared) import NFLogSupport

/// `span_events`: one row per span, written when the span starts (so a crash leaves evidence)
/// and completed when it ends.
final class SpanEventTable: EventTable {
    let kind = RecordKind.span
    let tableName = "span_events"
    let uploadColumns = "e.uuid, e.session_id, e.name, e.type, e.parameters, e.start_ms, e.end_ms, e.duration_ns, e.end_parameters, e.abandoned, e.transaction_id, e.parent_span, NULL, e.web_origin"
    let timeColumn = "start_ms"
    let readyCondition = "end_ms IS NOT NULL"
    private let connection: SQLiteConnection
    private let insertStatement: SQLiteStatement
    private let findStatement: SQLiteStatement
    private let endStatement: SQLiteStatement
    private let cipher: ParameterCipher?

    init(connection: SQLiteConnection, cipher: ParameterCipher?) throws(SQLiteError) {
        self.connection = connection
        self.cipher = cipher
        insertStatement = try connection.prepare("""
            INSERT INTO span_events (uuid, session_id, name, type, parameters, start_ms, start_mono_ns, clock_epoch, priority, held,
                                     transaction_id, parent_span, web_origin)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """)
        findStatement = try connection.prepare("""
            SELECT id, start_ms, start_mono_ns, clock_epoch, end_ms, name, type, session_id, parameters, held
            FROM span_events WHERE uuid = ?
            """)
        endStatement = try connection.prepare("""
            UPDATE span_events SET end_ms = ?, duration_ns = ?, end_parameters = ?, held = max(held, ?) WHERE id = ?
            """)
    }

    func insert(_ event: EventRecord, sessionRowID: Int64, priority: Int) throws(SQLiteError) {
        let statement = insertStatement
        try statement.bindCommonColumns(of: event, sessionRowID: sessionRowID, cipher: cipher)
        try statement.bind(Int64(bitPattern: event.draft.monotonicNanoseconds), at: 7)
        try statement.bind(processClockEpoch, at: 8)
        try statement.bind(Int64(priority), at: 9)
        try statement.bind(Int64(event.held ? 1 : 0), at: 10)
        try statement.bindTransaction(of: event, at: 11)
        try statement.run()
    }

    enum EndOutcome: Equatable {
        case ended
        case unknown
        case alreadyEnded
    }

    /// A span's row as its end finds it.
    struct OpenSpan {
        let rowID: Int64
        let name: String
        let type: String
        let sessionRowID: Int64
        let startMilliseconds: Int64
        /// The start's parameters as stored (sealed when encryption is configured).
        let parameters: [UInt8]?
        let held: Bool
        /// How long it ran until `end`: by the monotonic clock within one process, by the wall
        /// clock across a restart.
        let duration: Int64
    }

    /// The open span `end` ends, if it is stored and still open.
    func find(_ end: SpanEnd) throws(SQLiteError) -> Result<OpenSpan, EndFailure> {
        let find = findStatement
        defer { find.reset() }
        try find.bind(end.id, at: 1)
        guard try find.step() else { return .failure(.unknown) }
        guard find.isNull(at: 4) else { return .failure(.alreadyEnded) }
        let startMilliseconds = find.int64(at: 1)
        let startMonotonic = UInt64(bitPattern: find.int64(at: 2))
        let sameClock = find.int64(at: 3) == processClockEpoch && end.monotonicNanoseconds >= startMonotonic
        // The monotonic clock is exact but only comparable within one process; across a restart
        // the wall clock is all there is.
        let duration: Int64
        if sameClock {
            duration = Int64(clamping: end.monotonicNanoseconds - startMonotonic)
        } else {
            // Values read back from the file are not trusted to be sane: saturate, never trap.
            let (elapsed, overflow) = end.wallMilliseconds.subtractingReportingOverflow(startMilliseconds)
            let (nanoseconds, overflow2) = max(0, elapsed).multipliedReportingOverflow(by: 1_000_000)
            duration = overflow || overflow2 ? (elapsed < 0 ? 0 : .max) : nanoseconds
        }
        return .success(OpenSpan(rowID: find.int64(at: 0), name: find.text(at: 5) ?? "", type: find.text(at: 6) ?? "",
                                 sessionRowID: find.int64(at: 7), startMilliseconds: startMilliseconds,
                                 parameters: find.blob(at: 8), held: find.int64(at: 9) != 0, duration: duration))
    }

    enum EndFailure: Error {
        case unknown
        case alreadyEnded
    }

    /// Opens a span's stored parameters (they may be sealed).
    func openParameters(_ stored: [UInt8]?, id: UUID, slot: ParameterCipher.Slot) throws(CipherError) -> [UInt8]? {
        guard let stored, let cipher else { return stored }
        return try cipher.open(stored, id: id, slot: slot)
    }

    /// Completes an open span. Changes nothing if the span is unknown or already ended.
    /// Ends the span; `held` holds its row back from upload (an end logged while consent is pending).
    func end(_ end: SpanEnd, held: Bool = false) throws(SQLiteError) -> EndOutcome {
        let span: OpenSpan
        switch try find(end) {
        case .success(let found): span = found
        case .failure(.unknown): return .unknown
        case .failure(.alreadyEnded): return .alreadyEnded
        }
        let rowID = span.rowID
        let duration = span.duration

        let update = endStatement
        try update.bind(end.wallMilliseconds, at: 1)
        try update.bind(duration, at: 2)
        try update.bindParameters(end.parameters, id: end.id, slot: .endParameters, cipher: cipher, at: 3)
        try update.bind(Int64(held ? 1 : 0), at: 4)
        try update.bind(rowID, at: 5)
        try update.run()
        return .ended
    }

    func count() throws(SQLiteError) -> Int {
        Int(try connection.scalarInt("SELECT count(*) FROM span_events"))
    }

    func openCount() throws(SQLiteError) -> Int {
        Int(try connection.scalarInt("SELECT count(*) FROM span_events WHERE end_ms IS NULL"))
    }
}
