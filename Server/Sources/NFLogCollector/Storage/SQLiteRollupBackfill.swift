@_spi(NFLogShared) import NFLogSupport

/// Adds the events stored before the rollups existed (migration 11) to them, then the runs and
/// the sessions stored before the funnels' and sessions' rollups (migration 12) to those, a
/// bounded transaction at a time on the
/// writer's queue, so uploads are stored between two steps and the memory used does not grow
/// with the store. Each cursor commits with the rows it covers: a collector stopped halfway
/// resumes where it was, and nothing is added twice.
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
        let cursor = try c.prepare("""
            SELECT next_event <= last_event OR next_run <= last_run OR NOT sessions_done FROM rollup_backfill WHERE id = 1
            """)
        return try cursor.collect { $0.int64(at: 0) }.first == 1
    }

    /// Row ids still to go over, `nil` when the rollups hold every stored event.
    static func remaining(_ c: SQLiteConnection) throws(SQLiteError) -> Int64? {
        let cursor = try c.prepare("""
            SELECT max(last_event - next_event + 1, 0) + max(last_run - next_run + 1, 0)
                + CASE WHEN sessions_done THEN 0 ELSE (SELECT count(*) FROM sessions s
                    WHERE sessions_after_app IS NULL OR (s.app, s.uuid) > (sessions_after_app, sessions_after_uuid)) END
            FROM rollup_backfill WHERE id = 1 AND (next_event <= last_event OR next_run <= last_run OR NOT sessions_done)
            """)
        return try cursor.collect { $0.int64(at: 0) }.first
    }

    /// One step, in its own transaction: `nil` once nothing is left.
    static func step(_ c: SQLiteConnection, _ statements: SQLiteRollupStatements,
                     limit: Int = stepSize) throws(SQLiteError) -> Progress? {
        try c.transaction { () throws(SQLiteError) -> Progress? in
            let cursor = try c.prepare("SELECT next_event, last_event, received_before_ms FROM rollup_backfill WHERE id = 1")
            guard let (next, last, before) = try cursor.collect({ ($0.int64(at: 0), $0.int64(at: 1), $0.int64(at: 2)) }).first,
                  next <= last else { return try runStep(c, statements, limit: limit) }
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

    /// A step over the runs stored before the funnels' rollup: the row ids of up to `limit`
    /// events, each run among them added with every step it has now. `nil` once none is left.
    private static func runStep(_ c: SQLiteConnection, _ statements: SQLiteRollupStatements,
                                limit: Int) throws(SQLiteError) -> Progress? {
        let cursor = try c.prepare("SELECT next_run, last_run, runs_received_before_ms FROM rollup_backfill WHERE id = 1")
        guard let (next, last, before) = try cursor.collect({ ($0.int64(at: 0), $0.int64(at: 1), $0.int64(at: 2)) }).first,
              next <= last else { return try sessionStep(c, statements, limit: limit) }
        let end = min(last, next + Int64(limit) - 1)
        // Each run with its steps (none: one row of NULLs), a run's rows together.
        let rows = try c.prepare("""
            SELECT u.id, u.app, c.app_version, u.name, u.timestamp_ms, u.given_up, s.id, s.name, s.timestamp_ms
            FROM events u JOIN contexts c ON c.id = u.context_id
            LEFT JOIN events s INDEXED BY events_steps ON s.app = u.app AND s.parent_span IS NOT NULL
                AND s.transaction_id = u.transaction_id AND s.parent_span = u.span_id AND s.context_id = u.context_id
            WHERE u.id >= ?1 AND u.id <= ?2 AND u.received_ms < ?3 AND u.given_up IS NOT NULL AND u.span_id IS NOT NULL
            ORDER BY u.id
            """)
        try rows.bind(next, at: 1)
        try rows.bind(end, at: 2)
        try rows.bind(before, at: 3)
        var funnels: [String: FunnelRollup] = [:]
        var current: (id: Int64, app: String, run: FunnelRollup.Run, steps: [FunnelRollup.Step])?
        func flush() {
            if let done = current { funnels[done.app, default: FunnelRollup()].add(done.run, steps: done.steps, sign: 1) }
        }
        try SQLiteEventStore.walk(rows) { row in
            let id = row.int64(at: 0)
            if current?.id != id {
                flush()
                current = (id, row.text(at: 1) ?? "",
                           FunnelRollup.Run(hour: row.int64(at: 4) / HourlyRollup.hourMilliseconds, appVersion: row.text(at: 2) ?? "",
                                            useCase: row.text(at: 3) ?? "", givenUp: row.int64(at: 5) != 0), [])
            }
            if !row.isNull(at: 6) {
                current?.steps.append(FunnelRollup.Step(id: row.int64(at: 6), name: row.text(at: 7) ?? "", timestamp: row.int64(at: 8)))
            }
        }
        flush()
        for (app, funnel) in funnels { try statements.funnels.add(funnel, app: app) }
        let advance = try c.prepare("UPDATE rollup_backfill SET next_run = ?1 WHERE id = 1")
        try advance.bind(end + 1, at: 1)
        try advance.run()
        return Progress(added: Int(end - next + 1), remaining: last - end)
    }

    /// A step over the sessions stored before the sessions' rollup: up to `limit` of them in key
    /// order from the cursor, each added as it is now; done once a step finds fewer. `nil` once
    /// none is left.
    private static func sessionStep(_ c: SQLiteConnection, _ statements: SQLiteRollupStatements,
                                    limit: Int) throws(SQLiteError) -> Progress? {
        let cursor = try c.prepare("SELECT sessions_after_app, sessions_after_uuid FROM rollup_backfill WHERE id = 1 AND NOT sessions_done")
        guard let (afterApp, afterUUID) = try cursor.collect({ ($0.text(at: 0), $0.blob(at: 1)) }).first else { return nil }
        let rows = try c.prepare("""
            SELECT s.app, s.uuid, s.started_ms, s.ended_ms, c.app_version FROM sessions s JOIN contexts c ON c.id = s.context_id
            WHERE ?1 IS NULL OR (s.app, s.uuid) > (?1, ?2) ORDER BY s.app, s.uuid LIMIT ?3
            """)
        if let afterApp { try rows.bind(afterApp, at: 1) } else { try rows.bindNull(at: 1) }
        try rows.bindBlob(afterUUID, at: 2)
        try rows.bind(Int64(limit), at: 3)
        var sessions: [String: SessionRollup] = [:]
        var added = 0
        var last: (app: String, uuid: [UInt8]?)?
        try SQLiteEventStore.walk(rows) { row in
            added += 1
            let app = row.text(at: 0) ?? ""
            last = (app, row.blob(at: 1))
            sessions[app, default: SessionRollup()].add(
                SessionRollup.Session(started: row.int64(at: 2), ended: row.isNull(at: 3) ? nil : row.int64(at: 3),
                                      appVersion: row.text(at: 4) ?? ""), sign: 1)
        }
        for (app, rollup) in sessions { try statements.sessions.add(rollup, app: app) }
        let advance = try c.prepare("""
            UPDATE rollup_backfill SET sessions_after_app = coalesce(?1, sessions_after_app),
                sessions_after_uuid = coalesce(?2, sessions_after_uuid), sessions_done = ?3 WHERE id = 1
            """)
        if let last {
            try advance.bind(last.app, at: 1)
            try advance.bindBlob(last.uuid, at: 2)
        } else {
            try advance.bindNull(at: 1)
            try advance.bindNull(at: 2)
        }
        try advance.bind(Int64(added < limit ? 1 : 0), at: 3)
        try advance.run()
        return Progress(added: added, remaining: added < limit ? 0 : 1)
    }
}
