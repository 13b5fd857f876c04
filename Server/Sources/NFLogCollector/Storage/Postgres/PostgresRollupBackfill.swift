import Foundation
import Logging
import PostgresNIO
@_spi(NFLogShared) import NFLogSupport

/// Adds the events stored before the rollups existed (schema version 7) to them, then the runs
/// and the sessions stored before the funnels' and sessions' rollups (schema 8) to those, as SQLite's ``SQLiteRollupBackfill``
/// does: a bounded transaction at a time, one app's rows in id order through events_app_id, the
/// cursor committed with the deltas it covers. One collector at a time (an advisory lock per
/// step): two would add the same events twice. A batch that touches a run the backfill has yet
/// to add holds the same lock shared (``PostgresFunnels``), so a step never runs between its
/// reading of the cursor and its commit.
enum PostgresRollupBackfill {
    static func step(_ connection: PostgresConnection, limit: Int = SQLiteRollupBackfill.stepSize,
                     logger: Logger) async throws -> RollupBackfillStep {
        try await connection.withTransaction(logger: logger) { c in
            var mine = false
            for try await taken in try await c.query("SELECT pg_try_advisory_xact_lock(\(PostgresSchema.backfillLock))",
                                                     logger: logger).decode(Bool.self) {
                mine = taken
            }
            guard mine else { return .busy }
            var cursor: (app: String, next: Int64, last: Int64, before: Int64)?
            for try await row in try await c.query("""
                SELECT app, next_event, last_event, received_before_ms FROM rollup_backfill
                WHERE next_event <= last_event ORDER BY app LIMIT 1
                """, logger: logger).decode((String, Int64, Int64, Int64).self) {
                cursor = row
            }
            guard let cursor else { return try await runStep(c, limit: limit, logger: logger) }
            var rollup = HourlyRollup()
            var added = 0
            var reached = cursor.last
            let rows = try await c.query("""
                SELECT e.id, e.timestamp_ms, e.name, e.kind, e.type, e.source, e.origin, e.abandoned, e.given_up, e.duration_ms,
                       c.app_version, c.sdk_name, c.sdk_version
                FROM events e JOIN contexts c ON c.id = e.context_id
                WHERE e.app = \(cursor.app) AND e.id >= \(cursor.next) AND e.id <= \(cursor.last) AND e.received_ms < \(cursor.before)
                ORDER BY e.id LIMIT \(Int64(limit))
                """, logger: logger)
            for try await (id, timestamp, name, kind, type, source, origin, abandoned, givenUp, duration, appVersion, sdkName, sdkVersion)
                in rows.decode((Int64, Int64, String, String, String, String?, String?, Bool, Bool?, Double?, String, String, String).self) {
                added += 1
                if added == limit { reached = id }
                rollup.add(RollupEvent(timestamp: timestamp, name: name, kind: kind, type: type, web: source == Batch.Source.web.rawValue,
                                       origin: origin, abandoned: abandoned, givenUp: givenUp, durationMilliseconds: duration),
                           appVersion: appVersion, sdkName: sdkName, sdkVersion: sdkVersion)
            }
            if !rollup.isEmpty { try await c.query(PostgresRollups.insert(rollup, app: cursor.app), logger: logger) }
            try await c.query("UPDATE rollup_backfill SET next_event = \(reached + 1) WHERE app = \(cursor.app)", logger: logger)
            return .added(added, remaining: max(cursor.last - reached, 0))
        }
    }

