@_spi(NFLogShared) import NFLogSupport

/// Reads the rollup rows a report needs on SQLite, within the caller's snapshot: the range's whole
/// hours from the rollup tables, summed over the hours, and the hours' parts at its ends from the
/// events (``RollupRange``), added up by ``HourlyRollup`` as a batch's are.
enum SQLiteRollupReading {
    /// The columns of an event ``add(_:from:to:)`` reads, from `events e JOIN contexts c`.
    static let eventColumns = """
        e.timestamp_ms, e.name, e.kind, e.type, e.source, e.origin, e.abandoned, e.given_up, e.duration_ms,
        c.app_version, c.sdk_name, c.sdk_version
        """

    /// Adds the event in ``eventColumns`` at columns `first`… of `row`.
    static func add(_ row: SQLiteStatement, from first: Int32, to rollup: inout HourlyRollup) {
        let event = RollupEvent(
            timestamp: row.int64(at: first), name: row.text(at: first + 1) ?? "", kind: row.text(at: first + 2) ?? "",
            type: row.text(at: first + 3) ?? "", web: row.text(at: first + 4) == Batch.Source.web.rawValue,
            origin: row.text(at: first + 5), abandoned: row.int64(at: first + 6) != 0,
            givenUp: row.isNull(at: first + 7) ? nil : row.int64(at: first + 7) != 0,
            durationMilliseconds: row.isNull(at: first + 8) ? nil : row.double(at: first + 8))
        rollup.add(event, appVersion: row.text(at: first + 9) ?? "", sdkName: row.text(at: first + 10) ?? "",
                   sdkVersion: row.text(at: first + 11) ?? "")
    }

    /// The conditions that select a range's whole hours and an app version in a rollup table
    /// (` AND hour >= ?2 …`, each only when set: ?1 app, ?2 first hour, ?3 end hour, ?4 app
    /// version), and their binding.
    struct WholeHours {
        let hours: RollupRange.Hours
        let appVersion: String?

        var sql: String {
            var conditions = ""
            if hours.from != nil { conditions += " AND hour >= ?2" }
            if hours.to != nil { conditions += " AND hour < ?3" }
            if appVersion != nil { conditions += " AND app_version = ?4" }
            return conditions
        }

        func bind(_ statement: SQLiteStatement, app: String) throws(SQLiteError) {
            try statement.bind(app, at: 1)
            if let from = hours.from { try statement.bind(from, at: 2) }
            if let to = hours.to { try statement.bind(to, at: 3) }
            if let appVersion { try statement.bind(appVersion, at: 4) }
        }
    }

    /// The parts of `range`'s whole hours to read from the hour, day and past rows
    /// (``RollupDays``), in the caller's snapshot, each with its conditions.
    static func segments(_ c: SQLiteConnection, app: String, range: RollupRange,
                         appVersion: String?) throws(SQLiteError) -> [(segment: RollupDays.Segment, whole: WholeHours)] {
        guard let hours = range.hours else { return [] }
        let compacted = try SQLiteRollupCompaction.compactedBefore(c, app: app)
        let earliest = RollupDays.mayReadPast(hours, compactedBefore: compacted) ? try SQLiteRollupCompaction.firstHour(c, app: app) : nil
        return RollupDays.segments(hours, compactedBefore: compacted, earliest: earliest)
            .map { ($0, WholeHours(hours: $0.hours, appVersion: appVersion)) }
    }

