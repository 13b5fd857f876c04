@_spi(NFLogShared) import NFLogSupport

/// What a report says of one measure of an aggregated name: the values of every stored
/// aggregate's summary of it, merged. The quantiles come from the merged sketch (within 1% of
/// the exact value of rank ⌊q (n − 1)⌋), clamped to the exact minimum and maximum.
public struct MeasureStatistics: Sendable, Equatable, Codable {
    /// Values summarised.
    public let count: Int
    /// Absent when there are none (or their sum is beyond a Double's range).
    public let mean: Double?
    public let min: Double?
    public let max: Double?
    public let p50: Double?
    public let p95: Double?
    public let p99: Double?

    public init(count: Int, mean: Double?, min: Double?, max: Double?, p50: Double?, p95: Double?, p99: Double?) {
        self.count = count
        self.mean = mean
        self.min = min
        self.max = max
        self.p50 = p50
        self.p95 = p95
        self.p99 = p99
    }

    init(_ summary: MeasureSummary) {
        let empty = summary.count == 0
        self.init(count: Int(clamping: summary.count), mean: summary.mean.flatMap { $0.isFinite ? $0 : nil },
                  min: empty ? nil : summary.min, max: empty ? nil : summary.max,
                  p50: summary.quantile(0.50), p95: summary.quantile(0.95), p99: summary.quantile(0.99))
    }
}
