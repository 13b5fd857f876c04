/// What a behaviour decides about a logging call.
enum Admission: Equatable, Sendable {
    /// Validate the rest and store it.
    case record
    /// Do not store it; complete with ``LogStatus/filtered(_:)``.
    case filter(FilterReason)
    /// Do not even look at it; complete with ``LogStatus/disabled``.
    case disable
}

/// What a call's decision may depend on besides its name, read once per call with the behaviour.
struct AdmissionContext: Sendable {
    /// The app's last reported location lies inside one of the policy's privacy zones.
    var insidePrivacyZone = false
    /// The install id's hash, for deterministic sampling.
    var samplingSeed: UInt64 = 0
}

/// The strategy behind the ``NFLogger`` facade: one of ``DisabledBehaviour``,
/// ``ActiveBehaviour``, ``SpecificBehaviour``. The facade holds exactly one and swaps it
/// atomically when the mode or the policy changes; each call reads it once, so a call is decided
/// wholly by the old behaviour or wholly by the new one.
protocol LogBehaviour: Sendable {
    var mode: LogMode { get }
    /// Decides about a new event (a point event or the start of a span), validating its name if
    /// the decision depends on it.
    func admit(name: String, context: AdmissionContext) throws(NFLoggerError) -> Admission
    /// Decides about the end of a span whose start was recorded.
    func admitSpanEnd() -> Admission
}

/// The checks active and specific mode share, in order: privacy zone, a valid name, deny list,
/// (specific mode's allow list,) sampling.
enum AdmissionChecks {
    static func admit(name: String, context: AdmissionContext, rules: EventRules, requireAllow: Bool) throws(NFLoggerError) -> Admission {
        // Inside a privacy zone the event is not even looked at.
        if context.insidePrivacyZone { return .filter(.insidePrivacyZone) }
        try EventName.validateName(name)
        if !rules.deny.isEmpty && rules.denies(name) { return .filter(.denied) }
        if requireAllow && !rules.selects(name) { return .filter(.notSelected) }
        if !rules.sampling.isEmpty {
            let rate = rules.samplingRate(for: name)
            if !Sampling.isSampledIn(seed: context.samplingSeed, name: name, rate: rate) { return .filter(.sampledOut) }
        }
        return .record
    }
}

/// The behaviour for a mode, with the policy's deny and sampling rules (which apply in active and
/// specific mode alike) and whether the SDK is below the policy's minimum version.
func makeBehaviour(for mode: LogMode, policyRules: EventRules = .none, sdkBelowMinimum: Bool = false) -> any LogBehaviour {
    if sdkBelowMinimum { return DisabledBehaviour(reason: .sdkBelowMinimumVersion) }
    switch mode {
    case .disabled: return DisabledBehaviour()
    case .active: return ActiveBehaviour(rules: EventRules.none.adding(denyAndSamplingOf: policyRules))
    case .specific(let rules): return SpecificBehaviour(rules: rules.adding(denyAndSamplingOf: policyRules))
    }
}
