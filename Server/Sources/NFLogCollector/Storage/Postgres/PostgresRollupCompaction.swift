import Logging
import PostgresNIO

/// The daily and past rollups on PostgreSQL (``RollupDays``, schemas 9 and 10), kept as
/// SQLite's are (``SQLiteRollupCompaction``) but without triggers: every change to a keyed hour
/// row comes from the fold (``PostgresCounts/fold(_:logger:)``) or from rollup retention, so those
/// two carry their changes of compacted days to the day and past rows themselves.
///
/// The invariants: for each app, every day before `compacted_before` has day rows equal to the
/// sums of its **keyed** hour rows, and each key's past row is the sum of its day rows. The fold,
/// the compactor's step and rollup retention each hold the fold's advisory lock for their whole
/// transaction, so none of them sees another half done: the fold adds the deltas it moves into
/// hours before `compacted_before` to the day and past rows too; the step sums a day's keyed
/// hours into its day rows and adds those to the past rows (its deltas not folded yet reach both
/// when folded); retention takes what it deletes of a compacted day out of its row and the past
/// rows. Reads sum a day's row (or a key's past row) and the deltas not folded yet of its hours
/// (the `*_days_now` and `*_past_now` views), in one snapshot.
enum PostgresRollupCompaction {
    /// Per rollup: the keyed day table and the view that adds the deltas not folded yet, filed
    /// under their hours' day; and `rollup_compaction` (per app; no row is 0, nothing compacted).
    static let migrationStatements: [String] = RollupDays.tables.flatMap { table in
        let key = (["app", "hour"] + table.keys).joined(separator: ", ")
        let values = table.values.joined(separator: ", ")
        let keys = table.keys.joined(separator: ", ")
        return [
            "CREATE TABLE \(table.days) (LIKE \(table.hours), PRIMARY KEY (\(key)))",
            // No grouping: the reads sum; the app and hour conditions reach both sides.
            """
            CREATE VIEW \(table.days)_now AS SELECT app, hour, \(keys), \(values) FROM \(table.days)
            UNION ALL SELECT app, \(RollupDays.startSQL(ofHour: "hour")) AS hour, \(keys), \(values) FROM \(table.base)_hour_deltas
            """,
        ]
    } + ["CREATE TABLE rollup_compaction (app text PRIMARY KEY, compacted_before bigint NOT NULL)"]

    /// Schema 10, as SQLite's migration 14: per rollup the past table (``RollupDays/Table/past``,
    /// each app's sums over every day row, filled from the day rows there are) and its view, which
    /// adds the deltas not folded yet of hours before the app's `compacted_before`. The view's
    /// `hour` is NULL: the reads' hour conditions are open for the past.
    static let pastMigrationStatements: [String] = RollupDays.tables.flatMap { table in
        let keys = table.keys.joined(separator: ", ")
        let values = table.values.joined(separator: ", ")
        return [
            "CREATE TABLE \(table.past) (LIKE \(table.hours))",
            "ALTER TABLE \(table.past) DROP COLUMN hour, ADD PRIMARY KEY (app, \(keys))",
            "INSERT INTO \(table.past) (app, \(keys), \(values)) SELECT app, \(keys), \(sums(table)) FROM \(table.days) GROUP BY app, \(keys)",
            """
            CREATE VIEW \(table.past)_now AS SELECT app, NULL::bigint AS hour, \(keys), \(values) FROM \(table.past)
            UNION ALL SELECT d.app, NULL::bigint, \(table.keys.map { "d.\($0)" }.joined(separator: ", ")), \(table.values.map { "d.\($0)" }.joined(separator: ", "))
            FROM \(table.base)_hour_deltas d JOIN rollup_compaction k ON k.app = d.app AND d.hour < k.compacted_before
            """,
        ]
    }

    /// The fold's statement for `table` (``PostgresRollups/foldStatements``): moves its deltas into
    /// the hour rows, and those of hours before the app's `compacted_before` into the day rows and
    /// the past rows too.
    static func foldStatement(_ table: RollupDays.Table) -> String {
        let keys = table.keys.joined(separator: ", ")
        let movedKeys = table.keys.map { "m.\($0)" }.joined(separator: ", ")
        let compacted = "FROM moved m JOIN rollup_compaction k ON k.app = m.app AND m.hour < k.compacted_before"
        return """
            WITH moved AS (DELETE FROM \(table.base)_hour_deltas RETURNING *),
            hours AS (
                \(upsert(into: table.hours, table, select: "SELECT app, hour, \(keys), \(sums(table)) FROM moved GROUP BY app, hour, \(keys)"))
            ),
            past AS (
                \(upsert(into: table.past, table, hour: false, select: """
                    SELECT m.app, \(movedKeys), \(sums(table, prefix: "m.")) \(compacted) GROUP BY m.app, \(movedKeys)
                    """))
            )
            \(upsert(into: table.days, table, select: """
                SELECT m.app, \(RollupDays.startSQL(ofHour: "m.hour")), \(movedKeys), \(sums(table, prefix: "m.")) \(compacted)
                GROUP BY m.app, \(RollupDays.startSQL(ofHour: "m.hour")), \(movedKeys)
                """))
            """
    }

