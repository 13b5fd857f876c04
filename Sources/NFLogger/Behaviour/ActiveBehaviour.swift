/// Logging is on: every valid event is recorded, except what the policy denies, samples out, or
/// a privacy zone hides.
struct ActiveBehaviour: LogBehaviour {
    var rules = EventRules.none

    var mode: LogMode { .active }

    func admit(name: String, context: AdmissionContext) throws(NFLoggerError) -> Admission {
        if rules.deny.isEmpty && rules.sampling.isEmpty && !context.insidePrivacyZone {
            // The common case, kept to one check on the hot path.
            try EventName.validateName(name)
            return .record
        }
        return try AdmissionChecks.admit(name: name, context: context, rules: rules, allowLists: [])
    }

    /// A span's end follows its start, except inside a privacy zone, where nothing is recorded.
    func admitSpanEnd(context: AdmissionContext) -> Admission {
        context.insidePrivacyZone ? .filter(.insidePrivacyZone) : .record
    }
}
