@testable import NFLogCollector

/// Whether a percentile from the rollups' buckets is within 1% (relative) of the exact one, as
/// the report documents; both absent counts as equal.
func withinOnePercent(_ value: Double?, of exact: Double?) -> Bool {
    guard let value, let exact else { return value == nil && exact == nil }
    return abs(value - exact) <= 0.01 * abs(exact)
}

extension DurationSummary {
    /// Whether this summary (the report's, from buckets) matches `exact` (of the durations
    /// themselves) as documented: the same count, each percentile within 1% of the exact nearest
    /// rank, the mean within the microsecond each duration is summed to.
    func matches(_ exact: DurationSummary) -> Bool {
        guard count == exact.count, withinOnePercent(p50Milliseconds, of: exact.p50Milliseconds),
              withinOnePercent(p95Milliseconds, of: exact.p95Milliseconds) else { return false }
        guard let mean = meanMilliseconds, let exactMean = exact.meanMilliseconds else {
            return meanMilliseconds == nil && exact.meanMilliseconds == nil
        }
        return abs(mean - exactMean) <= 0.0005 + 1e-12 * abs(exactMean)
    }
}
