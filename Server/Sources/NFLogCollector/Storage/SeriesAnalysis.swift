import Foundation
@_spi(NFLogShared) import NFLogSupport

/// ``SQLiteEventStore``'s ``ReportSeries``, in memory that does not grow with the events. Hours
/// and days come from the hourly rollups (``RollupSeriesPoints``); for seconds and minutes the
/// counts per bucket are one grouped query (at most ``SeriesQuery/maxBuckets`` rows); the network
/// percentiles one walk in (bucket, duration) order, each bucket's picked by ``SortedDurations``
/// from the count the grouped query gave; the aggregates one walk per listed name in start
/// order, folded by ``SeriesAggregateWalk`` (a bucket's sketches at a time).
enum SeriesAnalysis {
    /// The events in the query's range (bound by ``bind(_:app:query:)``: ?1 app, ?2 from, ?3 to,
    /// ?4 the app version or NULL); `timestamp_ms` is the device's, a span's start.
    private static let events = """
        app = ?1 AND timestamp_ms >= ?2 AND timestamp_ms < ?3
        AND (?4 IS NULL OR context_id IN (SELECT id FROM contexts WHERE app = ?1 AND app_version = ?4))
        """
    /// The aggregates in the query's range, by `start`, bound as ``events``.
    private static let aggregates = """
        app = ?1 AND start_ms >= ?2 AND start_ms < ?3
        AND (?4 IS NULL OR context_id IN (SELECT id FROM contexts WHERE app = ?1 AND app_version = ?4))
        """

    private static func bind(_ statement: SQLiteStatement, app: String, query: SeriesQuery) throws(SQLiteError) {
        try statement.bind(app, at: 1)
        try statement.bind(query.from, at: 2)
        try statement.bind(query.to, at: 3)
        if let version = query.appVersion { try statement.bind(version, at: 4) } else { try statement.bindNull(at: 4) }
    }

    /// Reads in one snapshot, so each bucket's count and the walk that picks its ranks see the
    /// same rows.
    static func series(_ c: SQLiteConnection, app: String, query: SeriesQuery) throws -> ReportSeries {
        try c.execute("BEGIN")
        defer { c.rollbackIfNeeded() }  // read-only: there is nothing to commit
        let (aggregates, omitted) = try aggregateSeries(c, app: app, query: query)
        // Hours and days from the hourly rollups (RollupSeriesPoints, shared with PostgreSQL).
        if RollupSeriesPoints.answers(query.bucket) {
            if let remaining = try SQLiteRollupBackfill.remaining(c) { throw RollupsIncomplete(remaining: remaining) }
            let rollup = try SQLiteRollupReading.hourly(c, app: app, from: query.from, to: query.to, appVersion: query.appVersion)
            return ReportSeries(app: app, query: query, points: RollupSeriesPoints.points(rollup, bucket: query.bucket),
                                aggregates: aggregates, aggregatesOmitted: omitted)
        }
        let width = query.bucket.milliseconds

        // Timestamps are at least `from` ≥ 0 here, so integer division is the floor. The table is
        // scanned rather than the (app, uuid) index followed row by row: an app's events are most
        // of the rows in a store, and reading them in uuid order visits the pages at random
        // (1,000,000 events, 90% one app's: 1.5 s scanned, 8.8 s through the index, cold cache).
        let counts = try c.prepare("""
            SELECT timestamp_ms / ?5 AS bucket, count(*), count(*) FILTER (WHERE source = 'web'),
                   count(*) FILTER (WHERE kind = 'span' AND type = 'network' AND abandoned = 0)
            FROM events NOT INDEXED WHERE \(events) GROUP BY bucket ORDER BY bucket
            """)
        try bind(counts, app: app, query: query)
        try counts.bind(width, at: 5)
        var buckets: [(start: Int64, events: Int, web: Int)] = []
        var network: [Int64: SortedDurations] = [:]
        try SQLiteEventStore.walk(counts) { row in
            let start = row.int64(at: 0) * width
            buckets.append((start, Int(row.int64(at: 1)), Int(row.int64(at: 2))))
            network[start] = SortedDurations(count: Int(row.int64(at: 3)))
        }

        // The round trips, through the report's index of spans (their timestamps from the rows).
        let roundTrips = try c.prepare("""
            SELECT timestamp_ms / ?5 AS bucket, duration_ms FROM events INDEXED BY events_spans
            WHERE \(events) AND kind = 'span' AND type = 'network' AND abandoned = 0
            ORDER BY bucket, duration_ms
            """)
        try bind(roundTrips, app: app, query: query)
        try roundTrips.bind(width, at: 5)
        try SQLiteEventStore.walk(roundTrips) { row in network[row.int64(at: 0) * width]?.add(row.double(at: 1)) }

        let points = buckets.map { bucket in
            ReportSeries.Point(start: bucket.start, events: bucket.events, webEvents: bucket.web,
                               network: ReportSeries.Network(network[bucket.start]?.summary ?? DurationSummary([])))
        }
        return ReportSeries(app: app, query: query, points: points, aggregates: aggregates, aggregatesOmitted: omitted)
    }

    /// The names with the most events (ties by name, in bytes), each walked on its own through
    /// aggregates_names in (start, row id) order: no sort, and no row of an unlisted name read.
    private static func aggregateSeries(_ c: SQLiteConnection, app: String, query: SeriesQuery)
        throws(SQLiteError) -> (aggregates: [String: [String: [ReportSeries.MeasurePoint]]], omitted: Int) {
        // `total()` only orders the names, as in the report (an integer sum() fails past 2^63 - 1).
        let names = try c.prepare("""
            SELECT name, total(count) AS events, count(*) OVER () FROM aggregates INDEXED BY aggregates_names
            WHERE \(aggregates) GROUP BY name ORDER BY events DESC, name LIMIT ?5
            """)
        try bind(names, app: app, query: query)
        try names.bind(Int64(ReportSeries.maxAggregateNames), at: 5)
        var listed: [String] = []
        var allNames = 0
        try SQLiteEventStore.walk(names) { row in
            listed.append(row.text(at: 0) ?? "")
            allNames = Int(row.int64(at: 2))
        }

        let rows = try c.prepare("""
            SELECT start_ms, count, measures FROM aggregates INDEXED BY aggregates_names
            WHERE \(aggregates) AND name = ?5 ORDER BY start_ms, id
            """)
        let decoder = JSONDecoder()
        var walk = SeriesAggregateWalk(bucket: query.bucket)
        for name in listed.sorted() {
            try bind(rows, app: app, query: query)
            try rows.bind(name, at: 5)
            walk.begin(name: name)
            try SQLiteEventStore.walk(rows) { row in
                let measures = row.blob(at: 2).flatMap { try? decoder.decode([String: MeasureSummary].self, from: Data($0)) } ?? [:]
                walk.add(name: name, start: row.int64(at: 0), count: row.int64(at: 1), measures: measures)
            }
        }
        return (walk.finish(), allNames - listed.count)
    }
}
