/// Percentiles by the nearest-rank method: the p-th percentile of n sorted values is the value
/// at rank ⌈p/100 × n⌉ (1-based). Always one of the observed values; easy to check by hand.
public enum Percentiles {
    public static func nearestRank(_ p: Double, of sorted: [Double]) -> Double? {
        guard !sorted.isEmpty, p > 0, p <= 100 else { return nil }
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }
}

/// How a set of durations is summarised in a report.
public struct DurationSummary: Sendable, Equatable, Codable {
    public let count: Int
    public let p50Milliseconds: Double?
    public let p95Milliseconds: Double?
    public let meanMilliseconds: Double?

    public init(_ values: [Double]) {
        let sorted = values.sorted()
        count = sorted.count
        p50Milliseconds = Percentiles.nearestRank(50, of: sorted)
        p95Milliseconds = Percentiles.nearestRank(95, of: sorted)
        meanMilliseconds = sorted.isEmpty ? nil : sorted.reduce(0, +) / Double(sorted.count)
    }

    enum CodingKeys: String, CodingKey {
        case count
        case p50Milliseconds = "p50_ms"
        case p95Milliseconds = "p95_ms"
        case meanMilliseconds = "mean_ms"
    }
}
