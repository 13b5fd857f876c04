import Logging
import PostgresNIO
@_spi(NFLogShared) import NFLogSupport

/// Reads the rollup rows a report needs on PostgreSQL, as ``SQLiteRollupReading`` does on SQLite:
/// the range's whole hours from the `*_now` views (keyed rows plus deltas; compacted days from
/// the `*_days_now` ones, ``RollupDays``), summed, and the hours' parts at its ends from the
/// events, added up by ``HourlyRollup``.
enum PostgresRollupReading {
    /// The columns of an event ``EventRow`` decodes, from `events e JOIN contexts c`.
    static let eventColumns = """
        e.timestamp_ms, e.name, e.kind, e.type, e.source, e.origin, e.abandoned, e.given_up, e.duration_ms,
        c.app_version, c.sdk_name, c.sdk_version
        """

    typealias EventRow = (Int64, String, String, String, String?, String?, Bool, Bool?, Double?, String, String, String)

    static func add(_ row: EventRow, to rollup: inout HourlyRollup) {
        rollup.add(RollupEvent(timestamp: row.0, name: row.1, kind: row.2, type: row.3, web: row.4 == Batch.Source.web.rawValue,
                               origin: row.5, abandoned: row.6, givenUp: row.7, durationMilliseconds: row.8),
                   appVersion: row.9, sdkName: row.10, sdkVersion: row.11)
    }

    /// The parts of `range`'s whole hours to read from the hour, day and past rows
    /// (``RollupDays``), in the caller's snapshot: each with its first and end hour (NULL: open).
    static func segments(_ c: PostgresConnection, app: String, range: RollupRange,
                         logger: Logger) async throws -> [(segment: RollupDays.Segment, from: Int64?, to: Int64?)] {
        guard let hours = range.hours else { return [] }
        let compacted = try await PostgresRollupCompaction.compactedBefore(c, app: app, logger: logger)
        let earliest = RollupDays.mayReadPast(hours, compactedBefore: compacted)
            ? try await PostgresRollupCompaction.firstHour(c, app: app, deltas: true, logger: logger) : nil
        return RollupDays.segments(hours, compactedBefore: compacted, earliest: earliest).map { ($0, $0.hours.from, $0.hours.to) }
    }

    /// `table`'s rows plus its deltas not folded yet, of hours, of days or of the past as
    /// `segment` reads them.
    private static func view(_ table: RollupDays.Table, _ segment: RollupDays.Segment) -> String {
        segment.table(table) + "_now"
    }

