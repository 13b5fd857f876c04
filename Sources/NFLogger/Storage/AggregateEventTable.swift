import Foundation
@_spi(NFLogShared) import NFLogSupport

/// `aggregate_events`: one row per aggregate (a name, a window, a series), opened by the first
/// event folded into it, rewritten by every write that folds more, and uploaded like an event
/// once closed (`end_ms` set). The ``Aggregator`` decides what to fold where; this is its SQL.
final class AggregateEventTable: EventTable {
    let kind = RecordKind.aggregate
    let tableName = "aggregate_events"
    let uploadColumns = "e.uuid, e.session_id, e.name, e.type, e.parameters, e.start_ms, e.end_ms, NULL, NULL, 0, NULL, NULL, e.window_s, NULL"
    let timeColumn = "start_ms"
    let readyCondition = "end_ms IS NOT NULL"
    private let connection: SQLiteConnection
    private let cipher: ParameterCipher?
    private let insertStatement: SQLiteStatement
    private let findOpenStatement: SQLiteStatement
    private let lastEndStatement: SQLiteStatement
    private let seriesStatement: SQLiteStatement
    private let updateStatement: SQLiteStatement
    private let closeDueStatement: SQLiteStatement
    private let closeEarlyStatement: SQLiteStatement
    private let nextEndStatement: SQLiteStatement

    /// The `series` of the overflow aggregate: not a JSON object, so no dimension set can be it.
    static let overflowSeries = "*"

    /// How a series (the dimensions' canonical JSON) is kept in the `series` column: as it is,
    /// or, when encryption is configured, as a keyed digest, since dimension values are
    /// parameters and must not reach the file in plaintext.
    func storedSeries(_ canonical: String) -> String {
        guard let cipher, canonical != Self.overflowSeries else { return canonical }
        return cipher.digest(canonical)
    }

    init(connection: SQLiteConnection, cipher: ParameterCipher?) throws(SQLiteError) {
        self.connection = connection
        self.cipher = cipher
        insertStatement = try connection.prepare("""
            INSERT INTO aggregate_events (uuid, session_id, name, type, start_ms, window_ms, window_end_ms, window_s,
                                          series, opened_ms, priority, held)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id
            """)
        findOpenStatement = try connection.prepare("""
            SELECT id, uuid, parameters, opened_ms, window_end_ms FROM aggregate_events
            WHERE name = ? AND window_ms = ? AND series = ? AND held = ? AND end_ms IS NULL ORDER BY id DESC LIMIT 1
            """)
        lastEndStatement = try connection.prepare("""
            SELECT max(end_ms) FROM aggregate_events WHERE name = ? AND window_ms = ? AND series = ? AND end_ms IS NOT NULL
            """)
        seriesStatement = try connection.prepare("""
            SELECT DISTINCT series FROM aggregate_events WHERE name = ? AND window_ms = ? AND series <> '\(Self.overflowSeries)'
            """)
        updateStatement = try connection.prepare("UPDATE aggregate_events SET parameters = ?, count = ? WHERE id = ?")
        closeDueStatement = try connection.prepare("""
            UPDATE aggregate_events SET end_ms = window_end_ms WHERE end_ms IS NULL AND window_end_ms <= ?
            """)
        closeEarlyStatement = try connection.prepare("""
            UPDATE aggregate_events SET end_ms = max(start_ms, min(?1, window_end_ms))
            WHERE end_ms IS NULL AND opened_ms <= ?1 - ?2
            """)
        nextEndStatement = try connection.prepare("SELECT min(window_end_ms) FROM aggregate_events WHERE end_ms IS NULL")
    }

    /// Where a series of one name and window stands in the table.
    struct SeriesKey: Hashable, Sendable {
        let name: String
        let windowStart: Int64
        let series: String
        let held: Bool
    }

    /// An aggregate as the table keeps it while open.
    struct OpenRow {
        let rowID: Int64
        let id: UUID
        let openedAt: Int64
        let windowEnd: Int64
        var state: AggregateState
    }

    /// The open aggregate of a series, if the table has one. A state that no longer decodes (the
    /// file was altered) is not folded into: the row is closed as it is, and a new one opens.
    func findOpen(_ key: SeriesKey, now: Int64) throws(SQLiteError) -> OpenRow? {
        let statement = findOpenStatement
        defer { statement.reset() }
        try statement.bind(key.name, at: 1)
        try statement.bind(key.windowStart, at: 2)
        try statement.bind(key.series, at: 3)
        try statement.bind(Int64(key.held ? 1 : 0), at: 4)
        guard try statement.step() else { return nil }
        let (rowID, id, stored) = (statement.int64(at: 0), statement.uuid(at: 1), statement.blob(at: 2))
        let (openedAt, windowEnd) = (statement.int64(at: 3), statement.int64(at: 4))
        statement.reset()
        if let stored, let state = decode(stored, id: id) {
            return OpenRow(rowID: rowID, id: id, openedAt: openedAt, windowEnd: windowEnd, state: state)
        }
        try connection.execute("UPDATE aggregate_events SET end_ms = max(start_ms, \(now)) WHERE id = \(rowID)")
        return nil
    }

