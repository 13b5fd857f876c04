@_spi(NFLogShared) import NFLogSupport

/// The walk both exports share (events, aggregates): every row of one app (or all) as JSON
/// lines, or a page of them after a row id. Each export gives its query and its line.
struct RowExport: Sendable {
    /// `SELECT …` of the line's columns and the context's seven columns (where the line reads
    /// them), the row id last; `FROM` the table under `alias`, joined to its context.
    let select: String
    let alias: String
    /// The column of the row id (the last one).
    let rowIDColumn: Int32
    /// Bytes to reserve per line.
    let lineCapacity: Int
    /// Appends the current row as one line.
    let writeLine: @Sendable (SQLiteStatement, inout JSONWriter) -> Void

    /// Every stored row (of one app, or all), oldest first, one line per call of `line`.
    func export(_ connection: SQLiteConnection, app: String?, line: ([UInt8]) -> Void) throws(SQLiteError) {
        let statement = try connection.prepare(select + " WHERE ?1 IS NULL OR \(alias).app = ?1 ORDER BY \(alias).id")
        if let app { try statement.bind(app, at: 1) } else { try statement.bindNull(at: 1) }
        defer { statement.reset() }
        while try statement.step() {
            var out = JSONWriter(capacity: lineCapacity)
            writeLine(statement, &out)
            line(out.bytes)
        }
    }

    /// Up to `limit` of the app's rows with a row id above `after`, oldest first.
    func page(_ connection: SQLiteConnection, app: String, after: Int64, limit: Int) throws(SQLiteError) -> ExportPage {
        // SQLite reads a negative LIMIT as no limit at all.
        guard limit > 0 else { return ExportPage(lines: [], count: 0, last: nil) }
        // `+app`: the walk is by row id, from `after`, filtered by app, and stops after `limit`
        // matches; through the (app, uuid) index instead SQLite would sort all of the app's rows
        // for every page.
        let statement = try connection.prepare(select + " WHERE +\(alias).app = ?1 AND \(alias).id > ?2 ORDER BY \(alias).id LIMIT ?3")
        try statement.bind(app, at: 1)
        try statement.bind(after, at: 2)
        try statement.bind(Int64(limit), at: 3)
        defer { statement.reset() }
        var out = JSONWriter(capacity: lineCapacity * min(limit, 1_000))
        var count = 0
        var last: Int64?
        while try statement.step() {
            writeLine(statement, &out)
            count += 1
            last = statement.int64(at: rowIDColumn)
        }
        return ExportPage(lines: out.bytes, count: count, last: last)
    }

    /// The context's columns, as a line's last member `"context": {…}`, closing the line.
    static func writeContext<Row: ExportRow>(_ statement: Row, from column: Int32, into out: inout JSONWriter) {
        out.writeLiteral(","); out.writeKey("context"); out.writeLiteral("{")
        out.writeKey("sdk_name"); out.writeString(statement.text(at: column) ?? "")
        let keys: [StaticString] = ["sdk_version", "app_id", "app_version", "os_name", "os_version", "locale"]
        for (offset, key) in keys.enumerated() {
            out.writeLiteral(","); out.writeKey(key); out.writeString(statement.text(at: column + 1 + Int32(offset)) ?? "")
        }
        out.writeLiteral("}}\n")
    }

    /// The context columns every export selects, in ``writeContext(_:from:into:)``'s order.
    static let contextColumns = "c.sdk_name, c.sdk_version, c.app_id, c.app_version, c.os_name, c.os_version, c.locale"
}
