@_spi(NFLogShared) import NFLogSupport

/// Writes stored aggregates as JSON lines (docs/PROTOCOL.md, "Export format"): every field, the
/// dimensions as stored (keys sorted), the measures verbatim as sent, the context. What
/// `nflog-collector export --aggregates` prints and `GET /v1/export?kind=aggregates` pages.
enum AggregateExporter {
    static let format = RowExport(
        select: """
            SELECT a.app, a.uuid, a.batch_id, a.session, a.name, a.type, a.start_ms, a.end_ms, a.window_s, a.count,
                   a.dimensions, a.overflow, a.measures, a.received_ms, \(RowExport.contextColumns), a.id
            FROM aggregates a JOIN contexts c ON c.id = a.context_id
            """,
        alias: "a", rowIDColumn: 21, lineCapacity: 1_024, writeLine: { writeLine($0, into: &$1) })

    /// Appends the current row as one line (from either store: ExportRow).
    static func writeLine<Row: ExportRow>(_ statement: Row, into out: inout JSONWriter) {
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
        RowExport.writeContext(statement, from: 14, into: &out)
    }
}
