import Logging
import PostgresNIO

/// The hourly rollups (``HourlyRollup``, ``FunnelRollup``) on PostgreSQL, written as SQLite's are but without a row
/// that two batches update: each batch inserts its rows into the keyless `*_deltas` tables, one
/// statement for all three, and ``PostgresCounts/fold(_:logger:)`` moves them into the keyed
/// tables with the other counts; reads go through the `*_now` views, keyed rows plus deltas.
enum PostgresRollups {
    typealias Table = (name: String, key: [String], values: [String])

    /// A rollup table as PostgreSQL keys it: (app, hour) and the table's own key columns
    /// (``RollupDays/tables``, the one list of the rollups' columns).
    private static func table(_ table: RollupDays.Table) -> Table {
        (table.hours, ["app", "hour"] + table.keys, table.values)
    }

    /// (table, key columns, value columns) of each rollup: the hourly ones (schema 7), then the
    /// funnels' (schema 8).
    static let hourlyTables: [Table] = [RollupDays.event, RollupDays.duration, RollupDays.origin].map(table)
    static let funnelTable: Table = table(RollupDays.funnel)
    static let sessionTable: Table = table(RollupDays.session)
    static let tables = hourlyTables + [funnelTable, sessionTable]

    private static func columnType(_ column: String) -> String {
        ["hour", "bucket", "count", "events", "reached", "left_runs", "sessions"].contains(column) || RollupDays.event.values.contains(column)
            ? "bigint" : "text"
    }

    /// A sum that saturates at Int64's bounds (the duration sums are the client's, and the
    /// sessions' may go down as a session moves to a later bucket).
    private static func sum(_ column: String) -> String {
        column == "duration_us" ? saturated("sum(\(column))") : "sum(\(column))::bigint"
    }

    static func saturated(_ numeric: String) -> String {
        "greatest(least(\(numeric), \(PostgresCounts.maximum)), -\(PostgresCounts.maximum) - 1)::bigint"
    }

    /// The keyed table, its keyless deltas and the view that sums both.
    private static func statements(_ table: Table) -> [String] {
        let columns = (table.key + table.values).map { "\($0) \(columnType($0)) NOT NULL" }.joined(separator: ", ")
        let all = (table.key + table.values).joined(separator: ", ")
        let key = table.key.joined(separator: ", ")
        return [
            "CREATE TABLE \(table.name) (\(columns), PRIMARY KEY (\(key)))",
            "CREATE TABLE \(table.name.dropLast(1))_deltas (\(columns))",
            // The app and hour filters of a read are pushed into both sides of the UNION ALL.
            """
            CREATE VIEW \(table.name)_now AS SELECT \(key), \(table.values.map { "\(sum($0)) AS \($0)" }.joined(separator: ", "))
            FROM (SELECT \(all) FROM \(table.name) UNION ALL SELECT \(all) FROM \(table.name.dropLast(1))_deltas) AS r
            GROUP BY \(key)
            """,
        ]
    }

    static let migrationStatements: [String] = hourlyTables.flatMap(statements) + [
        // The backfill's cursor per app (the events_app_id index walks one app's rows in id
        // order): the next event id to add and the last one, the largest at this migration.
        """
        CREATE TABLE rollup_backfill (app text PRIMARY KEY, next_event bigint NOT NULL, last_event bigint NOT NULL,
                                      received_before_ms bigint NOT NULL)
        """,
        """
        INSERT INTO rollup_backfill (app, next_event, last_event, received_before_ms)
        SELECT app, 0, last, (extract(epoch FROM clock_timestamp()) * 1000)::bigint + 1
        FROM (SELECT t.app, (SELECT max(id) FROM events e WHERE e.app = t.app) AS last FROM totals t) AS a
        WHERE last IS NOT NULL
        """,
    ]

    /// Schema 8: the funnels' rollup (``FunnelRollup``), and the backfill's second cursor per
    /// app, over the runs stored before it (the row ids `next_run` to `last_run`, received
    /// before `runs_received_before_ms`): a batch with a step of such a run leaves it to the
    /// backfill, which reads all its steps.
    ///
    /// And the sessions' rollup (``SessionRollup``), with the backfill's third cursor per app,
    /// in key order: the sessions up to `sessions_after` (NULL: none yet) are added until
    /// `sessions_done`; a batch changes a session's rows only once the backfill is past it.
    static let funnelMigrationStatements: [String] = statements(funnelTable) + statements(sessionTable) + [
        """
        ALTER TABLE rollup_backfill ADD COLUMN next_run bigint NOT NULL DEFAULT 0,
            ADD COLUMN last_run bigint NOT NULL DEFAULT -1, ADD COLUMN runs_received_before_ms bigint NOT NULL DEFAULT 0,
            ADD COLUMN sessions_after uuid, ADD COLUMN sessions_done boolean NOT NULL DEFAULT true
        """,
        """
        INSERT INTO rollup_backfill (app, next_event, last_event, received_before_ms, next_run, last_run, runs_received_before_ms,
                                     sessions_done)
        SELECT app, 0, -1, 0, 0, coalesce(last, -1), (extract(epoch FROM clock_timestamp()) * 1000)::bigint + 1,
               NOT EXISTS (SELECT 1 FROM sessions s WHERE s.app = a.app)
        FROM (SELECT t.app, (SELECT max(id) FROM events e WHERE e.app = t.app) AS last FROM totals t) AS a
        ON CONFLICT (app) DO UPDATE SET next_run = 0, last_run = excluded.last_run,
            runs_received_before_ms = excluded.runs_received_before_ms, sessions_done = excluded.sessions_done
        """,
        // The sessions that start within the part of an hour at a range's ends, for the report.
        "CREATE INDEX sessions_started ON sessions (app, started_ms)",
    ]

