/// What a behaviour decides about a logging call.
enum Admission: Equatable, Sendable {
    /// Validate the rest and store it.
    case record
    /// Do not store it; complete with ``LogStatus/filtered(_:)``.
    case filter(FilterReason)
    /// Do not even look at it; complete with ``LogStatus/disabled``.
    case disable
}

/// The strategy behind the ``NFLogger`` facade: one of ``DisabledBehaviour``,
/// ``ActiveBehaviour``, ``SpecificBehaviour``. The facade holds exactly one and swaps it
/// atomically when the mode changes; each call reads it once, so a call is decided wholly by the
/// old behaviour or wholly by the new one.
protocol LogBehaviour: Sendable {
    var mode: LogMode { get }
    /// Decides about a new event (a point event or the start of a span), validating its name if
    /// the decision depends on it.
    func admit(name: String) throws(NFLoggerError) -> Admission
    /// Decides about the end of a span whose start was recorded.
    func admitSpanEnd() -> Admission
}

/// The behaviour for a mode.
func makeBehaviour(for mode: LogMode) -> any LogBehaviour {
    switch mode {
    case .disabled: DisabledBehaviour()
    case .active: ActiveBehaviour()
    case .specific(let rules): SpecificBehaviour(rules: rules)
    }
}
