@_spi(NFLogShared) import NFLogSupport
/// The database schema, as an ordered list of migrations. A database records the last one applied
/// in `PRAGMA user_version`; opening it applies the rest, each in its own transaction.
/// Never edit a migration that has shipped: add a new one.
enum Schema {
    typealias Migration = SQLiteMigration

    static let migrations: [Migration] = [
        Migration(version: 1, name: "point, span, session and context tables", sql: """
            CREATE TABLE contexts (
                id INTEGER PRIMARY KEY,
                properties TEXT NOT NULL UNIQUE
            );
            CREATE TABLE sessions (
                id INTEGER PRIMARY KEY,
                uuid BLOB NOT NULL UNIQUE,
                context_id INTEGER NOT NULL REFERENCES contexts(id),
                started_ms INTEGER NOT NULL,
                ended_ms INTEGER
            );
            CREATE TABLE point_events (
                id INTEGER PRIMARY KEY,
                uuid BLOB NOT NULL,
                session_id INTEGER NOT NULL REFERENCES sessions(id),
                name TEXT NOT NULL,
                type TEXT NOT NULL,
                parameters TEXT,
                timestamp_ms INTEGER NOT NULL
            );
            CREATE TABLE span_events (
                id INTEGER PRIMARY KEY,
                uuid BLOB NOT NULL UNIQUE,
                session_id INTEGER NOT NULL REFERENCES sessions(id),
                name TEXT NOT NULL,
                type TEXT NOT NULL,
                parameters TEXT,
                start_ms INTEGER NOT NULL,
                start_mono_ns INTEGER NOT NULL,
                clock_epoch INTEGER NOT NULL,
                end_ms INTEGER,
                duration_ns INTEGER,
                end_parameters TEXT
            );
            """),
        Migration(version: 2, name: "upload batches and quarantine", sql: """
            ALTER TABLE point_events ADD COLUMN batch_id INTEGER;
            ALTER TABLE span_events ADD COLUMN batch_id INTEGER;
            CREATE INDEX point_events_batch ON point_events(batch_id) WHERE batch_id IS NOT NULL;
            CREATE INDEX span_events_batch ON span_events(batch_id) WHERE batch_id IS NOT NULL;
            CREATE TABLE upload_batches (
                id INTEGER PRIMARY KEY,
                uuid BLOB NOT NULL UNIQUE,
                context_id INTEGER NOT NULL REFERENCES contexts(id),
                created_ms INTEGER NOT NULL,
                attempts INTEGER NOT NULL DEFAULT 0
            );
            CREATE TABLE quarantined_events (
                id INTEGER PRIMARY KEY,
                uuid BLOB NOT NULL,
                kind TEXT NOT NULL,
                name TEXT NOT NULL,
                payload TEXT NOT NULL,
                http_status INTEGER NOT NULL,
                reason TEXT NOT NULL,
                quarantined_ms INTEGER NOT NULL
            );
            """),
        Migration(version: 3, name: "rolling database: priorities, abandoned spans, prune counts, device notes", sql: """
            ALTER TABLE point_events ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE span_events ADD COLUMN priority INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE span_events ADD COLUMN abandoned INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE upload_batches ADD COLUMN diagnostics TEXT;
            CREATE INDEX span_events_open ON span_events(start_ms) WHERE end_ms IS NULL;
            CREATE TABLE pruned_counts (
                name TEXT PRIMARY KEY,
                count INTEGER NOT NULL
            ) WITHOUT ROWID;
            CREATE TABLE open_epochs (
                epoch INTEGER PRIMARY KEY,
                pid INTEGER NOT NULL,
                opened_ms INTEGER NOT NULL
            );
            CREATE TABLE device_notes (
                id INTEGER PRIMARY KEY,
                kind TEXT NOT NULL,
                detail TEXT NOT NULL,
                at_ms INTEGER NOT NULL
            );
            """),
        Migration(version: 4, name: "encryption at rest: the key check", sql: """
            CREATE TABLE encryption (
                id INTEGER PRIMARY KEY CHECK (id IN (1, 2)),  -- 1: the key check; 2: a rewrite still owed
                key_check BLOB CHECK ((id = 1) = (key_check IS NOT NULL))
            );
            """),
        Migration(version: 5, name: "a Retry-After that outlives the process", sql: """
            CREATE TABLE upload_hold (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                until_ms INTEGER NOT NULL,  -- Unix milliseconds: no upload before this
                status INTEGER NOT NULL,    -- the answer that asked for it, for diagnostics
                message TEXT NOT NULL
            );
            """),
        Migration(version: 6, name: "consent: events held while it is pending", sql: """
            ALTER TABLE point_events ADD COLUMN held INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE span_events ADD COLUMN held INTEGER NOT NULL DEFAULT 0;
            -- Only the held rows: releasing, deleting and counting them reads nothing else.
            CREATE INDEX point_events_held ON point_events (id) WHERE held = 1;
            CREATE INDEX span_events_held ON span_events (id) WHERE held = 1;
            """),
        Migration(version: 7, name: "aggregates: events folded per name, window and series", sql: """
            CREATE TABLE aggregate_events (
                id INTEGER PRIMARY KEY,
                uuid BLOB NOT NULL UNIQUE,
                session_id INTEGER NOT NULL REFERENCES sessions(id),  -- where it was opened
                name TEXT NOT NULL,
                type TEXT NOT NULL,
                parameters BLOB,                  -- the folded state as JSON (sealed when encrypted)
                start_ms INTEGER NOT NULL,
                end_ms INTEGER,                   -- NULL while open: only closed aggregates travel
                window_ms INTEGER NOT NULL,       -- the aligned window's start
                window_end_ms INTEGER NOT NULL,   -- when it closes by time
                window_s INTEGER NOT NULL,
                series TEXT NOT NULL,             -- the dimensions as canonical JSON, or * for the overflow
                count INTEGER NOT NULL DEFAULT 0, -- events folded in
                opened_ms INTEGER NOT NULL,
                batch_id INTEGER,
                priority INTEGER NOT NULL DEFAULT 0,
                held INTEGER NOT NULL DEFAULT 0
            );
            CREATE INDEX aggregate_events_series ON aggregate_events (name, window_ms, series);
            CREATE INDEX aggregate_events_open ON aggregate_events (window_end_ms) WHERE end_ms IS NULL;
            CREATE INDEX aggregate_events_batch ON aggregate_events (batch_id) WHERE batch_id IS NOT NULL;
            CREATE INDEX aggregate_events_held ON aggregate_events (id) WHERE held = 1;
            """),
        Migration(version: 8, name: "transactions: the transaction an event belongs to, the span it was logged under", sql: """
            ALTER TABLE point_events ADD COLUMN transaction_id BLOB;
            ALTER TABLE point_events ADD COLUMN parent_span INTEGER;
            ALTER TABLE span_events ADD COLUMN transaction_id BLOB;
            ALTER TABLE span_events ADD COLUMN parent_span INTEGER;
            """),
        Migration(version: 9, name: "web content: the page an event came from", sql: """
            ALTER TABLE point_events ADD COLUMN web_origin TEXT;
            ALTER TABLE span_events ADD COLUMN web_origin TEXT;
            """),
        Migration(version: 10, name: "outputs: delivery tracked per durable output", sql: """
            -- The durable outputs besides the collector at upload_url, numbered from 1 (the collector
            -- is output 0 and keeps using the tables' batch_id: with no other output nothing changes).
            CREATE TABLE outputs (
                number INTEGER PRIMARY KEY CHECK (number > 0),
                id TEXT NOT NULL UNIQUE
            );
            -- What each other output is still owed: one row per (output, record). A record leaves
            -- its table once the collector is done with it (batch_id = 0: delivered, or not for it)
            -- and no output still owes it.
            CREATE TABLE deliveries (
                output INTEGER NOT NULL,   -- outputs.number
                kind INTEGER NOT NULL,     -- 0 point_events, 1 span_events, 2 aggregate_events
                row INTEGER NOT NULL,      -- the record's id in its table
                batch INTEGER,             -- upload_batches.id while in one of the output's batches
                -- Record first: owing a record is one b-tree insert, finding who owes it a prefix,
                -- and an output's queue a walk of its kind in row order (few outputs per record).
                PRIMARY KEY (kind, row, output)
            ) WITHOUT ROWID;
            CREATE INDEX deliveries_batch ON deliveries (batch) WHERE batch IS NOT NULL;
            ALTER TABLE upload_batches ADD COLUMN output INTEGER NOT NULL DEFAULT 0;
            -- The Retry-After of each other output (the collector's stays in upload_hold).
            CREATE TABLE output_holds (
                output INTEGER PRIMARY KEY,
                until_ms INTEGER NOT NULL,
                status INTEGER NOT NULL,
                message TEXT NOT NULL
            );
            ALTER TABLE quarantined_events ADD COLUMN output TEXT;
            """),
        Migration(version: 11, name: "the pruner's running totals by event name", sql: """
            -- Every event the pruner deleted since this migration, by name; never emptied (unlike
            -- pruned_counts, which each batch takes): what the device really dropped.
            CREATE TABLE pruned_totals (
                name TEXT PRIMARY KEY,
                count INTEGER NOT NULL
            ) WITHOUT ROWID;
            """),
        Migration(version: 12, name: "a batch finds its rows by id range, not through an index on batch_id", sql: """
            -- Marking a row for a batch and deleting it once delivered each cost an insert into and a
            -- delete from this index, per row: much of what delivering an event cost. A batch's
            -- rows are a range of each table (Outbox.nextBatch), kept with the batch below.
            DROP INDEX point_events_batch;
            DROP INDEX span_events_batch;
            DROP INDEX aggregate_events_batch;
            -- The rows the collector is done with while another output still owes them (batch_id
            -- 0): counted and deleted through these. A row in a batch is in none of them.
            CREATE INDEX point_events_done ON point_events (held) WHERE batch_id = 0;
            CREATE INDEX span_events_done ON span_events (held) WHERE batch_id = 0;
            CREATE INDEX aggregate_events_done ON aggregate_events (held) WHERE batch_id = 0;
            -- The first and last row id of each table the collector's batch holds (first > last:
            -- none). NULL in a batch formed before this migration: its rows are looked for in the
            -- whole table, once.
            ALTER TABLE upload_batches ADD COLUMN point_first INTEGER;
            ALTER TABLE upload_batches ADD COLUMN point_last INTEGER;
            ALTER TABLE upload_batches ADD COLUMN span_first INTEGER;
            ALTER TABLE upload_batches ADD COLUMN span_last INTEGER;
            ALTER TABLE upload_batches ADD COLUMN aggregate_first INTEGER;
            ALTER TABLE upload_batches ADD COLUMN aggregate_last INTEGER;
            """),
    ]

    static var latestVersion: Int32 { migrations.last?.version ?? 0 }

    /// Brings the database up to ``latestVersion`` (or `target`, for tests of old versions).
    static func migrate(_ connection: SQLiteConnection, upTo target: Int32 = latestVersion) throws(SQLiteError) {
        try SQLiteMigrator.migrate(connection, migrations, upTo: target)
    }
}
