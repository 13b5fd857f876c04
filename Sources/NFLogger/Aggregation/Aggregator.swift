import Foundation
@_spi(NFLogShared) import NFLogSupport

/// Folds events into aggregates inside the writer's transaction, and closes aggregates when
/// their windows end (or early, at a flush, a suspend or a close).
///
/// The database is the truth: every write that folds rewrites the touched aggregates' rows
/// before it commits, so a completion that says an event was folded survives a kill. What this
/// keeps in memory (the open aggregates' states, the series seen per window) is a cache of the
/// committed rows plus this transaction's changes, thrown away whenever a transaction fails
/// (``forget()``) and read back from the rows when next needed.
///
/// Used only on the RequestManager's queue; each entry point checks it (``QueueOwner``, debug builds).
final class Aggregator {
    typealias SeriesKey = AggregateEventTable.SeriesKey

    /// The policy's `rules.aggregate` in force (set on the queue when a policy applies).
    var rules: [AggregateRule] = []
    /// The shortest an aggregate stays open before a flush, a suspend or a close may end it.
    static let minimumOpenMilliseconds: Int64 = 1_000

    private let owner: QueueOwner
    private let limitEnforcer: LimitEnforcer
    private var open: [SeriesKey: AggregateEventTable.OpenRow] = [:]
    private var dirty: Set<SeriesKey> = []
    private struct WindowKey: Hashable { let name: String; let windowStart: Int64 }
    /// Per name and window: its window's end, and the series that have an aggregate in it.
    private var seriesSeen: [WindowKey: (end: Int64, series: Set<String>)] = [:]
    /// Where an aggregate closed early ended, per series: the next one of its window starts there.
    private var earlyEnds: [SeriesKey: (windowEnd: Int64, at: Int64)] = [:]
    /// The earliest time an open aggregate closes by time, once known (`nil`: none is open).
    private var nextClose: Int64?
    private var nextCloseKnown = false
    private var uncommittedOverflow = 0
    private var uncommittedClosed = 0
    /// Events folded into an overflow series because a window had `max_series` already (committed).
    private(set) var overflowEvents = 0
    /// Aggregates closed and not yet announced to the uploader (committed).
    private var closedSinceTaken = 0
    /// SQLite's `data_version` when this cache was last known to match the file: another
    /// process's commit (an app extension sharing the database) changes it.
    private var dataVersion: Int64?

    init(owner: QueueOwner, limitEnforcer: LimitEnforcer) {
        self.owner = owner
        self.limitEnforcer = limitEnforcer
    }

    /// Called first in every transaction that may fold or close: if another connection committed
    /// since this cache was filled, it may have folded into or closed the same rows, so the
    /// cache is dropped and read again from them.
    func beginTransaction(_ db: OpenDatabase) throws(SQLiteError) {
        owner.check()
        guard !rules.isEmpty || !open.isEmpty || nextCloseKnown else { return }
        let version = try db.connection.scalarInt("PRAGMA data_version")
        if version != dataVersion {
            open = [:]
            seriesSeen = [:]
            nextCloseKnown = false
            dataVersion = version
        }
    }

    /// Folds one event; the caller owns the transaction. Returns the aggregate's id.
    /// - Parameter route: the durable outputs an aggregate of this name goes to, when they are
    ///   routed by pattern (a new aggregate is owed to them).
    func fold(_ fold: Fold, held: Bool, sessionRowID: Int64, priority: Int, route: OutputRouter.Route? = nil, now: Int64,
              db: OpenDatabase) throws(SQLiteError) -> UUID {
        owner.check()
        let table = db.tables.aggregates
        let windowMilliseconds = Int64(fold.rule.window * 1_000)
        let windowStart = Self.floor(fold.wallMilliseconds, to: windowMilliseconds)
        let windowEnd = windowStart &+ windowMilliseconds
        let window = WindowKey(name: fold.name, windowStart: windowStart)
        if seriesSeen[window] == nil {
            seriesSeen[window] = (windowEnd, try table.series(name: fold.name, windowStart: windowStart))
        }
        var series = table.storedSeries(Self.seriesKey(fold.dimensions))
        if seriesSeen[window]?.series.contains(series) == false {
            if (seriesSeen[window]?.series.count ?? 0) >= fold.rule.maxSeries {
                series = AggregateEventTable.overflowSeries
            } else {
                seriesSeen[window]?.series.insert(series)
            }
        }
        let overflow = series == AggregateEventTable.overflowSeries
        if overflow { uncommittedOverflow += 1 }
        let key = SeriesKey(name: fold.name, windowStart: windowStart, series: series, held: held)
        if open[key] == nil, let row = try table.findOpen(key, now: now) { open[key] = row }
        if open[key] == nil {
            let earlier = max(try table.lastEnd(key) ?? windowStart, earlyEnds[key]?.at ?? windowStart)
            let id = Self.makeID()
            let rowID = try table.insert(.init(
                id: id, sessionRowID: sessionRowID, name: fold.name, type: fold.type,
                start: min(max(windowStart, earlier), windowEnd), windowStart: windowStart, windowEnd: windowEnd,
                windowSeconds: windowMilliseconds / 1_000, series: series, openedAt: fold.wallMilliseconds,
                priority: priority, held: held))
            if let route { try db.deliveries.route(kind: .aggregate, row: rowID, collector: route.collector, outputs: route.outputs) }
            limitEnforcer.countInserted()
            open[key] = .init(rowID: rowID, id: id, openedAt: fold.wallMilliseconds, windowEnd: windowEnd,
                              state: AggregateState(dimensions: overflow ? [:] : fold.dimensions, overflow: overflow))
            if nextCloseKnown { nextClose = min(nextClose ?? windowEnd, windowEnd) }
        }
        open[key]?.state.add(fold)
        dirty.insert(key)
        return open[key]?.id ?? UUID()
    }

