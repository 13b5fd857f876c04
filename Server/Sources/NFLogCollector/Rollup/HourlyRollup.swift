@_spi(NFLogShared) import NFLogSupport
/// The rollup rows a set of stored events adds, keyed by hour of device time (UTC) and app
/// version, summed in memory so that a batch writes one row per key, not per event.
///
/// Three kinds of rows, kept by both stores in tables of the same names:
/// - `event_hours`, per (hour, app version, SDK name and version, name, kind, type, source): the events,
///   the spans the SDK abandoned, the use cases given up, and the durations measured
///   (``RollupEvent/isMeasured``) with their sum in microseconds;
/// - `duration_hours`, per (hour, app version, name, type, bucket): how many measured durations
///   fell in each ``DurationBucket``, a ``QuantileSketch`` kept as rows;
/// - `origin_hours`, per (hour, app version, origin): the web events that carried an origin.
///
/// Every value is a sum, so rows of one key from any number of batches (or collectors, or a
/// backfill) add up to the rows of all their events together, in any order.
struct HourlyRollup: Sendable {
    static let hourMilliseconds: Int64 = 3_600_000

    struct EventKey: Hashable, Sendable {
        let hour: Int64, appVersion: String, sdkName: String, sdkVersion: String, name: String, kind: String, type: String, source: String
    }

    struct EventCounts: Hashable, Sendable {
        var events: Int64 = 0
        var abandoned: Int64 = 0
        var givenUp: Int64 = 0
        var measured: Int64 = 0
        /// Saturating at Int64.max (durations are the client's: a thousand years each is legal).
        var durationMicros: Int64 = 0
    }

    struct DurationKey: Hashable, Sendable {
        let hour: Int64, appVersion: String, name: String, type: String, bucket: Int64
    }

    struct OriginKey: Hashable, Sendable {
        let hour: Int64, appVersion: String, origin: String
    }

    private(set) var events: [EventKey: EventCounts] = [:]
    private(set) var durations: [DurationKey: Int64] = [:]
    private(set) var origins: [OriginKey: Int64] = [:]

    var isEmpty: Bool { events.isEmpty }

    /// The hour an event falls in: its device timestamp (a span's start) in whole hours since
    /// 1970, the expression of the stores' `events_hours` index (timestamps are never negative).
    static func hour(_ timestamp: Int64) -> Int64 { timestamp / hourMilliseconds }

    mutating func add(_ event: RollupEvent, appVersion: String, sdkName: String, sdkVersion: String) {
        let hour = Self.hour(event.timestamp)
        let key = EventKey(hour: hour, appVersion: appVersion, sdkName: sdkName, sdkVersion: sdkVersion, name: event.name, kind: event.kind,
                           type: event.type, source: event.web ? Batch.Source.web.rawValue : Batch.Source.native.rawValue)
        events[key, default: EventCounts()].add(event)
        if event.isMeasured, let duration = event.durationMilliseconds {
            durations[DurationKey(hour: hour, appVersion: appVersion, name: event.name, type: event.type,
                                  bucket: DurationBucket.key(duration)), default: 0] += 1
        }
        if event.web, let origin = event.origin {
            origins[OriginKey(hour: hour, appVersion: appVersion, origin: origin), default: 0] += 1
        }
    }

    /// Adds rows read back from a store.
    mutating func add(_ key: EventKey, _ counts: EventCounts) {
        events[key, default: EventCounts()].add(counts)
    }

    mutating func add(_ key: DurationKey, count: Int64) { durations[key, default: 0] += count }

    mutating func add(_ key: OriginKey, events count: Int64) { origins[key, default: 0] += count }

    /// Microseconds of a duration, at most 10^15 (31 years): a sum of a batch's worth stays far
    /// from overflowing, and the sum of sums saturates.
    static func micros(_ milliseconds: Double) -> Int64 {
        guard milliseconds.isFinite, milliseconds > 0 else { return 0 }
        return Int64(min(milliseconds * 1_000, 1e15).rounded())
    }
}

extension HourlyRollup.EventCounts {
    mutating func add(_ other: Self) {
        events += other.events
        abandoned += other.abandoned
        givenUp += other.givenUp
        measured += other.measured
        let (sum, overflow) = durationMicros.addingReportingOverflow(other.durationMicros)
        durationMicros = overflow ? .max : sum
    }

    mutating func add(_ event: RollupEvent) {
        events += 1
        if event.abandoned { abandoned += 1 }
        if event.givenUp == true { givenUp += 1 }
        if event.isMeasured, let duration = event.durationMilliseconds {
            measured += 1
            let (sum, overflow) = durationMicros.addingReportingOverflow(HourlyRollup.micros(duration))
            durationMicros = overflow ? .max : sum
        }
    }
}
