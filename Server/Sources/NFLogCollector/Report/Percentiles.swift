/// Percentiles by the nearest-rank method: the p-th percentile of n sorted values is the value
/// at rank ⌈p/100 × n⌉ (1-based). Always one of the observed values; easy to check by hand.
package enum Percentiles {
    package static func nearestRank(_ p: Double, of sorted: [Double]) -> Double? {
        guard let rank = rank(p, count: sorted.count) else { return nil }
        return sorted[rank - 1]
    }

    /// The 1-based rank of the p-th percentile among `count` sorted values; `nil` when there are
    /// none or `p` is outside (0, 100].
    static func rank(_ p: Double, count: Int) -> Int? {
        guard count > 0, p > 0, p <= 100 else { return nil }
        let rank = Int((p / 100 * Double(count)).rounded(.up))
        return min(max(rank, 1), count)
    }
}

/// How a set of durations is summarised in a report.
public struct DurationSummary: Sendable, Equatable, Codable {
    public let count: Int
    public let p50Milliseconds: Double?
    public let p95Milliseconds: Double?
    public let meanMilliseconds: Double?

    public init(_ values: [Double]) {
        var summary = SortedDurations(count: values.count)
        for value in values.sorted() { summary.add(value) }
        self = summary.summary
    }

    /// A summary computed elsewhere, such as from a database's aggregates.
    public init(count: Int, p50Milliseconds: Double?, p95Milliseconds: Double?, meanMilliseconds: Double?) {
        self.count = count
        self.p50Milliseconds = p50Milliseconds
        self.p95Milliseconds = p95Milliseconds
        self.meanMilliseconds = meanMilliseconds
    }

    enum CodingKeys: String, CodingKey {
        case count
        case p50Milliseconds = "p50_ms"
        case p95Milliseconds = "p95_ms"
        case meanMilliseconds = "mean_ms"
    }
}
