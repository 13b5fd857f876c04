// Numeric measurements (frame times, payload sizes, queue depths): values meant to be summarised
// rather than read one by one.
extension NFLogger {
    /// The event type of ``record(name:value:dimensions:completion:)``'s events.
    static let measurementType = "measurement"

    /// Records one numeric measurement: a point event of type `measurement` whose parameters are
    /// `value` and the dimensions (which say what the value is about, such as the screen).
    ///
    /// It is an event like any other (names, modes, policies, consent apply); when a policy's
    /// `rules.aggregate` matches its name, it is folded into a per-window summary (count, sum,
    /// min, max and percentiles of `value`) instead of being stored alone.
    ///
    /// - Parameters:
    ///   - name: The measurement's name, with the rules of event names: `perf.frame`.
    ///   - value: Must be finite; otherwise the call completes ``NFLoggerError/invalidParameter(key:reason:)``.
    ///   - dimensions: At most a few, short: `["screen": "home"]`. A dimension named `value` is refused.
    ///   - completion: Called exactly once, asynchronously, with the outcome, as for
    ///     ``logEvent(name:type:parameters:in:completion:)``.
    public func record(name: String, value: Double, dimensions: [String: String] = [:], completion: LogCompletion? = nil) {
        if dimensions["value"] != nil {
            return completions.finish(.failed(.invalidParameter(key: "value", reason: "is the measurement itself; name the dimension otherwise")), completion)
        }
        // Distinct keys: the dictionary's, and `value`, refused among them above.
        var members: [LogParameters.Member] = dimensions.map { ($0.key, $0.value) }
        members.append(("value", value))
        let parameters = LogParameters(distinct: members)
        logEvent(name: name, type: Self.measurementType, parameters: parameters, completion: completion)
    }

    /// Records one numeric measurement and waits until it is committed (or refused).
    @discardableResult
    nonisolated(nonsending)
    public func record(name: String, value: Double, dimensions: [String: String] = [:]) async -> LogStatus {
        await withCheckedContinuation { continuation in
            record(name: name, value: value, dimensions: dimensions) { continuation.resume(returning: $0) }
        }
    }
}
