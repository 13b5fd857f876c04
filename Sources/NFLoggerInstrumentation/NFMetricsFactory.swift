public import CoreMetrics
@_spi(NFLogShared) public import NFLogger
@_spi(NFLogShared) import NFLogSupport

/// A swift-metrics `MetricsFactory` whose metrics are NFLogger measurements
/// (``NFLogger/record(name:value:dimensions:completion:)``), named `metric.<label>` (the label
/// made into valid name parts) with the metric's dimensions:
/// - a counter or floating-point counter records each increment (`reset()` records nothing);
/// - a recorder records each value, a meter (gauge) each value it is set to (increments and
///   decrements record the new value);
/// - a timer records each duration in milliseconds.
///
/// Each call is one event. To keep summaries rather than every value, give the policy an
/// aggregate rule for them: `{"rules": {"aggregate": [{"pattern": "metric.**", "window_s": 60}]}}`
/// folds them into per-window aggregates (count, sum, min, max, percentiles of `value`), per
/// series of the dimensions the rule names.
///
/// Dimensions: at most 8 (in the order given), keys and values cut at 128 bytes; one named
/// `value` (the measurement itself) is sent as `dimension.value`. A non-finite value is dropped.
/// While the policy's `auto.metrics` is `false` nothing is recorded (counted in
/// ``droppedMeasurements``).
///
/// ```swift
/// MetricsSystem.bootstrap(NFMetricsFactory(logger: nflogger))
/// Counter(label: "cache.miss", dimensions: [("cache", "images")]).increment()
/// // → measurement metric.cache.miss {value: 1, cache: "images"}
/// ```
public final class NFMetricsFactory: MetricsFactory {
    /// The logger the measurements go to.
    public let logger: NFLogger
    /// The name prefix of every measurement.
    public static let namePrefix = "metric"
    static let maxDimensions = 8
    static let maxDimensionBytes = 128
    /// Measurements not recorded. Only read and written inside `withLock`.
    private let dropped = Lock(0)

    /// A factory whose metrics go to `logger`.
    public init(logger: NFLogger) {
        self.logger = logger
    }

    /// How many measurements were not recorded because the policy's `auto.metrics` was off or
    /// the value was not finite.
    public var droppedMeasurements: Int { dropped.withLock { $0 } }

    public func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler {
        NFCounterHandler(series: series(label, dimensions))
    }

    public func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        NFFloatingPointCounterHandler(series: series(label, dimensions))
    }

    public func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler {
        NFMeterHandler(series: series(label, dimensions))
    }

    public func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler {
        NFRecorderHandler(series: series(label, dimensions))
    }

    public func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler {
        NFTimerHandler(series: series(label, dimensions))
    }

    // Handlers hold nothing to release.
    public func destroyCounter(_ handler: any CounterHandler) {}
    public func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {}
    public func destroyMeter(_ handler: any MeterHandler) {}
    public func destroyRecorder(_ handler: any RecorderHandler) {}
    public func destroyTimer(_ handler: any TimerHandler) {}

    private func series(_ label: String, _ dimensions: [(String, String)]) -> MetricSeries {
        var kept: [String: String] = [:]
        for (key, value) in dimensions.prefix(Self.maxDimensions) {
            var key = BoundedParameters.cut(key, to: Self.maxDimensionBytes)
            if key.isEmpty { key = "_" }
            if key == "value" { key = "dimension.value" }
            kept[key] = BoundedParameters.cut(value, to: Self.maxDimensionBytes)
        }
        return MetricSeries(name: EventNames.make(prefix: Self.namePrefix, label, fallback: ""), dimensions: kept, factory: self)
    }

    /// Records one value of a series, unless the policy turned metrics off.
    func record(_ value: Double, of series: MetricSeries) {
        guard value.isFinite else { return dropped.withLock { $0 += 1 } }
        if !logger.automaticSources.metrics { return dropped.withLock { $0 += 1 } }
        logger.record(name: series.name, value: value, dimensions: series.dimensions)
    }
}
