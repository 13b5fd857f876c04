import Foundation
@_spi(NFLogShared) import NFLogSupport

/// The writer's statements that keep the funnels' rollup, `funnel_hours` (migration 12), in the
/// batch's transaction: the runs a batch touches, read back with their steps through the
/// events_runs and events_steps indexes, and their corrections upserted (``FunnelRollup``).
struct SQLiteFunnelStatements {
    private let runs, steps, upsert, cursor: SQLiteStatement

    init(_ c: SQLiteConnection) throws(SQLiteError) {
        runs = try c.prepare("""
            SELECT id, name, timestamp_ms, given_up, received_ms FROM events INDEXED BY events_runs
            WHERE app = ?1 AND transaction_id = ?2 AND span_id = ?3 AND context_id = ?4 AND given_up IS NOT NULL AND span_id IS NOT NULL
            """)
        steps = try c.prepare("""
            SELECT id, name, timestamp_ms FROM events INDEXED BY events_steps
            WHERE app = ?1 AND parent_span IS NOT NULL AND transaction_id = ?2 AND parent_span = ?3 AND context_id = ?4
            """)
        upsert = try c.prepare("""
            INSERT INTO funnel_hours (app, hour, app_version, use_case, step, reached, left_runs) VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (app, hour, app_version, use_case, step) DO UPDATE SET reached = reached + excluded.reached,
                left_runs = left_runs + excluded.left_runs
            """)
        cursor = try c.prepare("SELECT next_run, last_run, runs_received_before_ms FROM rollup_backfill WHERE id = 1 AND next_run <= last_run")
    }

    /// What the batch's new events (`newIDs`, the row ids they were given) change in the
    /// funnels of the runs they touch (`keys`), all in the batch's app and context. A run the
    /// backfill has yet to add is left to it.
    func corrections(app: String, context: Int64, appVersion: String, keys: Set<FunnelRollup.RunKey>,
                     newIDs: Set<Int64>) throws(SQLiteError) -> FunnelRollup {
        let pending = try cursor.collect { ($0.int64(at: 0), $0.int64(at: 1), $0.int64(at: 2)) }.first
        var funnel = FunnelRollup()
        for key in keys {
            try runs.bind(app, at: 1)
            try runs.bind(key.transaction, at: 2)
            try runs.bind(key.span, at: 3)
            try runs.bind(context, at: 4)
            let found = try runs.collect { row in
                (id: row.int64(at: 0), name: row.text(at: 1) ?? "", timestamp: row.int64(at: 2), givenUp: row.int64(at: 3) != 0,
                 received: row.int64(at: 4))
            }
            guard !found.isEmpty else { continue }  // steps before their run: the run counts them when it comes
            try steps.bind(app, at: 1)
            try steps.bind(key.transaction, at: 2)
            try steps.bind(key.span, at: 3)
            try steps.bind(context, at: 4)
            let stored = try steps.collect { FunnelRollup.Step(id: $0.int64(at: 0), name: $0.text(at: 1) ?? "", timestamp: $0.int64(at: 2)) }
            for run in found {
                if let (next, last, before) = pending, (next...last).contains(run.id), run.received < before { continue }
                funnel.correct(FunnelRollup.Run(hour: run.timestamp / HourlyRollup.hourMilliseconds, appVersion: appVersion,
                                                useCase: run.name, givenUp: run.givenUp),
                               steps: stored, isNew: newIDs.contains(run.id), newSteps: newIDs)
            }
        }
        return funnel
    }

    /// Adds the rows, inside the caller's transaction.
    func add(_ funnel: FunnelRollup, app: String) throws(SQLiteError) {
        for (key, counts) in funnel.rows {
            try upsert.bind(app, at: 1)
            try upsert.bind(key.hour, at: 2)
            try upsert.bind(key.appVersion, at: 3)
            try upsert.bind(key.useCase, at: 4)
            try upsert.bind(key.step, at: 5)
            try upsert.bind(counts.reached, at: 6)
            try upsert.bind(counts.left, at: 7)
            try upsert.run()
        }
    }
}
