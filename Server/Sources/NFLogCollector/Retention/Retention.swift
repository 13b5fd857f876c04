/// How long the collector keeps events (`nflog-collector serve --retention-days N`) and the
/// hourly rollups the report reads (`--rollup-retention-days M`, longer).
///
/// Events are counted from when the collector received them (`received_ms`, its own clock), never
/// from the devices' timestamps, which can be anything. A rollup row is one hour of the devices'
/// clocks (the hour the report files its events under), kept while that hour is within
/// ``rollupDays`` of now: a year of trends costs rollup rows, not events. The
/// ``RetentionScheduler`` drops what is older at start and then every ``defaultInterval``;
/// without a `Retention` nothing is ever dropped.
package struct Retention: Sendable, Equatable {
    /// Days of events kept, at least 1.
    package let days: Int
    /// Days of hourly rollups kept, by the devices' hours: at least ``days``, so the report never
    /// counts fewer events than are kept (unless a device's clock was that far behind).
    package let rollupDays: Int
    /// ``rollupDays`` when not given: about 13 months, so a year is compared with the one before.
    package static let defaultRollupDays = 400
    /// The most days accepted: 100 years, far past any real need, and far from overflowing
    /// milliseconds.
    package static let maxDays = 36_500
    /// How often the deletion runs after the one at start.
    package static let defaultInterval = Duration.seconds(3_600)
    /// How often the deletion runs; shorter only in tests.
    var interval = Retention.defaultInterval

    static let millisecondsPerDay: Int64 = 86_400_000

    /// - Parameters:
    ///   - days: Days of events kept, 1 to ``maxDays``.
    ///   - rollupDays: Days of rollups kept, `days` to ``maxDays``; by default ``defaultRollupDays``,
    ///     or `days` when that is more.
    /// - Throws: ``CollectorError/invalidRetentionDays(_:)`` unless `days` is 1 to ``maxDays``;
    ///   ``CollectorError/invalidRollupRetentionDays(_:eventDays:)`` unless `rollupDays` is `days`
    ///   to ``maxDays``.
    package init(days: Int, rollupDays: Int? = nil) throws(CollectorError) {
        guard (1...Self.maxDays).contains(days) else { throw CollectorError.invalidRetentionDays(days) }
        let rollupDays = rollupDays ?? max(Self.defaultRollupDays, days)
        guard (days...Self.maxDays).contains(rollupDays) else {
            throw CollectorError.invalidRollupRetentionDays(rollupDays, eventDays: days)
        }
        self.days = days
        self.rollupDays = rollupDays
    }

    /// The receive time (Unix milliseconds) before which events are dropped, at `now`.
    func cutoff(now: Int64) -> Int64 {
        now - Int64(days) * Self.millisecondsPerDay
    }

    /// The first hour (Unix hours of the devices' clocks) whose rollups are kept at `now`: the
    /// hours before it are dropped, so an hour goes once all of it is older than ``rollupDays``.
    func rollupCutoffHour(now: Int64) -> Int64 {
        // Rounded down: an hour partly newer than the cutoff stays. (No stored hour is negative.)
        max(0, now - Int64(rollupDays) * Self.millisecondsPerDay) / HourlyRollup.hourMilliseconds
    }
}
