import Foundation
import Logging
import PostgresNIO

/// The funnels' rollup on PostgreSQL (``FunnelRollup``), kept by each batch's transaction as on
/// SQLite, where one writer orders every batch; here batches of several collectors commit at
/// once, and each must see every step of a run that an earlier one stored. So a batch that
/// touches a run locks it (an advisory lock on the run's key, held to the commit, taken after the
/// batch's events are in and in key order, so no two batches wait on each other in a cycle) and
/// only then reads the run and its steps: whoever locks next sees this batch's steps committed,
/// and what this batch adds is what the run counts now minus what it counted without them.
enum PostgresFunnels {
    /// The first key of the two-key advisory locks that guard runs: "NF" (two-key locks are apart
    /// from the single-key ones of ``PostgresSchema``).
    static let lockSpace: Int32 = 0x4E46

    /// A run's lock: a hash of its app and key (``AdvisoryLockKey``).
    static func lock(app: String, _ key: FunnelRollup.RunKey) -> Int32 {
        var lock = AdvisoryLockKey(app: app)
        withUnsafeBytes(of: key.transaction.uuid) { lock.add($0) }
        withUnsafeBytes(of: key.span.littleEndian) { lock.add($0) }
        return lock.value
    }

    /// What the batch's new events (`newIDs`) change in the funnels of the runs they touch
    /// (`keys`), in the batch's transaction, app and context. A run the backfill has yet to add
    /// is left to it: while the app's backfill of runs is pending, the batch holds the backfill
    /// lock shared, so no step of it runs between the cursor read here and the commit.
    static func corrections(_ c: PostgresConnection, app: String, context: Int64, appVersion: String,
                            keys: Set<FunnelRollup.RunKey>, newIDs: Set<Int64>, logger: Logger) async throws -> FunnelRollup {
        let locks = Set(keys.map { lock(app: app, $0) }).sorted()
        // unnest returns the array's order, and the locks are taken row by row in it.
        try await c.query("SELECT pg_advisory_xact_lock(\(lockSpace), k) FROM unnest(\(locks)::int4[]) AS k", logger: logger)
        var pending = try await backfillPending(c, app: app, logger: logger)
        if pending != nil {
            try await c.query("SELECT pg_advisory_xact_lock_shared(\(PostgresSchema.backfillLock))", logger: logger)
            pending = try await backfillPending(c, app: app, logger: logger)
        }
        let ordered = Array(keys)
        var runs: [FunnelRollup.RunKey: [(id: Int64, run: FunnelRollup.Run)]] = [:]
        for try await (id, transaction, span, name, timestamp, givenUp, received) in try await c.query("""
            SELECT u.id, u.transaction_id, u.span_id, u.name, u.timestamp_ms, u.given_up, u.received_ms
            FROM events u JOIN unnest(\(ordered.map(\.transaction))::uuid[], \(ordered.map(\.span))::int8[]) AS k (txn, span)
                ON u.app = \(app) AND u.transaction_id = k.txn AND u.span_id = k.span
            WHERE u.given_up IS NOT NULL AND u.span_id IS NOT NULL AND u.context_id = \(context)
            """, logger: logger).decode((Int64, UUID, Int64, String, Int64, Bool, Int64).self) {
            if let (next, last, before) = pending, (next...last).contains(id), received < before { continue }
            runs[FunnelRollup.RunKey(transaction: transaction, span: span), default: []].append(
                (id, FunnelRollup.Run(hour: timestamp / HourlyRollup.hourMilliseconds, appVersion: appVersion, useCase: name,
                                      givenUp: givenUp)))
        }
        guard !runs.isEmpty else { return FunnelRollup() }
        let found = Array(runs.keys)
        var steps: [FunnelRollup.RunKey: [FunnelRollup.Step]] = [:]
        for try await (id, transaction, parent, name, timestamp) in try await c.query("""
            SELECT s.id, s.transaction_id, s.parent_span, s.name, s.timestamp_ms
            FROM events s JOIN unnest(\(found.map(\.transaction))::uuid[], \(found.map(\.span))::int8[]) AS k (txn, span)
                ON s.app = \(app) AND s.transaction_id = k.txn AND s.parent_span = k.span
            WHERE s.parent_span IS NOT NULL AND s.context_id = \(context)
            """, logger: logger).decode((Int64, UUID, Int64, String, Int64).self) {
            steps[FunnelRollup.RunKey(transaction: transaction, span: parent), default: []].append(
                FunnelRollup.Step(id: id, name: name, timestamp: timestamp))
        }
        var funnel = FunnelRollup()
        for (key, found) in runs {
            for (id, run) in found {
                funnel.correct(run, steps: steps[key] ?? [], isNew: newIDs.contains(id), newSteps: newIDs)
            }
        }
        return funnel
    }

    /// The app's runs the backfill has still to add: (next row id, last, received before), or `nil`.
    private static func backfillPending(_ c: PostgresConnection, app: String, logger: Logger) async throws -> (Int64, Int64, Int64)? {
        var pending: (Int64, Int64, Int64)?
        for try await row in try await c.query("""
            SELECT next_run, last_run, runs_received_before_ms FROM rollup_backfill WHERE app = \(app) AND next_run <= last_run
            """, logger: logger).decode((Int64, Int64, Int64).self) {
            pending = row
        }
        return pending
    }
}
