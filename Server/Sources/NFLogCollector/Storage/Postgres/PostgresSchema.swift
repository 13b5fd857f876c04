import Logging
import PostgresNIO

/// One schema change: statements run in order, in the migrating transaction (the extended
/// protocol takes one statement per query, hence a list).
struct PostgresMigration: Sendable {
    let version: Int
    let name: String
    let statements: [String]
}

/// The collector's PostgreSQL schema and its migrator.
///
/// Several collectors may start at once against one empty database: each migrates inside one
/// transaction that first takes a transaction-scoped advisory lock, so one applies what is
/// missing while the others wait, then find it applied (`schema_migrations`) and apply nothing.
/// DDL is transactional in PostgreSQL: a migration that fails leaves nothing half done.
enum PostgresSchema {
    /// `pg_advisory_xact_lock` keys, arbitrary but fixed: the schema's migrations, the creation
    /// and dropping of the events' day partitions, and the folding of counts (``PostgresCounts``).
    static let migrationLock: Int64 = 0x4E46_4C6F_6700_0001  // "NFLog", 1
    static let partitionLock: Int64 = 0x4E46_4C6F_6700_0002
    static let foldLock: Int64 = 0x4E46_4C6F_6700_0003
    static let backfillLock: Int64 = 0x4E46_4C6F_6700_0004

