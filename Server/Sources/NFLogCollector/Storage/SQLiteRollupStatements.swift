@_spi(NFLogShared) import NFLogSupport

/// The writer's statements that add a batch's ``HourlyRollup`` to the rollup tables (migration
/// 11), in the batch's transaction: one upsert per key of the batch, never per event.
struct SQLiteRollupStatements {
    private let eventHour, durationHour, originHour: SQLiteStatement
    /// The funnels' and the sessions' rollups (migration 12).
    let funnels: SQLiteFunnelStatements
    let sessions: SQLiteSessionStatements

    init(_ c: SQLiteConnection) throws(SQLiteError) {
        funnels = try SQLiteFunnelStatements(c)
        sessions = try SQLiteSessionStatements(c)
        // The duration sum saturates at Int64.max, as the other client-given sums do.
        eventHour = try c.prepare("""
            INSERT INTO event_hours (app, hour, app_version, sdk_name, sdk_version, name, kind, type, source,
                                     events, abandoned, given_up, measured, duration_us)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (app, hour, app_version, sdk_name, sdk_version, name, kind, type, source) DO UPDATE SET events = events + excluded.events, abandoned = abandoned + excluded.abandoned,
                given_up = given_up + excluded.given_up, measured = measured + excluded.measured,
                duration_us = min(duration_us + excluded.duration_us, 9223372036854775807)
            """)
        durationHour = try c.prepare("""
            INSERT INTO duration_hours (app, hour, app_version, name, type, bucket, count) VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT (app, hour, app_version, name, type, bucket) DO UPDATE SET count = count + excluded.count
            """)
        originHour = try c.prepare("""
            INSERT INTO origin_hours (app, hour, app_version, origin, events) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT (app, hour, app_version, origin) DO UPDATE SET events = events + excluded.events
            """)
    }

    /// Adds the rows, inside the caller's transaction.
    func add(_ rollup: HourlyRollup, app: String) throws(SQLiteError) {
        for (key, counts) in rollup.events {
            try eventHour.bind(app, at: 1)
            try eventHour.bind(key.hour, at: 2)
            try eventHour.bind(key.appVersion, at: 3)
            try eventHour.bind(key.sdkName, at: 4)
            try eventHour.bind(key.sdkVersion, at: 5)
            try eventHour.bind(key.name, at: 6)
            try eventHour.bind(key.kind, at: 7)
            try eventHour.bind(key.type, at: 8)
            try eventHour.bind(key.source, at: 9)
            try eventHour.bind(counts.events, at: 10)
            try eventHour.bind(counts.abandoned, at: 11)
            try eventHour.bind(counts.givenUp, at: 12)
            try eventHour.bind(counts.measured, at: 13)
            try eventHour.bind(counts.durationMicros, at: 14)
            try eventHour.run()
        }
        for (key, count) in rollup.durations {
            try durationHour.bind(app, at: 1)
            try durationHour.bind(key.hour, at: 2)
            try durationHour.bind(key.appVersion, at: 3)
            try durationHour.bind(key.name, at: 4)
            try durationHour.bind(key.type, at: 5)
            try durationHour.bind(key.bucket, at: 6)
            try durationHour.bind(count, at: 7)
            try durationHour.run()
        }
        for (key, count) in rollup.origins {
            try originHour.bind(app, at: 1)
            try originHour.bind(key.hour, at: 2)
            try originHour.bind(key.appVersion, at: 3)
            try originHour.bind(key.origin, at: 4)
            try originHour.bind(count, at: 5)
            try originHour.run()
        }
    }
}
