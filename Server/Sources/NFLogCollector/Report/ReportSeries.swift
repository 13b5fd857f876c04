import Foundation

/// The report over time: for each second, minute, hour or day (``SeriesBucket``, UTC) of a ``SeriesQuery``'s
/// range, how many events the app logged, how many from web content, and its network round trips;
/// and for the aggregated names with the most events, each measure merged per bucket.
///
/// Events fall in the bucket of their device `timestamp` (a span by its start), aggregates in
/// that of their `start`. Only buckets with at least one event are in ``points``; only buckets
/// where a name's aggregates carry a measure are in that measure's list. Both ascending by start.
/// At most ``maxAggregateNames`` names (the most events first, ties by name; the others counted
/// in ``aggregatesOmitted``), each with at most ``maxMeasures`` measures (the first stored: by
/// aggregate start, then store order, then by measure name within one aggregate).
///
/// Every optional is encoded as `null`, never left out: a dashboard reads one shape.
package struct ReportSeries: Sendable, Equatable, Codable {
    package let app: String
    package let bucket: SeriesBucket
    /// ``SeriesBucket/milliseconds``, for a client that draws the axis.
    package let bucketMilliseconds: Int64
    /// The range covered, as resolved (``SeriesQuery``): `from` inclusive, `to` exclusive.
    package let from: Int64
    package let to: Int64
    /// The app version the series is limited to, if any.
    package let appVersion: String?
    package let points: [Point]
    /// By aggregated name, then measure name: one entry per bucket.
    package let aggregates: [String: [String: [MeasurePoint]]]
    /// Aggregated names within the range left out of ``aggregates``.
    package let aggregatesOmitted: Int

    package static let maxAggregateNames = 20
    package static let maxMeasures = 16

    init(app: String, query: SeriesQuery, points: [Point], aggregates: [String: [String: [MeasurePoint]]],
         aggregatesOmitted: Int) {
        self.app = app
        bucket = query.bucket
        bucketMilliseconds = query.bucket.milliseconds
        from = query.from
        to = query.to
        appVersion = query.appVersion
        self.points = points
        self.aggregates = aggregates
        self.aggregatesOmitted = aggregatesOmitted
    }

    /// One bucket's events.
    package struct Point: Sendable, Equatable, Codable {
        /// The bucket's start, Unix milliseconds.
        package let start: Int64
        /// Events (points and spans) whose timestamp is in the bucket.
        package let events: Int
        /// Of those, the ones web content logged.
        package let webEvents: Int
        package let network: Network

        enum CodingKeys: String, CodingKey {
            case start, events, network
            case webEvents = "web_events"
        }
    }

    /// The round trips (`network` spans not abandoned) that started in a bucket: nearest-rank
    /// percentiles, as the report's ``AnalyticsReport/network``.
    package struct Network: Sendable, Equatable, Codable {
        package let count: Int
        package let p50Milliseconds: Double?
        package let p95Milliseconds: Double?

        enum CodingKeys: String, CodingKey {
            case count
            case p50Milliseconds = "p50_ms"
            case p95Milliseconds = "p95_ms"
        }

        package func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(count, forKey: .count)
            try c.encode(p50Milliseconds, forKey: .p50Milliseconds)
            try c.encode(p95Milliseconds, forKey: .p95Milliseconds)
        }
    }

    /// One measure of one aggregated name in one bucket: its stored summaries merged, as in the
    /// report's ``MeasureStatistics`` (without min and max).
    package struct MeasurePoint: Sendable, Equatable, Codable {
        package let start: Int64
        package let count: Int
        package let mean: Double?
        package let p50: Double?
        package let p95: Double?
        package let p99: Double?

        enum CodingKeys: String, CodingKey {
            case start, count, mean, p50, p95, p99
        }

        package func encode(to encoder: any Encoder) throws {
            var c = encoder.container(keyedBy: CodingKeys.self)
            try c.encode(start, forKey: .start)
            try c.encode(count, forKey: .count)
            try c.encode(mean, forKey: .mean)
            try c.encode(p50, forKey: .p50)
            try c.encode(p95, forKey: .p95)
            try c.encode(p99, forKey: .p99)
        }
    }

    enum CodingKeys: String, CodingKey {
        case app, bucket, from, to, points, aggregates
        case bucketMilliseconds = "bucket_ms"
        case appVersion = "app_version"
        case aggregatesOmitted = "aggregates_omitted"
    }

    package func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(app, forKey: .app)
        try c.encode(bucket, forKey: .bucket)
        try c.encode(bucketMilliseconds, forKey: .bucketMilliseconds)
        try c.encode(from, forKey: .from)
        try c.encode(to, forKey: .to)
        try c.encode(appVersion, forKey: .appVersion)
        try c.encode(points, forKey: .points)
        try c.encode(aggregates, forKey: .aggregates)
        try c.encode(aggregatesOmitted, forKey: .aggregatesOmitted)
    }

    /// The series for people: a heading, then one line per bucket with events, then one line per
    /// aggregated name, measure and bucket.
    package func render() -> String {
        let time = timeFormat()
        let version = appVersion.map { ", app version \($0)" } ?? ""
        var lines = ["Series (app \(app)): \(bucket.rawValue)s from \(time(from)) to \(time(to)) (UTC, the end excluded)\(version)"]
        if points.isEmpty { lines.append("  no events") }
        for point in points {
            let network = point.network
            lines.append("  \(time(point.start))  \(point.events) events · \(point.webEvents) web · network p50 \(Self.milliseconds(network.p50Milliseconds)) · p95 \(Self.milliseconds(network.p95Milliseconds)) (n=\(network.count))")
        }
        for (name, measures) in aggregates.sorted(by: { $0.key < $1.key }) {
            if measures.isEmpty { lines.append("  \(name): no measures") }
            for (measure, buckets) in measures.sorted(by: { $0.key < $1.key }) {
                for entry in buckets {
                    lines.append("  \(name) \(measure) \(time(entry.start)): n=\(entry.count) · mean \(AnalyticsReport.number(entry.mean)) · p50 \(AnalyticsReport.number(entry.p50)) · p95 \(AnalyticsReport.number(entry.p95)) · p99 \(AnalyticsReport.number(entry.p99))")
                }
            }
        }
        if aggregatesOmitted > 0 {
            lines.append("  (\(aggregatesOmitted) aggregated names with fewer events not listed)")
        }
        return lines.joined(separator: "\n")
    }

    /// Writes a time as `2025-06-15T14:00Z` for minutes and hours, `2025-06-15T14:00:05Z` for
    /// seconds, `2025-06-15` for days (UTC); one
    /// formatter for every line.
    private func timeFormat() -> (Int64) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.formatOptions = bucket == .day ? [.withFullDate] : [.withFullDate, .withTime, .withColonSeparatorInTime, .withTimeZone]
        let day = bucket == .day
        return { milliseconds in
            let text = formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1_000))
            // The formatter writes seconds; a bucket's start has none (a range's end may).
            return day || bucket == .second || !text.hasSuffix(":00Z") ? text : String(text.dropLast(4)) + "Z"
        }
    }

    private static func milliseconds(_ value: Double?) -> String {
        value.map { $0 >= 100 ? String(format: "%.0f ms", $0) : String(format: "%.1f ms", $0) } ?? "—"
    }
}

// In extensions, so that the types keep their memberwise initialisers.
extension ReportSeries.Network {
    init(_ summary: DurationSummary) {
        self.init(count: summary.count, p50Milliseconds: summary.p50Milliseconds, p95Milliseconds: summary.p95Milliseconds)
    }
}

extension ReportSeries.MeasurePoint {
    init(start: Int64, _ statistics: MeasureStatistics) {
        self.init(start: start, count: statistics.count, mean: statistics.mean, p50: statistics.p50, p95: statistics.p95, p99: statistics.p99)
    }
}
