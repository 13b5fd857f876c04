@_spi(NFLogShared) import NFLogSupport

/// Only events the allow list selects are recorded (and not denied, sampled out or inside a
/// privacy zone); the rest complete with ``LogStatus/filtered(_:)``. The end of a span follows its
/// start: once a start was recorded, its end is recorded too, so a span is never left
/// half-written by the rules.
///
/// With both the app and the policy in specific mode, a name must be selected by both allow lists.
struct SpecificBehaviour: LogBehaviour {
    let allowLists: [[TagPattern]]
    let rules: EventRules
    let mode: LogMode

    init(allowLists: [[TagPattern]], rules: EventRules, mode: LogMode) {
        self.allowLists = allowLists
        self.rules = rules
        self.mode = mode
    }

    /// Specific mode with one set of rules (allow, deny, sampling).
    init(rules: EventRules) {
        self.init(allowLists: [rules.allow], rules: EventRules(allow: [TagPattern](), deny: rules.deny, sampling: rules.sampling),
                  mode: .specific(rules))
    }

    func admit(name: String, context: AdmissionContext) throws(NFLoggerError) -> Admission {
        try AdmissionChecks.admit(name: name, context: context, rules: rules, allowLists: allowLists)
    }

    /// A span's end follows its start, except inside a privacy zone, where nothing is recorded.
    func admitSpanEnd(context: AdmissionContext) -> Admission {
        context.insidePrivacyZone ? .filter(.insidePrivacyZone) : .record
    }
}