    /// The rows for `filter`'s range and app version (its dimension selects aggregates only).
    /// Rows of whole hours carry hour −1: a report sums over hours.
    static func rollup(_ c: SQLiteConnection, app: String, filter: ReportFilter) throws(SQLiteError) -> HourlyRollup {
        let range = RollupRange(from: filter.from, to: filter.to)
        var rollup = HourlyRollup()
        for (segment, whole) in try segments(c, app: app, range: range, appVersion: filter.appVersion) {
            let conditions = whole.sql
            func bind(_ statement: SQLiteStatement) throws(SQLiteError) { try whole.bind(statement, app: app) }
            // total(): an integer sum() fails past 2^63 - 1, and the duration sums are the client's.
            let events = try c.prepare("""
                SELECT app_version, sdk_name, sdk_version, name, kind, type, source, sum(events), sum(abandoned), sum(given_up),
                       sum(measured), CAST(min(total(duration_us), 9223372036854775807.0) AS INTEGER)
                FROM \(segment.table(RollupDays.event)) WHERE app = ?1\(conditions)
                GROUP BY app_version, sdk_name, sdk_version, name, kind, type, source
                """)
            try bind(events)
            try SQLiteEventStore.walk(events) { r in
                rollup.add(HourlyRollup.EventKey(hour: -1, appVersion: r.text(at: 0) ?? "", sdkName: r.text(at: 1) ?? "",
                                                 sdkVersion: r.text(at: 2) ?? "", name: r.text(at: 3) ?? "", kind: r.text(at: 4) ?? "",
                                                 type: r.text(at: 5) ?? "", source: r.text(at: 6) ?? ""),
                           HourlyRollup.EventCounts(events: r.int64(at: 7), abandoned: r.int64(at: 8), givenUp: r.int64(at: 9),
                                                    measured: r.int64(at: 10), durationMicros: r.int64(at: 11)))
            }
            let durations = try c.prepare("""
                SELECT app_version, name, type, bucket, sum(count) FROM \(segment.table(RollupDays.duration)) WHERE app = ?1\(conditions)
                GROUP BY app_version, name, type, bucket
                """)
            try bind(durations)
            try SQLiteEventStore.walk(durations) { r in
                rollup.add(HourlyRollup.DurationKey(hour: -1, appVersion: r.text(at: 0) ?? "", name: r.text(at: 1) ?? "",
                                                    type: r.text(at: 2) ?? "", bucket: r.int64(at: 3)), count: r.int64(at: 4))
            }
            let origins = try c.prepare("""
                SELECT app_version, origin, sum(events) FROM \(segment.table(RollupDays.origin)) WHERE app = ?1\(conditions)
                GROUP BY app_version, origin
                """)
            try bind(origins)
            try SQLiteEventStore.walk(origins) { r in
                rollup.add(HourlyRollup.OriginKey(hour: -1, appVersion: r.text(at: 0) ?? "", origin: r.text(at: 1) ?? ""),
                           events: r.int64(at: 2))
            }
        }
        try addEdges(c, app: app, range: range, appVersion: filter.appVersion, to: &rollup)
        return rollup
    }

    /// The funnel rows for `filter`'s range and app version: whole hours from `funnel_hours` (and
    /// whole compacted days from `funnel_days`), summed over them, and the runs that start in the
    /// parts of an hour at either end from the events (``FunnelAnalysis``).
    static func funnels(_ c: SQLiteConnection, app: String, filter: ReportFilter) throws(SQLiteError) -> FunnelRollup {
        let range = RollupRange(from: filter.from, to: filter.to)
        var funnel = FunnelRollup()
        for (segment, whole) in try segments(c, app: app, range: range, appVersion: filter.appVersion) {
            let rows = try c.prepare("""
                SELECT use_case, step, sum(reached), sum(left_runs) FROM \(segment.table(RollupDays.funnel)) WHERE app = ?1\(whole.sql)
                GROUP BY use_case, step
                """)
            try whole.bind(rows, app: app)
            try SQLiteEventStore.walk(rows) { r in
                funnel.add(FunnelRollup.Key(hour: -1, appVersion: "", useCase: r.text(at: 0) ?? "", step: r.text(at: 1) ?? ""),
                           FunnelRollup.Counts(reached: r.int64(at: 2), left: r.int64(at: 3)))
            }
        }
        for part in range.edges {
            let edge = ReportFilter(from: part.from, to: part.to, appVersion: filter.appVersion)
            try FunnelAnalysis.add(c, app: app, selection: SQLiteReportSelection(filter: edge), byHour: true, to: &funnel)
        }
        return funnel
    }

