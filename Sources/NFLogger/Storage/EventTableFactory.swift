@_spi(NFLogShared) import NFLogSupport
/// Hands out the table for an event's kind, with its statements prepared once per connection.
final class EventTableFactory {
    let points: PointEventTable
    let spans: SpanEventTable
    let aggregates: AggregateEventTable

    /// - Parameter cipher: seals parameters before they are written, when encryption is configured.
    init(connection: SQLiteConnection, cipher: ParameterCipher?) throws(SQLiteError) {
        points = try PointEventTable(connection: connection, cipher: cipher)
        spans = try SpanEventTable(connection: connection, cipher: cipher)
        aggregates = try AggregateEventTable(connection: connection, cipher: cipher)
    }

    func table(for kind: RecordKind) -> any EventTable {
        switch kind {
        case .point: points
        case .span: spans
        case .aggregate: aggregates
        }
    }

    /// Every table whose rows are uploaded, in the order a batch lists them.
    var all: [any EventTable] { [points, spans, aggregates] }
}