    /// Schema 12: each `*_hours_now` view without its grouping by key. Every read sums the rows
    /// it selects anyway (by hour and source for the series, over the hours for the report), and
    /// grouping first by the whole key cost a second aggregation that spilled to disk at ten
    /// million events. Same columns, so a replacement.
    static let ungroupedViewStatements: [String] = tables.map { table in
        let all = (table.key + table.values).joined(separator: ", ")
        return """
            CREATE OR REPLACE VIEW \(table.name)_now AS SELECT \(all)
            FROM \(table.name) UNION ALL SELECT \(all) FROM \(table.name.dropLast(1))_deltas
            """
    }

    /// Moves each rollup's deltas into its keyed table, and into its day rows where their day is
    /// compacted (inside ``PostgresCounts``'s fold; ``PostgresRollupCompaction``).
    static let foldStatements: [String] = RollupDays.tables.map(PostgresRollupCompaction.foldStatement)

    /// One statement inserting the rollup's rows as deltas (data-modifying CTEs): one round trip.
    static func insert(_ rollup: HourlyRollup, app: String) -> PostgresQuery {
        let events = Array(rollup.events)
        let durations = Array(rollup.durations)
        let origins = Array(rollup.origins)
        return """
            WITH durations AS (
                INSERT INTO duration_hour_deltas (app, hour, app_version, name, type, bucket, count)
                SELECT \(app), * FROM unnest(\(durations.map(\.key.hour))::int8[], \(durations.map(\.key.appVersion))::text[],
                                             \(durations.map(\.key.name))::text[], \(durations.map(\.key.type))::text[],
                                             \(durations.map(\.key.bucket))::int8[], \(durations.map(\.value))::int8[])
            ), origins AS (
                INSERT INTO origin_hour_deltas (app, hour, app_version, origin, events)
                SELECT \(app), * FROM unnest(\(origins.map(\.key.hour))::int8[], \(origins.map(\.key.appVersion))::text[],
                                             \(origins.map(\.key.origin))::text[], \(origins.map(\.value))::int8[])
            )
            INSERT INTO event_hour_deltas (app, hour, app_version, sdk_name, sdk_version, name, kind, type, source,
                                           events, abandoned, given_up, measured, duration_us)
            SELECT \(app), * FROM unnest(\(events.map(\.key.hour))::int8[], \(events.map(\.key.appVersion))::text[],
                                         \(events.map(\.key.sdkName))::text[], \(events.map(\.key.sdkVersion))::text[],
                                         \(events.map(\.key.name))::text[],
                                         \(events.map(\.key.kind))::text[], \(events.map(\.key.type))::text[],
                                         \(events.map(\.key.source))::text[], \(events.map(\.value.events))::int8[],
                                         \(events.map(\.value.abandoned))::int8[], \(events.map(\.value.givenUp))::int8[],
                                         \(events.map(\.value.measured))::int8[], \(events.map(\.value.durationMicros))::int8[])
            """
    }

    /// One statement inserting a batch's funnel corrections as deltas.
    static func insert(_ funnel: FunnelRollup, app: String) -> PostgresQuery {
        let rows = Array(funnel.rows)
        return """
            INSERT INTO funnel_hour_deltas (app, hour, app_version, use_case, step, reached, left_runs)
            SELECT \(app), * FROM unnest(\(rows.map(\.key.hour))::int8[], \(rows.map(\.key.appVersion))::text[],
                                         \(rows.map(\.key.useCase))::text[], \(rows.map(\.key.step))::text[],
                                         \(rows.map(\.value.reached))::int8[], \(rows.map(\.value.left))::int8[])
            """
    }

    /// One statement inserting a batch's session changes as deltas.
    static func insert(_ sessions: SessionRollup, app: String) -> PostgresQuery {
        let rows = Array(sessions.rows)
        return """
            INSERT INTO session_hour_deltas (app, hour, app_version, bucket, sessions, duration_us)
            SELECT \(app), * FROM unnest(\(rows.map(\.key.hour))::int8[], \(rows.map(\.key.appVersion))::text[],
                                         \(rows.map(\.key.bucket))::int8[], \(rows.map(\.value.sessions))::int8[],
                                         \(rows.map(\.value.micros))::int8[])
            """
    }
}
