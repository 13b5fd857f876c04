import NFLogSupport

/// Writes stored aggregates as JSON lines (docs/PROTOCOL.md, "Export format"): every field, the
/// dimensions as stored (keys sorted), the measures verbatim as sent, the context. What
/// `nflog-collector export --aggregates` prints and `GET /v1/export?kind=aggregates` pages.
enum AggregateExporter {
    /// The columns ``writeLine(_:into:)`` reads, in its order; the row id last.
    private static let select = """
        SELECT a.app, a.uuid, a.batch_id, a.session, a.name, a.type, a.start_ms, a.end_ms, a.window_s, a.count,
               a.dimensions, a.overflow, a.measures, a.received_ms,
               c.sdk_name, c.sdk_version, c.app_id, c.app_version, c.os_name, c.os_version, c.locale, a.id
        FROM aggregates a JOIN contexts c ON c.id = a.context_id
        """

    /// Every stored aggregate (of one app, or all), oldest first, one line per call of `line`.
    static func export(_ connection: SQLiteConnection, app: String?, line: ([UInt8]) -> Void) throws(SQLiteError) {
        let statement = try connection.prepare(select + " WHERE ?1 IS NULL OR a.app = ?1 ORDER BY a.id")
        if let app { try statement.bind(app, at: 1) } else { try statement.bindNull(at: 1) }
        defer { statement.reset() }
        while try statement.step() {
            var out = JSONWriter(capacity: 1_024)
            writeLine(statement, into: &out)
            line(out.bytes)
        }
    }

    /// Up to `limit` of the app's aggregates with a row id above `after`, oldest first.
    static func page(_ connection: SQLiteConnection, app: String, after: Int64, limit: Int) throws(SQLiteError) -> ExportPage {
        // SQLite reads a negative LIMIT as no limit at all.
        guard limit > 0 else { return ExportPage(lines: [], count: 0, last: nil) }
        // `+a.app`: walk by row id from `after`, as the events' pages do (EventExporter).
        let statement = try connection.prepare(select + " WHERE +a.app = ?1 AND a.id > ?2 ORDER BY a.id LIMIT ?3")
        try statement.bind(app, at: 1)
        try statement.bind(after, at: 2)
        try statement.bind(Int64(limit), at: 3)
        defer { statement.reset() }
        var out = JSONWriter(capacity: 1_024 * min(limit, 1_000))
        var count = 0
        var last: Int64?
        while try statement.step() {
            writeLine(statement, into: &out)
            count += 1
            last = statement.int64(at: 21)
        }
        return ExportPage(lines: out.bytes, count: count, last: last)
    }

    /// Appends the current row of a statement that selects ``select``'s columns, as one line.
    private static func writeLine(_ statement: SQLiteStatement, into out: inout JSONWriter) {
        out.writeLiteral("{"); out.writeKey("app"); out.writeString(statement.text(at: 0) ?? "")
        out.writeLiteral(","); out.writeKey("uuid"); out.writeUUID(statement.uuid(at: 1))
        out.writeLiteral(","); out.writeKey("batch_id"); out.writeUUID(statement.uuid(at: 2))
        out.writeLiteral(","); out.writeKey("session"); out.writeUUID(statement.uuid(at: 3))
        out.writeLiteral(","); out.writeKey("name"); out.writeString(statement.text(at: 4) ?? "")
        out.writeLiteral(","); out.writeKey("type"); out.writeString(statement.text(at: 5) ?? "")
        out.writeLiteral(","); out.writeKey("start"); out.writeInteger(statement.int64(at: 6))
        out.writeLiteral(","); out.writeKey("end"); out.writeInteger(statement.int64(at: 7))
        out.writeLiteral(","); out.writeKey("window_s"); out.writeInteger(statement.int64(at: 8))
        out.writeLiteral(","); out.writeKey("count"); out.writeInteger(statement.int64(at: 9))
        out.writeLiteral(","); out.writeKey("dimensions"); out.writeRaw(statement.blob(at: 10) ?? Array("{}".utf8))
        if statement.int64(at: 11) != 0 { out.writeLiteral(","); out.writeKey("overflow"); out.writeLiteral("true") }
        out.writeLiteral(","); out.writeKey("measures"); out.writeRaw(statement.blob(at: 12) ?? Array("{}".utf8))
        out.writeLiteral(","); out.writeKey("received_at"); out.writeInteger(statement.int64(at: 13))
        out.writeLiteral(","); out.writeKey("context"); out.writeLiteral("{")
        out.writeKey("sdk_name"); out.writeString(statement.text(at: 14) ?? "")
        out.writeLiteral(","); out.writeKey("sdk_version"); out.writeString(statement.text(at: 15) ?? "")
        out.writeLiteral(","); out.writeKey("app_id"); out.writeString(statement.text(at: 16) ?? "")
        out.writeLiteral(","); out.writeKey("app_version"); out.writeString(statement.text(at: 17) ?? "")
        out.writeLiteral(","); out.writeKey("os_name"); out.writeString(statement.text(at: 18) ?? "")
        out.writeLiteral(","); out.writeKey("os_version"); out.writeString(statement.text(at: 19) ?? "")
        out.writeLiteral(","); out.writeKey("locale"); out.writeString(statement.text(at: 20) ?? "")
        out.writeLiteral("}}\n")
    }
}
