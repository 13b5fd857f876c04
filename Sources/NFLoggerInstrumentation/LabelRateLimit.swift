/// How many records per second one label may turn into events: a token bucket that refills at
/// ``perSecond`` and holds at most ``burst``. A library that logs in a tight loop then costs the
/// app a bounded number of events, and what it drops is counted
/// (``NFLogSink/droppedRecords(label:)``).
public struct LabelRateLimit: Sendable, Hashable {
    /// The sustained rate, in records per second. Default: 50.
    public var perSecond: Double
    /// How many records may pass at once after a quiet spell. Default: 100.
    public var burst: Double

    /// A rate of `perSecond` with bursts of `burst`; a negative or non-finite value counts as 0
    /// (nothing passes).
    public init(perSecond: Double = 50, burst: Double = 100) {
        self.perSecond = perSecond.isFinite ? max(0, perSecond) : 0
        self.burst = burst.isFinite ? max(0, burst) : 0
    }

    /// 50 records per second, bursts of 100.
    public static let `default` = LabelRateLimit()
}
