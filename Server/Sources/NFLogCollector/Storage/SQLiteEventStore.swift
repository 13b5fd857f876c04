import Dispatch
package import Foundation
package import Logging
import Synchronization
@_spi(NFLogShared) package import NFLogSupport

/// The default ``EventStore``: one SQLite file (WAL), created if missing.
///
/// Three connections, each used only on its own serial queue: the writer stores batches one
/// transaction at a time (what SQLite allows anyway); the reader answers reports, lookups, the
/// app list and exports beside it (WAL lets readers run while the writer commits), so a report
/// over millions of events never holds up an upload; and a ``WALCheckpointer`` copies the log
/// into the file after a read, so the writer never does that catch-up. The async callers wait
/// without blocking a thread.
package final class SQLiteEventStore: @unchecked Sendable {
    // @unchecked: `connection` and `statements` are touched only on `queue`; `reader` only on
    // `readQueue`.
    private let queue = DispatchQueue(label: "nflog-collector.store")
    private var connection: SQLiteConnection?
    private var statements: Statements?
    private let readQueue = DispatchQueue(label: "nflog-collector.store.read")
    private var reader: SQLiteConnection?
    /// Reads queued on or running on `readQueue`: what must not wait behind a long report (the
    /// stats' span) looks here first.
    private let readsInProgress = Mutex(0)
    private let checkpointer: WALCheckpointer
    /// Adds the events stored before the rollups to them (``SQLiteRollupBackfill``), when there
    /// are any; set once at the end of `init`, cancelled by ``close()``.
    private let backfill = Mutex<Task<Void, Never>?>(nil)
    /// Compacts past days into the daily rollups (``runCompaction()``), once the backfill is
    /// done; set once at the end of `init`, cancelled by ``close()``.
    private let compaction = Mutex<Task<Void, Never>?>(nil)
    let logger: Logger
    /// Row ids a backfill step reads (``SQLiteRollupBackfill/stepSize``).
    private let backfillStep: Int
    package let path: String

    /// How long one read (a report, a lookup, the app list, a page of an export) may run before
    /// it is stopped with ``ReadTimeLimitExceeded``.
    package let readTimeLimit: Duration

    /// Opens (creating if needed) and migrates the database at `path`.
    /// - Parameters:
    ///   - durableCommits: fsync each commit before it returns (`synchronous=FULL`), so a batch
    ///     acknowledged with 2xx survives a power cut or an OS crash: the SDK deletes its copy on
    ///     that answer. `false` (no fsync; a kill -9 still loses nothing) only where nothing is
    ///     meant to last, such as tests.
    ///   - readTimeLimit: how long one read may run on the reader connection before it is stopped
    ///     and throws ``ReadTimeLimitExceeded``, so a report over a huge store cannot hold the
    ///     reader indefinitely. It counts from when the read starts, not while it waits behind
    ///     another. ``exportEvents(app:line:)`` (the operator's local export) has no limit.
    ///   - logger: where the rollups' backfill says how far it got (a store from before them).
    package convenience init(path: String, durableCommits: Bool = true, readTimeLimit: Duration = .seconds(30),
                            logger: Logger = Logger(label: "nflog-collector.sqlite")) throws {
        try self.init(path: path, durableCommits: durableCommits, readTimeLimit: readTimeLimit, logger: logger,
                      backfillStep: SQLiteRollupBackfill.stepSize, compacts: true)
    }

    /// As the public initialiser, with the backfill's steps of `backfillStep` row ids (tests
    /// take small ones, to store batches between them), and without compacting past days in the
    /// background unless `compacts` (tests compact when they choose, ``compactRollups(before:)``).
    init(path: String, durableCommits: Bool, readTimeLimit: Duration, logger: Logger, backfillStep: Int, compacts: Bool) throws {
        self.backfillStep = backfillStep
        self.readTimeLimit = readTimeLimit
        self.logger = logger
        self.path = path
        let connection = try SQLiteConnection(path: path, busyTimeoutMilliseconds: 5_000)
        // SQLite opens a file it may not write for reading, without an error: said now, not at
        // the first upload.
        if connection.isReadOnly {
            throw SQLiteStoreError(.notWritable, path: path, """
                \(path) is read-only to this process: the collector writes to its database; make it writable or choose another file
                """)
        }
        try connection.enableWriteAheadLog(durableCommits: durableCommits)
        try SQLiteMigrator.migrate(connection, CollectorSchema.migrations)
        self.statements = try Statements(connection)
        self.connection = connection
        // After the writer made the file WAL and migrated it; read-only by construction.
        let reader = try SQLiteConnection(path: path, busyTimeoutMilliseconds: 5_000)
        try reader.execute("PRAGMA query_only = 1")
        self.reader = reader
        self.checkpointer = try WALCheckpointer(path: path, writer: connection, writerQueue: queue)
        // A first step of each kind now (the events, then the runs): a store of up to a step's
        // events opens with its rollups complete.
        if try SQLiteRollupBackfill.isPending(connection), let statements {
            _ = try SQLiteRollupBackfill.step(connection, statements.rollups, limit: backfillStep)
            if try SQLiteRollupBackfill.isPending(connection) {
                _ = try SQLiteRollupBackfill.step(connection, statements.rollups, limit: backfillStep)
            }
            if try SQLiteRollupBackfill.isPending(connection) {
                backfill.withLock { $0 = Task { await self.runBackfill() } }
            }
        }
        if compacts {
            compaction.withLock {
                $0 = Task {
                    await self.rollupsBackfilled()
                    await self.runCompaction()
                }
            }
        }
    }

    /// Steps the backfill until it is done or the store closes (``RollupBackfillLoop``).
    private func runBackfill() async {
        await RollupBackfillLoop.run(logger: logger) {
            let limit = backfillStep
            guard let progress = try await onQueue({ c, s in try SQLiteRollupBackfill.step(c, s.rollups, limit: limit) }) else {
                return .done
            }
            return .added(progress.added, remaining: progress.remaining)
        }
    }

    /// Returns once the backfill is done (at once when there was none), or the store closed.
    func rollupsBackfilled() async {
        await backfill.withLock { $0 }?.value
    }

    /// Opens the collector database at `path` to read it only, as `nflog-collector report` and
    /// `export` do: the file is never created, migrated or written (`SQLITE_OPEN_READONLY`), and
    /// every write through the store fails.
    /// - Throws: ``SQLiteStoreError`` when there is no such file, it cannot be read, it is not a
    ///   collector database, or its schema is another release's (older: `serve` migrates it).
    package init(readingOnly path: String, readTimeLimit: Duration = .seconds(30)) throws {
        self.readTimeLimit = readTimeLimit
        self.logger = Logger(label: "nflog-collector.sqlite")
        self.backfillStep = SQLiteRollupBackfill.stepSize
        self.path = path
        let connection = try CollectorSchema.openForReading(path)
        try connection.execute("PRAGMA query_only = 1")
        self.statements = try Statements(connection)
        self.connection = connection
        let reader = try SQLiteConnection(path: path, busyTimeoutMilliseconds: 5_000, mode: .readOnly)
        try reader.execute("PRAGMA query_only = 1")
        self.reader = reader
        self.checkpointer = WALCheckpointer(readOnlyWriter: connection, writerQueue: queue)
    }

    /// A `PRAGMA` of the writer's connection, read on its queue, for the tests that hold the
    /// store to its settings (`synchronous` 2: FULL, every acknowledgement fsynced;
    /// `wal_autocheckpoint`: the writer's checkpoints, off while a read runs).
    func writerPragma(_ name: String) throws -> Int64? {
        try queue.sync { () throws -> Int64? in try connection?.scalarInt("PRAGMA \(name)") }
    }

    private struct Statements {
        let insertContext, findContext, upsertSession, upsertBatch, isNewBatch, upsertTotals, upsertName: SQLiteStatement
        let upsertContextCount: SQLiteStatement
        let totals, names, prunes: SQLiteStatement
        let upsertPrune, insertReset, addDiagnostics: SQLiteStatement
        let insertAggregate, addAggregates, aggregateTotals: SQLiteStatement
        let rollups: SQLiteRollupStatements
        let eventInserts: SQLiteEventInserts

        init(_ c: SQLiteConnection) throws(SQLiteError) {
            insertContext = try c.prepare("""
                INSERT INTO contexts (app, sdk_name, sdk_version, app_id, app_version, os_name, os_version, locale)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING
                """)
            findContext = try c.prepare("""
                SELECT id FROM contexts WHERE app = ? AND sdk_name = ? AND sdk_version = ? AND app_id = ?
                AND app_version = ? AND os_name = ? AND os_version = ? AND locale = ?
                """)
            // A session's end time only grows: the latest suspension seen wins. So does the time
            // it was last received, which retention reads (migration 8).
            upsertSession = try c.prepare("""
                INSERT INTO sessions (app, uuid, context_id, started_ms, ended_ms, last_received_ms) VALUES (?, ?, ?, ?, ?, ?)
                ON CONFLICT (app, uuid) DO UPDATE SET ended_ms = CASE
                    WHEN excluded.ended_ms IS NULL THEN sessions.ended_ms
                    WHEN sessions.ended_ms IS NULL THEN excluded.ended_ms
                    ELSE max(sessions.ended_ms, excluded.ended_ms) END,
                    last_received_ms = max(coalesce(sessions.last_received_ms, excluded.last_received_ms), excluded.last_received_ms)
                """)
            eventInserts = try SQLiteEventInserts(c)
            isNewBatch = try c.prepare("SELECT count(*) FROM batches WHERE app = ? AND uuid = ?")
            upsertBatch = try c.prepare("""
                INSERT INTO batches (app, uuid, first_received_ms, last_received_ms, requests, accepted, duplicates)
                VALUES (?, ?, ?, ?, 1, ?, ?)
                ON CONFLICT (app, uuid) DO UPDATE SET last_received_ms = excluded.last_received_ms,
                    requests = requests + 1, accepted = accepted + excluded.accepted, duplicates = duplicates + excluded.duplicates
                """)
            upsertTotals = try c.prepare("""
                INSERT INTO totals (app, events, duplicates, batches, requests) VALUES (?, ?, ?, ?, 1)
                ON CONFLICT (app) DO UPDATE SET events = events + excluded.events, duplicates = duplicates + excluded.duplicates,
                    batches = batches + excluded.batches, requests = requests + 1
                """)
            upsertName = try c.prepare("""
                INSERT INTO name_counts (app, name, count) VALUES (?, ?, ?)
                ON CONFLICT (app, name) DO UPDATE SET count = count + excluded.count
                """)
            upsertContextCount = try c.prepare("""
                INSERT INTO context_counts (context_id, events) VALUES (?, ?)
                ON CONFLICT (context_id) DO UPDATE SET events = events + excluded.events
                """)
            totals = try c.prepare("""
                SELECT events, duplicates, batches, requests, abandoned, pruned, database_resets, quarantined FROM totals WHERE app = ?
                """)
            names = try c.prepare("SELECT name, count FROM name_counts WHERE app = ? ORDER BY name")
            prunes = try c.prepare("SELECT name, count FROM device_prunes WHERE app = ? ORDER BY name")
            upsertPrune = try c.prepare("""
                INSERT INTO device_prunes (app, name, count) VALUES (?, ?, ?)
                ON CONFLICT (app, name) DO UPDATE SET count = count + excluded.count
                """)
            insertReset = try c.prepare("INSERT INTO device_resets (app, batch_id, at_ms, reason) VALUES (?, ?, ?, ?)")
            addDiagnostics = try c.prepare("""
                UPDATE totals SET abandoned = abandoned + ?1, pruned = pruned + ?2, database_resets = database_resets + ?3,
                    quarantined = min(quarantined + ?5, 9223372036854775807) WHERE app = ?4
                """)
            insertAggregate = try c.prepare("""
                INSERT INTO aggregates (app, uuid, batch_id, session, context_id, name, type, start_ms, end_ms, window_s, count,
                                        dimensions, overflow, measures, received_ms)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (app, uuid) DO NOTHING
                """)
            // Counts are up to 2^63 - 1 each: a sum past that (SQLite then computes in floating
            // point) stays at the largest integer, rather than failing every later batch.
            addAggregates = try c.prepare("""
                UPDATE totals SET aggregates = aggregates + ?1, aggregate_duplicates = aggregate_duplicates + ?2,
                    aggregated_events = min(aggregated_events + ?3, 9223372036854775807) WHERE app = ?4
                """)
            aggregateTotals = try c.prepare("""
                SELECT aggregates, aggregate_duplicates, aggregated_events, events_expired, aggregates_expired FROM totals WHERE app = ?
                """)
            rollups = try SQLiteRollupStatements(c)
        }
    }

    /// Runs `body` on the writer's queue, after the writes queued before it.
    func onWriter<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> T) async throws -> T {
        try await onQueue { connection, _ in try body(connection) }
    }

    private func onQueue<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection, Statements) throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async {
                guard let connection = self.connection, let statements = self.statements else {
                    return continuation.resume(throwing: SQLiteError(code: 21, message: "the store is closed"))
                }
                continuation.resume(with: Result { try body(connection, statements) })
            }
        }
    }

    /// Runs `body` on the reader within the store's ``readTimeLimit``.
    private func onReadQueue<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> T) async throws -> T {
        try await onReadQueue(timeLimit: readTimeLimit, body)
    }

    /// Runs `body` on the reader within the read time limit if no other read is queued or
    /// running; `nil` at once otherwise, rather than waiting behind it.
    private func onReadQueueIfIdle<T: Sendable>(_ body: @escaping @Sendable (SQLiteConnection) throws -> T) async throws -> T? {
        guard readsInProgress.withLock({ $0 == 0 }) else { return nil }
        return try await onReadQueue(timeLimit: readTimeLimit, body)
    }

    /// Runs `body` on the reader, stopped with ``ReadTimeLimitExceeded`` once it has run for
    /// `timeLimit` (`nil`: never).
    func onReadQueue<T: Sendable>(timeLimit: Duration?,
                                  _ body: @escaping @Sendable (SQLiteConnection) throws -> T) async throws -> T {
        readsInProgress.withLock { $0 += 1 }
        defer { readsInProgress.withLock { $0 -= 1 } }
        return try await withCheckedThrowingContinuation { continuation in
            readQueue.async {
                guard let reader = self.reader else {
                    return continuation.resume(throwing: SQLiteError(code: 21, message: "the store is closed"))
                }
                self.checkpointer.readWillStart()
                defer { self.checkpointer.readDidEnd() }
                let result = Result { () throws -> T in
                    guard let timeLimit else { return try body(reader) }
                    do {
                        return try reader.withDeadline(.now + timeLimit) { () throws -> T in try body(reader) }
                    } catch let error as SQLiteError where error.isInterrupt {
                        throw ReadTimeLimitExceeded(limit: timeLimit)
                    }
                }
                // A read stopped inside a transaction (the report's snapshot) must not keep it open.
                reader.rollbackIfNeeded()
                continuation.resume(with: result)
            }
        }
    }

    package func store(_ batch: Batch, app: String, receivedAt: Int64) async throws -> StoreResult {
        try await onQueue { connection, s in
            try connection.transaction { () throws(SQLiteError) -> StoreResult in
                let context = try Self.contextRowID(batch, app: app, s)
                var sessions = SessionRollup()
                for session in batch.context.sessions {
                    let (old, counted) = try s.rollups.sessions.stored(app: app, id: session.id)
                    if counted {
                        sessions.change(from: old, to: SessionRollup.Session(
                            started: old?.started ?? session.startedAt, ended: SessionRollup.ended(stored: old?.ended, listed: session.endedAt),
                            appVersion: old?.appVersion ?? batch.context.appVersion))
                    }
                    try s.upsertSession.bind(app, at: 1)
                    try s.upsertSession.bind(session.id, at: 2)
                    try s.upsertSession.bind(context, at: 3)
                    try s.upsertSession.bind(session.startedAt, at: 4)
                    if let ended = session.endedAt { try s.upsertSession.bind(ended, at: 5) } else { try s.upsertSession.bindNull(at: 5) }
                    try s.upsertSession.bind(receivedAt, at: 6)
                    try s.upsertSession.run()
                }
                var accepted = 0
                var abandoned = 0
                var perName: [String: Int] = [:]
                var rollup = HourlyRollup()
                // The runs the batch's new events touch, and the row ids those events got.
                var runKeys = Set<FunnelRollup.RunKey>()
                var newIDs = Set<Int64>()
                let ids = try s.eventInserts.insert(batch.events, .init(app: app, batch: batch.id, context: context, receivedAt: receivedAt))
                for (event, id) in zip(batch.events, ids) {
                    guard let id else { continue }
                    let givenUp = event.givenUp
                    rollup.add(RollupEvent(event, givenUp: givenUp), appVersion: batch.context.appVersion, sdkName: batch.sdkName,
                               sdkVersion: batch.sdkVersion)
                    accepted += 1
                    if event.abandoned { abandoned += 1 }
                    let keys = FunnelRollup.runKeys(of: event, givenUp: givenUp)
                    if !keys.isEmpty {
                        runKeys.formUnion(keys)
                        newIDs.insert(id)
                    }
                    perName[event.name, default: 0] += 1
                }
                let duplicates = batch.events.count - accepted
                let aggregates = try Self.insertAggregates(batch, app: app, context: context, receivedAt: receivedAt, s)

                try s.isNewBatch.bind(app, at: 1)
                try s.isNewBatch.bind(batch.id, at: 2)
                let isNew = try s.isNewBatch.collect { $0.int64(at: 0) }.first == 0
                try s.upsertBatch.bind(app, at: 1)
                try s.upsertBatch.bind(batch.id, at: 2)
                try s.upsertBatch.bind(receivedAt, at: 3)
                try s.upsertBatch.bind(receivedAt, at: 4)
                try s.upsertBatch.bind(Int64(accepted + aggregates.accepted), at: 5)
                try s.upsertBatch.bind(Int64(duplicates + aggregates.duplicates), at: 6)
                try s.upsertBatch.run()

                try s.upsertTotals.bind(app, at: 1)
                try s.upsertTotals.bind(Int64(accepted), at: 2)
                try s.upsertTotals.bind(Int64(duplicates), at: 3)
                try s.upsertTotals.bind(Int64(isNew ? 1 : 0), at: 4)
                try s.upsertTotals.run()
                if accepted > 0 {
                    try s.upsertContextCount.bind(context, at: 1)
                    try s.upsertContextCount.bind(Int64(accepted), at: 2)
                    try s.upsertContextCount.run()
                }
                try s.rollups.add(rollup, app: app)
                try s.rollups.sessions.add(sessions, app: app)
                if !runKeys.isEmpty {
                    try s.rollups.funnels.add(try s.rollups.funnels.corrections(app: app, context: context, appVersion: batch.context.appVersion,
                                                                                keys: runKeys, newIDs: newIDs), app: app)
                }
                for (name, count) in perName {
                    try s.upsertName.bind(app, at: 1)
                    try s.upsertName.bind(name, at: 2)
                    try s.upsertName.bind(Int64(count), at: 3)
                    try s.upsertName.run()
                }
                // A batch's diagnostics count once: a retry of the same batch id adds nothing.
                var pruned: Int64 = 0
                var resets = 0
                var quarantined: Int64 = 0
                if isNew, let diagnostics = batch.diagnostics {
                    quarantined = diagnostics.quarantined
                    for (name, count) in diagnostics.pruned {
                        try s.upsertPrune.bind(app, at: 1)
                        try s.upsertPrune.bind(name, at: 2)
                        try s.upsertPrune.bind(count, at: 3)
                        try s.upsertPrune.run()
                        // Saturating: the counts are the client's, and two near Int64.max must not trap.
                        let (sum, overflow) = pruned.addingReportingOverflow(count)
                        pruned = overflow ? .max : sum
                    }
                    for (at, reason) in diagnostics.databaseResets {
                        try s.insertReset.bind(app, at: 1)
                        try s.insertReset.bind(batch.id, at: 2)
                        try s.insertReset.bind(at, at: 3)
                        try s.insertReset.bind(reason, at: 4)
                        try s.insertReset.run()
                        resets += 1
                    }
                }
                try s.addDiagnostics.bind(Int64(abandoned), at: 1)
                try s.addDiagnostics.bind(pruned, at: 2)
                try s.addDiagnostics.bind(Int64(resets), at: 3)
                try s.addDiagnostics.bind(app, at: 4)
                try s.addDiagnostics.bind(quarantined, at: 5)
                try s.addDiagnostics.run()
                try s.addAggregates.bind(Int64(aggregates.accepted), at: 1)
                try s.addAggregates.bind(Int64(aggregates.duplicates), at: 2)
                try s.addAggregates.bind(aggregates.events, at: 3)
                try s.addAggregates.bind(app, at: 4)
                try s.addAggregates.run()
                return StoreResult(accepted: accepted + aggregates.accepted, duplicates: duplicates + aggregates.duplicates)
            }
        }
    }

    /// Stores the batch's new aggregates; returns how many were new, how many already stored, and
    /// the events the new ones fold (at most `Int64.max`).
    private static func insertAggregates(_ batch: Batch, app: String, context: Int64, receivedAt: Int64,
                                         _ s: Statements) throws(SQLiteError) -> (accepted: Int, duplicates: Int, events: Int64) {
        var accepted = 0
        var events: Int64 = 0
        let insert = s.insertAggregate
        for aggregate in batch.aggregates {
            try insert.bind(app, at: 1)
            try insert.bind(aggregate.id, at: 2)
            try insert.bind(batch.id, at: 3)
            try insert.bind(aggregate.session, at: 4)
            try insert.bind(context, at: 5)
            try insert.bind(aggregate.name, at: 6)
            try insert.bind(aggregate.type, at: 7)
            try insert.bind(aggregate.start, at: 8)
            try insert.bind(aggregate.end, at: 9)
            try insert.bind(aggregate.windowSeconds, at: 10)
            try insert.bind(aggregate.count, at: 11)
            try insert.bind(aggregate.dimensionsJSON, at: 12)
            try insert.bind(Int64(aggregate.overflow ? 1 : 0), at: 13)
            try insert.bind(aggregate.measuresJSON, at: 14)
            try insert.bind(receivedAt, at: 15)
            try insert.run()
            if insert.changes > 0 {
                accepted += 1
                let (sum, overflow) = events.addingReportingOverflow(aggregate.count)
                events = overflow ? .max : sum
            }
        }
        return (accepted, batch.aggregates.count - accepted, events)
    }

    private static func contextRowID(_ batch: Batch, app: String, _ s: Statements) throws(SQLiteError) -> Int64 {
        let c = batch.context
        for statement in [s.insertContext, s.findContext] {
            try statement.bind(app, at: 1)
            try statement.bind(batch.sdkName, at: 2)
            try statement.bind(batch.sdkVersion, at: 3)
            try statement.bind(c.appID, at: 4)
            try statement.bind(c.appVersion, at: 5)
            try statement.bind(c.osName, at: 6)
            try statement.bind(c.osVersion, at: 7)
            try statement.bind(c.locale, at: 8)
        }
        try s.insertContext.run()
        guard let id = try s.findContext.collect({ $0.int64(at: 0) }).first else {
            throw SQLiteError(code: 1, message: "the context row vanished after insertion")
        }
        return id
    }

    /// The totals, with the span of the data kept read on the reader (``dataSpan(_:app:)``):
    /// the writer's queue only reads the totals' few rows. Stats are answered within any read
    /// time limit: a span that takes longer to find is left out, not waited for.
    package func stats(app: String) async throws -> CollectorStats {
        let counts = try await totals(app: app)
        let span: (first: Int64?, last: Int64?)
        // Not behind another read either: a long report would hold the stats for as long.
        do {
            span = try await onReadQueueIfIdle { connection in try Self.dataSpan(connection, app: app) } ?? (nil, nil)
        } catch is ReadTimeLimitExceeded {
            span = (nil, nil)
        }
        return counts.spanning(first: span.first, last: span.last)
    }

    /// The earliest and latest device time of what `app` keeps: the events' end hours through
    /// events_hours (one entry each, in index order), then the exact time among those hours'
    /// events only; and the aggregates' starts from aggregates_names alone (a window may start
    /// before the first event stored).
    static func dataSpan(_ c: SQLiteConnection, app: String) throws(SQLiteError) -> (first: Int64?, last: Int64?) {
        func time(_ order: String, _ pick: String) throws(SQLiteError) -> Int64? {
            let hour = try c.prepare("""
                SELECT timestamp_ms / 3600000 FROM events INDEXED BY events_hours WHERE app = ? ORDER BY timestamp_ms / 3600000 \(order) LIMIT 1
                """)
            try hour.bind(app, at: 1)
            guard let found = try hour.collect({ $0.int64(at: 0) }).first else { return nil }
            let within = try c.prepare("SELECT \(pick)(timestamp_ms) FROM events INDEXED BY events_hours WHERE app = ?1 AND timestamp_ms / 3600000 = ?2")
            try within.bind(app, at: 1)
            try within.bind(found, at: 2)
            return try within.collect { $0.int64(at: 0) }.first
        }
        var first = try time("ASC", "min"), last = try time("DESC", "max")
        let starts = try c.prepare("SELECT min(start_ms), max(start_ms) FROM aggregates INDEXED BY aggregates_names WHERE app = ?")
        try starts.bind(app, at: 1)
        if let found = try starts.collect({ $0.isNull(at: 0) ? nil : ($0.int64(at: 0), $0.int64(at: 1)) }).first, let found {
            first = min(first ?? found.0, found.0)
            last = max(last ?? found.1, found.1)
        }
        return (first, last)
    }

    /// The app's totals, on the writer's queue (its prepared statements).
    private func totals(app: String) async throws -> CollectorStats {
        try await onQueue { _, s in
            try s.totals.bind(app, at: 1)
            let totals = try s.totals.collect { row in (0..<8).map { Int(row.int64(at: Int32($0))) } }.first ?? Array(repeating: 0, count: 8)
            try s.names.bind(app, at: 1)
            let names = try s.names.collect { ($0.text(at: 0) ?? "", Int($0.int64(at: 1))) }
            try s.prunes.bind(app, at: 1)
            let prunes = try s.prunes.collect { ($0.text(at: 0) ?? "", Int($0.int64(at: 1))) }
            try s.aggregateTotals.bind(app, at: 1)
            let aggregates = try s.aggregateTotals.collect { row in (0..<5).map { Int(row.int64(at: Int32($0))) } }.first
                ?? [0, 0, 0, 0, 0]
            return CollectorStats(app: app, eventsStored: totals[0], duplicatesDropped: totals[1],
                                  batches: totals[2], requests: totals[3],
                                  eventsByName: Dictionary(names, uniquingKeysWith: +),
                                  abandonedSpans: totals[4], prunedOnDevices: totals[5],
                                  prunedOnDevicesByName: Dictionary(prunes, uniquingKeysWith: +), databaseResets: totals[6],
                                  aggregatesStored: aggregates[0], aggregateDuplicatesDropped: aggregates[1], aggregatedEvents: aggregates[2],
                                  eventsExpired: aggregates[3], aggregatesExpired: aggregates[4], quarantinedOnDevices: totals[7])
        }
    }

    package func report(app: String) async throws -> AnalyticsReport {
        try await report(app: app, filter: ReportFilter())
    }

    package func report(app: String, filter: ReportFilter) async throws -> AnalyticsReport {
        let stats = try await totals(app: app)
        return try await onReadQueue { connection in try Self.analyse(connection, app: app, stats: stats, filter: filter) }
    }

    /// How many use cases a report lists: the most started ones (ties by name); the rest are
    /// counted in ``AnalyticsReport/useCasesOmitted``.
    static let maxUseCases = 1_000

    /// The report, in memory that does not grow with the number of events. The events' counts,
    /// versions, use cases, round trips, funnels and sessions come from the hourly rollups
    /// (``SQLiteRollupReading``, summed by ``RollupSections``, ``FunnelRollup`` and
    /// ``SessionRollup``, which PostgreSQL's report shares); server splits and aggregates from
    /// their rows.
    ///
    /// A filter's time range and app version add their conditions to every query
    /// (``SQLiteReportSelection``); without them the queries carry no conditions of theirs.
    static func analyse(_ c: SQLiteConnection, app: String, stats: CollectorStats,
                        filter: ReportFilter = ReportFilter()) throws -> AnalyticsReport {
        // One snapshot: every section must see the same rows.
        try c.execute("BEGIN")
        defer { c.rollbackIfNeeded() }  // read-only: there is nothing to commit
        if let remaining = try SQLiteRollupBackfill.remaining(c) { throw RollupsIncomplete(remaining: remaining) }
        let selection = SQLiteReportSelection(filter: filter)
        let sections = RollupSections(try SQLiteRollupReading.rollup(c, app: app, filter: filter), maxUseCases: maxUseCases)
        let listed = Set(sections.useCases.keys)
        let splits = try TransactionAnalysis.splits(c, app: app, names: listed, selection: selection)
        let funnels = try SQLiteRollupReading.funnels(c, app: app, filter: filter).funnels(listed: listed)

        let sessions = try SQLiteRollupReading.sessions(c, app: app, filter: filter).summary
        let aggregates = try AggregateAnalysis.summarise(c, app: app, filter: filter)
        return AnalyticsReport(app: app, stats: stats, filter: filter, sections: sections, splits: splits, funnels: funnels,
                               sessions: sessions, aggregates: aggregates.names, aggregatesOmitted: aggregates.omitted)
    }

    /// Steps through every row without keeping any, then resets the statement.
    static func walk(_ statement: SQLiteStatement, _ row: (SQLiteStatement) -> Void) throws(SQLiteError) {
        defer { statement.reset() }
        while try statement.step() { row(statement) }
    }

    package func storedIDs(app: String, among ids: [UUID]) async throws -> Set<UUID> {
        try await onReadQueue { connection in
            let find = try connection.prepare("SELECT 1 FROM events WHERE app = ? AND uuid = ?")
            var found = Set<UUID>()
            for id in ids {
                try find.bind(app, at: 1)
                try find.bind(id, at: 2)
                if try !find.collect({ _ in true }).isEmpty { found.insert(id) }
            }
            return found
        }
    }

    package func apps() async throws -> [String] {
        try await onReadQueue { connection in try Self.appNames(connection) }
    }

    /// The apps with anything stored, by name: on the reader for ``apps()``; on the writer for
    /// the compactor, which must not hold the reader (``stats(app:)`` leaves the data's span out
    /// while any read runs).
    static func appNames(_ c: SQLiteConnection) throws(SQLiteError) -> [String] {
        try c.prepare("SELECT app FROM totals ORDER BY app").collect { $0.text(at: 0) ?? "" }
    }

    /// No time limit: `nflog-collector export` streams millions of rows for an operator, which
    /// may rightly take minutes. The reader is busy meanwhile; ingest is not.
    package func exportEvents(app: String?, line: @escaping @Sendable ([UInt8]) -> Void) async throws {
        try await onReadQueue(timeLimit: nil) { connection in try EventExporter.format.export(connection, app: app, line: line) }
    }

    /// Within the store's ``readTimeLimit``, like every other read.
    package func exportPage(app: String, after: Int64, limit: Int) async throws -> ExportPage {
        try await onReadQueue { connection in try EventExporter.format.page(connection, app: app, after: after, limit: limit) }
    }

    /// No time limit, as ``exportEvents(app:line:)``.
    package func exportAggregates(app: String?, line: @escaping @Sendable ([UInt8]) -> Void) async throws {
        try await onReadQueue(timeLimit: nil) { connection in try AggregateExporter.format.export(connection, app: app, line: line) }
    }

    /// Within the store's ``readTimeLimit``, like every other read.
    package func exportAggregatePage(app: String, after: Int64, limit: Int) async throws -> ExportPage {
        try await onReadQueue { connection in try AggregateExporter.format.page(connection, app: app, after: after, limit: limit) }
    }

    package func probeWrite() async throws {
        try await onQueue { connection, _ in
            // A batch's worth of new pages (256 KiB), not one row that fits in a page already
            // there: a nearly full disk takes a row and refuses a batch.
            try connection.execute("""
                INSERT INTO write_probe (id, at_ms, padding) VALUES (1, \(Int64(Date().timeIntervalSince1970 * 1000)), randomblob(262144))
                ON CONFLICT (id) DO UPDATE SET at_ms = excluded.at_ms, padding = excluded.padding
                """)
        }
    }

    package func close() async {
        // First: a step queued after the connections went would only fail.
        let tasks = [compaction.withLock({ $0 }), backfill.withLock({ $0 })].compactMap({ $0 })
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
        await withCheckedContinuation { continuation in
            queue.async {
                self.statements = nil
                self.connection = nil
                self.readQueue.async {
                    self.reader = nil
                    continuation.resume()
                }
            }
        }
        await checkpointer.close()
    }
}

// The store seam the collector's routes use: SPI, with the wire types it takes.
extension SQLiteEventStore: EventStore {}
