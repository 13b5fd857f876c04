/// What a report says of one aggregated name: how many aggregates and events, and each measure
/// merged over them.
public struct AggregateSummary: Sendable, Equatable, Codable {
    /// Stored aggregates of this name (within the report's filter).
    public let records: Int
    /// The events they fold: their `count`s summed (at most `Int64.max`).
    public let count: Int
    /// By parameter name (`duration_ms` for a span's duration); at most 256, the first stored.
    public let measures: [String: MeasureStatistics]

    public init(records: Int, count: Int, measures: [String: MeasureStatistics]) {
        self.records = records
        self.count = count
        self.measures = measures
    }
}
