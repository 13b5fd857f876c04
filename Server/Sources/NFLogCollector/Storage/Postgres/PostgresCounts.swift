import Logging
import PostgresNIO

/// The running counts on PostgreSQL (per app totals, events by name, events by context, device
/// prunes by name) kept without a row that every batch updates.
///
/// A batch's transaction inserts its changes as rows of the `*_deltas` tables, which have no key:
/// two collectors' batches for one app never wait on each other there, as they did on the app's
/// `totals` row (held from the batch's upsert to its commit). ``fold(_:logger:)`` moves the
/// deltas into the base tables, one collector at a time; reads go through the `*_now` views,
/// base plus deltas, so a count is exact whether or not its deltas were folded yet.
enum PostgresCounts {
    /// The `totals` columns, in the order of ``CollectorStats``'s reading of them.
    static let totalsColumns = ["events", "duplicates", "batches", "requests", "abandoned", "pruned", "database_resets",
                                "aggregates", "aggregate_duplicates", "aggregated_events", "events_expired",
                                "aggregates_expired", "quarantined"]

    /// Counts that come from clients (device prunes, folded events, quarantined events) may be
    /// near Int64.max: every sum of them saturates instead of failing the statement.
    static let saturated: Set<String> = ["pruned", "aggregated_events", "quarantined"]

    static let maximum = "9223372036854775807"

    /// The sum of `expression`s (bigint), saturating at Int64.max, as a bigint.
    private static func cappedSum(_ expression: String) -> String {
        "least(sum(\(expression)), \(maximum))::bigint"
    }

    static let migrationStatements: [String] = [
        "CREATE TABLE totals_deltas (app text NOT NULL, "
            + totalsColumns.map { "\($0) bigint NOT NULL DEFAULT 0" }.joined(separator: ", ") + ")",
        "CREATE TABLE name_count_deltas (app text NOT NULL, name text NOT NULL, count bigint NOT NULL)",
        "CREATE TABLE device_prune_deltas (app text NOT NULL, name text NOT NULL, count bigint NOT NULL)",
        // No reference to contexts: a foreign key check would lock the context's row (shared, but
        // a lock all the same) in every batch.
        "CREATE TABLE context_count_deltas (context_id bigint NOT NULL, events bigint NOT NULL)",
        // Filters on the grouping columns (`WHERE app = …`) are pushed into both sides of the
        // UNION ALL, so a read of one app's counts seeks the base table's key.
        """
        CREATE VIEW totals_now AS SELECT app, \(totalsColumns.map { "\(cappedSum($0)) AS \($0)" }.joined(separator: ", "))
        FROM (SELECT app, \(totalsColumns.joined(separator: ", ")) FROM totals
              UNION ALL SELECT app, \(totalsColumns.joined(separator: ", ")) FROM totals_deltas) AS t
        GROUP BY app
        """,
        """
        CREATE VIEW name_counts_now AS SELECT app, name, sum(count)::bigint AS count
        FROM (SELECT app, name, count FROM name_counts UNION ALL SELECT app, name, count FROM name_count_deltas) AS n
        GROUP BY app, name
        """,
        """
        CREATE VIEW device_prunes_now AS SELECT app, name, \(cappedSum("count")) AS count
        FROM (SELECT app, name, count FROM device_prunes UNION ALL SELECT app, name, count FROM device_prune_deltas) AS p
        GROUP BY app, name
        """,
        """
        CREATE VIEW context_counts_now AS SELECT context_id, sum(events)::bigint AS events
        FROM (SELECT context_id, events FROM context_counts UNION ALL SELECT context_id, events FROM context_count_deltas) AS k
        GROUP BY context_id
        """,
    ]

    /// The folding statements: each deletes every delta its snapshot sees and adds their sums to
    /// the base rows. A delta committed meanwhile is not in that snapshot and waits for the next
    /// fold; none is counted twice, since the deletion and the addition commit together.
    static let foldStatements: [String] = [
        """
        WITH moved AS (DELETE FROM totals_deltas RETURNING *)
        INSERT INTO totals AS t (app, \(totalsColumns.joined(separator: ", ")))
        SELECT app, \(totalsColumns.map { cappedSum($0) }.joined(separator: ", ")) FROM moved GROUP BY app ORDER BY app
        ON CONFLICT (app) DO UPDATE SET \(totalsColumns.map { column in
            saturated.contains(column)
                ? "\(column) = least(t.\(column)::numeric + excluded.\(column), \(maximum))::bigint"
                : "\(column) = t.\(column) + excluded.\(column)"
        }.joined(separator: ", "))
        """,
        """
        WITH moved AS (DELETE FROM name_count_deltas RETURNING *)
        INSERT INTO name_counts AS n (app, name, count)
        SELECT app, name, sum(count)::bigint FROM moved GROUP BY app, name ORDER BY app, name
        ON CONFLICT (app, name) DO UPDATE SET count = n.count + excluded.count
        """,
        """
        WITH moved AS (DELETE FROM device_prune_deltas RETURNING *)
        INSERT INTO device_prunes AS p (app, name, count)
        SELECT app, name, \(cappedSum("count")) FROM moved GROUP BY app, name ORDER BY app, name
        ON CONFLICT (app, name) DO UPDATE SET count = least(p.count::numeric + excluded.count, \(maximum))::bigint
        """,
        """
        WITH moved AS (DELETE FROM context_count_deltas RETURNING *)
        INSERT INTO context_counts AS k (context_id, events)
        SELECT context_id, sum(events)::bigint FROM moved GROUP BY context_id ORDER BY context_id
        ON CONFLICT (context_id) DO UPDATE SET events = k.events + excluded.events
        """,
    ]

    /// Folds every delta into the base tables in one transaction, unless another collector is
    /// folding (then it returns false at once, and that collector's fold covers these deltas or
    /// the next one does). The base rows are written by folds only, so no batch waits on them.
    @discardableResult
    static func fold(_ connection: PostgresConnection, logger: Logger) async throws -> Bool {
        try await connection.withTransaction(logger: logger) { connection in
            var mine = false
            for try await taken in try await connection.query("SELECT pg_try_advisory_xact_lock(\(PostgresSchema.foldLock))",
                                                              logger: logger).decode(Bool.self) {
                mine = taken
            }
            guard mine else { return false }
            for statement in foldStatements + PostgresRollups.foldStatements {
                try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
            }
            return true
        }
    }
}
