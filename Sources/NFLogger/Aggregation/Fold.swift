import Foundation
@_spi(NFLogShared) import NFLogSupport

/// One event on its way into an aggregate: what a rule keeps of it (its numeric parameters and
/// its dimension values), extracted on the RequestManager's queue in place of encoding its
/// parameters as JSON.
struct Fold: Sendable {
    let name: String
    let type: String
    let wallMilliseconds: Int64
    let rule: AggregateRule
    /// Numeric parameters that are not dimensions, by name.
    let measures: [(name: String, value: Double)]
    /// The rule's dimension parameters the event carried, as text.
    let dimensions: [String: String]
    /// Consent was pending when the call was admitted (see ``EventDraft/loggedWhilePending``).
    let loggedWhilePending: Bool

    /// What `rule` keeps of an event: numbers become measures, the rule's dimensions become text
    /// (numbers and booleans as their JSON), everything else (strings that are not dimensions,
    /// arrays, objects, nulls) is dropped. A non-finite number fails the event, as it would fail
    /// one stored alone.
    init(_ record: EventRecord, parameters: LogParameters, rule: AggregateRule) throws(NFLoggerError) {
        try self.init(name: record.draft.name, type: record.draft.type, wallMilliseconds: record.draft.wallMilliseconds,
                      loggedWhilePending: record.draft.loggedWhilePending, parameters: parameters, rule: rule)
    }

    /// The key under which a span's duration is folded, in milliseconds.
    static let durationKey = "duration_ms"

    init(name: String, type: String, wallMilliseconds: Int64, loggedWhilePending: Bool, parameters: LogParameters,
         rule: AggregateRule, durationMilliseconds: Double? = nil) throws(NFLoggerError) {
        self.name = name
        self.type = type
        self.wallMilliseconds = wallMilliseconds
        self.loggedWhilePending = loggedWhilePending
        self.rule = rule
        var measures: [(String, Double)] = []
        var dimensions: [String: String] = [:]
        if let durationMilliseconds { measures.append((Self.durationKey, durationMilliseconds)) }
        for (key, convertible) in parameters where !(durationMilliseconds != nil && key == Self.durationKey) {
            let value = convertible.logValue
            if case .double(let number) = value, !number.isFinite {
                throw .invalidParameter(key: key, reason: "\(number) is not a finite number; JSON has no NaN or infinity")
            }
            if rule.dimensions.contains(key) {
                if let text = Self.dimensionText(value) { dimensions[key] = text }
                continue
            }
            switch value {
            case .integer(let number): measures.append((key, Double(number)))
            case .double(let number): measures.append((key, number))
            default: break
            }
        }
        self.measures = measures
        self.dimensions = dimensions
    }

    /// Longer dimension values are cut: a dimension names a category, not a payload.
    static let maxDimensionBytes = 256

    private static func dimensionText(_ value: LogValue) -> String? {
        let text: String
        switch value {
        case .string(let string): text = string
        case .integer(let number): text = String(number)
        case .double(let number) where number.isFinite: text = "\(number)"
        case .bool(let flag): text = flag ? "true" : "false"
        default: return nil
        }
        guard text.utf8.count > maxDimensionBytes else { return text }
        // Cut on a character boundary.
        var cut = text.utf8.prefix(maxDimensionBytes)
        while String(cut) == nil { cut = cut.dropLast() }
        return String(cut) ?? ""
    }
}

extension [AggregateRule] {
    /// The first rule whose pattern matches `name`.
    func rule(for name: String) -> AggregateRule? {
        first { $0.pattern.matches(name) }
    }
}
