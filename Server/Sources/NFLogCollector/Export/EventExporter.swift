@_spi(NFLogShared) import NFLogSupport

/// Writes stored events as JSON lines: every field, the uuid, the context and session, and the
/// parameters verbatim; `transaction`, `parent_span`, `source` and `origin` only when the event
/// carried them (`source` only for web events: an event without it is native). The format
/// `nflog-collector export` prints, and the lines of an ``ExportPage``.
enum EventExporter {
    static let format = RowExport(
        select: """
            SELECT e.app, e.uuid, e.batch_id, e.session, e.name, e.kind, e.type, e.timestamp_ms, e.end_ms, e.duration_ms,
                   e.parameters, e.end_parameters, e.received_ms, e.abandoned, \(RowExport.contextColumns),
                   e.transaction_id, e.parent_span, e.source, e.origin, e.id
            FROM events e JOIN contexts c ON c.id = e.context_id
            """,
        alias: "e", rowIDColumn: 25, lineCapacity: 512, writeLine: { writeLine($0, into: &$1) })

    /// Appends the current row as one line (from either store: ExportRow).
    static func writeLine<Row: ExportRow>(_ statement: Row, into out: inout JSONWriter) {
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
        if !statement.isNull(at: 21) { out.writeLiteral(","); out.writeKey("transaction"); out.writeUUID(statement.uuid(at: 21)) }
        if !statement.isNull(at: 22), let parent = SpanID(rawValue: UInt64(bitPattern: statement.int64(at: 22))) {
            out.writeLiteral(","); out.writeKey("parent_span"); out.writeString(parent.description)
        }
        if let source = statement.text(at: 23) { out.writeLiteral(","); out.writeKey("source"); out.writeString(source) }
        if let origin = statement.text(at: 24) { out.writeLiteral(","); out.writeKey("origin"); out.writeString(origin) }
        RowExport.writeContext(statement, from: 14, into: &out)
    }
}
