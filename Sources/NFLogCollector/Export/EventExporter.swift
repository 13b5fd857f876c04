import NFLogSupport

/// Writes stored events as JSON lines: every field, the uuid, the context and session, and the
/// parameters verbatim. The format `nflog-collector export` prints, and the lines of an
/// ``ExportPage``: both go through ``writeLine(_:into:)``.
enum EventExporter {
    /// The columns ``writeLine(_:into:)`` reads, in its order; the row id last.
    private static let select = """
        SELECT e.app, e.uuid, e.batch_id, e.session, e.name, e.kind, e.type, e.timestamp_ms, e.end_ms, e.duration_ms,
               e.parameters, e.end_parameters, e.received_ms, e.abandoned,
               c.sdk_name, c.sdk_version, c.app_id, c.app_version, c.os_name, c.os_version, c.locale, e.id
        FROM events e JOIN contexts c ON c.id = e.context_id
        """

    /// Every stored event (of one app, or all), oldest first, one line per call of `line`.
    static func export(_ connection: SQLiteConnection, app: String?, line: ([UInt8]) -> Void) throws(SQLiteError) {
        let statement = try connection.prepare(select + " WHERE ?1 IS NULL OR e.app = ?1 ORDER BY e.id")
        if let app { try statement.bind(app, at: 1) } else { try statement.bindNull(at: 1) }
        defer { statement.reset() }
        while try statement.step() {
            var out = JSONWriter(capacity: 512)
            writeLine(statement, into: &out)
            line(out.bytes)
        }
    }

    /// Up to `limit` of the app's events with a row id above `after`, oldest first.
    static func page(_ connection: SQLiteConnection, app: String, after: Int64, limit: Int) throws(SQLiteError) -> ExportPage {
        // SQLite reads a negative LIMIT as no limit at all.
        guard limit > 0 else { return ExportPage(lines: [], count: 0, last: nil) }
        // `+e.app`: the walk is by row id, from `after`, filtered by app, and stops after `limit`
        // matches; through the (app, uuid) index instead SQLite would sort all of the app's rows
        // for every page.
        let statement = try connection.prepare(select + " WHERE +e.app = ?1 AND e.id > ?2 ORDER BY e.id LIMIT ?3")
        try statement.bind(app, at: 1)
        try statement.bind(after, at: 2)
        try statement.bind(Int64(limit), at: 3)
        defer { statement.reset() }
        var out = JSONWriter(capacity: 512 * min(limit, 1_000))
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
        out.writeLiteral(","); out.writeKey("kind"); out.writeString(statement.text(at: 5) ?? "")
        out.writeLiteral(","); out.writeKey("type"); out.writeString(statement.text(at: 6) ?? "")
        out.writeLiteral(","); out.writeKey("timestamp"); out.writeInteger(statement.int64(at: 7))
        if !statement.isNull(at: 8) { out.writeLiteral(","); out.writeKey("end"); out.writeInteger(statement.int64(at: 8)) }
        if !statement.isNull(at: 9) { out.writeLiteral(","); out.writeKey("duration_ms"); out.writeDouble(statement.double(at: 9)) }
        if let parameters = statement.blob(at: 10) { out.writeLiteral(","); out.writeKey("parameters"); out.writeRaw(parameters) }
        if let end = statement.blob(at: 11) { out.writeLiteral(","); out.writeKey("end_parameters"); out.writeRaw(end) }
        out.writeLiteral(","); out.writeKey("received_at"); out.writeInteger(statement.int64(at: 12))
        if statement.int64(at: 13) != 0 { out.writeLiteral(","); out.writeKey("abandoned"); out.writeLiteral("true") }
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
