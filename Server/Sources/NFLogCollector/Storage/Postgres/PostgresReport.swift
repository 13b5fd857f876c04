import Foundation
import Logging
@_spi(NFLogShared) import NFLogSupport
import PostgresNIO

/// ``PostgresEventStore``'s report: the same figures as ``SQLiteEventStore``'s for the same stored
/// batches. The events' counts, versions, use cases and round trips come from the hourly rollups
/// and the funnels and sessions from theirs (``PostgresRollupReading``), turned into the report
/// by ``RollupSections``, ``FunnelRollup`` and ``SessionRollup`` as on SQLite; the server splits
/// and aggregates are computed in PostgreSQL, as follows.
///
/// Memory does not grow with the events: counts are SQL aggregates, and each duration summary is
/// one row per group, its percentiles picked by `percentile_disc`, whose rank ⌈p × n⌉ is the
/// nearest rank of ``Percentiles`` (the SQLite report's definition; `percentile_cont` would
/// interpolate), and its mean an `avg` fed in ascending order, the order in which
/// ``SortedDurations`` sums, so both stores give the same numbers to the last bit. PostgreSQL
/// sorts past `work_mem` on disk. Names are ordered with the "C" collation (bytes), as SQLite
/// orders text, so the ties at the 1,000-name caps fall the same way.
///
/// Aggregates are merged in Swift from their stored sketches, as on SQLite
/// (``AggregateAnalysis/Merged``): the rows stream in name order, one name's at a time held, for
/// at most 1,000 names.
enum PostgresReport {
    /// The four columns of a duration summary of `value` over a group: count, p50, p95, mean.
    static func summaryColumns(_ value: String) -> String {
        """
        count(*), percentile_disc(0.5) WITHIN GROUP (ORDER BY \(value)),
        percentile_disc(0.95) WITHIN GROUP (ORDER BY \(value)), avg(\(value) ORDER BY \(value))
        """
    }

    typealias SummaryRow = (Int64, Double?, Double?, Double?)

    static func summary(_ row: SummaryRow) -> DurationSummary {
        guard row.0 > 0 else { return DurationSummary(count: 0, p50Milliseconds: nil, p95Milliseconds: nil, meanMilliseconds: nil) }
        return DurationSummary(count: Int(row.0), p50Milliseconds: row.1, p95Milliseconds: row.2, meanMilliseconds: row.3)
    }

    /// Throws ``RollupsIncomplete`` while the backfill has events left to add.
    static func checkRollupsComplete(_ c: PostgresConnection, logger: Logger) async throws {
        for try await remaining in try await c.query(
            """
            SELECT sum(greatest(last_event - next_event + 1, 0) + greatest(last_run - next_run + 1, 0)
                       + CASE WHEN sessions_done THEN 0 ELSE 1 END)::int8 FROM rollup_backfill
            WHERE next_event <= last_event OR next_run <= last_run OR NOT sessions_done
            """, logger: logger
        ).decode(Int64?.self) {
            if let remaining { throw RollupsIncomplete(remaining: remaining) }
        }
    }

    /// Runs inside the caller's transaction, which it makes a read-only snapshot (its first
    /// statement), so every count and summary sees the same rows. A filter's time range and app
    /// version add their conditions to every query (``PostgresQuery/StringInterpolation``'s
    /// `selecting:`), as on SQLite.
    static func analyse(_ c: PostgresConnection, app: String, stats: CollectorStats, filter: ReportFilter,
                        logger: Logger) async throws -> AnalyticsReport {
        try await c.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY", logger: logger)

        try await checkRollupsComplete(c, logger: logger)
        // The events' counts, versions, use cases and round trips from the hourly rollups,
        // summed by the code SQLite's report uses.
        let sections = RollupSections(try await PostgresRollupReading.rollup(c, app: app, filter: filter, logger: logger),
                                      maxUseCases: SQLiteEventStore.maxUseCases)
        let listedNames = sections.useCases.keys.sorted()
        var splits: [String: ServerSplit] = [:]
        var funnels: [String: FunnelAnalysis.Funnel] = [:]
        if !listedNames.isEmpty {
            splits = try await serverSplits(c, app: app, names: listedNames, filter: filter, logger: logger)
            funnels = try await PostgresRollupReading.funnels(c, app: app, filter: filter, logger: logger)
                .funnels(listed: Set(listedNames))
        }

        let sessions = try await PostgresRollupReading.sessions(c, app: app, filter: filter, logger: logger).summary

        let aggregates = try await summariseAggregates(c, app: app, filter: filter, logger: logger)

        return AnalyticsReport(app: app, stats: stats, filter: filter, sections: sections, splits: splits, funnels: funnels,
                               sessions: sessions, aggregates: aggregates.names, aggregatesOmitted: aggregates.omitted)
    }

