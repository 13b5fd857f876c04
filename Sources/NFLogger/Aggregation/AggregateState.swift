@_spi(NFLogShared) import NFLogSupport

/// What an aggregate has folded so far, stored (as JSON, sealed when encrypted) in its row after
/// every write that touched it, and sent as it is: its keys are the wire record's `count`,
/// `dimensions`, `overflow` and `measures` (docs/PROTOCOL.md, "Aggregates").
struct AggregateState: Codable, Equatable, Sendable {
    var count: UInt64 = 0
    var dimensions: [String: String]?
    var overflow: Bool?
    var measures: [String: MeasureSummary] = [:]

    /// The protocol's bound on measures per aggregate; parameters past it are not kept.
    static let maxMeasures = 256

    init(dimensions: [String: String], overflow: Bool) {
        self.dimensions = overflow || dimensions.isEmpty ? nil : dimensions
        self.overflow = overflow ? true : nil
    }

    mutating func add(_ fold: Fold) {
        count += 1
        for (name, value) in fold.measures {
            if measures[name] == nil && measures.count >= Self.maxMeasures { continue }
            measures[name, default: MeasureSummary()].add(value)
        }
    }
}
