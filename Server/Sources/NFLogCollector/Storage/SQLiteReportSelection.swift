@_spi(NFLogShared) import NFLogSupport

/// A ``ReportFilter``'s time range and app version in SQLite's SQL: the conditions that select
/// the rows a report counts, and their parameters.
///
/// The app is `?1` in every report query; the filter's parts are `?2` (from), `?3` (to) and `?4`
/// (app version), so a query's own parameters start at `?5`. Each condition is written only when
/// its part is set, so an unfiltered report's queries carry none and read through the indexes
/// they read before filters existed; and ``bind(_:app:)`` binds only those parts, whose numbers
/// the query then names.
///
/// Events and spans are indexed by the hour of their device timestamp (events_hours, migration
/// 10), so a time range also bounds that hour, in the index's own expression, and SQLite reads
/// only the range's hours; the exact bounds then hold each row to the millisecond.
struct SQLiteReportSelection {
    let filter: ReportFilter

    /// The index events_hours's expression, as its migration writes it (SQLite uses an index on
    /// an expression only where a query writes that same expression).
    static let eventHour = "timestamp_ms / 3600000"

    /// Whether any condition is written: events, spans and sessions are filtered.
    var selectsEvents: Bool { filter.selectsEvents }

    /// ` AND …` (or nothing): the rows whose `time` column is within the range and whose context
    /// has the app version; `alias` qualifies the columns. `hour`, the indexed hour of `time`,
    /// is bounded too when given.
    func conditions(time: String, hour: String? = nil, alias: String? = nil) -> String {
        let column = alias.map { $0 + "." } ?? ""
        var sql = ""
        if filter.from != nil {
            if let hour { sql += " AND \(column)\(hour) >= ?2 / 3600000" }
            sql += " AND \(column)\(time) >= ?2"
        }
        if filter.to != nil {
            // The last hour with a millisecond before `to` (integer division rounds toward zero,
            // and no timestamp is negative).
            if let hour { sql += " AND \(column)\(hour) <= (?3 - 1) / 3600000" }
            sql += " AND \(column)\(time) < ?3"
        }
        if filter.appVersion != nil {
            sql += " AND \(column)context_id IN (SELECT id FROM contexts WHERE app = ?1 AND app_version = ?4)"
        }
        return sql
    }

    /// Events and spans by their device timestamp (a span's is its start), through its hour.
    func events(_ alias: String? = nil) -> String { conditions(time: "timestamp_ms", hour: Self.eventHour, alias: alias) }

    /// Binds the app and the parts of the filter that are set, for a statement whose SQL holds
    /// ``conditions(time:alias:)`` (which names each of them): SQLite refuses a parameter number
    /// past the last one a statement names.
    func bind(_ statement: SQLiteStatement, app: String) throws(SQLiteError) {
        try statement.bind(app, at: 1)
        if let from = filter.from { try statement.bind(from, at: 2) }
        if let to = filter.to { try statement.bind(to, at: 3) }
        if let version = filter.appVersion { try statement.bind(version, at: 4) }
    }
}
