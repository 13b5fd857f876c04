import PostgresNIO

/// A ``ReportFilter`` in PostgreSQL's SQL, written into a query as it is built:
/// `"… WHERE app = \(app)\(selecting: filter, app: app)"`. Its values are bound parameters,
/// never text in the SQL; each condition is written only when its part is set, as on SQLite
/// (``SQLiteReportSelection``), so an unfiltered report runs the queries it ran before filters.
extension PostgresQuery.StringInterpolation {
    /// ` AND …` (or nothing): rows whose `time` column is within the filter's range and whose
    /// context has its app version; `alias` qualifies the columns. Events and spans are selected
    /// by `timestamp_ms` (a span's start), and the hour of it that events_hours indexes (in the
    /// index's own expression, which PostgreSQL needs to use it), sessions by `started_ms`,
    /// aggregates by `start_ms`.
    mutating func appendInterpolation(selecting filter: ReportFilter, app: String, time: String = "timestamp_ms",
                                      alias: String? = nil) {
        let column = alias.map { $0 + "." } ?? ""
        let hourly = time == "timestamp_ms"
        if let from = filter.from {
            if hourly {
                appendLiteral(" AND (\(column)timestamp_ms / 3600000) >= ")
                appendInterpolation(from / 3_600_000)
            }
            appendLiteral(" AND \(column)\(time) >= ")
            appendInterpolation(from)
        }
        if let to = filter.to {
            if hourly {
                // The last hour with a millisecond before `to` (wrapping: a `to` of Int64.min, which
                // no row can precede, bounds nothing here and the exact bound below keeps none).
                appendLiteral(" AND (\(column)timestamp_ms / 3600000) <= ")
                appendInterpolation((to &- 1) / 3_600_000)
            }
            appendLiteral(" AND \(column)\(time) < ")
            appendInterpolation(to)
        }
        if let version = filter.appVersion {
            appendLiteral(" AND \(column)context_id IN (SELECT id FROM contexts WHERE app = ")
            appendInterpolation(app)
            appendLiteral(" AND app_version = ")
            appendInterpolation(version)
            appendLiteral(")")
        }
    }

    /// ` AND …` (or nothing): aggregates whose dimensions hold the filter's key with its value, a
    /// JSON string only (as SQLite's `json_each` compares it).
    mutating func appendInterpolation(dimension: ReportFilter.Dimension?) {
        guard let dimension else { return }
        appendLiteral(" AND EXISTS (SELECT 1 FROM jsonb_each(dimensions::jsonb) AS d WHERE d.key = ")
        appendInterpolation(dimension.key)
        appendLiteral(" AND d.value = to_jsonb(")
        appendInterpolation(dimension.value)
        appendLiteral("::text))")
    }
}
