@_spi(NFLogShared) import NFLogSupport
/// The series' points by hour or day, computed from a store's rollup rows by hour (the hours'
/// events, web events and network round-trip buckets, whatever else their keys say): the one
/// place these figures are computed for both stores, as ``RollupSections`` is for the report.
/// Round-trip percentiles are within 1% of the exact nearest rank.
enum RollupSeriesPoints {
    /// Whether a bucket is whole hours, so that the rollups can answer it.
    static func answers(_ bucket: SeriesBucket) -> Bool {
        bucket.milliseconds % HourlyRollup.hourMilliseconds == 0
    }

    /// The buckets with at least one event, ascending.
    static func points(_ rollup: HourlyRollup, bucket: SeriesBucket) -> [ReportSeries.Point] {
        let width = bucket.milliseconds
        func start(_ hour: Int64) -> Int64 { hour * HourlyRollup.hourMilliseconds / width * width }
        var counts: [Int64: (events: Int, web: Int)] = [:]
        for (key, value) in rollup.events where value.events > 0 {
            var entry = counts[start(key.hour)] ?? (0, 0)
            entry.events += Int(value.events)
            if key.source == Batch.Source.web.rawValue { entry.web += Int(value.events) }
            counts[start(key.hour)] = entry
        }
        var network: [Int64: [Int64: Int64]] = [:]
        for (key, count) in rollup.durations where key.type == "network" {
            network[start(key.hour), default: [:]][key.bucket, default: 0] += count
        }
        return counts.keys.sorted().map { at in
            let buckets = network[at] ?? [:]
            let summary = DurationSummary(buckets: buckets, count: buckets.values.reduce(0, +), microseconds: 0)
            return ReportSeries.Point(start: at, events: counts[at]?.events ?? 0, webEvents: counts[at]?.web ?? 0,
                                      network: ReportSeries.Network(summary))
        }
    }
}
