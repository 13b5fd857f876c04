import Foundation
@_spi(NFLogShared) import NFLogSupport

/// The rolling database: keeps the event tables within a row count, a byte size (database plus
/// write-ahead log) and an age, dropping the oldest events first (lowest priority first when the
/// policy sets priorities). What it drops is counted by event name in `pruned_counts`, in the same
/// transaction as the delete, and those counts travel to the collector with the next batch: a
/// drop is never silent.
///
/// An event is one row however many outputs still want it, so it counts once against the
/// limits; what is dropped is also counted per output that was still owed it (``Outcome/byOutput``).
///
/// It never drops an event that is in a batch on its way to an output, nor a span still
/// open (its end would then fail); open spans leave only as abandoned spans. An aggregate is one
/// row for the limits, and once closed it can be dropped like an event; its pruned count is the
/// events folded into it.
///
/// Used only on the RequestManager's queue, inside transactions its owner opens.
final class Pruner {
    private let connection: SQLiteConnection
    private let path: String
    private let countRows: SQLiteStatement
    private let addCount: SQLiteStatement
    private let addTotal: SQLiteStatement
    private let countInBatches: SQLiteStatement
    private let pageCount: SQLiteStatement
    private let freePages: SQLiteStatement
    private let pageSize: Int64
    /// The other durable outputs by number, to report what they lose.
    private let outputIDs: [Int64: String]
    /// Whether `deliveries` is in use: rows in another output's batch are kept, and its rows are
    /// forgotten with the records.
    private let tracksOthers: Bool

    init(connection: SQLiteConnection, path: String, outputs: [String: Int64] = [:], tracksOthers: Bool = false) throws(SQLiteError) {
        self.connection = connection
        self.path = path
        self.outputIDs = Dictionary(outputs.map { ($0.value, $0.key) }, uniquingKeysWith: { first, _ in first })
        self.tracksOthers = tracksOthers
        countRows = try connection.prepare("""
            SELECT (SELECT count(*) FROM point_events) + (SELECT count(*) FROM span_events) + (SELECT count(*) FROM aggregate_events)
            """)
        addCount = try connection.prepare("""
            INSERT INTO pruned_counts (name, count) VALUES (?, ?)
            ON CONFLICT (name) DO UPDATE SET count = count + excluded.count
            """)
        // The pruner's own record of every row it deleted, never reset (pruned_counts is emptied
        // into each batch): what the device really dropped, to audit the collector's counts.
        addTotal = try connection.prepare("""
            INSERT INTO pruned_totals (name, count) VALUES (?, ?)
            ON CONFLICT (name) DO UPDATE SET count = count + excluded.count
            """)
        // The collector's batches' rows by each batch's recorded ranges (BatchRange), batch by batch.
        let inCollectorBatches = Self.tables.map { kind, table in
            """
            (SELECT count(*) FROM upload_batches b CROSS JOIN \(table.name) e
             WHERE b.output = 0 AND \(BatchRange.rows(of: kind, inBatch: "b.id", alias: "e.")))
            """
        }
        countInBatches = try connection.prepare("""
            SELECT \(inCollectorBatches.joined(separator: " + "))
                 + (SELECT count(*) FROM deliveries WHERE batch IS NOT NULL)
            """)
        pageCount = try connection.prepare("PRAGMA page_count")
        freePages = try connection.prepare("PRAGMA freelist_count")
        pageSize = try connection.scalarInt("PRAGMA page_size")
    }

    /// How many rows the tables hold (events, and aggregates as one row each).
    func storedEvents() throws(SQLiteError) -> Int {
        Int(try countRows.collect { $0.int64(at: 0) }.first ?? 0)
    }

    /// A table the limits apply to: its time column, what makes a row droppable besides not
    /// being in a batch, and how many events a row stands for.
    private struct PrunedTable {
        let name: String
        let time: String
        let droppable: String
        /// The column that says how many events a row stands for, if not one.
        var eventsColumn: String? = nil

        var events: String { events(of: nil) }

        /// The aggregate that counts the events of the selected rows (`alias` qualifies the column).
        func events(of alias: String?) -> String {
            guard let eventsColumn else { return "count(*)" }
            return "sum(\(alias.map { $0 + "." } ?? "")\(eventsColumn))"
        }
    }

    private static let tables: [(RecordKind, PrunedTable)] = [
        (.point, PrunedTable(name: "point_events", time: "timestamp_ms", droppable: "1")),
        (.span, PrunedTable(name: "span_events", time: "start_ms", droppable: "end_ms IS NOT NULL")),
        (.aggregate, PrunedTable(name: "aggregate_events", time: "start_ms", droppable: "end_ms IS NOT NULL", eventsColumn: "count")),
    ]

