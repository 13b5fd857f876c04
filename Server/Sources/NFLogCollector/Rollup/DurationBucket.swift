@_spi(NFLogShared) import NFLogSupport

/// Where a duration goes in the rollups' sketches: the bucket of ``QuantileSketch`` (1% relative
/// accuracy), as one integer key whose order is the durations' order, so that a store can keep a
/// sketch as rows (one count per bucket) and merge sketches by summing them in SQL.
///
/// Durations are never negative (the batch decoder refuses them): key 0 holds the zeros (and any
/// duration below ``QuantileSketch/minIndexable``), a positive duration's key is its sketch index
/// plus ``offset``, which keeps every key above 0 (indices are within ±40,000).
enum DurationBucket {
    static let offset: Int64 = 100_000

    /// The key of `milliseconds`.
    static func key(_ milliseconds: Double) -> Int64 {
        guard milliseconds.isFinite, milliseconds >= QuantileSketch.minIndexable else { return 0 }
        return Int64(QuantileSketch.index(milliseconds)) + offset
    }

    /// A key's representative duration: within 1% of every duration with that key.
    static func value(_ key: Int64) -> Double {
        key <= 0 ? 0 : QuantileSketch.value(Int(key - offset))
    }
}
