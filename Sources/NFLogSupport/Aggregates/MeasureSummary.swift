/// What an aggregate keeps of one numeric parameter (or a span's duration): count, sum, min,
/// max and the quantile sketch. Merging two summaries gives the summary of both sets of values,
/// whatever the order (the sum up to floating-point rounding).
///
/// Encoding: `{"count": N, "sum": S, "min": A, "max": B, "sketch": {…}}` (docs/PROTOCOL.md).
@_spi(NFLogShared) public struct MeasureSummary: Sendable, Equatable, Codable {
    @_spi(NFLogShared) public private(set) var count: UInt64 = 0
    @_spi(NFLogShared) public private(set) var sum: Double = 0
    @_spi(NFLogShared) public private(set) var min: Double = .infinity
    @_spi(NFLogShared) public private(set) var max: Double = -.infinity
    @_spi(NFLogShared) public private(set) var sketch = QuantileSketch()

    @_spi(NFLogShared) public init() {}

    /// Adds one value; a non-finite one is ignored (parameters never carry them).
    @_spi(NFLogShared) public mutating func add(_ value: Double) {
        guard value.isFinite else { return }
        count += 1
        sum += value
        min = Swift.min(min, value)
        max = Swift.max(max, value)
        sketch.add(value)
    }

    @_spi(NFLogShared) public mutating func merge(_ other: MeasureSummary) {
        guard other.count > 0 else { return }
        count += other.count
        sum += other.sum
        min = Swift.min(min, other.min)
        max = Swift.max(max, other.max)
        sketch.merge(other.sketch)
    }

    /// `nil` when empty.
    @_spi(NFLogShared) public var mean: Double? { count == 0 ? nil : sum / Double(count) }

    /// The sketch's quantile, clamped to the exact minimum and maximum.
    @_spi(NFLogShared) public func quantile(_ q: Double) -> Double? {
        sketch.quantile(q).map { Swift.min(max, Swift.max(min, $0)) }
    }

    private enum CodingKeys: String, CodingKey { case count, sum, min, max, sketch }

    @_spi(NFLogShared) public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        count = try container.decode(UInt64.self, forKey: .count)
        sum = try container.decode(Double.self, forKey: .sum)
        sketch = try container.decode(QuantileSketch.self, forKey: .sketch)
        guard count == sketch.count else {
            throw DecodingError.dataCorruptedError(forKey: .count, in: container, debugDescription: "count differs from the sketch's")
        }
        if count == 0 {
            (min, max) = (.infinity, -.infinity)
        } else {
            min = try container.decode(Double.self, forKey: .min)
            max = try container.decode(Double.self, forKey: .max)
            guard sum.isFinite, min.isFinite, max.isFinite, min <= max else {
                throw DecodingError.dataCorruptedError(forKey: .min, in: container, debugDescription: "min, max and sum must be finite, min ≤ max")
            }
        }
    }

    @_spi(NFLogShared) public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(count, forKey: .count)
        try container.encode(sum, forKey: .sum)
        if count > 0 {
            try container.encode(min, forKey: .min)
            try container.encode(max, forKey: .max)
        }
        try container.encode(sketch, forKey: .sketch)
    }
}
