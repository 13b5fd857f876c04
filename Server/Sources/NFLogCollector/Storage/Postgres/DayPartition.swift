/// One day of events, a partition of `events`: rows whose received_ms falls in
/// [start, start + 1 day) UTC, in a table named after the date (`events_p20250615`), so an
/// operator reading `\d+ events` sees which days are kept.
struct DayPartition: Sendable, Hashable {
    static let millisecondsPerDay: Int64 = 86_400_000

    /// Days since 1970-01-01 (UTC).
    let day: Int64

    init(containing milliseconds: Int64) {
        // Floor division: a time before 1970 belongs to the day before, not to day 0.
        day = milliseconds >= 0 ? milliseconds / Self.millisecondsPerDay
            : -((-milliseconds + Self.millisecondsPerDay - 1) / Self.millisecondsPerDay)
    }

    init(day: Int64) { self.day = day }

    /// Reads a partition's table name back (nil: not one of ours).
    init?(tableName: String) {
        guard tableName.hasPrefix("events_p"), tableName.count == 16,
              let digits = Int64(tableName.dropFirst(8)) else { return nil }
        let (year, month, dayOfMonth) = (digits / 10_000, digits / 100 % 100, digits % 100)
        guard (1...12).contains(month), (1...31).contains(dayOfMonth) else { return nil }
        day = Self.days(year: year, month: month, day: dayOfMonth)
        guard Self.civil(day).month == month, Self.civil(day).day == dayOfMonth else { return nil }
    }

    var start: Int64 { day * Self.millisecondsPerDay }
    var end: Int64 { start + Self.millisecondsPerDay }

    var tableName: String {
        let (year, month, day) = Self.civil(day)
        func two(_ n: Int64) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "events_p\(year)\(two(month))\(two(day))"
    }

    /// The day's table, made and then attached to `events`: run under the partition lock, when
    /// no table of its name exists, so two collectors creating the same day at once do not
    /// collide in the catalog. Not `CREATE TABLE … PARTITION OF events`: that locks `events`
    /// ACCESS EXCLUSIVE, so it waits for every read of it in progress (a report), and every upload
    /// waits behind it. ATTACH PARTITION locks it SHARE UPDATE EXCLUSIVE, which reads and inserts
    /// do not conflict with (and the new table is empty, so its bounds are checked at once).
    var createStatements: [String] {
        ["CREATE TABLE \(tableName) (LIKE events INCLUDING DEFAULTS)",
         "ALTER TABLE events ATTACH PARTITION \(tableName) FOR VALUES FROM (\(start)) TO (\(end))"]
    }

    // Howard Hinnant's civil-date algorithms (proleptic Gregorian, exact for every Int64 day a
    // received time can give).
    static func civil(_ days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    static func days(year: Int64, month: Int64, day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}
