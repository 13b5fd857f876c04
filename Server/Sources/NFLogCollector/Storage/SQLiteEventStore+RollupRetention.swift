@_spi(NFLogShared) import NFLogSupport

/// Rollup retention on SQLite: the rollups' old hours (and the daily rollups' days that ended
/// before the cutoff, ``RollupDays``) deleted a day of one app's rows at a time, each in its own transaction on
/// the writer, so uploads are stored between them.
extension SQLiteEventStore {
    package func dropRollups(hoursBefore hour: Int64) async throws -> Int {
        let apps = try await self.apps()
        var dropped = 0
        // Hour rows before day rows: deleting an hour row of a compacted day takes it out of the
        // day's row (a trigger), so a day's row goes once its whole day is before the cutoff, all
        // its hours gone and its sums zero; a day the cutoff cuts keeps the sums of its later hours.
        let tables = RollupDays.tables.flatMap { [(name: $0.hours, before: hour), (name: $0.days, before: hour - RollupDays.hoursPerDay + 1)] }
        for (table, hour) in tables {
            for app in apps {
                while true {
                    try Task.checkCancellation()
                    // The app's oldest day of rows: the key starts with (app, hour), so both the
                    // min() and the deletion read the primary key's range.
                    let rows = try await onWriter { c in
                        try c.transaction { () throws(SQLiteError) -> Int in
                            let delete = try c.prepare("""
                                DELETE FROM \(table) WHERE app = ?1 AND hour < min(?2, (SELECT min(hour) FROM \(table) WHERE app = ?1) + 24)
                                """)
                            try delete.bind(app, at: 1)
                            try delete.bind(hour, at: 2)
                            try delete.run()
                            return c.changes
                        }
                    }
                    dropped += rows
                    if rows == 0 { break }
                }
            }
        }
        return dropped
    }
}