    /// The rows for `filter`'s range and app version; rows of whole hours carry hour −1.
    static func rollup(_ c: PostgresConnection, app: String, filter: ReportFilter, logger: Logger) async throws -> HourlyRollup {
        let range = RollupRange(from: filter.from, to: filter.to)
        var rollup = HourlyRollup()
        // NULL bounds and version select everything.
        let version = filter.appVersion
        for (segment, from, to) in try await segments(c, app: app, range: range, logger: logger) {
            for try await (appVersion, sdkName, sdkVersion, name, kind, type, source, events, abandoned, givenUp, measured, micros)
                in try await c.query("""
                    SELECT app_version, sdk_name, sdk_version, name, kind, type, source, sum(events)::int8, sum(abandoned)::int8,
                           sum(given_up)::int8, sum(measured)::int8, least(sum(duration_us), \(unescaped: PostgresCounts.maximum))::int8
                    FROM \(unescaped: view(RollupDays.event, segment)) WHERE app = \(app) AND (\(from)::int8 IS NULL OR hour >= \(from)::int8)
                        AND (\(to)::int8 IS NULL OR hour < \(to)::int8) AND (\(version)::text IS NULL OR app_version = \(version)::text)
                    GROUP BY app_version, sdk_name, sdk_version, name, kind, type, source
                    """, logger: logger).decode((String, String, String, String, String, String, String, Int64, Int64, Int64, Int64,
                                                 Int64).self) {
                rollup.add(HourlyRollup.EventKey(hour: -1, appVersion: appVersion, sdkName: sdkName, sdkVersion: sdkVersion, name: name,
                                                 kind: kind, type: type, source: source),
                           HourlyRollup.EventCounts(events: events, abandoned: abandoned, givenUp: givenUp, measured: measured,
                                                    durationMicros: micros))
            }
            for try await (appVersion, name, type, bucket, count) in try await c.query("""
                SELECT app_version, name, type, bucket, sum(count)::int8 FROM \(unescaped: view(RollupDays.duration, segment))
                WHERE app = \(app) AND (\(from)::int8 IS NULL OR hour >= \(from)::int8) AND (\(to)::int8 IS NULL OR hour < \(to)::int8)
                    AND (\(version)::text IS NULL OR app_version = \(version)::text)
                GROUP BY app_version, name, type, bucket
                """, logger: logger).decode((String, String, String, Int64, Int64).self) {
                rollup.add(HourlyRollup.DurationKey(hour: -1, appVersion: appVersion, name: name, type: type, bucket: bucket), count: count)
            }
            for try await (appVersion, origin, events) in try await c.query("""
                SELECT app_version, origin, sum(events)::int8 FROM \(unescaped: view(RollupDays.origin, segment))
                WHERE app = \(app) AND (\(from)::int8 IS NULL OR hour >= \(from)::int8) AND (\(to)::int8 IS NULL OR hour < \(to)::int8)
                    AND (\(version)::text IS NULL OR app_version = \(version)::text)
                GROUP BY app_version, origin
                """, logger: logger).decode((String, String, Int64).self) {
                rollup.add(HourlyRollup.OriginKey(hour: -1, appVersion: appVersion, origin: origin), events: events)
            }
        }
        try await addEdges(c, app: app, range: range, appVersion: filter.appVersion, logger: logger, to: &rollup)
        return rollup
    }

    /// The funnel rows for `filter`'s range and app version, as
    /// ``SQLiteRollupReading/funnels(_:app:filter:)``: whole hours from `funnel_hours_now` and
    /// compacted days from `funnel_days_now`, the runs that start in the parts of an hour at
    /// either end from the events.
    static func funnels(_ c: PostgresConnection, app: String, filter: ReportFilter, logger: Logger) async throws -> FunnelRollup {
        let range = RollupRange(from: filter.from, to: filter.to)
        var funnel = FunnelRollup()
        let version = filter.appVersion
        for (segment, from, to) in try await segments(c, app: app, range: range, logger: logger) {
            for try await (useCase, step, reached, left) in try await c.query("""
                SELECT use_case, step, sum(reached)::int8, sum(left_runs)::int8 FROM \(unescaped: view(RollupDays.funnel, segment))
                WHERE app = \(app) AND (\(from)::int8 IS NULL OR hour >= \(from)::int8) AND (\(to)::int8 IS NULL OR hour < \(to)::int8)
                    AND (\(version)::text IS NULL OR app_version = \(version)::text)
                GROUP BY use_case, step
                """, logger: logger).decode((String, String, Int64, Int64).self) {
                funnel.add(FunnelRollup.Key(hour: -1, appVersion: "", useCase: useCase, step: step),
                           FunnelRollup.Counts(reached: reached, left: left))
            }
        }
        for part in range.edges {
            let edge = ReportFilter(from: part.from, to: part.to, appVersion: filter.appVersion)
            try await PostgresReport.addFunnels(c, app: app, filter: edge, logger: logger, to: &funnel)
        }
        return funnel
    }

