/// Logging is off: every call completes with ``LogStatus/disabled`` and touches nothing,
/// not even validation, so a disabled SDK costs the app as little as possible.
///
/// When the policy turned the SDK off because it is too old, calls complete with
/// ``LogStatus/filtered(_:)`` and ``FilterReason/sdkBelowMinimumVersion`` instead, so the app can
/// tell the two apart.
struct DisabledBehaviour: LogBehaviour {
    var reason: FilterReason?

    var mode: LogMode { .disabled }

    var refusesEveryCall: Bool { reason == nil }

    func admit(name: String, context: AdmissionContext) -> Admission {
        reason.map { .filter($0) } ?? .disable
    }

    func admitSpanEnd(context: AdmissionContext) -> Admission {
        reason.map { .filter($0) } ?? .disable
    }
}