    /// Writes the state of every aggregate this transaction folded into; the caller commits.
    func persist(_ db: OpenDatabase) throws(SQLiteError) {
        owner.check()
        for key in dirty {
            guard let row = open[key] else { continue }
            try db.tables.aggregates.write(row.state, rowID: row.rowID, id: row.id)
        }
    }

    /// Closes the aggregates whose windows have ended; the caller owns the transaction.
    func closeDue(now: Int64, db: OpenDatabase) throws(SQLiteError) {
        owner.check()
        if !nextCloseKnown {
            nextClose = try db.tables.aggregates.nextWindowEnd()
            nextCloseKnown = true
        }
        guard let due = nextClose, due <= now else { return }
        uncommittedClosed += try db.tables.aggregates.closeDue(now: now)
        open = open.filter { $0.value.windowEnd > now }
        seriesSeen = seriesSeen.filter { $0.value.end > now }
        earlyEnds = earlyEnds.filter { $0.value.windowEnd > now }
        nextClose = try db.tables.aggregates.nextWindowEnd()
    }

    /// Closes, ending now, every aggregate open for at least ``minimumOpenMilliseconds`` (a flush,
    /// a suspend or a close); the caller owns the transaction.
    func closeEarly(now: Int64, db: OpenDatabase) throws(SQLiteError) {
        owner.check()
        try closeDue(now: now, db: db)
        let closed = try db.tables.aggregates.closeEarly(now: now, minimumOpen: Self.minimumOpenMilliseconds)
        guard closed > 0 else { return }
        uncommittedClosed += closed
        for (key, row) in open where row.openedAt <= now &- Self.minimumOpenMilliseconds {
            earlyEnds[key] = (row.windowEnd, now)
            open[key] = nil
        }
        nextCloseKnown = false
    }

    /// The transaction committed: what it did is now the truth.
    func committed() {
        owner.check()
        dirty = []
        overflowEvents += uncommittedOverflow
        closedSinceTaken += uncommittedClosed
        (uncommittedOverflow, uncommittedClosed) = (0, 0)
    }

    /// A transaction failed, or the connection was dropped: the cache may hold what was rolled
    /// back. Everything is read again from the rows when next needed.
    func forget() {
        owner.check()
        dataVersion = nil
        open = [:]
        dirty = []
        seriesSeen = [:]
        nextCloseKnown = false
        (uncommittedOverflow, uncommittedClosed) = (0, 0)
    }

    /// Writes this transaction's folds and empties the cache, keeping the transaction's counts:
    /// for a change that rewrites rows under it (consent releasing or deleting held aggregates).
    func reload(_ db: OpenDatabase) throws(SQLiteError) {
        owner.check()
        try persist(db)
        open = [:]
        dirty = []
        seriesSeen = [:]
        nextCloseKnown = false
    }

    /// Aggregates closed since the last call, to tell the uploader there is something to send.
    func takeClosed() -> Int {
        owner.check()
        defer { closedSinceTaken = 0 }
        return closedSinceTaken
    }

    /// When the next open aggregate closes by time, as far as this process knows.
    var nextWindowEnd: Int64? { nextCloseKnown ? nextClose : nil }

    // MARK: Helpers

    /// ⌊t / w⌋·w, also for times before 1970.
    static func floor(_ milliseconds: Int64, to window: Int64) -> Int64 {
        let quotient = milliseconds / window
        return (milliseconds % window < 0 ? quotient - 1 : quotient) &* window
    }

    /// The dimensions as canonical JSON (sorted keys): the same set is always the same text.
    static func seriesKey(_ dimensions: [String: String]) -> String {
        var out = JSONWriter(capacity: 16 + dimensions.count * 24, maxBytes: .max)
        out.writeLiteral("{")
        for (index, key) in dimensions.keys.sorted().enumerated() {
            if index > 0 { out.writeLiteral(",") }
            out.writeString(key); out.writeLiteral(":"); out.writeString(dimensions[key] ?? "")
        }
        out.writeLiteral("}")
        return String(decoding: out.bytes, as: UTF8.self)
    }

    /// A UUIDv8 (RFC 9562, custom): 122 random bits. Event ids are UUIDv7, so an app can tell a
    /// status that names an aggregate (``LogStatus/isAggregated``) from one that names an event.
    static func makeID() -> UUID {
        var generator = SystemRandomNumberGenerator()
        var bytes = (0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) }
        bytes[6] = 0x80 | (bytes[6] & 0x0F)
        bytes[8] = 0x80 | (bytes[8] & 0x3F)
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }
}