    /// `INSERT … select ON CONFLICT` adding to the rows there (keyed by app, `hour` unless
    /// false, and the table's keys), in key order (two folds never run at once, but a
    /// retention's deletion may).
    private static func upsert(into name: String, _ table: RollupDays.Table, hour: Bool = true, select: String) -> String {
        let key = (["app"] + (hour ? ["hour"] : []) + table.keys).joined(separator: ", ")
        let update = table.values.map { column in
            table.clamped.contains(column)
                ? "\(column) = \(PostgresRollups.saturated("r.\(column)::numeric + excluded.\(column)"))"
                : "\(column) = r.\(column) + excluded.\(column)"
        }.joined(separator: ", ")
        return """
            INSERT INTO \(name) AS r (\(key), \(table.values.joined(separator: ", ")))
            SELECT * FROM (\(select)) AS s ORDER BY \((1...((hour ? 2 : 1) + table.keys.count)).map(String.init).joined(separator: ", "))
            ON CONFLICT (\(key)) DO UPDATE SET \(update)
            """
    }

    /// The sums of `table`'s values, clamped where the client's are (`sign` −1: their negation),
    /// each named after its column.
    private static func sums(_ table: RollupDays.Table, prefix: String = "", sign: String = "") -> String {
        table.values.map { value in
            (table.clamped.contains(value)
                ? PostgresRollups.saturated("\(sign)sum(\(prefix)\(value))")
                : "(\(sign)sum(\(prefix)\(value)))::bigint") + " AS \(value)"
        }.joined(separator: ", ")
    }

    /// Takes the fold's lock for the caller's transaction, waiting for a fold under way (folds
    /// only try it, so they skip while this holds it).
    static func lock(_ c: PostgresConnection, logger: Logger) async throws {
        try await c.query("SELECT pg_advisory_xact_lock(\(PostgresSchema.foldLock))", logger: logger)
    }

    /// The app's `compacted_before` in the caller's snapshot (0: nothing compacted).
    static func compactedBefore(_ c: PostgresConnection, app: String, logger: Logger) async throws -> Int64 {
        for try await hour in try await c.query("SELECT compacted_before FROM rollup_compaction WHERE app = \(app)", logger: logger)
            .decode(Int64.self) {
            return hour
        }
        return 0
    }

    /// The app's earliest hour at or after `from` with a rollup row, keyed (and, with `deltas`,
    /// not folded yet), in the caller's snapshot (nil: none). The keyed tables' key starts with
    /// (app, hour): an index probe each.
    static func firstHour(_ c: PostgresConnection, app: String, from: Int64 = .min, deltas: Bool,
                          logger: Logger) async throws -> Int64? {
        let tables = RollupDays.tables.flatMap { deltas ? [$0.hours, "\($0.base)_hour_deltas"] : [$0.hours] }
        let probes = tables.map { "SELECT min(hour) AS hour FROM \($0) WHERE app = $1 AND hour >= $2" }
        for try await hour in try await c.query(PostgresQuery(unsafeSQL: "SELECT min(hour) FROM (\(probes.joined(separator: " UNION ALL "))) AS h",
                                                              binds: binds(app, from)), logger: logger).decode(Int64?.self) {
            return hour
        }
        return nil
    }

