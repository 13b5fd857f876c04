/// A policy's `auto` object: which of NFLoggerInstrumentation's sources may record. Each is on
/// unless the policy turns it off, so an operator can silence a noisy library's logs, traces or
/// metrics across a fleet without an app release.
package struct AutomaticSources: Sendable, Equatable {
    /// Records from swift-log (`auto.log`).
    package var log = true
    /// Spans from swift-distributed-tracing (`auto.tracing`).
    package var tracing = true
    /// Counters, recorders and timers from swift-metrics (`auto.metrics`).
    package var metrics = true

    package init() {}
}