    /// Bytes of the database file plus its write-ahead log, and the part of the file in use.
    func bytes() throws(SQLiteError) -> (total: Int64, used: Int64) {
        let pages = try pageCount.collect { $0.int64(at: 0) }.first ?? 0
        let free = try freePages.collect { $0.int64(at: 0) }.first ?? 0
        let wal = (try? FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int64) ?? 0
        return (pages * pageSize + wal, (pages - free) * pageSize)
    }

    struct Outcome: Equatable {
        var droppedByAge = 0
        var droppedForRows = 0
        var droppedForBytes = 0
        /// Events dropped before an output had them, by output id (one event may count for several).
        var byOutput: [String: Int] = [:]
        var total: Int { droppedByAge + droppedForRows + droppedForBytes }
    }

    /// Events in formed upload batches (on the network, or waiting to be sent again): they are
    /// neither dropped nor counted against the row limit until an answer settles their batch.
    /// Few batches per output are formed at a time (a waiting batch goes again before a new one
    /// is formed, and after `2 × maxConcurrentUploads + 1` failures in a row every batch waits),
    /// so this keeps a bounded number of rows beyond the limit.
    func eventsInBatches() throws(SQLiteError) -> Int {
        // Another output's batch is counted by its deliveries: an event in two batches counts
        // twice, which only ever keeps more.
        Int(try countInBatches.collect { $0.int64(at: 0) }.first ?? 0)
    }

    /// Drops what the limits require: events older than `ageCutoff` (if given: it costs a scan),
    /// then the oldest beyond the row and byte limits. `storedEvents` is the exact count, kept
    /// up to date; the events `inBatches` do not count against the row limit.
    func enforce(_ limits: StorageLimits, ageCutoff: Int64?, inBatches: Int = 0, storedEvents: inout Int) throws(SQLiteError) -> Outcome {
        var outcome = Outcome()
        if let cutoff = ageCutoff {
            outcome.droppedByAge = try dropOlder(than: cutoff, counting: &outcome.byOutput)
            storedEvents -= outcome.droppedByAge
        }

        if storedEvents - inBatches > limits.maxRows {
            outcome.droppedForRows = try dropOldest(storedEvents - inBatches - limits.maxRows, prioritised: !limits.priorities.isEmpty,
                                                    counting: &outcome.byOutput)
            storedEvents -= outcome.droppedForRows
        }

        let (total, used) = try bytes()
        if total > Int64(limits.maxBytes) && storedEvents > 0 {
            // Aim below the limit (90%), estimating a row's share of the used pages.
            let perRow = max(64, used / Int64(storedEvents))
            let excess = total - Int64(limits.maxBytes) * 9 / 10
            let rows = min(storedEvents, Int((excess + perRow - 1) / perRow))
            outcome.droppedForBytes = try dropOldest(rows, prioritised: !limits.priorities.isEmpty, counting: &outcome.byOutput)
            storedEvents -= outcome.droppedForBytes
        }
        return outcome
    }

    /// Drops every row older than `cutoff` (not in a batch; spans and aggregates: closed), counting by name.
    private func dropOlder(than cutoff: Int64, counting byOutput: inout [String: Int]) throws(SQLiteError) -> Int {
        var dropped = 0
        for (kind, table) in Self.tables {
            dropped += try dropRows(table, kind: kind, selection: """
                SELECT id FROM \(table.name) WHERE \(notInBatch(table, kind)) AND \(table.time) < \(cutoff)
                """, counting: &byOutput)
        }
        return dropped
    }

    /// Not in a batch of the collector's (`batch_id` NULL, or 0: the collector is done with it)
    /// nor of another output's, and droppable.
    private func notInBatch(_ table: PrunedTable, _ kind: RecordKind) -> String {
        let others = tracksOthers
            ? " AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.kind = \(kind.code) AND d.row = \(table.name).id AND d.batch IS NOT NULL)"
            : ""
        return "(batch_id IS NULL OR batch_id = 0) AND \(table.droppable)\(others)"
    }

    /// Drops the `count` oldest rows across the tables (by priority, then age).
    private func dropOldest(_ count: Int, prioritised: Bool, counting byOutput: inout [String: Int]) throws(SQLiteError) -> Int {
        guard count > 0 else { return 0 }
        let order = prioritised ? "priority, id" : "id"
        func selection(_ table: PrunedTable, _ kind: RecordKind, limit: Int) -> String {
            "SELECT id FROM \(table.name) WHERE \(notInBatch(table, kind)) ORDER BY \(order) LIMIT \(limit)"
        }
        // Take up to `count` candidates from each table, merge them by (priority, time), and see
        // how many the merge takes from each: those are prefixes of each table's order.
        var candidates: [(priority: Int64, time: Int64, table: Int)] = []
        for (index, (kind, table)) in Self.tables.enumerated() {
            candidates += try connection.prepare("""
                SELECT priority, \(table.time) FROM \(table.name) WHERE id IN (\(selection(table, kind, limit: count))) ORDER BY \(order)
                """).collect { ($0.int64(at: 0), $0.int64(at: 1), index) }
        }
        // Stable: within a table, the order above.
        let taken = candidates.enumerated()
            .sorted { ($0.element.priority, $0.element.time, $0.offset) < ($1.element.priority, $1.element.time, $1.offset) }
            .prefix(count)
        var dropped = 0
        for (index, (kind, table)) in Self.tables.enumerated() {
            let fromTable = taken.count { $0.element.table == index }
            if fromTable > 0 { dropped += try dropRows(table, kind: kind, selection: selection(table, kind, limit: fromTable), counting: &byOutput) }
        }
        return dropped
    }

