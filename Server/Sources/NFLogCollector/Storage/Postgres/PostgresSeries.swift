import Foundation
import Logging
@_spi(NFLogShared) import NFLogSupport
import PostgresNIO

/// ``PostgresEventStore``'s ``ReportSeries``: the same figures as ``SeriesAnalysis`` gives on
/// SQLite for the same stored batches.
///
/// Hours and days come from the hourly rollups (``RollupSeriesPoints``, as on SQLite). For
/// seconds and minutes, the counts and the network summaries are one grouped row per bucket (at most
/// ``SeriesQuery/maxBuckets``), the percentiles by `percentile_disc`, the nearest rank, as the
/// report's (``PostgresReport/summaryColumns(_:)``). The aggregates stream one listed name at a
/// time in (start, id) order, SQLite's, into ``SeriesAggregateWalk``, which merges the sketches.
enum PostgresSeries {
    /// The events in the query's range, as on SQLite: $1 app, $2 from, $3 to, $4 app version or NULL.
    private static let events = """
        app = $1 AND timestamp_ms >= $2 AND timestamp_ms < $3
        AND ($4::text IS NULL OR context_id IN (SELECT id FROM contexts WHERE app = $1 AND app_version = $4::text))
        """
    /// The aggregates in the query's range, by `start`, bound as ``events``.
    private static let aggregates = """
        app = $1 AND start_ms >= $2 AND start_ms < $3
        AND ($4::text IS NULL OR context_id IN (SELECT id FROM contexts WHERE app = $1 AND app_version = $4::text))
        """

    /// The four parameters of ``events`` and ``aggregates``, then `fifth` as $5.
    private static func binds(app: String, query: SeriesQuery, _ fifth: some PostgresNonThrowingEncodable) -> PostgresBindings {
        var binds = PostgresBindings()
        binds.append(app)
        binds.append(query.from)
        binds.append(query.to)
        binds.append(query.appVersion)
        binds.append(fifth)
        return binds
    }

    /// Runs inside the caller's transaction, which it makes a read-only snapshot.
    static func series(_ c: PostgresConnection, app: String, query: SeriesQuery, logger: Logger) async throws -> ReportSeries {
        try await c.query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY", logger: logger)
        // Hours and days from the hourly rollups (RollupSeriesPoints, shared with SQLite).
        if RollupSeriesPoints.answers(query.bucket) {
            try await PostgresReport.checkRollupsComplete(c, logger: logger)
            let rollup = try await PostgresRollupReading.hourly(c, app: app, from: query.from, to: query.to, appVersion: query.appVersion,
                                                                logger: logger)
            let (aggregates, omitted) = try await aggregateSeries(c, app: app, query: query, logger: logger)
            return ReportSeries(app: app, query: query, points: RollupSeriesPoints.points(rollup, bucket: query.bucket),
                                aggregates: aggregates, aggregatesOmitted: omitted)
        }
        let width = query.bucket.milliseconds

        // Timestamps are at least `from` ≥ 0 here, so integer division is the floor.
        var buckets: [(start: Int64, events: Int, web: Int)] = []
        let counts = PostgresQuery(unsafeSQL: """
            SELECT timestamp_ms / $5 AS bucket, count(*), count(*) FILTER (WHERE source = 'web')
            FROM events WHERE \(events) GROUP BY bucket ORDER BY bucket
            """, binds: binds(app: app, query: query, width))
        for try await (bucket, count, web) in try await c.query(counts, logger: logger).decode((Int64, Int64, Int64).self) {
            buckets.append((bucket * width, Int(count), Int(web)))
        }
        var network: [Int64: DurationSummary] = [:]
        let roundTrips = PostgresQuery(unsafeSQL: """
            SELECT timestamp_ms / $5 AS bucket, \(PostgresReport.summaryColumns("duration_ms"))
            FROM events WHERE \(events) AND kind = 'span' AND type = 'network' AND NOT abandoned GROUP BY bucket
            """, binds: binds(app: app, query: query, width))
        for try await row in try await c.query(roundTrips, logger: logger).decode((Int64, Int64, Double?, Double?, Double?).self) {
            network[row.0 * width] = PostgresReport.summary((row.1, row.2, row.3, row.4))
        }
        let points = buckets.map { bucket in
            ReportSeries.Point(start: bucket.start, events: bucket.events, webEvents: bucket.web,
                               network: ReportSeries.Network(network[bucket.start] ?? DurationSummary([])))
        }
        let (aggregates, omitted) = try await aggregateSeries(c, app: app, query: query, logger: logger)
        return ReportSeries(app: app, query: query, points: points, aggregates: aggregates, aggregatesOmitted: omitted)
    }

    /// The aggregated names with the most events in the range, each measure merged per bucket.
    private static func aggregateSeries(_ c: PostgresConnection, app: String, query: SeriesQuery, logger: Logger) async throws
        -> (aggregates: [String: [String: [ReportSeries.MeasurePoint]]], omitted: Int) {
        // The names with the most events (summed exactly: a device may claim counts near 2^63 - 1),
        // ties by name in bytes, as on SQLite.
        var listed: [String] = []
        var allNames = 0
        let names = PostgresQuery(unsafeSQL: """
            SELECT name, count(*) OVER () FROM aggregates WHERE \(aggregates)
            GROUP BY name ORDER BY sum(count::numeric) DESC, name COLLATE "C" LIMIT $5
            """, binds: binds(app: app, query: query, Int64(ReportSeries.maxAggregateNames)))
        for try await (name, total) in try await c.query(names, logger: logger).decode((String, Int64).self) {
            listed.append(name)
            allNames = Int(total)
        }
        let decoder = JSONDecoder()
        var walk = SeriesAggregateWalk(bucket: query.bucket)
        for name in listed.sorted() {
            walk.begin(name: name)
            let rows = PostgresQuery(unsafeSQL: """
                SELECT start_ms, count, measures FROM aggregates WHERE \(aggregates) AND name = $5 ORDER BY start_ms, id
                """, binds: binds(app: app, query: query, name))
            for try await (start, count, measuresJSON) in try await c.query(rows, logger: logger).decode((Int64, Int64, String).self) {
                let measures = (try? decoder.decode([String: MeasureSummary].self, from: Data(measuresJSON.utf8))) ?? [:]
                walk.add(name: name, start: start, count: count, measures: measures)
            }
        }
        return (walk.finish(), allNames - listed.count)
    }
}
