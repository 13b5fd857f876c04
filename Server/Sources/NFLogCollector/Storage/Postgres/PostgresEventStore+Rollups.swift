import PostgresNIO

extension PostgresEventStore {
    /// Every rollup row of the app, keyed rows and deltas summed, in one snapshot.
    func hourlyRollup(app: String) async throws -> HourlyRollup {
        let logger = Logger(label: "nflog-collector.postgres.rollups")
        return try await read { c in
            try await c.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ", logger: logger)
            var rollup = HourlyRollup()
            for try await (hour, appVersion, sdkName, sdkVersion, name, kind, type, source, events, abandoned, givenUp, measured, micros)
                in try await c.query("""
                    SELECT hour, app_version, sdk_name, sdk_version, name, kind, type, source, events, abandoned, given_up, measured, duration_us
                    FROM event_hours_now WHERE app = \(app)
                    """, logger: logger).decode((Int64, String, String, String, String, String, String, String, Int64, Int64, Int64,
                                                 Int64, Int64).self) {
                rollup.add(HourlyRollup.EventKey(hour: hour, appVersion: appVersion, sdkName: sdkName, sdkVersion: sdkVersion, name: name, kind: kind,
                                                 type: type, source: source),
                           HourlyRollup.EventCounts(events: events, abandoned: abandoned, givenUp: givenUp, measured: measured,
                                                    durationMicros: micros))
            }
            for try await (hour, appVersion, name, type, bucket, count) in try await c.query("""
                SELECT hour, app_version, name, type, bucket, count FROM duration_hours_now WHERE app = \(app)
                """, logger: logger).decode((Int64, String, String, String, Int64, Int64).self) {
                rollup.add(HourlyRollup.DurationKey(hour: hour, appVersion: appVersion, name: name, type: type, bucket: bucket),
                           count: count)
            }
            for try await (hour, appVersion, origin, events) in try await c.query("""
                SELECT hour, app_version, origin, events FROM origin_hours_now WHERE app = \(app)
                """, logger: logger).decode((Int64, String, String, Int64).self) {
                rollup.add(HourlyRollup.OriginKey(hour: hour, appVersion: appVersion, origin: origin), events: events)
            }
            return rollup
        }
    }
}

extension PostgresEventStore {
    /// The funnel rows for `filter` as the report reads them (``PostgresRollupReading``), or
    /// (`fromEvents`) computed from the events alone, in one snapshot.
    func funnelRows(app: String, filter: ReportFilter, fromEvents: Bool) async throws -> FunnelRollup {
        let logger = Logger(label: "nflog-collector.postgres.rollups")
        return try await read { c in
            try await c.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ", logger: logger)
            guard fromEvents else { return try await PostgresRollupReading.funnels(c, app: app, filter: filter, logger: logger) }
            var funnel = FunnelRollup()
            try await PostgresReport.addFunnels(c, app: app, filter: filter, logger: logger, to: &funnel)
            return funnel
        }
    }
}

extension PostgresEventStore {
    /// The app's session rows: as the rollup holds them (keyed rows and deltas), or
    /// (`fromSessions`) as its stored sessions add up now, in one snapshot.
    func sessionRows(app: String, fromSessions: Bool) async throws -> SessionRollup {
        let logger = Logger(label: "nflog-collector.postgres.rollups")
        return try await read { c in
            try await c.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ", logger: logger)
            var sessions = SessionRollup()
            if fromSessions {
                for try await (started, ended, appVersion) in try await c.query("""
                    SELECT s.started_ms, s.ended_ms, c.app_version FROM sessions s JOIN contexts c ON c.id = s.context_id
                    WHERE s.app = \(app)
                    """, logger: logger).decode((Int64, Int64?, String).self) {
                    sessions.add(SessionRollup.Session(started: started, ended: ended, appVersion: appVersion), sign: 1)
                }
            } else {
                for try await (hour, appVersion, bucket, count, micros) in try await c.query("""
                    SELECT hour, app_version, bucket, sessions, duration_us FROM session_hours_now WHERE app = \(app)
                    """, logger: logger).decode((Int64, String, Int64, Int64, Int64).self) {
                    sessions.add(SessionRollup.Key(hour: hour, appVersion: appVersion, bucket: bucket),
                                 SessionRollup.Counts(sessions: count, micros: micros))
                }
            }
            return sessions
        }
    }
}