    static let migrations: [PostgresMigration] = [
        // The same tables as SQLite's (CollectorSchema), with two differences the shared database
        // needs. `events` is partitioned by day on received_ms (DayPartition), so retention drops
        // a table instead of deleting rows; a unique index on a partitioned table must contain the
        // partition key, so (app, uuid) is unique in `event_ids`, a plain table that decides which
        // events are new (`INSERT … ON CONFLICT DO NOTHING`: a second collector inserting the same
        // uuid waits for the first one's commit, then skips it). Row ids come from a sequence.
        PostgresMigration(version: 1, name: "events (by day), event ids, sessions, contexts, batches, totals", statements: [
            """
            CREATE TABLE contexts (
                id bigserial PRIMARY KEY,
                app text NOT NULL,
                sdk_name text NOT NULL, sdk_version text NOT NULL,
                app_id text NOT NULL, app_version text NOT NULL,
                os_name text NOT NULL, os_version text NOT NULL, locale text NOT NULL,
                UNIQUE (app, sdk_name, sdk_version, app_id, app_version, os_name, os_version, locale)
            )
            """,
            """
            CREATE TABLE sessions (
                app text NOT NULL,
                uuid uuid NOT NULL,
                context_id bigint NOT NULL REFERENCES contexts (id),
                started_ms bigint NOT NULL,
                ended_ms bigint,
                PRIMARY KEY (app, uuid)
            )
            """,
            "CREATE TABLE event_ids (app text NOT NULL, uuid uuid NOT NULL, PRIMARY KEY (app, uuid))",
            "CREATE SEQUENCE events_id_seq AS bigint",
            """
            CREATE TABLE events (
                id bigint NOT NULL DEFAULT nextval('events_id_seq'),
                app text NOT NULL,
                uuid uuid NOT NULL,
                batch_id uuid NOT NULL,
                session uuid NOT NULL,
                context_id bigint NOT NULL,
                name text NOT NULL,
                kind text NOT NULL,
                type text NOT NULL,
                timestamp_ms bigint NOT NULL,
                end_ms bigint,
                duration_ms double precision,
                parameters text,
                end_parameters text,
                received_ms bigint NOT NULL,
                abandoned boolean NOT NULL DEFAULT false,
                given_up boolean,
                transaction_id uuid,
                parent_span bigint,
                span_id bigint,
                source text,
                origin text
            ) PARTITION BY RANGE (received_ms)
            """,
            // Export pages walk an app's rows by id; the report reads spans by name and duration.
            "CREATE INDEX events_app_id ON events (app, id)",
            "CREATE INDEX events_spans ON events (app, kind, type, name, duration_ms) WHERE kind = 'span'",
            """
            CREATE TABLE batches (
                app text NOT NULL,
                uuid uuid NOT NULL,
                first_received_ms bigint NOT NULL,
                last_received_ms bigint NOT NULL,
                requests bigint NOT NULL,
                accepted bigint NOT NULL,
                duplicates bigint NOT NULL,
                PRIMARY KEY (app, uuid)
            )
            """,
            """
            CREATE TABLE totals (
                app text PRIMARY KEY,
                events bigint NOT NULL DEFAULT 0,
                duplicates bigint NOT NULL DEFAULT 0,
                batches bigint NOT NULL DEFAULT 0,
                requests bigint NOT NULL DEFAULT 0,
                abandoned bigint NOT NULL DEFAULT 0,
                pruned bigint NOT NULL DEFAULT 0,
                database_resets bigint NOT NULL DEFAULT 0,
                aggregates bigint NOT NULL DEFAULT 0,
                aggregate_duplicates bigint NOT NULL DEFAULT 0,
                aggregated_events bigint NOT NULL DEFAULT 0
            )
            """,
            "CREATE TABLE name_counts (app text NOT NULL, name text NOT NULL, count bigint NOT NULL, PRIMARY KEY (app, name))",
            "CREATE TABLE device_prunes (app text NOT NULL, name text NOT NULL, count bigint NOT NULL, PRIMARY KEY (app, name))",
            """
            CREATE TABLE device_resets (
                id bigserial PRIMARY KEY,
                app text NOT NULL,
                batch_id uuid NOT NULL,
                at_ms bigint NOT NULL,
                reason text NOT NULL
            )
            """,
            "CREATE TABLE write_probe (id int PRIMARY KEY CHECK (id = 1), at_ms bigint NOT NULL)",
        ]),
        // Aggregates: not partitioned (far fewer rows than events), so (app, uuid) is unique here.
        PostgresMigration(version: 2, name: "aggregates", statements: [
            """
            CREATE TABLE aggregates (
                id bigserial PRIMARY KEY,
                app text NOT NULL,
                uuid uuid NOT NULL,
                batch_id uuid NOT NULL,
                session uuid NOT NULL,
                context_id bigint NOT NULL REFERENCES contexts (id),
                name text NOT NULL,
                type text NOT NULL,
                start_ms bigint NOT NULL,
                end_ms bigint NOT NULL,
                window_s bigint NOT NULL,
                count bigint NOT NULL,
                dimensions text NOT NULL,
                overflow boolean NOT NULL DEFAULT false,
                measures text NOT NULL,
                received_ms bigint NOT NULL,
                UNIQUE (app, uuid)
            )
            """,
            "CREATE INDEX aggregates_names ON aggregates (app, name, start_ms)",
        ]),
        // Retention: what it dropped, counted per app as on SQLite; aggregates by receive time.
        PostgresMigration(version: 3, name: "retention: expired totals, aggregates by receive time", statements: [
            "ALTER TABLE totals ADD COLUMN events_expired bigint NOT NULL DEFAULT 0",
            "ALTER TABLE totals ADD COLUMN aggregates_expired bigint NOT NULL DEFAULT 0",
            "CREATE INDEX aggregates_received ON aggregates (received_ms)",
        ]),
        // Fleet health, as SQLite's migration 9: events devices report quarantining.
        PostgresMigration(version: 4, name: "events quarantined on devices", statements: [
            "ALTER TABLE totals ADD COLUMN quarantined bigint NOT NULL DEFAULT 0",
        ]),
        // The report's filters, funnels and versions, as SQLite's migration 10: events by app and
        // the hour of their device time for a report filtered by time (the hour, so that inserts
        // append, as in SQLite's; PostgresReportSelection writes the same expression), the runs (use-case spans in a transaction)
        // and their steps (events with a parent span) found through indexes that hold only them,
        // and each context's events counted by every
        // commit (filled here from the events stored so far; retention does not lower it, as it
        // does not lower name_counts).
        PostgresMigration(version: 5, name: "report filters, funnel steps and events by context", statements: [
            "CREATE INDEX events_hours ON events (app, (timestamp_ms / 3600000))",
            "CREATE INDEX events_runs ON events (app, transaction_id, span_id) WHERE given_up IS NOT NULL AND span_id IS NOT NULL",
            "CREATE INDEX events_steps ON events (app, transaction_id, parent_span) WHERE parent_span IS NOT NULL",
            "CREATE TABLE context_counts (context_id bigint PRIMARY KEY REFERENCES contexts (id), events bigint NOT NULL)",
            "INSERT INTO context_counts (context_id, events) SELECT context_id, count(*) FROM events GROUP BY context_id",
        ]),
        // No row that every batch updates (docs/SCALING.md). Until here each batch's transaction
        // added to its app's `totals` row, its names' `name_counts` rows, its context's count and
        // the names' `device_prunes`, holding those row locks to its commit: two collectors' batches
        // for one app queued on them. Now a batch only inserts its changes into the `*_deltas`
        // tables (no key, so no insert waits on another), ``PostgresCountFolder`` moves them into
        // the base tables now and then (one collector at a time, under an advisory lock), and
        // every read goes through the `*_now` views: base plus what is not folded yet, the same
        // in any snapshot, since a fold deletes deltas and adds them to the base in one commit.
        PostgresMigration(version: 6, name: "counts as deltas folded later: no row every batch updates", statements:
            PostgresCounts.migrationStatements),
        PostgresMigration(version: 7, name: "hourly rollups, as deltas folded later, and their backfill", statements:
            PostgresRollups.migrationStatements),
        PostgresMigration(version: 8, name: "funnel rollups, as deltas folded later, and their backfill", statements:
            PostgresRollups.funnelMigrationStatements),
        // SQLite's migration 13: the daily rollups (``PostgresRollupCompaction``).
        PostgresMigration(version: 9, name: "daily rollups, compacted from past days' hours", statements:
            PostgresRollupCompaction.migrationStatements),
        // SQLite's migration 14: the sums of every compacted day per key (RollupDays.Table.past).
        PostgresMigration(version: 10, name: "rollups of every compacted day", statements:
            PostgresRollupCompaction.pastMigrationStatements),
        // The server splits' joins by index, as SQLite's events_transactions serves them: the
        // backend's spans that have a parent (few: none for an app without a backend) and the
        // spans by id within their transaction. Without them the report's split read every
        // event of the app (0.7 s of its 0.8 over ten million).
        PostgresMigration(version: 11, name: "server splits by index", statements: [
            "CREATE INDEX events_children ON events (app, transaction_id, parent_span) WHERE span_id IS NOT NULL AND parent_span IS NOT NULL",
            "CREATE INDEX events_span_ids ON events (app, transaction_id, span_id) WHERE span_id IS NOT NULL",
        ]),
        PostgresMigration(version: 12, name: "hourly rollup views without a grouping of their own", statements:
            PostgresRollups.ungroupedViewStatements),
    ]

