@_spi(NFLogShared) import NFLogSupport

/// The collector's SQLite schema, one migration per change (`PRAGMA user_version`).
enum CollectorSchema {
    static let migrations: [SQLiteMigration] = [
        SQLiteMigration(version: 1, name: "events, sessions, contexts, batches, totals", sql: """
            CREATE TABLE contexts (
                id INTEGER PRIMARY KEY,
                app TEXT NOT NULL,
                sdk_name TEXT NOT NULL, sdk_version TEXT NOT NULL,
                app_id TEXT NOT NULL, app_version TEXT NOT NULL,
                os_name TEXT NOT NULL, os_version TEXT NOT NULL, locale TEXT NOT NULL,
                UNIQUE (app, sdk_name, sdk_version, app_id, app_version, os_name, os_version, locale)
            );
            CREATE TABLE sessions (
                app TEXT NOT NULL,
                uuid BLOB NOT NULL,
                context_id INTEGER NOT NULL REFERENCES contexts(id),
                started_ms INTEGER NOT NULL,
                ended_ms INTEGER,
                PRIMARY KEY (app, uuid)
            ) WITHOUT ROWID;
            CREATE TABLE events (
                id INTEGER PRIMARY KEY,
                app TEXT NOT NULL,
                uuid BLOB NOT NULL,
                batch_id BLOB NOT NULL,
                session BLOB NOT NULL,
                context_id INTEGER NOT NULL REFERENCES contexts(id),
                name TEXT NOT NULL,
                kind TEXT NOT NULL,
                type TEXT NOT NULL,
                timestamp_ms INTEGER NOT NULL,
                end_ms INTEGER,
                duration_ms REAL,
                parameters TEXT,
                end_parameters TEXT,
                received_ms INTEGER NOT NULL,
                UNIQUE (app, uuid)
            );
            CREATE TABLE batches (
                app TEXT NOT NULL,
                uuid BLOB NOT NULL,
                first_received_ms INTEGER NOT NULL,
                last_received_ms INTEGER NOT NULL,
                requests INTEGER NOT NULL,
                accepted INTEGER NOT NULL,
                duplicates INTEGER NOT NULL,
                PRIMARY KEY (app, uuid)
            ) WITHOUT ROWID;
            CREATE TABLE totals (
                app TEXT PRIMARY KEY,
                events INTEGER NOT NULL DEFAULT 0,
                duplicates INTEGER NOT NULL DEFAULT 0,
                batches INTEGER NOT NULL DEFAULT 0,
                requests INTEGER NOT NULL DEFAULT 0
            ) WITHOUT ROWID;
            CREATE TABLE name_counts (
                app TEXT NOT NULL,
                name TEXT NOT NULL,
                count INTEGER NOT NULL,
                PRIMARY KEY (app, name)
            ) WITHOUT ROWID;
            """),
        SQLiteMigration(version: 2, name: "abandoned spans and device diagnostics", sql: """
            ALTER TABLE events ADD COLUMN abandoned INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE totals ADD COLUMN abandoned INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE totals ADD COLUMN pruned INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE totals ADD COLUMN database_resets INTEGER NOT NULL DEFAULT 0;
            CREATE TABLE device_prunes (
                app TEXT NOT NULL,
                name TEXT NOT NULL,
                count INTEGER NOT NULL,
                PRIMARY KEY (app, name)
            ) WITHOUT ROWID;
            CREATE TABLE device_resets (
                id INTEGER PRIMARY KEY,
                app TEXT NOT NULL,
                batch_id BLOB NOT NULL,
                at_ms INTEGER NOT NULL,
                reason TEXT NOT NULL
            );
            """),
        SQLiteMigration(version: 3, name: "the write probe of /health", sql: """
            CREATE TABLE write_probe (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                at_ms INTEGER NOT NULL,
                padding BLOB NOT NULL  -- about a batch's worth of pages, rewritten by each probe
            );
            """),
        // The report reads spans only, in (name, duration) order: through this index it neither
        // reads the points nor sorts the use cases (an order of magnitude less SQL time); inserts
        // cost a little more. `kind` is a column too because SQLite does not count a partial index's
        // WHERE columns as covered; `abandoned` makes the network spans' count and walk covering.
        // The report reads spans only: counted, grouped by name, and their durations sorted, from
        // this index alone. Keyed by id after the name, so an insert lands at the end of its
        // (app, type, name) run, a few hot pages, not at a random place as a key ending in
        // duration_ms would (that cost a large part of ingest). `given_up` (a use case closed by the SDK or
        // ended with completed: false) is computed from the end parameters when the event is
        // stored (SQLiteEventStore's insert), so the report never opens JSON. NULL for other events.
        SQLiteMigration(version: 4, name: "the report's index of spans", sql: """
            ALTER TABLE events ADD COLUMN given_up INTEGER;
            UPDATE events SET given_up = (abandoned = 1 OR coalesce(json_extract(end_parameters, '$.completed'), 1) IN (0, 'false'))
                WHERE kind = 'span' AND type = 'usecase';
            CREATE INDEX events_spans ON events (app, kind, type, name, id, duration_ms, abandoned, given_up) WHERE kind = 'span';
            """),
        // Aggregates: a table of their own, since their uuids are a namespace of their own and
        // they have no kind, timestamp or parameters. The report reads them by name, in (name,
        // start) order, filtered by start: through aggregates_names, without a sort. `dimensions`
        // is canonical JSON (keys sorted, `{}` when none); `measures` the summaries as sent.
        // The totals keep their counts, so stats never count rows.
        SQLiteMigration(version: 5, name: "aggregates", sql: """
            CREATE TABLE aggregates (
                id INTEGER PRIMARY KEY,
                app TEXT NOT NULL,
                uuid BLOB NOT NULL,
                batch_id BLOB NOT NULL,
                session BLOB NOT NULL,
                context_id INTEGER NOT NULL REFERENCES contexts(id),
                name TEXT NOT NULL,
                type TEXT NOT NULL,
                start_ms INTEGER NOT NULL,
                end_ms INTEGER NOT NULL,
                window_s INTEGER NOT NULL,
                count INTEGER NOT NULL,
                dimensions TEXT NOT NULL,
                overflow INTEGER NOT NULL DEFAULT 0,
                measures TEXT NOT NULL,
                received_ms INTEGER NOT NULL,
                UNIQUE (app, uuid)
            );
            CREATE INDEX aggregates_names ON aggregates (app, name, start_ms);
            ALTER TABLE totals ADD COLUMN aggregates INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE totals ADD COLUMN aggregate_duplicates INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE totals ADD COLUMN aggregated_events INTEGER NOT NULL DEFAULT 0;
            """),
        // Transactions (docs/PROTOCOL.md): `transaction_id` the uuid's 16 bytes, `parent_span` a
        // W3C span id's 8 bytes as a signed integer, bit for bit. `span_id` (the same, from the
        // last 8 bytes of the uuid) is derived when a span that carries a transaction is stored,
        // NULL otherwise, so only those spans enter events_transactions: an app that sends no
        // transactions pays three NULL columns per event and no index. The report finds each
        // server span's client span, and then each client call's transaction, through that index
        // (a seek on app, transaction, span id); it is covering for both sides of that join.
        SQLiteMigration(version: 6, name: "transactions: ids, parent spans and the index that joins them", sql: """
            ALTER TABLE events ADD COLUMN transaction_id BLOB;
            ALTER TABLE events ADD COLUMN parent_span INTEGER;
            ALTER TABLE events ADD COLUMN span_id INTEGER;
            CREATE INDEX events_transactions ON events (app, transaction_id, span_id, parent_span, context_id, duration_ms)
                WHERE span_id IS NOT NULL;
            """),
        // Where an event came from (docs/PROTOCOL.md): `source` is stored for web events only
        // ('web'), NULL for native ones, the vast majority, which so pay two NULL columns and no
        // index entry; `origin` is the page's origin as sent (web events only, and optional there).
        // The report counts the web events and their distinct origins from events_web alone
        // (covering, in origin order), and the native ones as the rest of the app's total.
        SQLiteMigration(version: 7, name: "event sources: native or web, and the web page's origin", sql: """
            ALTER TABLE events ADD COLUMN source TEXT;
            ALTER TABLE events ADD COLUMN origin TEXT;
            CREATE INDEX events_web ON events (app, source, origin) WHERE source IS NOT NULL;
            """),
        // Retention (EventStore.dropEvents): events and aggregates are dropped by the collector's
        // receive time, in bounded transactions found through these indexes (without them each
        // transaction would scan the table). Their keys grow with time, so an insert lands at the
        // end, a few hot pages. A session's `last_received_ms` is the latest batch that listed it:
        // every event and aggregate of a session comes in a batch that lists it (PROTOCOL.md), so a
        // session last received before the cutoff has nothing left once those are dropped. NULL for
        // the sessions stored before this migration: unknown, so kept. Batches (retry bookkeeping)
        // are dropped by their last receive time, and scanned for it (one row per request, not per
        // event). The totals count what was dropped.
        SQLiteMigration(version: 8, name: "retention: receive-time indexes, sessions' last receive time, expired totals", sql: """
            CREATE INDEX events_received ON events (received_ms);
            CREATE INDEX aggregates_received ON aggregates (received_ms);
            ALTER TABLE sessions ADD COLUMN last_received_ms INTEGER;
            ALTER TABLE totals ADD COLUMN events_expired INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE totals ADD COLUMN aggregates_expired INTEGER NOT NULL DEFAULT 0;
            """),
        // Fleet health: events this collector refused that devices report quarantining
        // (PROTOCOL.md, `diagnostics.quarantined`).
        SQLiteMigration(version: 9, name: "events quarantined on devices", sql: """
            ALTER TABLE totals ADD COLUMN quarantined INTEGER NOT NULL DEFAULT 0;
            """),
        // The report's filters, funnels and versions. A report filtered by time reads the events
        // of the range's hours through events_hours, keyed by the hour of the device timestamp
        // (SQLiteReportSelection writes the same expression), in proportion to the range rather
        // than to the store. The hour, not the millisecond: the rows of one hour are ordered by
        // row id, so an insert lands at the end of its hour's run, a few hot pages, as
        // events_received's do, where an index of the exact timestamps took each batch's events (a
        // minute of device times) to random places in it (scripts/loadtest ingest: an exact index
        // cut ingest to under a third, this one costs a small fraction); a report over an hour
        // reads that hour's entries instead of every event. A use case's steps are the events
        // logged against its runs (the run's transaction, `parent_span` the run's span id):
        // events_runs holds only use-case spans in a transaction (`given_up` is set for use cases
        // only), events_steps only events with a parent span, both covering, so the report joins
        // runs to steps without reading anything else (a join through the (app, uuid) index and
        // the rows took more than twice as long), and an app that logs no transactions pays no
        // index entry. `context_counts` keeps each context's events as every
        // commit stores them, as name_counts keeps each name's, so an unfiltered report counts the
        // events by app and SDK version without reading them; filled here from the events stored
        // so far. Like name_counts, retention does not lower it.
        SQLiteMigration(version: 10, name: "report filters, funnel steps and events by context", sql: """
            CREATE INDEX events_hours ON events (app, timestamp_ms / 3600000);
            CREATE INDEX events_runs ON events (app, transaction_id, span_id, context_id, given_up, name, timestamp_ms)
                WHERE given_up IS NOT NULL AND span_id IS NOT NULL;
            CREATE INDEX events_steps ON events (app, transaction_id, parent_span, context_id, name, timestamp_ms)
                WHERE parent_span IS NOT NULL;
            CREATE TABLE context_counts (
                context_id INTEGER PRIMARY KEY REFERENCES contexts(id),
                events INTEGER NOT NULL
            );
            INSERT INTO context_counts (context_id, events) SELECT context_id, count(*) FROM events GROUP BY context_id;
            """),
        // Hourly rollups (HourlyRollup): what the report's sections are computed from, in rows that
        // grow with hours × app versions × names (and duration buckets), not with events. Each
        // batch's transaction adds its rows. The events stored before this migration are added by
        // the backfill (SQLiteRollupBackfill), a bounded transaction at a time beside uploads:
        // `rollup_backfill` holds its cursor, the next event row id to add, and the last one to
        // add (the largest at this migration); both bounds and `received_ms` at most the
        // migration's time select those events only (a row id freed by retention could be given
        // to a new event, which its batch rolled up already).
        SQLiteMigration(version: 11, name: "hourly rollups and their backfill", sql: """
            CREATE TABLE event_hours (
                app TEXT NOT NULL, hour INTEGER NOT NULL, app_version TEXT NOT NULL, sdk_name TEXT NOT NULL, sdk_version TEXT NOT NULL,
                name TEXT NOT NULL, kind TEXT NOT NULL, type TEXT NOT NULL, source TEXT NOT NULL,
                events INTEGER NOT NULL, abandoned INTEGER NOT NULL, given_up INTEGER NOT NULL,
                measured INTEGER NOT NULL, duration_us INTEGER NOT NULL,
                PRIMARY KEY (app, hour, app_version, sdk_name, sdk_version, name, kind, type, source)
            ) WITHOUT ROWID;
            CREATE TABLE duration_hours (
                app TEXT NOT NULL, hour INTEGER NOT NULL, app_version TEXT NOT NULL, name TEXT NOT NULL, type TEXT NOT NULL,
                bucket INTEGER NOT NULL, count INTEGER NOT NULL,
                PRIMARY KEY (app, hour, app_version, name, type, bucket)
            ) WITHOUT ROWID;
            CREATE TABLE origin_hours (
                app TEXT NOT NULL, hour INTEGER NOT NULL, app_version TEXT NOT NULL, origin TEXT NOT NULL, events INTEGER NOT NULL,
                PRIMARY KEY (app, hour, app_version, origin)
            ) WITHOUT ROWID;
            CREATE TABLE rollup_backfill (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                next_event INTEGER NOT NULL,
                last_event INTEGER NOT NULL,
                received_before_ms INTEGER NOT NULL
            );
            INSERT INTO rollup_backfill (id, next_event, last_event, received_before_ms)
                SELECT 1, coalesce(min(id), 1), coalesce(max(id), 0), CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) + 1
                FROM events;
            """),
        // The funnels' rollup (FunnelRollup): per app, hour of the run's start, the run's app
        // version, use case and step, the runs that reached the step and the abandoned runs that
        // left at it, corrected by each batch that brings a run or a step of one. The runs stored
        // before this migration are added by the same backfill (SQLiteRollupBackfill), after
        // the events: `next_run` to `last_run` are the row ids still to go over, and a run in
        // that range received before `runs_received_before_ms` is left to it (a batch with a new
        // step of such a run changes nothing; the backfill reads all its steps later).
        // The sessions' rollup (SessionRollup): per app, hour of the session's start and its app
        // version, the sessions of each duration bucket and their durations' sum, moved from
        // bucket to bucket as batches list a session with a later end. The sessions stored before
        // this migration are added by the backfill last, in key order: it has added those up to
        // (`sessions_after_app`, `sessions_after_uuid`) (NULL: none yet) until `sessions_done`; a
        // batch changes a session's rows only once the backfill is past its key (a session past
        // it, new or not, is added by the backfill as it then is). The report reads the sessions
        // that start within the part of an hour at a range's ends through sessions_started.
        SQLiteMigration(version: 12, name: "funnel and session rollups", sql: """
            CREATE TABLE funnel_hours (
                app TEXT NOT NULL, hour INTEGER NOT NULL, app_version TEXT NOT NULL, use_case TEXT NOT NULL, step TEXT NOT NULL,
                reached INTEGER NOT NULL, left_runs INTEGER NOT NULL,
                PRIMARY KEY (app, hour, app_version, use_case, step)
            ) WITHOUT ROWID;
            ALTER TABLE rollup_backfill ADD COLUMN next_run INTEGER NOT NULL DEFAULT 1;
            ALTER TABLE rollup_backfill ADD COLUMN last_run INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE rollup_backfill ADD COLUMN runs_received_before_ms INTEGER NOT NULL DEFAULT 0;
            UPDATE rollup_backfill SET next_run = coalesce((SELECT min(id) FROM events), 1),
                last_run = coalesce((SELECT max(id) FROM events), 0),
                runs_received_before_ms = CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) + 1;
            CREATE TABLE session_hours (
                app TEXT NOT NULL, hour INTEGER NOT NULL, app_version TEXT NOT NULL, bucket INTEGER NOT NULL,
                sessions INTEGER NOT NULL, duration_us INTEGER NOT NULL,
                PRIMARY KEY (app, hour, app_version, bucket)
            ) WITHOUT ROWID;
            ALTER TABLE rollup_backfill ADD COLUMN sessions_after_app TEXT;
            ALTER TABLE rollup_backfill ADD COLUMN sessions_after_uuid BLOB;
            ALTER TABLE rollup_backfill ADD COLUMN sessions_done INTEGER NOT NULL DEFAULT 0;
            UPDATE rollup_backfill SET sessions_done = NOT EXISTS (SELECT 1 FROM sessions);
            CREATE INDEX sessions_started ON sessions (app, started_ms);
            """),
        // Daily rollups (RollupDays): each rollup table's twin by UTC day, which a report over
        // whole days reads instead of 24 hour rows a day. The compactor fills a past day's rows
        // from its hours; triggers keep them equal to the hours afterwards (SQLiteRollupCompaction).
        SQLiteMigration(version: 13, name: "daily rollups", sql: SQLiteRollupCompaction.migrationSQL),
        // Per app and key, the sums of every day row: a range over all compacted days reads a
        // row per key instead of one per day and key (RollupDays.Table.past).
        SQLiteMigration(version: 14, name: "rollups of every compacted day", sql: SQLiteRollupCompaction.pastMigrationSQL),
    ]
}
