import Foundation
import Logging
@_spi(NFLogShared) import NFLogSupport

/// The daily and past rollups on SQLite (``RollupDays``, migrations 13 and 14): the tables, the
/// triggers that keep a compacted day's rows equal to its hours and each key's past row equal to
/// its day rows, and the compactor's step.
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
            let key = (["app", "hour"] + table.keys).joined(separator: ", ")
            // Only hours before compacted_before reach a day row.
            let when = "coalesce((SELECT compacted_before FROM rollup_compaction WHERE app = %@.app), 0) > %@.hour"
            return """
                CREATE TABLE \(table.days) (
                    app TEXT NOT NULL, hour INTEGER NOT NULL, \(columns(table)),
                    PRIMARY KEY (\(key))
                ) WITHOUT ROWID;
                \(triggers(table, from: table.hours, to: table.days, hour: { RollupDays.startSQL(ofHour: "\($0).hour") }, when: when))
                """
        }.joined(separator: "\n") + """

            CREATE TABLE rollup_compaction (app TEXT PRIMARY KEY, compacted_before INTEGER NOT NULL) WITHOUT ROWID;
            """
    }

    /// Migration 14: the `_past` tables (``RollupDays/Table/past``), each app's sums over every
    /// day row, filled from the day rows there are; and per day table three triggers that carry
    /// every change of a day row to them (the day rows change only through the hours' triggers,
    /// the compactor and retention, so all of those reach the past rows too).
    static var pastMigrationSQL: String {
        RollupDays.tables.map { table in
            let keys = table.keys.joined(separator: ", ")
            return """
                CREATE TABLE \(table.past) (
                    app TEXT NOT NULL, \(columns(table)),
                    PRIMARY KEY (app, \(keys))
                ) WITHOUT ROWID;
                INSERT INTO \(table.past) (app, \(keys), \(table.values.joined(separator: ", ")))
                SELECT app, \(keys), \(sums(table)) FROM \(table.days) GROUP BY app, \(keys);
                \(triggers(table, from: table.days, to: table.past, hour: nil, when: nil))
                """
        }.joined(separator: "\n")
    }

    /// The definitions of `table`'s key and value columns after (app, hour).
    private static func columns(_ table: RollupDays.Table) -> String {
        (table.keys.map { $0 == "bucket" ? "\($0) INTEGER NOT NULL" : "\($0) TEXT NOT NULL" }
            + table.values.map { "\($0) INTEGER NOT NULL" }).joined(separator: ", ")
    }

    /// The sums of `table`'s values; total() for the clamped ones (an integer sum() fails past
    /// Int64's bounds, and the durations are the client's).
    private static func sums(_ table: RollupDays.Table) -> String {
        table.values.map { value in
            table.clamped.contains(value)
                ? "CAST(max(min(total(\(value)), 9223372036854775807.0), -9223372036854775808.0) AS INTEGER)"
                : "sum(\(value))"
        }.joined(separator: ", ")
    }

    /// Insert, update and delete triggers on `source` (rows of `table`'s columns) that add each
    /// change to the row of `target` with the same key, its hour `hour(row)` (no hour column:
    /// nil), when `when` (a format, `%@` the row) holds.
    private static func triggers(_ table: RollupDays.Table, from source: String, to target: String, hour: ((String) -> String)?,
                                 when: String?) -> String {
        let key = (["app"] + (hour == nil ? [] : ["hour"]) + table.keys).joined(separator: ", ")
        let sums = table.values.map { value in
            table.clamped.contains(value)
                ? "\(value) = max(min(\(value) + excluded.\(value), 9223372036854775807), -9223372036854775808)"
                : "\(value) = \(value) + excluded.\(value)"
        }.joined(separator: ", ")
        func trigger(_ event: String, _ row: String, _ values: [String]) -> String {
            let condition = when.map { "WHEN " + $0.replacingOccurrences(of: "%@", with: row) + "\n" } ?? ""
            return """
                CREATE TRIGGER \(source)_\(event.lowercased())_to_\(target.split(separator: "_").last ?? "") AFTER \(event) ON \(source)
                \(condition)BEGIN
                    INSERT INTO \(target) (\(key), \(table.values.joined(separator: ", ")))
                    VALUES (\(([row + ".app"] + (hour.map { [$0(row)] } ?? []) + table.keys.map { "\(row).\($0)" } + values).joined(separator: ", ")))
                    ON CONFLICT (\(key)) DO UPDATE SET \(sums);
                END;
                """
        }
        return [trigger("INSERT", "NEW", table.values.map { "NEW.\($0)" }),
                trigger("UPDATE", "NEW", table.values.map { "NEW.\($0) - OLD.\($0)" }),
                trigger("DELETE", "OLD", table.values.map { "-OLD.\($0)" })].joined(separator: "\n")
    }

    /// The app's `compacted_before` in the caller's snapshot.
    static func compactedBefore(_ c: SQLiteConnection, app: String) throws(SQLiteError) -> Int64 {
        let row = try c.prepare("SELECT compacted_before FROM rollup_compaction WHERE app = ?1")
        try row.bind(app, at: 1)
        return try row.collect { $0.int64(at: 0) }.first ?? 0
    }

    /// The app's earliest hour at or after `from` with a rollup row, in the caller's snapshot
    /// (nil: none). Each table's key starts with (app, hour): a probe per table.
    static func firstHour(_ c: SQLiteConnection, app: String, from: Int64 = .min) throws(SQLiteError) -> Int64? {
        let first = try c.prepare(RollupDays.tables.map { "SELECT min(hour) FROM \($0.hours) WHERE app = ?1 AND hour >= ?2" }
            .joined(separator: " UNION ALL "))
        try first.bind(app, at: 1)
        try first.bind(from, at: 2)
        return try first.collect { $0.isNull(at: 0) ? nil : $0.int64(at: 0) }.compactMap { $0 }.min()
    }

    /// Compacts the app's next day before `cutoff` (a day's start) that has hour rows, inside the
    /// caller's transaction: its day rows are its hours' sums, and `compacted_before` moves past
    /// it. Returns that day's first hour, or `nil` when every day before `cutoff` is compacted
    /// (`compacted_before` is then `cutoff`: days with no rows need none).
    static func step(_ c: SQLiteConnection, app: String, before cutoff: Int64) throws(SQLiteError) -> Int64? {
        let compacted = try compactedBefore(c, app: app)
        guard compacted < cutoff else { return nil }
        let next = try firstHour(c, app: app, from: compacted)
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
            // Nothing of this day is in the day table yet: only hours before compacted_before reach it.
            let insert = try c.prepare("""
                INSERT INTO \(table.days) (app, hour, \(keys), \(table.values.joined(separator: ", ")))
                SELECT app, ?2, \(keys), \(sums(table)) FROM \(table.hours) WHERE app = ?1 AND hour >= ?2 AND hour < ?2 + 24
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
        var days = 0
        for app in try await onWriter({ c in try Self.appNames(c) }) {
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
