import NFLogger
import CoreMetrics
import Foundation

/// One metric of ``NFMetricsFactory``: its measurement name and dimensions, made once.
struct MetricSeries: Sendable {
    let name: String
    let dimensions: [String: String]
    let factory: NFMetricsFactory

    func record(_ value: Double) {
        factory.record(value, of: self)
    }
}

// The handlers are one job (a metric call becomes a measurement), so they share this file.

/// Records each increment.
final class NFCounterHandler: CounterHandler {
    let series: MetricSeries
    init(series: MetricSeries) { self.series = series }
    func increment(by amount: Int64) { series.record(Double(amount)) }
    func reset() {}
}

/// Records each increment, fractions included.
final class NFFloatingPointCounterHandler: FloatingPointCounterHandler {
    let series: MetricSeries
    init(series: MetricSeries) { self.series = series }
    func increment(by amount: Double) { series.record(amount) }
    func reset() {}
}

/// Records each value.
final class NFRecorderHandler: RecorderHandler {
    let series: MetricSeries
    init(series: MetricSeries) { self.series = series }
    func record(_ value: Int64) { series.record(Double(value)) }
    func record(_ value: Double) { series.record(value) }
}

/// Records each duration in milliseconds.
final class NFTimerHandler: TimerHandler {
    let series: MetricSeries
    init(series: MetricSeries) { self.series = series }
    func recordNanoseconds(_ duration: Int64) { series.record(Double(duration) / 1_000_000) }
}

/// A gauge: records the value it is set to. Increments and decrements need the current value,
/// kept here. Only read and written inside `withLock`.
final class NFMeterHandler: MeterHandler {
    let series: MetricSeries
    private let value = Lock<Double>(0)
    init(series: MetricSeries) { self.series = series }
    func set(_ value: Int64) { set(Double(value)) }
    func set(_ value: Double) {
        self.value.withLock { $0 = value }
        series.record(value)
    }
    func increment(by amount: Double) {
        guard amount.isFinite else { return }
        series.record(value.withLock { value in
            value += amount
            return value
        })
    }
    func decrement(by amount: Double) {
        guard amount.isFinite else { return }
        series.record(value.withLock { value in
            value -= amount
            return value
        })
    }
}
