/// Logging is off: every call completes with ``LogStatus/disabled`` and touches nothing,
/// not even validation, so a disabled SDK costs the app as little as possible.
struct DisabledBehaviour: LogBehaviour {
    var mode: LogMode { .disabled }
    func admit(name: String) -> Admission { .disable }
    func admitSpanEnd() -> Admission { .disable }
}