    /// Compacts the app's next day before `cutoff` (a day's start) that has keyed hour rows, in a
    /// transaction under the fold's lock: its day rows are its keyed hours' sums, added to its
    /// keys' past rows, and `compacted_before` moves past it. Returns that day's first hour, or `nil` when every day
    /// before `cutoff` is compacted (`compacted_before` is then `cutoff`).
    static func step(_ connection: PostgresConnection, app: String, before cutoff: Int64, logger: Logger) async throws -> Int64? {
        try await connection.withTransaction(logger: logger) { c in
            try await lock(c, logger: logger)
            let compacted = try await compactedBefore(c, app: app, logger: logger)
            guard compacted < cutoff else { return nil }
            // Keyed hours only: a day's deltas not folded yet reach its rows when folded.
            let next = try await firstHour(c, app: app, from: compacted, deltas: false, logger: logger)
            let day = next.map(RollupDays.start(ofHour:))
            guard let day, day < cutoff else {
                try await advance(c, app: app, to: cutoff, logger: logger)
                return nil
            }
            for table in RollupDays.tables {
                let keys = table.keys.joined(separator: ", ")
                // The day's rows (none are there yet: only hours before compacted_before reach
                // the day table), each added to its key's past row.
                try await c.query(PostgresQuery(unsafeSQL: """
                    WITH day AS (
                        INSERT INTO \(table.days) (app, hour, \(keys), \(table.values.joined(separator: ", ")))
                        SELECT app, $2, \(keys), \(sums(table)) FROM \(table.hours) WHERE app = $1 AND hour >= $2 AND hour < $2 + 24
                        GROUP BY app, \(keys)
                        RETURNING *
                    )
                    \(upsert(into: table.past, table, hour: false, select: "SELECT app, \(keys), \(table.values.joined(separator: ", ")) FROM day"))
                    """, binds: binds(app, day)), logger: logger)
            }
            try await advance(c, app: app, to: day + RollupDays.hoursPerDay, logger: logger)
            return day
        }
    }

    private static func advance(_ c: PostgresConnection, app: String, to hour: Int64, logger: Logger) async throws {
        try await c.query("""
            INSERT INTO rollup_compaction (app, compacted_before) VALUES (\(app), \(hour))
            ON CONFLICT (app) DO UPDATE SET compacted_before = excluded.compacted_before
            """, logger: logger)
    }

    private static func binds(_ app: String, _ hour: Int64) -> PostgresBindings {
        var binds = PostgresBindings()
        binds.append(app)
        binds.append(hour)
        return binds
    }

    /// Deletes `table`'s rows of every hour before `hour` in a transaction under the fold's lock:
    /// the deltas, the hour rows (what they held of a compacted day the cutoff cuts is taken out
    /// of its day row and its keys' past rows), and the day rows whose whole day is before it
    /// (taken out of the past rows). Returns the rows deleted.
    static func drop(_ table: RollupDays.Table, hoursBefore hour: Int64, _ connection: PostgresConnection,
                     logger: Logger) async throws -> Int {
        try await connection.withTransaction(logger: logger) { c in
            try await lock(c, logger: logger)
            let keys = table.keys.map { "g.\($0)" }.joined(separator: ", ")
            let plainKeys = table.keys.joined(separator: ", ")
            let values = table.values.joined(separator: ", ")
            let statements = [
                "WITH gone AS (DELETE FROM \(table.base)_hour_deltas WHERE hour < $1 RETURNING 1) SELECT count(*) FROM gone",
                // What the deleted hours of a compacted day the cutoff cuts held, out of its day
                // row and its keys' past rows.
                """
                WITH gone AS (DELETE FROM \(table.hours) WHERE hour < $1 RETURNING *),
                cut AS (
                    SELECT g.app, \(RollupDays.startSQL(ofHour: "g.hour")) AS hour, \(keys), \(sums(table, prefix: "g.", sign: "-"))
                    FROM gone g JOIN rollup_compaction k ON k.app = g.app AND g.hour < k.compacted_before
                    WHERE g.hour >= \(RollupDays.startSQL(ofHour: "$1"))
                    GROUP BY g.app, \(RollupDays.startSQL(ofHour: "g.hour")), \(keys)
                ),
                days AS (\(upsert(into: table.days, table, select: "SELECT * FROM cut"))),
                past AS (\(upsert(into: table.past, table, hour: false, select: "SELECT app, \(plainKeys), \(values) FROM cut")))
                SELECT count(*) FROM gone
                """,
                // The days wholly before the cutoff, and what they held out of the past rows.
                """
                WITH gone AS (DELETE FROM \(table.days) WHERE hour + 24 <= $1 RETURNING *),
                past AS (\(upsert(into: table.past, table, hour: false, select: """
                    SELECT app, \(plainKeys), \(sums(table, sign: "-")) FROM gone GROUP BY app, \(plainKeys)
                    """)))
                SELECT count(*) FROM gone
                """,
            ]
            var dropped = 0
            for statement in statements {
                var binds = PostgresBindings()
                binds.append(hour)
                for try await rows in try await c.query(PostgresQuery(unsafeSQL: statement, binds: binds), logger: logger)
                    .decode(Int64.self) {
                    dropped += Int(rows)
                }
            }
            return dropped
        }
    }
}
