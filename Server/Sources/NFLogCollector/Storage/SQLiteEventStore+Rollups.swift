@_spi(NFLogShared) import NFLogSupport

extension SQLiteEventStore {
    /// Every rollup row of the app, read on the reader in one snapshot.
    func hourlyRollup(app: String) async throws -> HourlyRollup {
        try await onReadQueue(timeLimit: readTimeLimit) { c in
            try c.execute("BEGIN")
            defer { c.rollbackIfNeeded() }
            var rollup = HourlyRollup()
            let events = try c.prepare("""
                SELECT hour, app_version, sdk_name, sdk_version, name, kind, type, source, events, abandoned, given_up, measured, duration_us
                FROM event_hours WHERE app = ?1
                """)
            try events.bind(app, at: 1)
            try Self.walk(events) { r in
                rollup.add(HourlyRollup.EventKey(hour: r.int64(at: 0), appVersion: r.text(at: 1) ?? "", sdkName: r.text(at: 2) ?? "",
                                                 sdkVersion: r.text(at: 3) ?? "", name: r.text(at: 4) ?? "", kind: r.text(at: 5) ?? "",
                                                 type: r.text(at: 6) ?? "", source: r.text(at: 7) ?? ""),
                           HourlyRollup.EventCounts(events: r.int64(at: 8), abandoned: r.int64(at: 9), givenUp: r.int64(at: 10),
                                                    measured: r.int64(at: 11), durationMicros: r.int64(at: 12)))
            }
            let durations = try c.prepare("SELECT hour, app_version, name, type, bucket, count FROM duration_hours WHERE app = ?1")
            try durations.bind(app, at: 1)
            try Self.walk(durations) { r in
                rollup.add(HourlyRollup.DurationKey(hour: r.int64(at: 0), appVersion: r.text(at: 1) ?? "", name: r.text(at: 2) ?? "",
                                                    type: r.text(at: 3) ?? "", bucket: r.int64(at: 4)), count: r.int64(at: 5))
            }
            let origins = try c.prepare("SELECT hour, app_version, origin, events FROM origin_hours WHERE app = ?1")
            try origins.bind(app, at: 1)
            try Self.walk(origins) { r in
                rollup.add(HourlyRollup.OriginKey(hour: r.int64(at: 0), appVersion: r.text(at: 1) ?? "", origin: r.text(at: 2) ?? ""),
                           events: r.int64(at: 3))
            }
            return rollup
        }
    }
}

extension SQLiteEventStore {
    /// The funnel rows for `filter` as the report reads them (``SQLiteRollupReading``), or
    /// (`fromEvents`) computed from the events alone by ``FunnelAnalysis``, in one snapshot.
    func funnelRows(app: String, filter: ReportFilter, fromEvents: Bool) async throws -> FunnelRollup {
        try await onReadQueue(timeLimit: readTimeLimit) { c in
            try c.execute("BEGIN")
            defer { c.rollbackIfNeeded() }
            guard fromEvents else { return try SQLiteRollupReading.funnels(c, app: app, filter: filter) }
            var funnel = FunnelRollup()
            try FunnelAnalysis.add(c, app: app, selection: SQLiteReportSelection(filter: filter), to: &funnel)
            return funnel
        }
    }
}

extension SQLiteEventStore {
    /// The app's session rows: as the rollup holds them, or (`fromSessions`) as its stored
    /// sessions add up now, in one snapshot.
    func sessionRows(app: String, fromSessions: Bool) async throws -> SessionRollup {
        try await onReadQueue(timeLimit: readTimeLimit) { c in
            try c.execute("BEGIN")
            defer { c.rollbackIfNeeded() }
            var sessions = SessionRollup()
            if fromSessions {
                let rows = try c.prepare("""
                    SELECT s.started_ms, s.ended_ms, c.app_version FROM sessions s JOIN contexts c ON c.id = s.context_id WHERE s.app = ?1
                    """)
                try rows.bind(app, at: 1)
                try SQLiteEventStore.walk(rows) { r in
                    sessions.add(SessionRollup.Session(started: r.int64(at: 0), ended: r.isNull(at: 1) ? nil : r.int64(at: 1),
                                                       appVersion: r.text(at: 2) ?? ""), sign: 1)
                }
            } else {
                let rows = try c.prepare("SELECT hour, app_version, bucket, sessions, duration_us FROM session_hours WHERE app = ?1")
                try rows.bind(app, at: 1)
                try SQLiteEventStore.walk(rows) { r in
                    sessions.add(SessionRollup.Key(hour: r.int64(at: 0), appVersion: r.text(at: 1) ?? "", bucket: r.int64(at: 2)),
                                 SessionRollup.Counts(sessions: r.int64(at: 3), micros: r.int64(at: 4)))
                }
            }
            return sessions
        }
    }
}