    /// The session rows for `filter`'s range and app version, as
    /// ``SQLiteRollupReading/sessions(_:app:filter:)``: whole hours from `session_hours_now` and
    /// compacted days from `session_days_now`, the sessions that start in the parts of an hour
    /// at either end from their rows.
    static func sessions(_ c: PostgresConnection, app: String, filter: ReportFilter, logger: Logger) async throws -> SessionRollup {
        let range = RollupRange(from: filter.from, to: filter.to)
        var sessions = SessionRollup()
        let version = filter.appVersion
        for (segment, from, to) in try await segments(c, app: app, range: range, logger: logger) {
            for try await (bucket, count, micros) in try await c.query("""
                SELECT bucket, sum(sessions)::int8, \(unescaped: PostgresRollups.saturated("sum(duration_us)"))
                FROM \(unescaped: view(RollupDays.session, segment))
                WHERE app = \(app) AND (\(from)::int8 IS NULL OR hour >= \(from)::int8) AND (\(to)::int8 IS NULL OR hour < \(to)::int8)
                    AND (\(version)::text IS NULL OR app_version = \(version)::text)
                GROUP BY bucket
                """, logger: logger).decode((Int64, Int64, Int64).self) {
                sessions.add(SessionRollup.Key(hour: -1, appVersion: "", bucket: bucket), SessionRollup.Counts(sessions: count, micros: micros))
            }
        }
        for part in range.edges {
            for try await (started, ended) in try await c.query("""
                SELECT s.started_ms, s.ended_ms FROM sessions s JOIN contexts c ON c.id = s.context_id
                WHERE s.app = \(app) AND s.started_ms >= \(part.from) AND s.started_ms < \(part.to)
                    AND (\(filter.appVersion)::text IS NULL OR c.app_version = \(filter.appVersion)::text)
                """, logger: logger).decode((Int64, Int64?).self) {
                sessions.add(SessionRollup.Session(started: started, ended: ended, appVersion: ""), sign: 1)
            }
        }
        return sessions
    }

    /// What a series needs by hour, as ``SQLiteRollupReading/hourly(_:app:from:to:appVersion:)``.
    static func hourly(_ c: PostgresConnection, app: String, from: Int64, to: Int64, appVersion: String?,
                       logger: Logger) async throws -> HourlyRollup {
        let range = RollupRange(from: from, to: to)
        var rollup = HourlyRollup()
        if let hours = range.hours, let first = hours.from, let end = hours.to {
            for try await (hour, source, events) in try await c.query("""
                SELECT hour, source, sum(events)::int8 FROM event_hours_now
                WHERE app = \(app) AND hour >= \(first) AND hour < \(end) AND (\(appVersion)::text IS NULL OR app_version = \(appVersion)::text)
                GROUP BY hour, source
                """, logger: logger).decode((Int64, String, Int64).self) {
                rollup.add(HourlyRollup.EventKey(hour: hour, appVersion: "", sdkName: "", sdkVersion: "", name: "", kind: "", type: "",
                                                 source: source), HourlyRollup.EventCounts(events: events))
            }
            for try await (hour, bucket, count) in try await c.query("""
                SELECT hour, bucket, sum(count)::int8 FROM duration_hours_now
                WHERE app = \(app) AND hour >= \(first) AND hour < \(end) AND (\(appVersion)::text IS NULL OR app_version = \(appVersion)::text)
                    AND type = 'network'
                GROUP BY hour, bucket
                """, logger: logger).decode((Int64, Int64, Int64).self) {
                rollup.add(HourlyRollup.DurationKey(hour: hour, appVersion: "", name: "", type: "network", bucket: bucket), count: count)
            }
        }
        try await addEdges(c, app: app, range: range, appVersion: appVersion, logger: logger, to: &rollup)
        return rollup
    }

    /// Adds the events of the range's parts of an hour.
    private static func addEdges(_ c: PostgresConnection, app: String, range: RollupRange, appVersion: String?, logger: Logger,
                                 to rollup: inout HourlyRollup) async throws {
        for part in range.edges {
            // Within one hour: through events_hours, the hour in its own expression.
            for try await row in try await c.query("""
                SELECT \(unescaped: eventColumns) FROM events e JOIN contexts c ON c.id = e.context_id
                WHERE e.app = \(app) AND e.timestamp_ms / 3600000 = \(part.from / HourlyRollup.hourMilliseconds)
                    AND e.timestamp_ms >= \(part.from) AND e.timestamp_ms < \(part.to)
                    AND (\(appVersion)::text IS NULL OR c.app_version = \(appVersion)::text)
                """, logger: logger).decode(EventRow.self) {
                add(row, to: &rollup)
            }
        }
    }
}