    /// The session rows for `filter`'s range and app version: whole hours from `session_hours`
    /// (and whole compacted days from `session_days`), and the sessions that start in the parts
    /// of an hour at either end from their rows.
    static func sessions(_ c: SQLiteConnection, app: String, filter: ReportFilter) throws(SQLiteError) -> SessionRollup {
        let range = RollupRange(from: filter.from, to: filter.to)
        var sessions = SessionRollup()
        for (segment, whole) in try segments(c, app: app, range: range, appVersion: filter.appVersion) {
            // total(): an integer sum() fails past Int64's bounds, and the durations are the client's.
            let rows = try c.prepare("""
                SELECT bucket, sum(sessions), CAST(max(min(total(duration_us), 9223372036854775807.0), -9223372036854775808.0) AS INTEGER)
                FROM \(segment.table(RollupDays.session)) WHERE app = ?1\(whole.sql) GROUP BY bucket
                """)
            try whole.bind(rows, app: app)
            try SQLiteEventStore.walk(rows) { r in
                sessions.add(SessionRollup.Key(hour: -1, appVersion: "", bucket: r.int64(at: 0)),
                             SessionRollup.Counts(sessions: r.int64(at: 1), micros: r.int64(at: 2)))
            }
        }
        guard !range.edges.isEmpty else { return sessions }
        let edge = try c.prepare("""
            SELECT s.started_ms, s.ended_ms FROM sessions s INDEXED BY sessions_started JOIN contexts c ON c.id = s.context_id
            WHERE s.app = ?1 AND s.started_ms >= ?2 AND s.started_ms < ?3 AND (?4 IS NULL OR c.app_version = ?4)
            """)
        for part in range.edges {
            try edge.bind(app, at: 1)
            try edge.bind(part.from, at: 2)
            try edge.bind(part.to, at: 3)
            if let version = filter.appVersion { try edge.bind(version, at: 4) } else { try edge.bindNull(at: 4) }
            try SQLiteEventStore.walk(edge) { r in
                sessions.add(SessionRollup.Session(started: r.int64(at: 0), ended: r.isNull(at: 1) ? nil : r.int64(at: 1), appVersion: ""),
                             sign: 1)
            }
        }
        return sessions
    }

    /// What a series needs by hour from `from` to `to`: each hour's events (keyed by source only)
    /// and its network round trips' buckets, and the parts of an hour at either end from the
    /// events (all their keys).
    static func hourly(_ c: SQLiteConnection, app: String, from: Int64, to: Int64,
                       appVersion: String?) throws(SQLiteError) -> HourlyRollup {
        let range = RollupRange(from: from, to: to)
        var rollup = HourlyRollup()
        if let hours = range.hours, let first = hours.from, let end = hours.to {
            let version = appVersion == nil ? "" : " AND app_version = ?4"
            let events = try c.prepare("""
                SELECT hour, source, sum(events) FROM event_hours WHERE app = ?1 AND hour >= ?2 AND hour < ?3\(version)
                GROUP BY hour, source
                """)
            let durations = try c.prepare("""
                SELECT hour, bucket, sum(count) FROM duration_hours
                WHERE app = ?1 AND hour >= ?2 AND hour < ?3\(version) AND type = 'network'
                GROUP BY hour, bucket
                """)
            for statement in [events, durations] {
                try statement.bind(app, at: 1)
                try statement.bind(first, at: 2)
                try statement.bind(end, at: 3)
                if let appVersion { try statement.bind(appVersion, at: 4) }
            }
            try SQLiteEventStore.walk(events) { r in
                rollup.add(HourlyRollup.EventKey(hour: r.int64(at: 0), appVersion: "", sdkName: "", sdkVersion: "", name: "", kind: "",
                                                 type: "", source: r.text(at: 1) ?? ""),
                           HourlyRollup.EventCounts(events: r.int64(at: 2)))
            }
            try SQLiteEventStore.walk(durations) { r in
                rollup.add(HourlyRollup.DurationKey(hour: r.int64(at: 0), appVersion: "", name: "", type: "network", bucket: r.int64(at: 1)),
                           count: r.int64(at: 2))
            }
        }
        try addEdges(c, app: app, range: range, appVersion: appVersion, to: &rollup)
        return rollup
    }

    /// Adds the events of the range's parts of an hour.
    private static func addEdges(_ c: SQLiteConnection, app: String, range: RollupRange, appVersion: String?,
                                 to rollup: inout HourlyRollup) throws(SQLiteError) {
        guard !range.edges.isEmpty else { return }
        // Within one hour each: through events_hours, the hour bound in its own expression.
        let edge = try c.prepare("""
            SELECT \(eventColumns) FROM events e INDEXED BY events_hours JOIN contexts c ON c.id = e.context_id
            WHERE e.app = ?1 AND e.timestamp_ms / 3600000 = ?2 / 3600000 AND e.timestamp_ms >= ?2 AND e.timestamp_ms < ?3
                AND (?4 IS NULL OR c.app_version = ?4)
            """)
        for part in range.edges {
            try edge.bind(app, at: 1)
            try edge.bind(part.from, at: 2)
            try edge.bind(part.to, at: 3)
            if let appVersion { try edge.bind(appVersion, at: 4) } else { try edge.bindNull(at: 4) }
            try SQLiteEventStore.walk(edge) { add($0, from: 0, to: &rollup) }
        }
    }
}
