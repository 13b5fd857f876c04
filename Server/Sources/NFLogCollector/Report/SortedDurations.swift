/// Builds a ``DurationSummary`` from durations that arrive one at a time in ascending order (a
/// database's `ORDER BY`), when their number is known up front: it keeps the two nearest-rank
/// values and a running sum, not the durations, so its memory does not grow with them.
///
/// Adding in ascending order also makes the mean the same, to the last bit, as that of
/// ``DurationSummary/init(_:)``, which sums the sorted array.
struct SortedDurations: Sendable {
    /// How many durations are expected; it fixes the ranks.
    let expected: Int
    private let rank50: Int?
    private let rank95: Int?
    private var seen = 0
    private var sum = 0.0
    private var last: Double?
    private var p50: Double?
    private var p95: Double?

    init(count: Int) {
        expected = count
        rank50 = Percentiles.rank(50, count: count)
        rank95 = Percentiles.rank(95, count: count)
    }

    /// Adds the next duration; each must be at least the one before.
    mutating func add(_ value: Double) {
        seen += 1
        sum += value
        last = value
        if seen == rank50 { p50 = value }
        if seen == rank95 { p95 = value }
    }

    /// The summary of the durations added. Fewer than ``expected`` (the rows changed between the
    /// count and the walk; the store reads both in one snapshot, so it does not happen there)
    /// give the largest value seen for a rank never reached.
    var summary: DurationSummary {
        guard seen > 0 else { return DurationSummary(count: 0, p50Milliseconds: nil, p95Milliseconds: nil, meanMilliseconds: nil) }
        return DurationSummary(count: seen, p50Milliseconds: p50 ?? last, p95Milliseconds: p95 ?? last,
                               meanMilliseconds: sum / Double(seen))
    }
}
