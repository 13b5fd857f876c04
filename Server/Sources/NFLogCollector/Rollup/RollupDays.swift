/// The daily rollups: each hourly rollup table has a twin of the same columns (`event_days` for
/// `event_hours`, …) whose `hour` is the first hour of a UTC day and whose values are the sums of
/// that day's hour rows. A report over many days reads a row per day and key instead of 24, so its
/// cost follows the days it covers, not the events or hours stored.
///
/// Per app, `compacted_before` (an hour, the start of a day) splits time in two: every day before
/// it has its day rows, added by the compactor one day at a time (``SQLiteRollupCompaction``), and
/// from then on kept equal to its hours: any change to an hour row before `compacted_before` (a
/// late event, a funnel's or a session's correction, the backfill) changes the day row by the same
/// amount, in the same transaction. Hour rows are kept as they were (the series by hour reads them).
///
/// A third level, the past rows (``Table/past``), holds per app and key the sums of every day row,
/// kept equal to them the same way: a range that covers every compacted day (the whole report,
/// the dashboard's "all") reads one row per key, so its cost follows the keys (versions, names,
/// buckets), not the days kept.
enum RollupDays {
    static let hoursPerDay: Int64 = 24

    /// The first hour of the UTC day holding `hour` (hours since 1970).
    static func start(ofHour hour: Int64) -> Int64 {
        hour - ((hour % hoursPerDay) + hoursPerDay) % hoursPerDay
    }

    /// ``start(ofHour:)`` in SQL (SQLite's and PostgreSQL's alike) of the hour expression `hour`.
    static func startSQL(ofHour hour: String) -> String {
        "\(hour) - ((\(hour) % 24) + 24) % 24"
    }

    /// A rollup table and its daily and past twins: the key columns after (app, hour), and the
    /// summed ones.
    /// ``tables`` is the one list of the rollups' columns: both stores' schemas and statements
    /// that cover every table are made from it.
    struct Table: Sendable {
        /// `event` for `event_hours` and `event_days`.
        let base: String
        let keys: [String]
        let values: [String]
        /// Value columns whose sums are the clients' (durations), clamped to Int64 like the
        /// batches' upserts clamp them.
        let clamped: Set<String>

        var hours: String { base + "_hours" }
        var days: String { base + "_days" }
        /// Per app and key (no hour), the sums of every day row: a range over all compacted days
        /// reads one row per key, however many days are kept.
        var past: String { base + "_past" }
    }

    static let event = Table(base: "event", keys: ["app_version", "sdk_name", "sdk_version", "name", "kind", "type", "source"],
                             values: ["events", "abandoned", "given_up", "measured", "duration_us"], clamped: ["duration_us"])
    static let duration = Table(base: "duration", keys: ["app_version", "name", "type", "bucket"], values: ["count"], clamped: [])
    static let origin = Table(base: "origin", keys: ["app_version", "origin"], values: ["events"], clamped: [])
    static let funnel = Table(base: "funnel", keys: ["app_version", "use_case", "step"], values: ["reached", "left_runs"], clamped: [])
    static let session = Table(base: "session", keys: ["app_version", "bucket"], values: ["sessions", "duration_us"], clamped: ["duration_us"])
    /// The tables of the rollups (``HourlyRollup``, ``FunnelRollup``, ``SessionRollup``).
    static let tables = [event, duration, origin, funnel, session]

    /// Part of a range's whole hours, read from the hour rows, the day rows or the past rows.
    struct Segment: Sendable, Equatable {
        enum Level: String, Sendable {
            case hours, days
            /// Every compacted day (`hours` is then open at both ends: the past rows have no hour).
            case past
        }

        let level: Level
        let hours: RollupRange.Hours

        /// `_hours`, `_days` or `_past` after `table`'s base name.
        func table(_ table: Table) -> String {
            switch level {
            case .hours: table.hours
            case .days: table.days
            case .past: table.past
            }
        }
    }

    /// How to read `hours` when the days before `compactedBefore` (a day's start) have day rows:
    /// the whole days in the range before it from the day rows, the hours around them from the
    /// hour rows; at most three segments, in time order, together exactly `hours`. A range that
    /// starts no later than the app's `earliest` rollup hour (or has no start) and takes in every
    /// compacted day reads those days from the past rows instead (nil `earliest`: not known, and
    /// the range is read by days).
    static func segments(_ hours: RollupRange.Hours, compactedBefore: Int64, earliest: Int64? = nil) -> [Segment] {
        let fromStart = hours.from.map { from in earliest.map { from <= $0 } ?? false } ?? true
        if compactedBefore > 0, fromStart, hours.to.map({ $0 >= compactedBefore }) ?? true {
            var segments = [Segment(level: .past, hours: RollupRange.Hours(from: nil, to: nil))]
            if hours.to.map({ compactedBefore < $0 }) ?? true {
                segments.append(Segment(level: .hours, hours: RollupRange.Hours(from: compactedBefore, to: hours.to)))
            }
            return segments
        }
        // The first whole day at or after the range's start, the end of the last whole one before
        // its end, and no later than what is compacted.
        let firstDay = hours.from.map { start(ofHour: $0 + hoursPerDay - 1) }
        let endDay = min(hours.to.map { start(ofHour: $0) } ?? compactedBefore, compactedBefore)
        guard endDay > 0, firstDay.map({ $0 < endDay }) ?? true else { return [Segment(level: .hours, hours: hours)] }
        var segments: [Segment] = []
        if let from = hours.from, let firstDay, from < firstDay {
            segments.append(Segment(level: .hours, hours: RollupRange.Hours(from: from, to: firstDay)))
        }
        segments.append(Segment(level: .days, hours: RollupRange.Hours(from: firstDay, to: endDay)))
        if hours.to.map({ endDay < $0 }) ?? true {
            segments.append(Segment(level: .hours, hours: RollupRange.Hours(from: endDay, to: hours.to)))
        }
        return segments
    }

    /// Whether ``segments(_:compactedBefore:earliest:)`` could read `hours` from the past rows
    /// given the app's earliest hour: only then is that worth a lookup.
    static func mayReadPast(_ hours: RollupRange.Hours, compactedBefore: Int64) -> Bool {
        compactedBefore > 0 && hours.from.map { $0 < compactedBefore } ?? false && hours.to.map { $0 >= compactedBefore } ?? true
    }
}
