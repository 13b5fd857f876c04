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
enum RollupDays {
    static let hoursPerDay: Int64 = 24

    /// The first hour of the UTC day holding `hour` (hours since 1970).
    static func start(ofHour hour: Int64) -> Int64 {
        hour - ((hour % hoursPerDay) + hoursPerDay) % hoursPerDay
    }

    /// A rollup table and its daily twin: the key columns after (app, hour), and the summed ones.
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
    }

    static let event = Table(base: "event", keys: ["app_version", "sdk_name", "sdk_version", "name", "kind", "type", "source"],
                             values: ["events", "abandoned", "given_up", "measured", "duration_us"], clamped: ["duration_us"])
    static let duration = Table(base: "duration", keys: ["app_version", "name", "type", "bucket"], values: ["count"], clamped: [])
    static let origin = Table(base: "origin", keys: ["app_version", "origin"], values: ["events"], clamped: [])
    static let funnel = Table(base: "funnel", keys: ["app_version", "use_case", "step"], values: ["reached", "left_runs"], clamped: [])
    static let session = Table(base: "session", keys: ["app_version", "bucket"], values: ["sessions", "duration_us"], clamped: ["duration_us"])
    /// The tables of the rollups (``HourlyRollup``, ``FunnelRollup``, ``SessionRollup``).
    static let tables = [event, duration, origin, funnel, session]

    /// Part of a range's whole hours, read from the hour rows or the day rows.
    struct Segment: Sendable, Equatable {
        /// Read from the `_days` tables: `hours` then starts and ends at days' starts.
        let days: Bool
        let hours: RollupRange.Hours

        /// `_hours` or `_days` after `table`'s base name.
        func table(_ table: Table) -> String { days ? table.days : table.hours }
    }

    /// How to read `hours` when the days before `compactedBefore` (a day's start) have day rows:
    /// the whole days in the range before it from the day rows, the hours around them from the
    /// hour rows. At most three segments, in time order, together exactly `hours`.
    static func segments(_ hours: RollupRange.Hours, compactedBefore: Int64) -> [Segment] {
        // The first whole day at or after the range's start, the end of the last whole one before
        // its end, and no later than what is compacted.
        let firstDay = hours.from.map { start(ofHour: $0 + hoursPerDay - 1) }
        let endDay = min(hours.to.map { start(ofHour: $0) } ?? compactedBefore, compactedBefore)
        guard endDay > 0, firstDay.map({ $0 < endDay }) ?? true else { return [Segment(days: false, hours: hours)] }
        var segments: [Segment] = []
        if let from = hours.from, let firstDay, from < firstDay {
            segments.append(Segment(days: false, hours: RollupRange.Hours(from: from, to: firstDay)))
        }
        segments.append(Segment(days: true, hours: RollupRange.Hours(from: firstDay, to: endDay)))
        if hours.to.map({ endDay < $0 }) ?? true {
            segments.append(Segment(days: false, hours: RollupRange.Hours(from: endDay, to: hours.to)))
        }
        return segments
    }
}
