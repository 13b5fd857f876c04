/// Only events the rules select are recorded; the rest complete with
/// ``LogStatus/filtered(_:)``. The end of a span follows its start: once a start was recorded,
/// its end is recorded too, so a span is never left half-written by the rules.
struct SpecificBehaviour: LogBehaviour {
    let rules: EventRules

    var mode: LogMode { .specific(rules) }

    func admit(name: String) throws(NFLoggerError) -> Admission {
        try EventName.validateName(name)
        return rules.selects(name) ? .record : .filter(.notSelected)
    }

    func admitSpanEnd() -> Admission { .record }
}
