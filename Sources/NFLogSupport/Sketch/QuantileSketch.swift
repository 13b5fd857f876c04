import Foundation

/// A mergeable quantile sketch with a relative-error guarantee: DDSketch's log-bucketed scheme
/// (Masson, Rim and Lee, VLDB 2019), what aggregates carry for each numeric parameter.
///
/// A value `x > 0` goes into bucket `ceil(log_γ x)` with `γ = (1 + α) / (1 − α)`; the bucket's
/// representative `2γ^i / (γ + 1)` is within `α` of every value in it, so any quantile is
/// returned within relative error `α` of the exact value at the same rank (as long as its bucket
/// was not collapsed, below). Negative values use the same buckets on `|x|`; values closer to 0
/// than ``minIndexable`` are counted apart as zeros.
///
/// Why this sketch: its error is relative, the right kind for latencies and frame times whose
/// tails span orders of magnitude; merging is adding counts, so it is exact, associative and
/// independent of the order values arrive in (t-digest and KLL are neither); and its size grows
/// with the log of the range, not with the count.
///
/// Size bound: at most ``maxBuckets`` buckets per sign (1% accuracy covers a range of 10^17 in
/// 2,048 buckets; 1 µs to 1 hour takes ~1,100). Past it the lowest buckets are collapsed into
/// one, as DDSketch's collapsing store does, so the error stays within `α` for every quantile
/// above the collapsed range. A full sketch holds 2 × 2,048 counts: at most 32 KiB in memory.
///
/// Encoding (JSON; docs/PROTOCOL.md specifies it for other implementations):
/// `{"relative_accuracy": 0.01, "zero_count": Z, "positive": {"offset": K, "counts": [c0, c1, …]},
/// "negative": {…}}`, where `counts[j]` is the number of values in bucket `K + j`. Decoding
/// refuses another accuracy, more than ``maxBuckets`` counts a store, and indices beyond ±40,000.
@_spi(NFLogShared) public struct QuantileSketch: Sendable, Equatable, Codable {
    /// The relative accuracy: 1%.
    @_spi(NFLogShared) public static let relativeAccuracy = 0.01
    @_spi(NFLogShared) public static let gamma = (1 + relativeAccuracy) / (1 - relativeAccuracy)
    private static let logGamma = log(gamma)
    /// Smaller magnitudes count as zero (below any latency or measurement the SDK carries).
    @_spi(NFLogShared) public static let minIndexable = 1e-9
    @_spi(NFLogShared) public static let maxBuckets = 2_048

    @_spi(NFLogShared) public private(set) var positive = BucketStore()
    @_spi(NFLogShared) public private(set) var negative = BucketStore()
    @_spi(NFLogShared) public private(set) var zeroCount: UInt64 = 0

    @_spi(NFLogShared) public init() {}

    private enum CodingKeys: String, CodingKey {
        case relativeAccuracy = "relative_accuracy", zeroCount = "zero_count", positive, negative
    }

