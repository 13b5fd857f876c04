import Foundation
import Logging
@_spi(NFLogShared) import NFLogSupport

/// The daily rollups on SQLite (``RollupDays``, migration 13): the tables, the triggers that keep
/// a compacted day's rows equal to its hours, and the compactor's step.
enum SQLiteRollupCompaction {
    /// Migration 13: the `_days` tables, `rollup_compaction` (per app, `compacted_before`: an
    /// hour, the start of a day; no row is 0, nothing compacted), and per hour table three
    /// triggers that carry every insert, update and delete of an hour row before
    /// `compacted_before` to its day row, so a compacted day's rows stay its hours' sums.
    /// Triggers rather than the writers' own statements: every path that changes an hour row
    /// (batches, funnel and session corrections, the backfill, rollup retention) is covered, in
    /// its transaction.
    static var migrationSQL: String {
        RollupDays.tables.map { table in
            let columns = (["app", "hour"] + table.keys + table.values).joined(separator: ", ")
            let types = table.keys.map { $0 == "bucket" ? "\($0) INTEGER NOT NULL" : "\($0) TEXT NOT NULL" }
                + table.values.map { "\($0) INTEGER NOT NULL" }
            let key = (["app", "hour"] + table.keys).joined(separator: ", ")
            let sums = table.values.map { value in
                table.clamped.contains(value)
                    ? "\(value) = max(min(\(value) + excluded.\(value), 9223372036854775807), -9223372036854775808)"
                    : "\(value) = \(value) + excluded.\(value)"
            }.joined(separator: ", ")
            func trigger(_ event: String, _ row: String, _ values: [String]) -> String {
                """
                CREATE TRIGGER \(table.hours)_\(event.lowercased())_to_days AFTER \(event) ON \(table.hours)
                WHEN \(row).hour < coalesce((SELECT compacted_before FROM rollup_compaction WHERE app = \(row).app), 0)
                BEGIN
                    INSERT INTO \(table.days) (\(columns))
                    VALUES (\(row).app, \(row).hour - ((\(row).hour % 24) + 24) % 24, \((table.keys.map { "\(row).\($0)" } + values).joined(separator: ", ")))
                    ON CONFLICT (\(key)) DO UPDATE SET \(sums);
                END;
                """
            }
            return """
                CREATE TABLE \(table.days) (
                    app TEXT NOT NULL, hour INTEGER NOT NULL, \(types.joined(separator: ", ")),
                    PRIMARY KEY (\(key))
                ) WITHOUT ROWID;
                \(trigger("INSERT", "NEW", table.values.map { "NEW.\($0)" }))
                \(trigger("UPDATE", "NEW", table.values.map { "NEW.\($0) - OLD.\($0)" }))
                \(trigger("DELETE", "OLD", table.values.map { "-OLD.\($0)" }))
                """
        }.joined(separator: "\n") + """

            CREATE TABLE rollup_compaction (app TEXT PRIMARY KEY, compacted_before INTEGER NOT NULL) WITHOUT ROWID;
            """
    }

    /// The app's `compacted_before` in the caller's snapshot.
    static func compactedBefore(_ c: SQLiteConnection, app: String) throws(SQLiteError) -> Int64 {
        let row = try c.prepare("SELECT compacted_before FROM rollup_compaction WHERE app = ?1")
        try row.bind(app, at: 1)
        return try row.collect { $0.int64(at: 0) }.first ?? 0
    }

    /// Compacts the app's next day before `cutoff` (a day's start) that has hour rows, inside the
    /// caller's transaction: its day rows are its hours' sums, and `compacted_before` moves past
    /// it. Returns that day's first hour, or `nil` when every day before `cutoff` is compacted
    /// (`compacted_before` is then `cutoff`: days with no rows need none).
    static func step(_ c: SQLiteConnection, app: String, before cutoff: Int64) throws(SQLiteError) -> Int64? {
        let compacted = try compactedBefore(c, app: app)
        guard compacted < cutoff else { return nil }
        var next: Int64?
        for table in RollupDays.tables {
            let first = try c.prepare("SELECT min(hour) FROM \(table.hours) WHERE app = ?1 AND hour >= ?2")
            try first.bind(app, at: 1)
            try first.bind(compacted, at: 2)
            if let hour = try first.collect({ $0.isNull(at: 0) ? nil : $0.int64(at: 0) }).first ?? nil {
                next = min(next ?? hour, hour)
            }
        }
        let advance = try c.prepare("""
            INSERT INTO rollup_compaction (app, compacted_before) VALUES (?1, ?2)
            ON CONFLICT (app) DO UPDATE SET compacted_before = excluded.compacted_before
            """)
        try advance.bind(app, at: 1)
        guard let next, RollupDays.start(ofHour: next) < cutoff else {
            try advance.bind(cutoff, at: 2)
            try advance.run()
            return nil
        }
        let day = RollupDays.start(ofHour: next)
        for table in RollupDays.tables {
            let keys = table.keys.joined(separator: ", ")
            // total(): an integer sum() fails past Int64's bounds, and the durations are the client's.
            let sums = table.values.map { value in
                table.clamped.contains(value)
                    ? "CAST(max(min(total(\(value)), 9223372036854775807.0), -9223372036854775808.0) AS INTEGER)"
                    : "sum(\(value))"
            }.joined(separator: ", ")
            // Nothing of this day is in the day table yet: only hours before compacted_before reach it.
            let insert = try c.prepare("""
                INSERT INTO \(table.days) (app, hour, \(keys), \(table.values.joined(separator: ", ")))
                SELECT app, ?2, \(keys), \(sums) FROM \(table.hours) WHERE app = ?1 AND hour >= ?2 AND hour < ?2 + 24
                GROUP BY \(keys)
                """)
            try insert.bind(app, at: 1)
            try insert.bind(day, at: 2)
            try insert.run()
        }
        try advance.bind(day + RollupDays.hoursPerDay, at: 2)
        try advance.run()
        return day
    }
}

extension SQLiteEventStore {
    /// Compacts every app's days before `cutoff` (an hour, the start of a day), a day of one app
    /// per transaction on the writer, so uploads are stored between them. Returns the days
    /// compacted.
    func compactRollups(before cutoff: Int64) async throws -> Int {
        let apps = try await onWriter { c in try c.prepare("SELECT app FROM totals ORDER BY app").collect { $0.text(at: 0) ?? "" } }
        var days = 0
        for app in apps {
            while true {
                try Task.checkCancellation()
                let day = try await onWriter { c in
                    try c.transaction { () throws(SQLiteError) -> Int64? in try SQLiteRollupCompaction.step(c, app: app, before: cutoff) }
                }
                guard day != nil else { break }
                days += 1
            }
        }
        return days
    }

    /// Compacts the days before today now and then every hour, until the store closes
    /// (``RollupCompactionLoop``).
    func runCompaction() async {
        await RollupCompactionLoop.run(logger: logger) { try await compactRollups(before: $0) }
    }
}
