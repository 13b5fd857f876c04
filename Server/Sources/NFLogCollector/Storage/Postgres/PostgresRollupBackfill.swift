import Logging
import PostgresNIO

/// Adds the events stored before the rollups existed (schema version 7) to them, as SQLite's
/// ``SQLiteRollupBackfill`` does: a bounded transaction at a time, one app's rows in id order
/// through events_app_id, the cursor committed with the deltas it covers. One collector at a
/// time (an advisory lock per step): two would add the same events twice.
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
            guard let cursor else { return .done }
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
}
