import Foundation
import Logging
import PostgresNIO

/// The sessions' rollup on PostgreSQL (``SessionRollup``), kept by each batch's transaction as on
/// SQLite. A session's change is its row after the batch minus its row before, so the batch must
/// read the row before while no other batch can change it: it locks each session it lists (an
/// advisory lock per session, in key order, as its first statement, when it holds nothing yet)
/// and reads them under the locks. While the app's backfill of sessions is pending, the batch
/// also holds the backfill lock shared, so no step of it runs between the cursor read here and
/// the commit.
enum PostgresSessions {
    /// The first key of the two-key advisory locks that guard sessions: "NS".
    static let lockSpace: Int32 = 0x4E53

    /// A session's lock: a hash of its app and id (``AdvisoryLockKey``).
    static func lock(app: String, _ id: UUID) -> Int32 {
        var lock = AdvisoryLockKey(app: app)
        withUnsafeBytes(of: id.uuid) { lock.add($0) }
        return lock.value
    }

    /// Locks the batch's sessions and reads them as stored: each one's row (nil: new) and
    /// whether the rollup counts it (false while the backfill has yet to reach it).
    static func lockAndRead(_ c: PostgresConnection, app: String, ids: [UUID],
                            logger: Logger) async throws -> [UUID: (session: SessionRollup.Session?, counted: Bool)] {
        let locks = Set(ids.map { lock(app: app, $0) }).sorted()
        try await c.query("SELECT pg_advisory_xact_lock(\(lockSpace), k) FROM unnest(\(locks)::int4[]) AS k", logger: logger)
        var pending = false
        for try await done in try await c.query("SELECT sessions_done FROM rollup_backfill WHERE app = \(app)",
                                                logger: logger).decode(Bool.self) {
            pending = !done
        }
        if pending {
            try await c.query("SELECT pg_advisory_xact_lock_shared(\(PostgresSchema.backfillLock))", logger: logger)
        }
        var stored: [UUID: (session: SessionRollup.Session?, counted: Bool)] = [:]
        // No cursor row (an app new since the migration) or a finished one: every session counts.
        for try await (id, started, ended, appVersion, counted) in try await c.query("""
            SELECT k.id, s.started_ms, s.ended_ms, c.app_version,
                   coalesce(b.sessions_done OR k.id <= b.sessions_after, b.app IS NULL)
            FROM unnest(\(ids)::uuid[]) AS k (id)
            LEFT JOIN sessions s ON s.app = \(app) AND s.uuid = k.id
            LEFT JOIN contexts c ON c.id = s.context_id
            LEFT JOIN rollup_backfill b ON b.app = \(app)
            """, logger: logger).decode((UUID, Int64?, Int64?, String?, Bool).self) {
            let session = started.map { SessionRollup.Session(started: $0, ended: ended, appVersion: appVersion ?? "") }
            stored[id] = (session, counted)
        }
        return stored
    }
}
