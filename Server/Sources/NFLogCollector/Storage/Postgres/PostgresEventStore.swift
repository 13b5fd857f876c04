package import Foundation
package import Logging
@_spi(NFLogShared) package import NFLogSupport
import PostgresNIO
import Synchronization

/// An ``EventStore`` in PostgreSQL, shared by several collectors (each stateless; the database
/// decides what is new).
///
/// - A batch is one transaction (``store(_:batch:app:receivedAt:)``): its events are inserted by
///   one `INSERT … SELECT FROM unnest(…)`, after their (app, uuid) went into `event_ids` with
///   `ON CONFLICT DO NOTHING`. That table's primary key is what makes de-duplication exact across
///   collectors: the second of two transactions inserting one uuid waits for the first to commit
///   and then skips it, so the event is stored once and counted as a duplicate once. The call
///   returns only after COMMIT, so a 2xx is only ever sent for committed events.
/// - Counts are inserted as changes and folded into their totals later (``PostgresCounts``): no
///   row is updated by every batch, so collectors' batches do not queue on one.
/// - Events are partitioned by day of `received_ms` (``DayPartition``), created on demand before
///   a batch's transaction, under an advisory lock; ``dropEvents(receivedBefore:)`` drops whole days.
/// - The schema migrates itself at ``init(url:poolSize:passwordFile:logger:)`` (``PostgresSchema``).
///
/// Reads go through the same pool. The report's event sections come from the hourly rollups,
/// summed by the code SQLite's report uses (``RollupSections``); the rest is computed in
/// PostgreSQL (counts, nearest-rank
/// percentiles with `percentile_disc`, ordered means) and equals SQLite's for the same batches;
/// exports stream their rows: neither holds the events in memory. A report, a lookup, the app
/// list and an export page are stopped past ``readTimeLimit``, as SQLite's are.
package final class PostgresEventStore: Sendable {
    private let client: PostgresClient
    /// The pool's `run()`: the client leases connections only while it runs; ``close()`` cancels it.
    private let runner: Task<Void, Never>
    /// Folds the count changes into their totals every ``foldInterval`` (``PostgresCounts``);
    /// nil for a store that only reads. ``close()`` cancels it.
    private let folder: Task<Void, Never>?
    /// Adds the events stored before the rollups to them (``PostgresRollupBackfill``) until none
    /// is left; nil for a store that only reads. ``close()`` cancels it.
    private let backfiller: Task<Void, Never>?
    /// Compacts past days into the daily rollups (``RollupCompactionLoop``) once this store's
    /// backfill is done; nil for a store that only reads. ``close()`` cancels it.
    private let compactor: Task<Void, Never>?
    private let logger: Logger
    /// Days whose partition this process created or saw created: the common case (today's) costs
    /// no round trip. A partition another collector drops is forgotten on the insert's failure.
    private let partitions = Mutex<Set<Int64>>([])
    private let closed = Mutex(false)
    /// How long one statement of a read (a report, a lookup, the app list, an export page) may
    /// run before PostgreSQL stops it (`statement_timeout`) and the read throws
    /// ``ReadTimeLimitExceeded``. The whole-stream exports have no limit.
    package let readTimeLimit: Duration

    /// Connects to `url` (`postgres://USER@HOST:PORT/DB[?sslmode=require|verify-full…]`) and
    /// migrates the database.
    /// - Parameters:
    ///   - poolSize: the most connections this store opens (a batch holds one for its transaction).
    ///   - passwordFile: a file whose first line is the password; without it `PGPASSWORD` is read.
    ///     The URL must not carry one.
    ///   - readTimeLimit: how long one statement of a read may run (``readTimeLimit``).
    ///   - readingOnly: check the schema instead of migrating it (`nflog-collector report` and
    ///     `export`, which never write): a database without this release's schema is refused.
    package convenience init(url: String, poolSize: Int = 8, passwordFile: String? = nil, readTimeLimit: Duration = .seconds(30),
                            readingOnly: Bool = false,
                            logger: Logger = Logger(label: "nflog-collector.postgres")) async throws {
        try await self.init(url: url, poolSize: poolSize, passwordFile: passwordFile, readTimeLimit: readTimeLimit, readingOnly: readingOnly,
                            logger: logger, folds: true)
    }

    /// As the public initialiser; `folds` false: neither folds nor daily compaction in the
    /// background (tests run them with ``foldCounts()`` and ``compactRollups(before:)``).
    init(url: String, poolSize: Int, passwordFile: String?, readTimeLimit: Duration, readingOnly: Bool, logger: Logger,
         folds: Bool) async throws {
        let parsed = try PostgresURL(url, passwordFile: passwordFile)
        // The pool's own log at error level: it warns at every lease made before run() started,
        // which the first migration's lease always is (run() starts in a task just above it).
        var background = logger
        background.logLevel = .error
        let client = PostgresClient(configuration: parsed.configuration(poolSize: poolSize), backgroundLogger: background)
        let runner = Task { await client.run() }
        self.client = client
        self.runner = runner
        self.logger = logger
        self.readTimeLimit = readTimeLimit
        do {
            try await client.withConnection { connection in
                if readingOnly {
                    try await PostgresSchema.checkCurrent(connection, logger: logger)
                } else {
                    _ = try await PostgresSchema.migrate(connection, logger: logger)
                    // A first step of each kind now (the events, then the runs): a store of up to
                    // a step's events opens with its rollups complete (unless another collector
                    // holds the backfill).
                    if case .added = try await PostgresRollupBackfill.step(connection, logger: logger) {
                        _ = try await PostgresRollupBackfill.step(connection, logger: logger)
                    }
                }
            }
        } catch {
            runner.cancel()
            await runner.value
            throw error
        }
        let backfiller = readingOnly ? nil : Task { await Self.backfill(client, logger) }
        self.backfiller = backfiller
        compactor = readingOnly || !folds ? nil : Task {
            await backfiller?.value
            await RollupCompactionLoop.run(logger: logger) { try await Self.compactRollups(client, before: $0, logger) }
        }
        folder = readingOnly || !folds ? nil : Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: Self.foldInterval)
                if Task.isCancelled { break }
                do {
                    _ = try await Self.fold(client, logger)
                } catch {
                    // The deltas stay and are read as they are; the next fold takes them.
                    logger.warning("folding the counts failed; retried in \(Self.foldInterval)", metadata: ["error": "\(error)"])
                }
            }
        }
    }

    /// Steps the backfill until it is done (at once when there is none) or the store closes
    /// (``RollupBackfillLoop``).
    private static func backfill(_ client: PostgresClient, _ logger: Logger) async {
        await RollupBackfillLoop.run(logger: logger) {
            try await client.withConnection { try await PostgresRollupBackfill.step($0, logger: logger) }
        }
    }

    /// Returns once this store's backfill is done (another collector may still be at it: the
    /// rollups are complete when ``PostgresRollupBackfill/step(_:limit:logger:)`` says `.done`).
    func rollupsBackfilled() async {
        await backfiller?.value
    }

    /// How often each collector tries to fold the count changes into their totals (one at a time
    /// across collectors). The reads are exact either way; the deltas waiting cost reads a scan.
    static let foldInterval: Duration = .seconds(1)

    /// Folds the count changes into their totals now (``PostgresCounts/fold(_:logger:)``): false
    /// when another collector was folding.
    @discardableResult
    func foldCounts() async throws -> Bool {
        try checkOpen()
        return try await Self.fold(client, logger)
    }

    /// Compacts every app's days before `cutoff` (an hour, the start of a day), a day of one app
    /// per transaction (``PostgresRollupCompaction/step(_:app:before:logger:)``). Returns the days
    /// compacted.
    func compactRollups(before cutoff: Int64) async throws -> Int {
        try checkOpen()
        return try await Self.compactRollups(client, before: cutoff, logger)
    }

    private static func compactRollups(_ client: PostgresClient, before cutoff: Int64, _ logger: Logger) async throws -> Int {
        var days = 0
        for app in try await client.withConnection({ try await apps($0, logger: logger) }) {
            while try await client.withConnection({ try await PostgresRollupCompaction.step($0, app: app, before: cutoff, logger: logger) })
                != nil {
                try Task.checkCancellation()
                days += 1
            }
        }
        return days
    }

    private static func fold(_ client: PostgresClient, _ logger: Logger) async throws -> Bool {
        try await client.withConnection { try await PostgresCounts.fold($0, logger: logger) }
    }

    private func checkOpen() throws {
        if closed.withLock({ $0 }) { throw PostgresStoreError.closed }
    }

    /// Runs a read in a transaction whose statements PostgreSQL stops past ``readTimeLimit``;
    /// one stopped throws ``ReadTimeLimitExceeded``, as SQLite's reads do.
    func read<Result: Sendable>(_ body: (PostgresConnection) async throws -> Result) async throws -> Result {
        try checkOpen()
        let logger = self.logger
        let timeout = Self.statementTimeout(readTimeLimit)
        do {
            return try await client.withTransaction(logger: logger) { connection in
                try await connection.query(PostgresQuery(unsafeSQL: "SET LOCAL statement_timeout = \(timeout)"), logger: logger)
                return try await body(connection)
            }
        } catch where Self.sqlState(error) == "57014" {  // query_canceled: the statement timeout
            throw ReadTimeLimitExceeded(limit: readTimeLimit)
        }
    }

    /// `statement_timeout` in milliseconds for `limit`: at least 1 (0 turns the timeout off), and
    /// 0 (none) past the most PostgreSQL takes (2^31 − 1 ms, 24.8 days): an operator's "never".
    static func statementTimeout(_ limit: Duration) -> Int64 {
        let (seconds, attoseconds) = limit.components
        guard seconds < Int64(Int32.max) / 1_000 else { return 0 }
        return max(1, seconds * 1_000 + attoseconds / 1_000_000_000_000_000)
    }

    // MARK: - Storing

    package func store(_ batch: Batch, app: String, receivedAt: Int64) async throws -> StoreResult {
        try checkOpen()
        let partition = DayPartition(containing: receivedAt)
        let columns = EventColumns(batch.events)
        // The context's row, found or made before the batch's transaction, in statements of its
        // own: made inside it, a new context's row would be locked to that transaction's commit,
        // and every other collector's first batch of that context would wait for it. Contexts
        // are never deleted, so the id stays good.
        let logger = self.logger
        let context = try await client.withConnection { try await Self.contextID(batch, app: app, $0, logger) }
        var attempt = 0
        // Set once the day was dropped under the batch (by retention, here or in another
        // collector): the retry makes it again inside its own transaction, under the partition
        // lock held to its commit, so no retention drops it again before the batch is in.
        var partitionVanished = false
        while true {
            if !partitionVanished { try await ensurePartition(partition) }
            do {
                let remake = partitionVanished
                let result = try await client.withTransaction(logger: logger) { connection in
                    if remake { try await Self.makePartition(partition, connection, logger) }
                    return try await Self.store(batch, columns: columns, app: app, context: context, receivedAt: receivedAt,
                                                connection, logger)
                }
                if remake { _ = partitions.withLock { $0.insert(partition.day) } }
                return result
            } catch where attempt < 3 {
                // Deadlocks are avoided (every lock is taken in key order) but retried anyway;
                // a missing partition means another collector dropped it since we saw it.
                switch Self.sqlState(error) {
                case "40P01", "40001": break
                case "23514":
                    _ = partitions.withLock { $0.remove(partition.day) }
                    partitionVanished = true
                default: throw error
                }
                attempt += 1
            }
        }
    }

    /// The server's SQLSTATE for a failed statement, also when a transaction wraps it (postgres-nio
    /// throws a ``PostgresTransactionError`` holding the statement's error).
    static func sqlState(_ error: any Error) -> String? {
        if let error = error as? PSQLError { return error.serverInfo?[.sqlState] }
        if let error = error as? PostgresTransactionError, let cause = error.closureError ?? error.commitError {
            return sqlState(cause)
        }
        return nil
    }

    /// Creates the day's partition if this process has not seen it: in its own short transaction
    /// (creating a partition locks the parent table, which must not happen inside a batch's
    /// transaction that already holds locks on it), under the partition lock, so collectors
    /// creating it at the same instant run one after another and the second finds it there.
    private func ensurePartition(_ partition: DayPartition) async throws {
        if partitions.withLock({ $0.contains(partition.day) }) { return }
        let logger = self.logger
        try await client.withTransaction(logger: logger) { connection in
            try await Self.makePartition(partition, connection, logger)
        }
        _ = partitions.withLock { $0.insert(partition.day) }
    }

    /// Takes the partition lock (to the end of the transaction) and makes the day's partition if
    /// it is not there. First in its transaction: it then holds no lock a batch could wait on.
    private static func makePartition(_ partition: DayPartition, _ connection: PostgresConnection, _ logger: Logger) async throws {
        try await connection.query("SELECT pg_advisory_xact_lock(\(PostgresSchema.partitionLock))", logger: logger)
        var exists = false
        for try await found in try await connection.query("SELECT to_regclass(\(partition.tableName)) IS NOT NULL",
                                                           logger: logger).decode(Bool.self) {
            exists = found
        }
        if !exists {
            for statement in partition.createStatements {
                try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
            }
        }
    }

    /// The batch's transaction. Locks are taken in one order by every collector (sessions by
    /// uuid, event ids by uuid, aggregates by uuid, the batch), so two batches never wait on each
    /// other in a cycle; two batches of different devices share none of those rows. The counts
    /// are rows of changes (``PostgresCounts``), which lock nothing another batch needs.
    private static func store(_ batch: Batch, columns: EventColumns, app: String, context: Int64, receivedAt: Int64,
                              _ c: PostgresConnection, _ logger: Logger) async throws -> StoreResult {

        let sessions = batch.context.sessions.sorted { $0.id.uuidString < $1.id.uuidString }
        var sessionRollup = SessionRollup()
        if !sessions.isEmpty {
            // Read as stored before the upsert below, under the sessions' locks: the rollup's change.
            var stored = try await PostgresSessions.lockAndRead(c, app: app, ids: sessions.map(\.id), logger: logger)
            for session in sessions {
                guard let (old, counted) = stored[session.id], counted else { continue }
                let new = SessionRollup.Session(started: old?.started ?? session.startedAt,
                                                ended: SessionRollup.ended(stored: old?.ended, listed: session.endedAt),
                                                appVersion: old?.appVersion ?? batch.context.appVersion)
                sessionRollup.change(from: old, to: new)
                stored[session.id] = (new, counted)
            }
            // A session's end time only grows: the latest suspension seen wins.
            try await c.query("""
                INSERT INTO sessions (app, uuid, context_id, started_ms, ended_ms)
                SELECT \(app), s.uuid, \(context), s.started, s.ended
                FROM unnest(\(sessions.map(\.id))::uuid[], \(sessions.map(\.startedAt))::int8[],
                            \(PostgresNullableArray(sessions.map(\.endedAt)))::int8[]) AS s (uuid, started, ended)
                ORDER BY s.uuid
                ON CONFLICT (app, uuid) DO UPDATE SET ended_ms = excluded.ended_ms
                    WHERE excluded.ended_ms IS NOT NULL AND (sessions.ended_ms IS NULL OR excluded.ended_ms > sessions.ended_ms)
                """, logger: logger)
        }

        var accepted = 0
        var abandoned = 0
        var perName: [String: Int] = [:]
        var rollup = HourlyRollup()
        // The runs the new events touch, and the row ids those events got.
        var runKeys = Set<FunnelRollup.RunKey>()
        var newIDs = Set<Int64>()
        if !batch.events.isEmpty {
            let rows = try await c.query(insertEvents(columns, app: app, batch: batch.id, context: context, receivedAt: receivedAt),
                                         logger: logger)
            // Each uuid's first occurrence: the one stored (`input` keeps it).
            var first: [UUID: Int] = [:]
            for (index, event) in batch.events.enumerated() where first[event.id] == nil { first[event.id] = index }
            for try await (uuid, rowID) in rows.decode((UUID, Int64).self) {
                guard let index = first[uuid] else { continue }
                let event = batch.events[index]
                accepted += 1
                if event.abandoned { abandoned += 1 }
                perName[event.name, default: 0] += 1
                rollup.add(RollupEvent(event, givenUp: columns.givenUps[index]), appVersion: batch.context.appVersion,
                           sdkName: batch.sdkName, sdkVersion: batch.sdkVersion)
                let keys = FunnelRollup.runKeys(of: event, givenUp: columns.givenUps[index])
                if !keys.isEmpty {
                    runKeys.formUnion(keys)
                    newIDs.insert(rowID)
                }
            }
            if !rollup.isEmpty { try await c.query(PostgresRollups.insert(rollup, app: app), logger: logger) }
        }
        if !sessionRollup.isEmpty { try await c.query(PostgresRollups.insert(sessionRollup, app: app), logger: logger) }
        let duplicates = batch.events.count - accepted
        let aggregates = try await insertAggregates(batch, app: app, context: context, receivedAt: receivedAt, c, logger)

        // Whether this request is the batch id's first: `xmax = 0` only for a row this statement
        // inserted (a conflicting one was updated). Exact under concurrency: the second of two
        // requests with one id waits on the first's row and then updates it.
        var isNew = false
        for try await inserted in try await c.query("""
            INSERT INTO batches (app, uuid, first_received_ms, last_received_ms, requests, accepted, duplicates)
            VALUES (\(app), \(batch.id), \(receivedAt), \(receivedAt), 1,
                    \(Int64(accepted + aggregates.accepted)), \(Int64(duplicates + aggregates.duplicates)))
            ON CONFLICT (app, uuid) DO UPDATE SET last_received_ms = excluded.last_received_ms,
                requests = batches.requests + 1, accepted = batches.accepted + excluded.accepted,
                duplicates = batches.duplicates + excluded.duplicates
            RETURNING (xmax = 0)
            """, logger: logger).decode(Bool.self) {
            isNew = inserted
        }

        // A batch's diagnostics count once: a retry of the same batch id adds nothing.
        var pruned: Int64 = 0
        var resets = 0
        var quarantined: Int64 = 0
        if isNew, let diagnostics = batch.diagnostics {
            quarantined = diagnostics.quarantined
            var prunes: [String: Int64] = [:]
            for (name, count) in diagnostics.pruned {
                // Saturating: the counts are the client's, and two near Int64.max must not trap.
                let (sum, overflow) = prunes[name, default: 0].addingReportingOverflow(count)
                prunes[name] = overflow ? .max : sum
                let (total, totalOverflow) = pruned.addingReportingOverflow(count)
                pruned = totalOverflow ? .max : total
            }
            let names = Array(prunes.keys)  // inserted, not updated: no lock order to keep
            if !names.isEmpty {
                try await c.query("""
                    INSERT INTO device_prune_deltas (app, name, count)
                    SELECT \(app), p.name, p.count FROM unnest(\(names)::text[], \(names.map { prunes[$0] ?? 0 })::int8[]) AS p (name, count)
                    """, logger: logger)
            }
            if !diagnostics.databaseResets.isEmpty {
                try await c.query("""
                    INSERT INTO device_resets (app, batch_id, at_ms, reason)
                    SELECT \(app), \(batch.id), r.at, r.reason
                    FROM unnest(\(diagnostics.databaseResets.map(\.at))::int8[], \(diagnostics.databaseResets.map(\.reason))::text[])
                        WITH ORDINALITY AS r (at, reason, n)
                    ORDER BY r.n
                    """, logger: logger)
                resets = diagnostics.databaseResets.count
            }
        }

        let names = Array(perName.keys)
        if !names.isEmpty {
            try await c.query("""
                INSERT INTO name_count_deltas (app, name, count)
                SELECT \(app), n.name, n.count FROM unnest(\(names)::text[], \(names.map { Int64(perName[$0] ?? 0) })::int8[]) AS n (name, count)
                """, logger: logger)
        }
        if accepted > 0 {
            try await c.query("INSERT INTO context_count_deltas (context_id, events) VALUES (\(context), \(Int64(accepted)))",
                              logger: logger)
        }

        // A row of changes, not an update of the app's row: no other batch waits on it. The
        // client-given sums saturate at Int64.max where they are summed (PostgresCounts).
        try await c.query("""
            INSERT INTO totals_deltas (app, events, duplicates, batches, requests, abandoned, pruned, database_resets,
                                       aggregates, aggregate_duplicates, aggregated_events, quarantined)
            VALUES (\(app), \(Int64(accepted)), \(Int64(duplicates)), \(Int64(isNew ? 1 : 0)), 1, \(Int64(abandoned)), \(pruned),
                    \(Int64(resets)), \(Int64(aggregates.accepted)), \(Int64(aggregates.duplicates)), \(aggregates.events), \(quarantined))
            """, logger: logger)
        if !runKeys.isEmpty {
            // Last in the transaction: the runs' locks are held to the commit, and the batch
            // takes no other lock after them, so it never waits on anything while holding them.
            let funnel = try await PostgresFunnels.corrections(c, app: app, context: context, appVersion: batch.context.appVersion,
                                                               keys: runKeys, newIDs: newIDs, logger: logger)
            if !funnel.isEmpty { try await c.query(PostgresRollups.insert(funnel, app: app), logger: logger) }
        }
        return StoreResult(accepted: accepted + aggregates.accepted, duplicates: duplicates + aggregates.duplicates)
    }

    /// The batch's context row: found, or inserted. `ON CONFLICT DO NOTHING` returns no row when
    /// another collector inserted the same context meanwhile (after waiting for its commit); the
    /// second SELECT, a new statement, then sees it.
    private static func contextID(_ batch: Batch, app: String, _ c: PostgresConnection, _ logger: Logger) async throws -> Int64 {
        let ctx = batch.context
        let find: PostgresQuery = """
            SELECT id FROM contexts WHERE app = \(app) AND sdk_name = \(batch.sdkName) AND sdk_version = \(batch.sdkVersion)
            AND app_id = \(ctx.appID) AND app_version = \(ctx.appVersion) AND os_name = \(ctx.osName)
            AND os_version = \(ctx.osVersion) AND locale = \(ctx.locale)
            """
        for try await id in try await c.query(find, logger: logger).decode(Int64.self) { return id }
        for try await id in try await c.query("""
            INSERT INTO contexts (app, sdk_name, sdk_version, app_id, app_version, os_name, os_version, locale)
            VALUES (\(app), \(batch.sdkName), \(batch.sdkVersion), \(ctx.appID), \(ctx.appVersion), \(ctx.osName),
                    \(ctx.osVersion), \(ctx.locale))
            ON CONFLICT DO NOTHING RETURNING id
            """, logger: logger).decode(Int64.self) { return id }
        for try await id in try await c.query(find, logger: logger).decode(Int64.self) { return id }
        throw PostgresStoreError.configuration("the context row vanished after insertion")
    }

    /// The batch's events as columns, for `unnest`.
    struct EventColumns: Sendable {
        var ids: [UUID] = [], sessions: [UUID] = [], names: [String] = [], kinds: [String] = [], types: [String] = []
        var timestamps: [Int64] = [], ends: [Int64?] = [], durations: [Double?] = []
        var parameters: [String?] = [], endParameters: [String?] = [], abandoned: [Bool] = []
        var transactions: [UUID?] = [], parentSpans: [Int64?] = [], spanIDs: [Int64?] = []
        var sources: [String?] = [], origins: [String?] = [], givenUps: [Bool?] = []

        init(_ events: [Batch.Event]) {
            for event in events {
                ids.append(event.id); sessions.append(event.session); names.append(event.name)
                kinds.append(event.kind.rawValue); types.append(event.type); timestamps.append(event.timestamp)
                ends.append(event.end); durations.append(event.durationMilliseconds)
                parameters.append(event.parameters); endParameters.append(event.endParameters); abandoned.append(event.abandoned)
                transactions.append(event.transaction); parentSpans.append(event.parentSpan?.storedValue)
                // The span id only for a span in a transaction, as SQLite stores it.
                spanIDs.append(event.transaction != nil && event.kind == .span ? SpanID(spanUUID: event.id)?.storedValue : nil)
                // NULL for native events, as SQLite stores it.
                sources.append(event.source == .web ? event.source.rawValue : nil)
                origins.append(event.origin)
                givenUps.append(event.givenUp)
            }
        }
    }

    /// Inserts the new events; returns the uuid and row id of each event stored now.
    ///
    /// `input` keeps each uuid's first occurrence in the batch (a uuid twice in one batch: the
    /// second is a duplicate, as on SQLite). `fresh` claims the uuids in `event_ids`, in uuid
    /// order (the lock order); only the claimed ones are inserted, in batch order, so row ids
    /// follow the batch as on SQLite. `given_up` is ``Batch/Event/givenUp``, as on SQLite.
    private static func insertEvents(_ e: EventColumns, app: String, batch: UUID, context: Int64, receivedAt: Int64) -> PostgresQuery {
        """
        WITH input AS (
            SELECT DISTINCT ON (t.uuid) t.*
            FROM unnest(\(e.ids)::uuid[], \(e.sessions)::uuid[], \(e.names)::text[], \(e.kinds)::text[], \(e.types)::text[],
                        \(e.timestamps)::int8[], \(PostgresNullableArray(e.ends))::int8[],
                        \(PostgresNullableArray(e.durations))::float8[], \(PostgresNullableArray(e.parameters))::text[],
                        \(PostgresNullableArray(e.endParameters))::text[], \(e.abandoned)::bool[],
                        \(PostgresNullableArray(e.transactions))::uuid[], \(PostgresNullableArray(e.parentSpans))::int8[],
                        \(PostgresNullableArray(e.spanIDs))::int8[], \(PostgresNullableArray(e.sources))::text[],
                        \(PostgresNullableArray(e.origins))::text[], \(PostgresNullableArray(e.givenUps))::bool[])
                WITH ORDINALITY AS t (uuid, session, name, kind, type, timestamp_ms, end_ms, duration_ms, parameters,
                                      end_parameters, abandoned, transaction_id, parent_span, span_id, source, origin, given_up, n)
            ORDER BY t.uuid, t.n
        ), fresh AS (
            INSERT INTO event_ids (app, uuid) SELECT \(app), uuid FROM input ORDER BY uuid
            ON CONFLICT DO NOTHING RETURNING uuid
        )
        INSERT INTO events (app, uuid, batch_id, session, context_id, name, kind, type, timestamp_ms, end_ms, duration_ms,
                            parameters, end_parameters, received_ms, abandoned, given_up, transaction_id, parent_span, span_id,
                            source, origin)
        SELECT \(app), i.uuid, \(batch), i.session, \(context), i.name, i.kind, i.type, i.timestamp_ms, i.end_ms, i.duration_ms,
               i.parameters, i.end_parameters, \(receivedAt), i.abandoned, i.given_up, i.transaction_id, i.parent_span, i.span_id, i.source, i.origin
        FROM input i JOIN fresh f USING (uuid)
        ORDER BY i.n
        RETURNING uuid, id
        """
    }

    /// Stores the batch's new aggregates; returns how many were new, how many already stored, and
    /// the events the new ones fold (at most `Int64.max`).
    private static func insertAggregates(_ batch: Batch, app: String, context: Int64, receivedAt: Int64,
                                         _ c: PostgresConnection, _ logger: Logger) async throws
        -> (accepted: Int, duplicates: Int, events: Int64) {
        let all = batch.aggregates
        guard !all.isEmpty else { return (0, 0, 0) }
        var accepted = 0
        var events: Int64 = 0
        let rows = try await c.query("""
            WITH input AS (
                SELECT DISTINCT ON (t.uuid) t.*
                FROM unnest(\(all.map(\.id))::uuid[], \(all.map(\.session))::uuid[], \(all.map(\.name))::text[],
                            \(all.map(\.type))::text[], \(all.map(\.start))::int8[], \(all.map(\.end))::int8[],
                            \(all.map(\.windowSeconds))::int8[], \(all.map(\.count))::int8[], \(all.map(\.dimensionsJSON))::text[],
                            \(all.map(\.overflow))::bool[], \(all.map(\.measuresJSON))::text[])
                    WITH ORDINALITY AS t (uuid, session, name, type, start_ms, end_ms, window_s, count, dimensions, overflow,
                                          measures, n)
                ORDER BY t.uuid, t.n
            ), fresh AS (
                INSERT INTO aggregates (app, uuid, batch_id, session, context_id, name, type, start_ms, end_ms, window_s, count,
                                        dimensions, overflow, measures, received_ms)
                SELECT \(app), uuid, \(batch.id), session, \(context), name, type, start_ms, end_ms, window_s, count,
                       dimensions, overflow, measures, \(receivedAt)
                FROM input ORDER BY n  -- batch order, as SQLite numbers them (a retry has the same order)
                ON CONFLICT (app, uuid) DO NOTHING
                RETURNING count
            )
            SELECT count FROM fresh
            """, logger: logger)
        for try await count in rows.decode(Int64.self) {
            accepted += 1
            let (sum, overflow) = events.addingReportingOverflow(count)
            events = overflow ? .max : sum
        }
        return (accepted, all.count - accepted, events)
    }

    // MARK: - Reading

    /// The totals, and the span of the data kept (as SQLite's ``SQLiteEventStore/stats(app:)``).
    package func stats(app: String) async throws -> CollectorStats {
        let counts = try await totals(app: app)
        // The first and last event time: the end hours through events_hours, then the exact
        // time among the events of those hours only (as SQLite's stats).
        // Best effort, as on SQLite past the read time limit: a failed look (a day partition
        // dropped by retention under it, say) leaves the span out rather than failing the stats.
        var first: Int64?, last: Int64?
        do {
        for try await (earliest, latest, earliestAggregate, latestAggregate) in try await client.query("""
            SELECT (SELECT min(timestamp_ms) FROM events WHERE app = \(app)
                        AND timestamp_ms / 3600000 = (SELECT min(timestamp_ms / 3600000) FROM events WHERE app = \(app))),
                   (SELECT max(timestamp_ms) FROM events WHERE app = \(app)
                        AND timestamp_ms / 3600000 = (SELECT max(timestamp_ms / 3600000) FROM events WHERE app = \(app))),
                   (SELECT min(start_ms) FROM aggregates WHERE app = \(app)), (SELECT max(start_ms) FROM aggregates WHERE app = \(app))
            """, logger: logger).decode((Int64?, Int64?, Int64?, Int64?).self) {
            // Aggregates' starts too (a window may start before the first event stored).
            first = [earliest, earliestAggregate].compactMap { $0 }.min()
            last = [latest, latestAggregate].compactMap { $0 }.max()
        }
        } catch {
            logger.debug("stats: the data's time span was left out", metadata: ["error": "\(String(reflecting: error))"])
            first = nil
            last = nil
        }
        return counts.spanning(first: first, last: last)
    }

    private func totals(app: String) async throws -> CollectorStats {
        try checkOpen()
        var totals = [Int](repeating: 0, count: 13)
        for try await row in try await client.query("""
            SELECT events, duplicates, batches, requests, abandoned, pruned, database_resets,
                   aggregates, aggregate_duplicates, aggregated_events, events_expired, aggregates_expired, quarantined
            FROM totals_now WHERE app = \(app)
            """, logger: logger) {
            let cells = row.makeRandomAccess()
            totals = try (0..<13).map { Int(try cells[$0].decode(Int64.self)) }
        }
        var names: [String: Int] = [:]
        for try await (name, count) in try await client.query("SELECT name, count FROM name_counts_now WHERE app = \(app)", logger: logger)
            .decode((String, Int64).self) {
            names[name] = Int(count)
        }
        var prunes: [String: Int] = [:]
        for try await (name, count) in try await client.query("SELECT name, count FROM device_prunes_now WHERE app = \(app)", logger: logger)
            .decode((String, Int64).self) {
            prunes[name] = Int(count)
        }
        return CollectorStats(app: app, eventsStored: totals[0], duplicatesDropped: totals[1], batches: totals[2], requests: totals[3],
                              eventsByName: names, abandonedSpans: totals[4], prunedOnDevices: totals[5],
                              prunedOnDevicesByName: prunes, databaseResets: totals[6], aggregatesStored: totals[7],
                              aggregateDuplicatesDropped: totals[8], aggregatedEvents: totals[9],
                              eventsExpired: totals[10], aggregatesExpired: totals[11], quarantinedOnDevices: totals[12])
    }

    package func report(app: String) async throws -> AnalyticsReport {
        try await report(app: app, filter: ReportFilter())
    }

    /// Computed in PostgreSQL, in one read-only snapshot (``PostgresReport``): the same report as
    /// ``SQLiteEventStore``'s for the same stored batches, in memory that does not grow with them.
    package func report(app: String, filter: ReportFilter) async throws -> AnalyticsReport {
        try checkOpen()
        let stats = try await totals(app: app)
        let logger = self.logger
        return try await read { connection in
            try await PostgresReport.analyse(connection, app: app, stats: stats, filter: filter, logger: logger)
        }
    }

    /// From `event_ids`, which holds exactly the stored events' ids (``dropEvents(receivedBefore:)``
    /// removes the dropped ones'): a primary-key probe per id, in one query.
    package func storedIDs(app: String, among ids: [UUID]) async throws -> Set<UUID> {
        try checkOpen()
        guard !ids.isEmpty else { return [] }
        return try await read { connection in
            var found = Set<UUID>()
            for try await id in try await connection.query(
                "SELECT uuid FROM event_ids WHERE app = \(app) AND uuid = ANY(\(ids)::uuid[])", logger: logger).decode(UUID.self) {
                found.insert(id)
            }
            return found
        }
    }

    package func apps() async throws -> [String] {
        try await read { connection in try await Self.apps(connection, logger: logger) }
    }

    private static func apps(_ connection: PostgresConnection, logger: Logger) async throws -> [String] {
        var apps: [String] = []
        for try await app in try await connection.query("SELECT app FROM totals_now ORDER BY app", logger: logger).decode(String.self) {
            apps.append(app)
        }
        return apps
    }

    /// Computed in PostgreSQL, in one read-only snapshot (``PostgresSeries``): the same series as
    /// ``SQLiteEventStore``'s for the same stored batches; stopped past ``readTimeLimit`` as the
    /// report is.
    package func series(app: String, query: SeriesQuery) async throws -> ReportSeries {
        let logger = self.logger
        return try await read { connection in try await PostgresSeries.series(connection, app: app, query: query, logger: logger) }
    }

    /// The columns of EventExporter's query, in its order: booleans as integers, so one line
    /// writer reads both stores.
    private static let eventColumns = """
        SELECT e.app, e.uuid, e.batch_id, e.session, e.name, e.kind, e.type, e.timestamp_ms, e.end_ms, e.duration_ms,
               e.parameters, e.end_parameters, e.received_ms, e.abandoned::int::int8, \(RowExport.contextColumns),
               e.transaction_id, e.parent_span, e.source, e.origin, e.id
        FROM events e JOIN contexts c ON c.id = e.context_id
        """
    /// AggregateExporter's columns, in its order.
    private static let aggregateColumns = """
        SELECT a.app, a.uuid, a.batch_id, a.session, a.name, a.type, a.start_ms, a.end_ms, a.window_s, a.count,
               a.dimensions, a.overflow::int::int8, a.measures, a.received_ms, \(RowExport.contextColumns), a.id
        FROM aggregates a JOIN contexts c ON c.id = a.context_id
        """

    package func exportEvents(app: String?, line: @escaping @Sendable ([UInt8]) -> Void) async throws {
        try await streamAll(Self.eventColumns, alias: "e", app: app, lineCapacity: 512, line: line) {
            EventExporter.writeLine($0, into: &$1)
        }
    }

    package func exportPage(app: String, after: Int64, limit: Int) async throws -> ExportPage {
        try await page(Self.eventColumns, alias: "e", app: app, after: after, limit: limit, lineCapacity: 512) {
            EventExporter.writeLine($0, into: &$1)
        }
    }

    package func exportAggregates(app: String?, line: @escaping @Sendable ([UInt8]) -> Void) async throws {
        try await streamAll(Self.aggregateColumns, alias: "a", app: app, lineCapacity: 1_024, line: line) {
            AggregateExporter.writeLine($0, into: &$1)
        }
    }

    /// Every row of `columns` (of one app, or all), oldest first, each written as one line.
    /// Streams the rows (postgres-nio reads them with backpressure): memory does not grow with
    /// the number of rows.
    private func streamAll(_ columns: String, alias: String, app: String?, lineCapacity: Int,
                           line: @escaping @Sendable ([UInt8]) -> Void,
                           write: (PostgresExportRow, inout JSONWriter) -> Void) async throws {
        try checkOpen()
        let rows = try await client.query(
            PostgresQuery(unsafeSQL: columns + " WHERE $1::text IS NULL OR \(alias).app = $1 ORDER BY \(alias).id", binds: Self.binds(app)),
            logger: logger)
        for try await row in rows {
            var out = JSONWriter(capacity: lineCapacity)
            write(PostgresExportRow(row), &out)
            line(out.bytes)
        }
    }

    package func exportAggregatePage(app: String, after: Int64, limit: Int) async throws -> ExportPage {
        try await page(Self.aggregateColumns, alias: "a", app: app, after: after, limit: limit, lineCapacity: 1_024) {
            AggregateExporter.writeLine($0, into: &$1)
        }
    }

    private static func binds(_ app: String?) -> PostgresBindings {
        var binds = PostgresBindings()
        binds.append(app)
        return binds
    }

    /// Up to `limit` of the app's rows with an id above `after`, by id. Ids come from a sequence
    /// shared by the collectors, so a page read while another collector's batch is still
    /// uncommitted can miss that batch's (lower) ids: a reader that needs every row pages again
    /// from an earlier id, or exports after ingest stops. SQLite, one writer, has no such gap.
    private func page(_ columns: String, alias: String, app: String, after: Int64, limit: Int, lineCapacity: Int,
                      _ write: (PostgresExportRow, inout JSONWriter) -> Void) async throws -> ExportPage {
        try checkOpen()
        guard limit > 0 else { return ExportPage(lines: [], count: 0, last: nil) }
        var binds = PostgresBindings()
        binds.append(app)
        binds.append(after)
        binds.append(Int64(limit))
        return try await read { connection in
            let rows = try await connection.query(PostgresQuery(
                unsafeSQL: columns + " WHERE \(alias).app = $1 AND \(alias).id > $2 ORDER BY \(alias).id LIMIT $3", binds: binds),
                logger: logger)
            var out = JSONWriter(capacity: lineCapacity * min(limit, 1_000))
            var count = 0
            var last: Int64?
            for try await row in rows {
                let exportRow = PostgresExportRow(row)
                write(exportRow, &out)
                count += 1
                last = exportRow.int64(at: Int32(exportRow.row.count - 1))
            }
            return ExportPage(lines: out.bytes, count: count, last: last)
        }
    }

    // MARK: - Health, retention, closing

    /// A one-row upsert committed: PostgreSQL's answer to whether a batch could be stored now.
    package func probeWrite() async throws {
        try checkOpen()
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        try await client.query("""
            INSERT INTO write_probe (id, at_ms) VALUES (1, \(now)) ON CONFLICT (id) DO UPDATE SET at_ms = excluded.at_ms
            """, logger: logger)
    }

    /// Drops every day partition that ends at or before `cutoff` (Unix ms of received time), with
    /// its events' ids, and returns how many events those partitions held. A partition the cutoff
    /// falls inside is kept whole: retention drops whole days, never rows. The totals keep
    /// counting what was stored (stats are what the collector received, not what it keeps).
    package func dropEvents(receivedBefore cutoff: Int64) async throws -> Int {
        try checkOpen()
        let logger = self.logger
        let dropped: (events: Int, days: [Int64]) = try await client.withTransaction(logger: logger) { c in
            // The partition lock: no collector creates a day while we read the list and drop.
            try await c.query("SELECT pg_advisory_xact_lock(\(PostgresSchema.partitionLock))", logger: logger)
            var old: [DayPartition] = []
            for try await name in try await c.query("""
                SELECT child.relname::text FROM pg_inherits i JOIN pg_class child ON child.oid = i.inhrelid
                WHERE i.inhparent = 'events'::regclass
                """, logger: logger).decode(String.self) {
                if let partition = DayPartition(tableName: name), partition.end <= cutoff { old.append(partition) }
            }
            old.sort { $0.day < $1.day }
            // Each old day locked before it is counted: a batch still committing into it (stored
            // with an old receive time) is waited for, so its events are counted and their ids
            // removed rather than dropped uncounted with their ids left behind. All are locked
            // before anything else is written.
            for partition in old {
                try await c.query(PostgresQuery(unsafeSQL: "LOCK TABLE \(partition.tableName) IN ACCESS EXCLUSIVE MODE"), logger: logger)
            }
            var events = 0
            for partition in old {
                let table = partition.tableName
                // Counted per app in the totals (`events_expired`), in the same transaction as the drop
                // (read whole first: one query at a time on the connection).
                var perApp: [(String, Int64)] = []
                for try await row in try await c.query(PostgresQuery(unsafeSQL: "SELECT app, count(*) FROM \(table) GROUP BY app"),
                                                       logger: logger).decode((String, Int64).self) {
                    perApp.append(row)
                }
                for (app, count) in perApp {
                    events += Int(count)
                    try await c.query("INSERT INTO totals_deltas (app, events_expired) VALUES (\(app), \(count))", logger: logger)
                }
                // The dropped events' ids go too, so event_ids stays exactly the stored events.
                try await c.query(PostgresQuery(unsafeSQL: """
                    DELETE FROM event_ids d USING \(table) p WHERE d.app = p.app AND d.uuid = p.uuid
                    """), logger: logger)
                try await c.query(PostgresQuery(unsafeSQL: "DROP TABLE \(table)"), logger: logger)
            }
            // Aggregates are few and not partitioned: deleted by their own receive time.
            var aggregatesPerApp: [(String, Int64)] = []
            for try await row in try await c.query("""
                WITH gone AS (DELETE FROM aggregates WHERE received_ms < \(cutoff) RETURNING app)
                SELECT app, count(*) FROM gone GROUP BY app
                """, logger: logger).decode((String, Int64).self) {
                aggregatesPerApp.append(row)
            }
            for (app, count) in aggregatesPerApp {
                try await c.query("INSERT INTO totals_deltas (app, aggregates_expired) VALUES (\(app), \(count))", logger: logger)
            }
            return (events, old.map(\.day))
        }
        partitions.withLock { known in for day in dropped.days { known.remove(day) } }
        return dropped.events
    }

    /// Deletes the rollups' rows of every hour before `hour`, keyed rows and deltas not yet
    /// folded, and the day rows of every day before it (their sums taken out of the past rows),
    /// one table per transaction
    /// (``PostgresRollupCompaction/drop(_:hoursBefore:_:logger:)``). Only rows of old hours are
    /// locked: uploads, which insert deltas, never wait; folds skip while it holds their lock.
    package func dropRollups(hoursBefore hour: Int64) async throws -> Int {
        try checkOpen()
        let logger = self.logger
        var dropped = 0
        for table in RollupDays.tables {
            dropped += try await client.withConnection { try await PostgresRollupCompaction.drop(table, hoursBefore: hour, $0, logger: logger) }
        }
        return dropped
    }

    /// Stops the pool (its run task); later calls throw ``PostgresStoreError/closed``.
    package func close() async {
        closed.withLock { $0 = true }
        // The background tasks first, while the pool still runs: each ends (or its wait for a
        // connection is cancelled with it); cancelling the pool first left a fold waiting for a
        // lease forever, and close() with it. All cancelled before any is awaited: the
        // compactor waits for the backfill.
        let tasks = [folder, compactor, backfiller].compactMap { $0 }
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
        runner.cancel()
        await runner.value
    }
}

// The store seam the collector's routes use: SPI, with the wire types it takes.
extension PostgresEventStore: EventStore {}