    private func decode(_ stored: [UInt8], id: UUID) -> AggregateState? {
        var json = stored
        if let cipher {
            guard let opened = try? cipher.open(stored, id: id, slot: .parameters) else { return nil }
            json = opened
        }
        return try? JSONDecoder().decode(AggregateState.self, from: Data(json))
    }

    /// When the last closed aggregate of a series in this window ended (it was closed early):
    /// the next one starts there.
    func lastEnd(_ key: SeriesKey) throws(SQLiteError) -> Int64? {
        let statement = lastEndStatement
        try statement.bind(key.name, at: 1)
        try statement.bind(key.windowStart, at: 2)
        try statement.bind(key.series, at: 3)
        return try statement.collect { $0.isNull(at: 0) ? nil : $0.int64(at: 0) }.first ?? nil
    }

    /// The distinct series (overflow aside) stored for a name and window.
    func series(name: String, windowStart: Int64) throws(SQLiteError) -> Set<String> {
        let statement = seriesStatement
        try statement.bind(name, at: 1)
        try statement.bind(windowStart, at: 2)
        return Set(try statement.collect { $0.text(at: 0) ?? "" })
    }

    struct NewRow {
        let id: UUID
        let sessionRowID: Int64
        let name: String
        let type: String
        let start: Int64
        let windowStart: Int64
        let windowEnd: Int64
        let windowSeconds: Int64
        let series: String
        let openedAt: Int64
        let priority: Int
        let held: Bool
    }

    /// Opens an aggregate; its state is written by ``write(_:count:rowID:id:)`` in the same transaction.
    func insert(_ row: NewRow) throws(SQLiteError) -> Int64 {
        let statement = insertStatement
        try statement.bind(row.id, at: 1)
        try statement.bind(row.sessionRowID, at: 2)
        try statement.bind(row.name, at: 3)
        try statement.bind(row.type, at: 4)
        try statement.bind(row.start, at: 5)
        try statement.bind(row.windowStart, at: 6)
        try statement.bind(row.windowEnd, at: 7)
        try statement.bind(row.windowSeconds, at: 8)
        try statement.bind(row.series, at: 9)
        try statement.bind(row.openedAt, at: 10)
        try statement.bind(Int64(row.priority), at: 11)
        try statement.bind(Int64(row.held ? 1 : 0), at: 12)
        guard let rowID = try statement.collect({ $0.int64(at: 0) }).first else {
            throw SQLiteError(code: 1, message: "opening an aggregate returned no row id")
        }
        return rowID
    }

    /// Writes an aggregate's state (sealed when encryption is configured).
    func write(_ state: AggregateState, rowID: Int64, id: UUID) throws(SQLiteError) {
        let json: Data
        do { json = try Self.encoder.encode(state) } catch {
            throw SQLiteError(code: 1, message: "an aggregate's state could not be encoded: \(error)")
        }
        let statement = updateStatement
        try statement.bindParameters(Array(json), id: id, slot: .parameters, cipher: cipher, at: 1)
        try statement.bind(Int64(clamping: state.count), at: 2)
        try statement.bind(rowID, at: 3)
        try statement.run()
    }

    /// Sorted keys: the same state is the same bytes.
    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return encoder
    }()

    /// Closes every aggregate whose window has ended by `now`. Returns how many.
    func closeDue(now: Int64) throws(SQLiteError) -> Int {
        try closeDueStatement.bind(now, at: 1)
        try closeDueStatement.run()
        return closeDueStatement.changes
    }

    /// Closes, ending now, every aggregate open for at least `minimumOpen` milliseconds.
    /// Returns how many.
    func closeEarly(now: Int64, minimumOpen: Int64) throws(SQLiteError) -> Int {
        try closeEarlyStatement.bind(now, at: 1)
        try closeEarlyStatement.bind(minimumOpen, at: 2)
        try closeEarlyStatement.run()
        return closeEarlyStatement.changes
    }

    /// When the next open aggregate closes by time, if any is open.
    func nextWindowEnd() throws(SQLiteError) -> Int64? {
        try nextEndStatement.collect { $0.isNull(at: 0) ? nil : $0.int64(at: 0) }.first ?? nil
    }

    func count() throws(SQLiteError) -> Int {
        Int(try connection.scalarInt("SELECT count(*) FROM aggregate_events"))
    }

    /// Events folded into the aggregates stored now.
    func foldedEvents() throws(SQLiteError) -> Int {
        Int(try connection.scalarInt("SELECT coalesce(sum(count), 0) FROM aggregate_events"))
    }
}