    /// Adds the funnel rows of the runs `filter` selects, as ``FunnelAnalysis`` computes them on
    /// SQLite (the same joins; names in byte order), as rows of hour −1.
    static func addFunnels(_ c: PostgresConnection, app: String, filter: ReportFilter, logger: Logger,
                           to funnel: inout FunnelRollup) async throws {
        // The range's events first, by events_hours: the report asks for the part of an hour at
        // either end of its range (a wide range materializes many rows: that is for tests). With
        // the run conditions beside the time range, PostgreSQL chose the runs' partial index and
        // walked every run of each day partition (0.26 s against 15 ms for one edge over ten
        // million events).
        for try await (useCase, step, reached, left) in try await c.query("""
            WITH selected AS MATERIALIZED (
                SELECT u.id, u.name, u.transaction_id, u.span_id, u.context_id, u.given_up FROM events u
                WHERE u.app = \(app)\(selecting: filter, app: app, alias: "u")
            ),
            runs AS (SELECT * FROM selected WHERE span_id IS NOT NULL AND given_up IS NOT NULL),
            reached AS (
                SELECT u.name AS use_case, s.name AS step, count(DISTINCT u.id) AS reached
                FROM runs u JOIN events s
                    ON s.app = \(app) AND s.parent_span IS NOT NULL AND s.transaction_id = u.transaction_id
                    AND s.parent_span = u.span_id AND s.context_id = u.context_id
                GROUP BY u.name, s.name
            ),
            lasts AS (
                SELECT use_case, step, count(*) AS left_here FROM (
                    SELECT u.name AS use_case, (
                        SELECT s.name FROM events s
                        WHERE s.app = \(app) AND s.parent_span IS NOT NULL AND s.transaction_id = u.transaction_id
                            AND s.parent_span = u.span_id AND s.context_id = u.context_id
                        ORDER BY s.timestamp_ms DESC, s.name COLLATE "C" DESC LIMIT 1
                    ) AS step
                    FROM runs u WHERE u.given_up
                ) AS given_up WHERE step IS NOT NULL GROUP BY use_case, step
            )
            SELECT r.use_case, r.step, r.reached, coalesce(l.left_here, 0)
            FROM reached r LEFT JOIN lasts l ON l.use_case = r.use_case AND l.step = r.step
            """, logger: logger).decode((String, String, Int64, Int64).self) {
            funnel.add(FunnelRollup.Key(hour: -1, appVersion: "", useCase: useCase, step: step),
                       FunnelRollup.Counts(reached: reached, left: left))
        }
    }

