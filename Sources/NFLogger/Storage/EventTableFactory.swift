import NFLogSupport
/// Hands out the table for an event's kind, with its statements prepared once per connection.
final class EventTableFactory {
    let points: PointEventTable
    let spans: SpanEventTable

    init(connection: SQLiteConnection) throws(SQLiteError) {
        points = try PointEventTable(connection: connection)
        spans = try SpanEventTable(connection: connection)
    }

    func table(for kind: EventKind) -> any EventTable {
        switch kind {
        case .point: points
        case .span: spans
        }
    }
}