    /// Counts the events of the selected rows by name into `pruned_counts`, then deletes them.
    /// Returns how many rows.
    private func dropRows(_ table: PrunedTable, kind: RecordKind, selection: String,
                          counting byOutput: inout [String: Int]) throws(SQLiteError) -> Int {
        let counts = try connection.prepare("""
            SELECT name, count(*), \(table.events) FROM \(table.name) WHERE id IN (\(selection)) GROUP BY name
            """).collect { ($0.text(at: 0) ?? "", $0.int64(at: 1), $0.int64(at: 2)) }
        guard !counts.isEmpty else { return 0 }
        for (name, _, events) in counts where events > 0 {
            // The same upsert into both: the counts waiting to be told, and the running totals.
            for upsert in [addCount, addTotal] {
                try upsert.bind(name, at: 1)
                try upsert.bind(events, at: 2)
                try upsert.run()
            }
        }
        // Who loses them: the collector, unless it was done with them (batch_id 0), and every
        // output still owed them; those debts go with the rows.
        let forCollector = try connection.scalarInt("""
            SELECT coalesce(\(table.events), 0) FROM \(table.name)
            WHERE id IN (\(selection)) AND batch_id IS NULL
            """)
        if forCollector > 0 { byOutput[Configuration.collectorOutputID, default: 0] += Int(forCollector) }
        if tracksOthers {
            let owed = try connection.prepare("""
                SELECT d.output, \(table.events(of: "e"))
                FROM deliveries d JOIN \(table.name) e ON e.id = d.row
                WHERE d.kind = \(kind.code) AND d.row IN (\(selection)) GROUP BY d.output
                """).collect { ($0.int64(at: 0), $0.int64(at: 1)) }
            for (output, events) in owed { byOutput[outputIDs[output] ?? "output \(output)", default: 0] += Int(events) }
            try connection.execute("DELETE FROM deliveries WHERE kind = \(kind.code) AND row IN (\(selection))")
        }
        try connection.execute("DELETE FROM \(table.name) WHERE id IN (\(selection))")
        return counts.reduce(0) { $0 + Int($1.1) }
    }

    /// Closes open spans as abandoned: those written by a process that stopped without closing
    /// the logger (a crash, a kill), and those open longer than the timeout. They end at the last
    /// activity known in their session (never before they started), so their duration is a lower
    /// bound rather than a guess. Returns how many.
    ///
    /// Each affected session's last activity is computed once, in one pass over the events
    /// (`MATERIALIZED`, SQLite 3.35+, below every platform floor), not once per open span: no
    /// index leads from a session to its events, and a crash can leave thousands of spans open
    /// over a large backlog, which made this a scan per span at launch.
    func abandonSpans(ofEpochs epochs: [Int64], olderThan cutoff: Int64) throws(SQLiteError) -> Int {
        let crashed = epochs.isEmpty ? "0" : "clock_epoch IN (\(epochs.map(String.init).joined(separator: ",")))"
        let abandoning = "end_ms IS NULL AND (\(crashed) OR start_ms < \(cutoff))"
        try connection.execute("""
            WITH affected AS MATERIALIZED (SELECT DISTINCT session_id FROM span_events WHERE \(abandoning)),
            last_activity AS MATERIALIZED (
                SELECT session_id, max(t) AS t FROM (
                    SELECT p.session_id, max(p.timestamp_ms) AS t FROM point_events p
                        WHERE p.session_id IN affected GROUP BY p.session_id
                    UNION ALL SELECT x.session_id, max(coalesce(x.end_ms, x.start_ms)) FROM span_events x
                        WHERE x.session_id IN affected GROUP BY x.session_id
                    UNION ALL SELECT s.id, s.ended_ms FROM sessions s WHERE s.id IN affected)
                GROUP BY session_id)
            UPDATE span_events SET abandoned = 1,
                end_ms = max(start_ms, coalesce((SELECT l.t FROM last_activity l WHERE l.session_id = span_events.session_id), start_ms))
            WHERE \(abandoning)
            """)
        let abandoned = connection.changes
        if abandoned > 0 {
            try connection.execute("""
                UPDATE span_events SET duration_ns = (end_ms - start_ms) * 1000000 WHERE abandoned = 1 AND duration_ns IS NULL
                """)
        }
        return abandoned
    }
}