    /// The server split of the listed use cases, as ``TransactionAnalysis`` computes it on SQLite
    /// (the same joins), summarised per (name, part) in SQL.
    private static func serverSplits(_ c: PostgresConnection, app: String, names: [String], filter: ReportFilter,
                                     logger: Logger) async throws -> [String: ServerSplit] {
        var parts: [String: [Int32: DurationSummary]] = [:]
        for try await row in try await c.query("""
            WITH calls AS (
                SELECT c.transaction_id AS txn, c.context_id AS context, c.duration_ms AS client_ms, max(s.duration_ms) AS server_ms
                FROM events s
                JOIN events c ON c.app = \(app) AND c.transaction_id = s.transaction_id AND c.span_id = s.parent_span
                    AND c.span_id IS NOT NULL
                WHERE s.app = \(app) AND s.span_id IS NOT NULL AND s.parent_span IS NOT NULL AND s.context_id <> c.context_id
                GROUP BY c.id, c.transaction_id, c.context_id, c.duration_ms
            ),
            transactions AS (
                SELECT u.name AS name, greatest(u.duration_ms - sum(calls.client_ms), 0) AS client,
                       sum(greatest(calls.client_ms - calls.server_ms, 0)) AS network, sum(calls.server_ms) AS server
                FROM calls JOIN events u ON u.app = \(app) AND u.uuid = calls.txn
                WHERE u.kind = 'span' AND u.type = 'usecase' AND NOT u.given_up AND u.context_id = calls.context
                    AND u.name = ANY(\(names)::text[])\(selecting: filter, app: app, alias: "u")
                GROUP BY calls.txn, u.id, u.name, u.duration_ms
            ),
            parts AS (
                SELECT name, 0 AS part, client AS ms FROM transactions
                UNION ALL SELECT name, 1, network FROM transactions
                UNION ALL SELECT name, 2, server FROM transactions
            )
            SELECT name, part, \(unescaped: summaryColumns("ms")) FROM parts GROUP BY name, part
            """, logger: logger).decode((String, Int32, Int64, Double?, Double?, Double?).self) {
            parts[row.0, default: [:]][row.1] = summary((row.2, row.3, row.4, row.5))
        }
        var splits: [String: ServerSplit] = [:]
        for (name, summaries) in parts {
            guard let client = summaries[0], let network = summaries[1], let server = summaries[2] else { continue }
            splits[name] = ServerSplit(transactions: client.count, client: client, network: network, server: server)
        }
        return splits
    }

    private static func summariseAggregates(_ c: PostgresConnection, app: String, filter: ReportFilter,
                                            logger: Logger) async throws -> (names: [String: AggregateSummary], omitted: Int) {
        // The event counts summed exactly (numeric): a device may claim counts near 2^63 - 1.
        var records: [String: Int] = [:]
        var allNames = 0
        // The aggregates of the app within `filter`, as ``AggregateAnalysis`` selects them on
        // SQLite: a dimension matches a JSON string value only.
        let names: PostgresQuery = """
            SELECT name, count(*), count(*) OVER () FROM aggregates
            WHERE app = \(app)\(selecting: filter, app: app, time: "start_ms")\(dimension: filter.dimension)
            GROUP BY name ORDER BY sum(count::numeric) DESC, name COLLATE "C" LIMIT \(Int64(AggregateAnalysis.maxNames))
            """
        for try await (name, count, total) in try await c.query(names, logger: logger).decode((String, Int64, Int64).self) {
            records[name] = Int(count)
            allNames = Int(total)
        }
        guard !records.isEmpty else { return ([:], 0) }

        // In name order, and within a name in SQLite's (start, then row id), so the sketches
        // merge in the same order.
        let rows: PostgresQuery = """
            SELECT name, count, measures FROM aggregates
            WHERE app = \(app)\(selecting: filter, app: app, time: "start_ms")\(dimension: filter.dimension)
                AND name = ANY(\(records.keys.sorted())::text[])
            ORDER BY name COLLATE "C", start_ms, id
            """
        let decoder = JSONDecoder()
        var summaries: [String: AggregateSummary] = [:]
        var current: (name: String, merged: AggregateAnalysis.Merged)?
        for try await (name, count, measuresJSON) in try await c.query(rows, logger: logger).decode((String, Int64, String).self) {
            if current?.name != name {
                if let (done, merged) = current { summaries[done] = merged.summary(records: records[done] ?? 0) }
                current = (name, AggregateAnalysis.Merged())
            }
            let measures = (try? decoder.decode([String: MeasureSummary].self, from: Data(measuresJSON.utf8))) ?? [:]
            current?.merged.add(count: count, measures: measures)
        }
        if let (done, merged) = current { summaries[done] = merged.summary(records: records[done] ?? 0) }
        return (summaries, allNames - records.count)
    }
}
