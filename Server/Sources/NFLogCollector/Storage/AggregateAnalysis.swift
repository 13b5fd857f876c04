import Foundation
@_spi(NFLogShared) import NFLogSupport

/// The report's `aggregates`: each aggregated name's records, events and measures, every stored
/// summary of a measure merged into one.
///
/// Memory does not grow with the number of aggregates or names: the names to list (at most
/// ``maxNames``, the most events first) come from one grouped query, and the walk over the rows
/// goes in name order, so only one name's summaries (at most ``maxMeasures`` sketches of at most
/// 32 KiB) are held at a time, then reduced to their figures.
enum AggregateAnalysis {
    static let maxNames = 1_000
    static let maxMeasures = 256

    /// Aggregates of the app within `filter`: its time range and app version
    /// (``SQLiteReportSelection``, on `start_ms`) and its dimension (`?5`, `?6`), bound by
    /// ``bind(_:app:filter:)``.
    private static func selection(_ filter: ReportFilter) -> String {
        """
        app = ?1\(SQLiteReportSelection(filter: filter).conditions(time: "start_ms"))
        AND (?5 IS NULL OR EXISTS (SELECT 1 FROM json_each(dimensions) WHERE key = ?5 AND value = ?6))
        """
    }

    private static func bind(_ statement: SQLiteStatement, app: String, filter: ReportFilter) throws(SQLiteError) {
        try SQLiteReportSelection(filter: filter).bind(statement, app: app)
        if let dimension = filter.dimension {
            try statement.bind(dimension.key, at: 5)
            try statement.bind(dimension.value, at: 6)
        } else {
            try statement.bindNull(at: 5)
            try statement.bindNull(at: 6)
        }
    }

    /// Reads in the caller's transaction (the report's snapshot).
    static func summarise(_ c: SQLiteConnection, app: String, filter: ReportFilter)
        throws(SQLiteError) -> (names: [String: AggregateSummary], omitted: Int) {
        // `total()`, a float, only orders the names: an integer sum() fails past 2^63 - 1, and a
        // device may claim counts that large.
        let names = try c.prepare("""
            SELECT name, count(*), total(count) AS events, count(*) OVER ()
            FROM aggregates INDEXED BY aggregates_names WHERE \(selection(filter))
            GROUP BY name ORDER BY events DESC, name LIMIT ?7
            """)
        try bind(names, app: app, filter: filter)
        try names.bind(Int64(maxNames), at: 7)
        var records: [String: Int] = [:]
        var allNames = 0
        for (name, count, total) in try names.collect({ ($0.text(at: 0) ?? "", Int($0.int64(at: 1)), Int($0.int64(at: 3))) }) {
            records[name] = count
            allNames = total
        }
        guard !records.isEmpty else { return ([:], 0) }

        let rows = try c.prepare("""
            SELECT name, count, measures FROM aggregates INDEXED BY aggregates_names WHERE \(selection(filter))
            ORDER BY name, start_ms
            """)
        try bind(rows, app: app, filter: filter)
        defer { rows.reset() }
        let decoder = JSONDecoder()
        var summaries: [String: AggregateSummary] = [:]
        var current: (name: String, merged: Merged)?
        while try rows.step() {
            let name = rows.text(at: 0) ?? ""
            guard records[name] != nil else { continue }  // past the listed names: skipped, not kept
            if current?.name != name {
                if let (done, merged) = current { summaries[done] = merged.summary(records: records[done] ?? 0) }
                current = (name, Merged())
            }
            let measures = rows.blob(at: 2).flatMap { try? decoder.decode([String: MeasureSummary].self, from: Data($0)) } ?? [:]
            current?.merged.add(count: rows.int64(at: 1), measures: measures)
        }
        if let (done, merged) = current { summaries[done] = merged.summary(records: records[done] ?? 0) }
        return (summaries, allNames - records.count)
    }

    /// One name's aggregates, merged so far (PostgreSQL's report merges with it too).
    struct Merged {
        var events: Int64 = 0
        var measures: [String: MeasureSummary] = [:]

        mutating func add(count: Int64, measures new: [String: MeasureSummary]) {
            let (sum, overflow) = events.addingReportingOverflow(max(0, count))
            events = overflow ? .max : sum
            for (key, summary) in new where summary.count <= UInt64(Int64.max) {
                // A measure first seen after ``maxMeasures`` others is left out.
                guard measures[key] != nil || measures.count < AggregateAnalysis.maxMeasures else { continue }
                // Totals stay within a signed 64-bit integer, so no bucket's count can overflow
                // either; a summary that would pass it is left out.
                let held = measures[key]?.count ?? 0
                guard held <= UInt64(Int64.max) - summary.count else { continue }
                measures[key, default: MeasureSummary()].merge(summary)
            }
        }

        func summary(records: Int) -> AggregateSummary {
            AggregateSummary(records: records, count: Int(events), measures: measures.mapValues(MeasureStatistics.init))
        }
    }
}
