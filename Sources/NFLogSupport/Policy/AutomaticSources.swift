/// A policy's `auto` object: which of NFLoggerInstrumentation's sources may record. Each is on
/// unless the policy turns it off, so an operator can silence a noisy library's logs, traces or
/// metrics across a fleet without an app release.
@_spi(NFLogShared) public struct AutomaticSources: Sendable, Equatable {
    /// Records from swift-log (`auto.log`).
    @_spi(NFLogShared) public var log = true
    /// Spans from swift-distributed-tracing (`auto.tracing`).
    @_spi(NFLogShared) public var tracing = true
    /// Counters, recorders and timers from swift-metrics (`auto.metrics`).
    @_spi(NFLogShared) public var metrics = true

    @_spi(NFLogShared) public init() {}
}
