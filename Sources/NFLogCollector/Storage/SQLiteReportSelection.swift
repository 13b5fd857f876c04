import NFLogSupport

/// A ``ReportFilter``'s time range and app version in SQLite's SQL: the conditions that select
/// the rows a report counts, and their parameters.
///
/// The app is `?1` in every report query; the filter's parts are `?2` (from), `?3` (to) and `?4`
/// (app version), so a query's own parameters start at `?5`. Each condition is written only when
/// its part is set, so an unfiltered report's queries carry none and read through the indexes
/// they read before filters existed; and ``bind(_:app:)`` binds only those parts, whose numbers
/// the query then names.
struct SQLiteReportSelection {
    let filter: ReportFilter

    /// Whether any condition is written: events, spans and sessions are filtered.
    var selectsEvents: Bool { filter.selectsEvents }

    /// ` AND …` (or nothing): the rows whose `time` column is within the range and whose context
    /// has the app version; `alias` qualifies the columns.
    func conditions(time: String, alias: String? = nil) -> String {
        let column = alias.map { $0 + "." } ?? ""
        var sql = ""
        if filter.from != nil { sql += " AND \(column)\(time) >= ?2" }
        if filter.to != nil { sql += " AND \(column)\(time) < ?3" }
        if filter.appVersion != nil {
            sql += " AND \(column)context_id IN (SELECT id FROM contexts WHERE app = ?1 AND app_version = ?4)"
        }
        return sql
    }

    /// Events and spans by their device timestamp (a span's is its start).
    func events(_ alias: String? = nil) -> String { conditions(time: "timestamp_ms", alias: alias) }

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