    /// Refuses, changing nothing, a database that lacks this release's migrations or has newer
    /// ones: what reads only must neither create nor migrate the schema.
    static func checkCurrent(_ connection: PostgresConnection, logger: Logger) async throws {
        var exists = false
        for try await name in try await connection.query("SELECT to_regclass('schema_migrations')::text", logger: logger)
            .decode(String?.self) {
            exists = name != nil
        }
        guard exists else {
            throw PostgresStoreError.configuration(
                "the database holds no collector schema (no table schema_migrations): run nflog-collector serve --postgres URL once to create it")
        }
        var applied = Set<Int>()
        for try await version in try await connection.query("SELECT version FROM schema_migrations", logger: logger).decode(Int.self) {
            applied.insert(version)
        }
        let known = Set(migrations.map(\.version))
        if !known.isSubset(of: applied) {
            throw PostgresStoreError.configuration(
                "the database was written by an older collector (it lacks schema version \(known.subtracting(applied).sorted().map(String.init).joined(separator: ", "))): run nflog-collector serve --postgres URL once to migrate it, then read it")
        }
        if let newer = applied.subtracting(known).max() {
            throw PostgresStoreError.configuration(
                "the database was written by a newer collector (schema version \(newer)): read it with that release")
        }
    }

    /// Applies the migrations `connection`'s database lacks, under the advisory lock; returns the
    /// versions it applied (none when another collector or an earlier start did).
    @discardableResult
    static func migrate(_ connection: PostgresConnection, logger: Logger,
                        migrations: [PostgresMigration] = migrations) async throws -> [Int] {
        try await connection.withTransaction(logger: logger) { connection in
            try await connection.query("SELECT pg_advisory_xact_lock(\(migrationLock))", logger: logger)
            try await connection.query("""
                CREATE TABLE IF NOT EXISTS schema_migrations (
                    version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())
                """, logger: logger)
            var applied = Set<Int>()
            for try await version in try await connection.query("SELECT version FROM schema_migrations", logger: logger)
                .decode(Int.self) {
                applied.insert(version)
            }
            var done: [Int] = []
            for migration in migrations.sorted(by: { $0.version < $1.version }) where !applied.contains(migration.version) {
                for statement in migration.statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query(
                    "INSERT INTO schema_migrations (version, name) VALUES (\(migration.version), \(migration.name))", logger: logger)
                done.append(migration.version)
            }
            return done
        }
    }
}