    @_spi(NFLogShared) public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let accuracy = try container.decode(Double.self, forKey: .relativeAccuracy)
        guard accuracy == Self.relativeAccuracy else {
            throw DecodingError.dataCorruptedError(forKey: .relativeAccuracy, in: container,
                                                   debugDescription: "only \(Self.relativeAccuracy) is supported")
        }
        zeroCount = try container.decode(UInt64.self, forKey: .zeroCount)
        positive = try container.decode(BucketStore.self, forKey: .positive)
        negative = try container.decode(BucketStore.self, forKey: .negative)
        // Each store's total is at most Int64.max; together with the zeros they must be too, or
        // `count` (and every merge) would overflow.
        let (stores, overflow) = positive.total.addingReportingOverflow(negative.total)
        let (all, overflow2) = stores.addingReportingOverflow(zeroCount)
        guard !overflow, !overflow2, all <= UInt64(Int64.max) else {
            throw DecodingError.dataCorruptedError(forKey: .zeroCount, in: container, debugDescription: "counts too large")
        }
    }

    @_spi(NFLogShared) public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Self.relativeAccuracy, forKey: .relativeAccuracy)
        try container.encode(zeroCount, forKey: .zeroCount)
        try container.encode(positive, forKey: .positive)
        try container.encode(negative, forKey: .negative)
    }

    @_spi(NFLogShared) public var count: UInt64 { positive.total + negative.total + zeroCount }

    /// Adds one value. Not finite: ignored (the caller has refused it already).
    @_spi(NFLogShared) public mutating func add(_ value: Double) {
        guard value.isFinite else { return }
        if abs(value) < Self.minIndexable {
            zeroCount += 1
        } else if value > 0 {
            positive.add(Self.index(value))
        } else {
            negative.add(Self.index(-value))
        }
    }

    /// Adds every count of `other`: the result is the sketch of both sets of values, whatever
    /// the order they were added or merged in.
    @_spi(NFLogShared) public mutating func merge(_ other: QuantileSketch) {
        positive.merge(other.positive)
        negative.merge(other.negative)
        zeroCount += other.zeroCount
    }

    /// The value at quantile `q` (0…1): within ``relativeAccuracy`` of the exact value of rank
    /// `floor(q × (count − 1))` in the sorted values. `nil` when empty.
    @_spi(NFLogShared) public func quantile(_ q: Double) -> Double? {
        let total = count
        guard total > 0, q.isFinite else { return nil }
        let rank = UInt64((min(1, max(0, q)) * Double(total - 1)).rounded(.down))
        // Ascending values: the negatives from the largest magnitude down, the zeros, the positives.
        var seen: UInt64 = 0
        for (index, count) in negative.descending() {
            seen += count
            if seen > rank { return -Self.value(index) }
        }
        seen += zeroCount
        if seen > rank { return 0 }
        for (index, count) in positive.ascending() {
            seen += count
            if seen > rank { return Self.value(index) }
        }
        return nil
    }

    /// The bucket of a magnitude ≥ ``minIndexable``: `ceil(log_γ magnitude)`.
    @_spi(NFLogShared) public static func index(_ magnitude: Double) -> Int {
        Int((log(magnitude) / logGamma).rounded(.up))
    }

    /// A bucket's representative value, within ``relativeAccuracy`` of every value in it.
    @_spi(NFLogShared) public static func value(_ index: Int) -> Double {
        2 * pow(gamma, Double(index)) / (gamma + 1)
    }

    /// Counts by bucket index over a contiguous range: `counts[k]` is bucket `offset + k`. When
    /// the range would pass ``QuantileSketch/maxBuckets``, the lowest buckets fold into one.
    @_spi(NFLogShared) public struct BucketStore: Sendable, Equatable, Codable {
        @_spi(NFLogShared) public private(set) var offset = 0
        @_spi(NFLogShared) public private(set) var counts: [UInt64] = []
        /// Bucket indices a decoded store may use: every finite Double's bucket is within ±35,500
        /// (and 10⁻⁹'s is −1,036), so a merge of decoded stores never spans more than this.
        @_spi(NFLogShared) public static let maxIndex = 40_000

        init() {}

        private enum CodingKeys: String, CodingKey { case offset, counts }

        @_spi(NFLogShared) public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let offset = try container.decode(Int.self, forKey: .offset)
            let counts = try container.decode([UInt64].self, forKey: .counts)
            guard counts.count <= QuantileSketch.maxBuckets else {
                throw DecodingError.dataCorruptedError(forKey: .counts, in: container,
                                                       debugDescription: "more than \(QuantileSketch.maxBuckets) buckets")
            }
            // Compared without arithmetic that could overflow: the offset is the sender's.
            guard offset.magnitude <= UInt(Self.maxIndex),
                  (offset + counts.count).magnitude <= UInt(Self.maxIndex) else {
                throw DecodingError.dataCorruptedError(forKey: .offset, in: container, debugDescription: "offset out of range")
            }
            // Totals must not overflow when summed or merged.
            var total: UInt64 = 0
            for count in counts {
                let (sum, overflow) = total.addingReportingOverflow(count)
                guard !overflow, sum <= UInt64(Int64.max) else {
                    throw DecodingError.dataCorruptedError(forKey: .counts, in: container, debugDescription: "counts too large")
                }
                total = sum
            }
            // Leading and trailing zeros are dropped, so equal sketches decode equal.
            let first = counts.firstIndex { $0 > 0 }
            let last = counts.lastIndex { $0 > 0 }
            if let first, let last {
                self.offset = offset + first
                self.counts = Array(counts[first...last])
            }
        }

        @_spi(NFLogShared) public var total: UInt64 { counts.reduce(0, +) }

        mutating func add(_ index: Int, count: UInt64 = 1) {
            guard count > 0 else { return }
            if counts.isEmpty {
                offset = index
                counts = [count]
                return
            }
            if index < offset {
                let room = QuantileSketch.maxBuckets - counts.count
                let lowest = max(index, offset - room)
                counts.insert(contentsOf: repeatElement(0, count: offset - lowest), at: 0)
                offset = lowest
                counts[max(0, index - offset)] += count  // below the collapsed bound: the lowest bucket
                return
            }
            let position = index - offset
            if position >= counts.count {
                counts.append(contentsOf: repeatElement(0, count: position - counts.count + 1))
                collapseIfNeeded()
            }
            counts[index - offset] += count
        }

        mutating func merge(_ other: BucketStore) {
            for (position, count) in other.counts.enumerated() where count > 0 {
                add(other.offset + position, count: count)
            }
        }

        /// Folds the lowest buckets into one until the range fits.
        private mutating func collapseIfNeeded() {
            let excess = counts.count - QuantileSketch.maxBuckets
            guard excess > 0 else { return }
            let folded = counts[0...excess].reduce(0, +)
            counts.removeFirst(excess)
            counts[0] = folded
            offset += excess
        }

        func ascending() -> some Sequence<(Int, UInt64)> {
            counts.enumerated().lazy.filter { $0.element > 0 }.map { (offset + $0.offset, $0.element) }
        }

        func descending() -> some Sequence<(Int, UInt64)> {
            counts.enumerated().reversed().lazy.filter { $0.element > 0 }.map { (offset + $0.offset, $0.element) }
        }
    }
}
