/// Adds the same parameters to every matching event: an experiment id, a user tier, a build
/// flavour.
///
/// ```swift
/// configuration.filters = [
///     CommonParametersFilter(parameters: ["experiment": "checkout-b", "tier": "gold"]),
/// ]
/// ```
///
/// An event's own value for a key wins, unless `overwrite` is `true`. Span ends are not
/// changed (see ``EventFilter``).
public struct CommonParametersFilter: EventFilter {
    public let name: String
    public let pattern: String
    /// What is merged into each matching event's parameters.
    public let parameters: LogParameters
    /// Whether these values replace the event's own values for the same keys.
    public let overwrite: Bool

    /// - Parameters:
    ///   - name: Names the filter in statuses. Default: `common-parameters`.
    ///   - pattern: The events it applies to. Default: `**`, every event.
    ///   - parameters: Merged into each matching event's parameters.
    ///   - overwrite: Whether these values replace the event's own. Default: `false`.
    public init(name: String = "common-parameters", pattern: String = "**", parameters: LogParameters,
                overwrite: Bool = false) {
        self.name = name
        self.pattern = pattern
        self.parameters = parameters
        self.overwrite = overwrite
    }

    public func apply(_ event: FilteredEvent) -> [FilteredEvent] {
        var event = event
        if event.parameters.isEmpty {
            event.parameters = parameters
        } else {
            event.parameters.merge(parameters) { own, common in overwrite ? common : own }
        }
        return [event]
    }
}
