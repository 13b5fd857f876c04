/// Logging is on: every valid event is recorded.
struct ActiveBehaviour: LogBehaviour {
    var mode: LogMode { .active }

    func admit(name: String) throws(NFLoggerError) -> Admission {
        try EventName.validateName(name)
        return .record
    }

    func admitSpanEnd() -> Admission { .record }
}
