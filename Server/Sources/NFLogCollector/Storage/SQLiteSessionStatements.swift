import Foundation
@_spi(NFLogShared) import NFLogSupport

/// The writer's statements that keep the sessions' rollup, `session_hours` (migration 12), in
/// the batch's transaction: a session as stored before the batch lists it, whether the backfill
/// has added it yet, and the rows' upsert (``SessionRollup``).
struct SQLiteSessionStatements {
    private let stored, counted, upsert: SQLiteStatement

    init(_ c: SQLiteConnection) throws(SQLiteError) {
        stored = try c.prepare("""
            SELECT s.started_ms, s.ended_ms, c.app_version FROM sessions s JOIN contexts c ON c.id = s.context_id
            WHERE s.app = ?1 AND s.uuid = ?2
            """)
        // Row values compare column by column, as the sessions' key orders them.
        counted = try c.prepare("""
            SELECT sessions_done OR coalesce((?1, ?2) <= (sessions_after_app, sessions_after_uuid), 0) FROM rollup_backfill WHERE id = 1
            """)
        // The duration sum saturates at Int64's bounds, as the other client-given sums do.
        upsert = try c.prepare("""
            INSERT INTO session_hours (app, hour, app_version, bucket, sessions, duration_us) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT (app, hour, app_version, bucket) DO UPDATE SET sessions = sessions + excluded.sessions,
                duration_us = max(min(duration_us + excluded.duration_us, 9223372036854775807), -9223372036854775808)
            """)
    }

    /// The session as stored now, `nil` if not yet; and whether the rollup holds it (or will,
    /// once a batch lists it): false while the backfill has yet to reach it.
    func stored(app: String, id: UUID) throws(SQLiteError) -> (session: SessionRollup.Session?, counted: Bool) {
        try stored.bind(app, at: 1)
        try stored.bind(id, at: 2)
        let session = try stored.collect { row in
            SessionRollup.Session(started: row.int64(at: 0), ended: row.isNull(at: 1) ? nil : row.int64(at: 1),
                                  appVersion: row.text(at: 2) ?? "")
        }.first
        try counted.bind(app, at: 1)
        try counted.bind(id, at: 2)
        return (session, try counted.collect { $0.int64(at: 0) }.first == 1)
    }

    /// Adds the rows, inside the caller's transaction.
    func add(_ sessions: SessionRollup, app: String) throws(SQLiteError) {
        for (key, counts) in sessions.rows {
            try upsert.bind(app, at: 1)
            try upsert.bind(key.hour, at: 2)
            try upsert.bind(key.appVersion, at: 3)
            try upsert.bind(key.bucket, at: 4)
            try upsert.bind(counts.sessions, at: 5)
            try upsert.bind(counts.micros, at: 6)
            try upsert.run()
        }
    }
}
