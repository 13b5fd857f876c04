@_spi(NFLogShared) import NFLogSupport

/// Adds the events stored before the rollups existed (migration 11) to them, a bounded
/// transaction at a time on the writer's queue, so uploads are stored between two steps and the
/// memory used does not grow with the store. The cursor commits with the rows it covers: a
/// collector stopped halfway resumes where it was, and no event is added twice.
enum SQLiteRollupBackfill {
    struct Progress: Sendable, Equatable {
        /// Events added by this step.
        let added: Int
        /// Row ids still to go over (an upper bound on the events left: retention leaves gaps).
        let remaining: Int64
    }

    /// Events a step reads at most: about 50 ms of the writer's time.
    static let stepSize = 10_000

    /// Whether events stored before the rollups are still to be added.
    static func isPending(_ c: SQLiteConnection) throws(SQLiteError) -> Bool {
        let cursor = try c.prepare("SELECT next_event <= last_event FROM rollup_backfill WHERE id = 1")
        return try cursor.collect { $0.int64(at: 0) }.first == 1
    }

    /// Row ids still to go over, `nil` when the rollups hold every stored event.
    static func remaining(_ c: SQLiteConnection) throws(SQLiteError) -> Int64? {
        let cursor = try c.prepare("SELECT last_event - next_event + 1 FROM rollup_backfill WHERE id = 1 AND next_event <= last_event")
        return try cursor.collect { $0.int64(at: 0) }.first
    }

    /// One step, in its own transaction: `nil` once nothing is left.
    static func step(_ c: SQLiteConnection, _ statements: SQLiteRollupStatements,
                     limit: Int = stepSize) throws(SQLiteError) -> Progress? {
        try c.transaction { () throws(SQLiteError) -> Progress? in
            let cursor = try c.prepare("SELECT next_event, last_event, received_before_ms FROM rollup_backfill WHERE id = 1")
            guard let (next, last, before) = try cursor.collect({ ($0.int64(at: 0), $0.int64(at: 1), $0.int64(at: 2)) }).first,
                  next <= last else { return nil }
            let rows = try c.prepare("""
                SELECT e.id, e.app, \(SQLiteRollupReading.eventColumns)
                FROM events e JOIN contexts c ON c.id = e.context_id
                WHERE e.id >= ?1 AND e.id <= ?2 AND e.received_ms < ?3 ORDER BY e.id LIMIT ?4
                """)
            try rows.bind(next, at: 1)
            try rows.bind(last, at: 2)
            try rows.bind(before, at: 3)
            try rows.bind(Int64(limit), at: 4)
            var rollups: [String: HourlyRollup] = [:]
            var added = 0
            var reached = last
            try SQLiteEventStore.walk(rows) { row in
                added += 1
                if added == limit { reached = row.int64(at: 0) }
                SQLiteRollupReading.add(row, from: 2, to: &rollups[row.text(at: 1) ?? "", default: HourlyRollup()])
            }
            for (app, rollup) in rollups { try statements.add(rollup, app: app) }
            let advance = try c.prepare("UPDATE rollup_backfill SET next_event = ?1 WHERE id = 1")
            try advance.bind(reached + 1, at: 1)
            try advance.run()
            return Progress(added: added, remaining: max(last - reached, 0))
        }
    }
}
