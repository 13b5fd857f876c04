/// Only events the allow list selects are recorded (and not denied, sampled out or inside a
/// privacy zone); the rest complete with ``LogStatus/filtered(_:)``. The end of a span follows its
/// start: once a start was recorded, its end is recorded too, so a span is never left
/// half-written by the rules.
struct SpecificBehaviour: LogBehaviour {
    let rules: EventRules

    var mode: LogMode { .specific(EventRules(allow: rules.allow)) }

    func admit(name: String, context: AdmissionContext) throws(NFLoggerError) -> Admission {
        try AdmissionChecks.admit(name: name, context: context, rules: rules, requireAllow: true)
    }

    func admitSpanEnd() -> Admission { .record }
}
