@_spi(NFLogShared) import NFLogSupport

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
    /// Consent is pending: what is admitted is held on the device.
    var consentPending = false
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
    func admitSpanEnd(context: AdmissionContext) -> Admission
    /// Whether every call completes with ``LogStatus/disabled`` whatever its name or context.
    var refusesEveryCall: Bool { get }
}

extension LogBehaviour {
    var refusesEveryCall: Bool { false }
}

/// The checks active and specific mode share, in order: privacy zone, a valid name, deny list,
/// (specific mode's allow list,) sampling.
enum AdmissionChecks {
    static func admit(name: String, context: AdmissionContext, rules: EventRules, allowLists: [[TagPattern]]) throws(NFLoggerError) -> Admission {
        // Inside a privacy zone the event is not even looked at.
        if context.insidePrivacyZone { return .filter(.insidePrivacyZone) }
        try EventName.validateName(name)
        if !rules.deny.isEmpty && rules.denies(name) { return .filter(.denied) }
        // Each allow list in force (the app's, the policy's) must select the name.
        for allow in allowLists where !allow.contains(where: { $0.matches(name) }) { return .filter(.notSelected) }
        if !rules.sampling.isEmpty {
            let rate = rules.samplingRate(for: name)
            if !Sampling.isSampledIn(seed: context.samplingSeed, name: name, rate: rate) { return .filter(.sampledOut) }
        }
        return .record
    }
}

/// The behaviour for a mode, with the policy's deny and sampling rules (which apply in active and
/// specific mode alike, ahead of the app's) and whether the SDK is below the policy's minimum version.
func makeBehaviour(for mode: LogMode, policyRules: EventRules = .none, sdkBelowMinimum: Bool = false) -> any LogBehaviour {
    makeBehaviour(base: mode, app: nil, policyRules: policyRules, sdkBelowMinimum: sdkBelowMinimum)
}

/// The behaviour for a baseline mode and the app's choice combined: the more restrictive wins.
func makeBehaviour(base: LogMode, app: LogMode?, policyRules: EventRules, sdkBelowMinimum: Bool) -> any LogBehaviour {
    if sdkBelowMinimum { return DisabledBehaviour(reason: .sdkBelowMinimumVersion) }
    var allowLists: [[TagPattern]] = []
    var appRules = EventRules.none
    for mode in [base, app].compactMap({ $0 }) {
        switch mode {
        case .disabled: return DisabledBehaviour()
        case .active: break
        case .specific(let rules):
            allowLists.append(rules.allow)
            appRules = EventRules(allow: [TagPattern](), deny: appRules.deny + rules.deny, sampling: appRules.sampling + rules.sampling)
        }
    }
    // The operator's deny and sampling rules come first: a policy's rate is never overridden.
    let rules = EventRules(allow: [TagPattern](), deny: policyRules.deny + appRules.deny,
                           sampling: policyRules.sampling + appRules.sampling)
    if allowLists.isEmpty { return ActiveBehaviour(rules: rules) }
    return SpecificBehaviour(allowLists: allowLists, rules: rules, mode: app ?? base)
}
