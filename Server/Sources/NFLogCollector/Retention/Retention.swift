/// How long the collector keeps events (`nflog-collector serve --retention-days N`).
///
/// Counted from when the collector received them (`received_ms`, its own clock), never from the
/// devices' timestamps, which can be anything. The ``RetentionScheduler`` drops what is older at
/// start and then every ``defaultInterval``; without a `Retention` nothing is ever dropped.
public struct Retention: Sendable, Equatable {
    /// Days of events kept, at least 1.
    public let days: Int
    /// The most days accepted: 100 years, far past any real need, and far from overflowing
    /// milliseconds.
    public static let maxDays = 36_500
    /// How often the deletion runs after the one at start.
    public static let defaultInterval = Duration.seconds(3_600)
    /// How often the deletion runs; shorter only in tests.
    var interval = Retention.defaultInterval

    static let millisecondsPerDay: Int64 = 86_400_000

    /// - Throws: ``CollectorError/invalidRetentionDays(_:)`` unless `days` is 1 to ``maxDays``.
    public init(days: Int) throws(CollectorError) {
        guard (1...Self.maxDays).contains(days) else { throw CollectorError.invalidRetentionDays(days) }
        self.days = days
    }

    /// The receive time (Unix milliseconds) before which events are dropped, at `now`.
    func cutoff(now: Int64) -> Int64 {
        now - Int64(days) * Self.millisecondsPerDay
    }
}