    /// A step over an app's runs stored before the funnels' rollup: the row ids of up to `limit`
    /// events from the cursor, each run among them added with every step it has now.
    private static func runStep(_ c: PostgresConnection, limit: Int, logger: Logger) async throws -> RollupBackfillStep {
        var cursor: (app: String, next: Int64, last: Int64, before: Int64)?
        for try await row in try await c.query("""
            SELECT app, next_run, last_run, runs_received_before_ms FROM rollup_backfill
            WHERE next_run <= last_run ORDER BY app LIMIT 1
            """, logger: logger).decode((String, Int64, Int64, Int64).self) {
            cursor = row
        }
        guard let cursor else { return try await sessionStep(c, limit: limit, logger: logger) }
        let end = min(cursor.last, cursor.next + Int64(limit) - 1)
        var funnel = FunnelRollup()
        var current: (id: Int64, run: FunnelRollup.Run, steps: [FunnelRollup.Step])?
        func flush() {
            if let done = current { funnel.add(done.run, steps: done.steps, sign: 1) }
        }
        // Each run with its steps (none: one row of NULLs), a run's rows together.
        for try await (id, appVersion, name, timestamp, givenUp, stepID, stepName, stepTimestamp) in try await c.query("""
            SELECT u.id, c.app_version, u.name, u.timestamp_ms, u.given_up, s.id, s.name, s.timestamp_ms
            FROM events u JOIN contexts c ON c.id = u.context_id
            LEFT JOIN events s ON s.app = u.app AND s.parent_span IS NOT NULL AND s.transaction_id = u.transaction_id
                AND s.parent_span = u.span_id AND s.context_id = u.context_id
            WHERE u.app = \(cursor.app) AND u.id >= \(cursor.next) AND u.id <= \(end) AND u.received_ms < \(cursor.before)
                AND u.given_up IS NOT NULL AND u.span_id IS NOT NULL
            ORDER BY u.id
            """, logger: logger).decode((Int64, String, String, Int64, Bool, Int64?, String?, Int64?).self) {
            if current?.id != id {
                flush()
                current = (id, FunnelRollup.Run(hour: timestamp / HourlyRollup.hourMilliseconds, appVersion: appVersion, useCase: name,
                                                givenUp: givenUp), [])
            }
            if let stepID, let stepName, let stepTimestamp {
                current?.steps.append(FunnelRollup.Step(id: stepID, name: stepName, timestamp: stepTimestamp))
            }
        }
        flush()
        if !funnel.isEmpty { try await c.query(PostgresRollups.insert(funnel, app: cursor.app), logger: logger) }
        try await c.query("UPDATE rollup_backfill SET next_run = \(end + 1) WHERE app = \(cursor.app)", logger: logger)
        return .added(Int(end - cursor.next + 1), remaining: cursor.last - end)
    }

    /// A step over an app's sessions stored before the sessions' rollup: up to `limit` of them in
    /// key order from the cursor, each added as it is now; done once a step finds fewer.
    private static func sessionStep(_ c: PostgresConnection, limit: Int, logger: Logger) async throws -> RollupBackfillStep {
        var cursor: (app: String, after: UUID?)?
        for try await row in try await c.query("""
            SELECT app, sessions_after FROM rollup_backfill WHERE NOT sessions_done ORDER BY app LIMIT 1
            """, logger: logger).decode((String, UUID?).self) {
            cursor = row
        }
        guard let cursor else { return .done }
        var sessions = SessionRollup()
        var added = 0
        var last = cursor.after
        for try await (id, started, ended, appVersion) in try await c.query("""
            SELECT s.uuid, s.started_ms, s.ended_ms, c.app_version FROM sessions s JOIN contexts c ON c.id = s.context_id
            WHERE s.app = \(cursor.app) AND (\(cursor.after)::uuid IS NULL OR s.uuid > \(cursor.after)::uuid)
            ORDER BY s.uuid LIMIT \(Int64(limit))
            """, logger: logger).decode((UUID, Int64, Int64?, String).self) {
            added += 1
            last = id
            sessions.add(SessionRollup.Session(started: started, ended: ended, appVersion: appVersion), sign: 1)
        }
        if !sessions.isEmpty { try await c.query(PostgresRollups.insert(sessions, app: cursor.app), logger: logger) }
        try await c.query("""
            UPDATE rollup_backfill SET sessions_after = \(last), sessions_done = \(added < limit) WHERE app = \(cursor.app)
            """, logger: logger)
        return .added(added, remaining: added < limit ? 0 : 1)
    }
}
