public import Foundation
@_spi(NFLogShared) import NFLogSupport

/// One aggregate as the SDK uploaded it: the events of one name, window and series, folded
/// because a policy's `rules.aggregate` matched them (docs/PROTOCOL.md, "Aggregates").
public struct RecordedAggregate: Sendable, Hashable, Identifiable {
    /// The aggregate's id: what each folded event's `LogStatus.recorded` named.
    public let id: UUID
    /// The session it was opened in.
    public let sessionID: UUID
    public let name: String
    public let type: String
    /// The time range it covers.
    public let start: Date
    public let end: Date
    /// The rule's window.
    public let windowSeconds: Int
    /// The events folded in.
    public let count: Int
    /// The values of the rule's dimension parameters (empty for the overflow series).
    public let dimensions: [String: String]
    /// Folds the events of every series past the rule's `max_series`.
    public let isOverflow: Bool
    /// Per numeric parameter (and `duration_ms` for spans): what its values add up to.
    public let measures: [String: RecordedMeasure]
}

/// What an aggregate keeps of one numeric parameter: count, sum, extremes and a quantile sketch
/// (1% relative accuracy).
public struct RecordedMeasure: Sendable, Hashable {
    private let summary: MeasureSummary

    init(_ summary: MeasureSummary) { self.summary = summary }

    /// The values folded in.
    public var count: Int { Int(clamping: summary.count) }
    public var sum: Double { summary.sum }
    /// `nil` when ``count`` is 0.
    public var min: Double? { summary.count == 0 ? nil : summary.min }
    public var max: Double? { summary.count == 0 ? nil : summary.max }
    public var mean: Double? { summary.mean }

    /// The `q` quantile (0…1) from the sketch, within 1% of the exact value; `nil` when empty.
    public func quantile(_ q: Double) -> Double? { summary.quantile(q) }

    public static func == (lhs: RecordedMeasure, rhs: RecordedMeasure) -> Bool { lhs.summary == rhs.summary }
    public func hash(into hasher: inout Hasher) {
        hasher.combine(summary.count)
        hasher.combine(summary.sum)
    }
}

extension RecordedAggregate {
    init(wire: WireObject) throws(WireFormatError) {
        id = try wire.uuid("uuid")
        sessionID = try wire.uuid("session")
        name = try wire.string("name")
        type = try wire.string("type")
        start = try wire.date("start")
        end = try wire.date("end")
        windowSeconds = Int(try wire.integer("window_s"))
        count = Int(try wire.integer("count"))
        var dimensions: [String: String] = [:]
        if let object = try wire.optionalObject("dimensions") {
            for key in object.keys { dimensions[key] = try object.string(key) }
        }
        self.dimensions = dimensions
        isOverflow = try wire.optionalBool("overflow") ?? false
        let measuresObject = try wire.object("measures")
        var measures: [String: RecordedMeasure] = [:]
        for key in measuresObject.keys {
            let json = try measuresObject.json(key)
            do { measures[key] = RecordedMeasure(try JSONDecoder().decode(MeasureSummary.self, from: json)) } catch {
                throw WireFormatError(path: measuresObject.path(of: key), "is not a measure summary: \(error)")
            }
        }
        self.measures = measures
    }
}
