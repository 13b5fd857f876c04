@_spi(NFLogShared) package import NFLogSupport

/// One measure of an ``ExportedAggregate``: what the device kept of one numeric parameter (or a
/// span's duration) over the events it folded: count, sum, minimum, maximum and a quantile
/// sketch with 1% relative accuracy (docs/PROTOCOL.md, "Quantile sketches and measure summaries").
public struct ExportedMeasure: Sendable, Equatable {
    /// The summary as the SDK and the collector share it.
    package let summary: MeasureSummary

    package init(_ summary: MeasureSummary) {
        self.summary = summary
    }

    /// Values summarised.
    public var count: Int { Int(clamping: summary.count) }
    public var sum: Double { summary.sum }
    /// `nil` when ``count`` is 0.
    public var min: Double? { summary.count == 0 ? nil : summary.min }
    public var max: Double? { summary.count == 0 ? nil : summary.max }
    public var mean: Double? { summary.mean }

    /// The value at quantile `q` (0…1): within 1% of the exact value of rank ⌊q (count − 1)⌋
    /// among the values, clamped to ``min`` and ``max``; `nil` when there are none.
    public func quantile(_ q: Double) -> Double? {
        summary.quantile(q)
    }
}
