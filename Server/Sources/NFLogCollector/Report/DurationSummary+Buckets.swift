extension DurationSummary {
    /// The summary of durations kept as ``DurationBucket`` counts: each percentile is the bucket
    /// holding the nearest rank (``Percentiles``), given as its representative value, within 1%
    /// of the exact nearest-rank duration; the mean is the exact sum (in microseconds) ÷ count.
    /// `count` is the number of durations (the buckets' counts sum to it).
    init(buckets: [Int64: Int64], count: Int64, microseconds: Int64) {
        guard count > 0 else {
            self.init(count: 0, p50Milliseconds: nil, p95Milliseconds: nil, meanMilliseconds: nil)
            return
        }
        let sorted = buckets.sorted { $0.key < $1.key }
        func percentile(_ p: Double) -> Double? {
            guard let rank = Percentiles.rank(p, count: Int(count)) else { return nil }
            var seen: Int64 = 0
            for (key, n) in sorted {
                seen += n
                if seen >= rank { return DurationBucket.value(key) }
            }
            return sorted.last.map { DurationBucket.value($0.key) }
        }
        self.init(count: Int(count), p50Milliseconds: percentile(50), p95Milliseconds: percentile(95),
                  meanMilliseconds: Double(microseconds) / Double(count) / 1_000)
    }
}
