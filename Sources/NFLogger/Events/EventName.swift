@_spi(NFLogShared) import NFLogSupport

/// The naming rules (``EventNameRules``), applied on the caller's thread with the SDK's errors.
enum EventName {
    static func validateName(_ name: String) throws(NFLoggerError) {
        if let reason = EventNameRules.problem(in: name, maxBytes: EventNameRules.maxNameBytes) {
            throw .invalidName(name, reason: reason)
        }
    }

    static func validateType(_ type: String) throws(NFLoggerError) {
        if let reason = EventNameRules.problem(in: type, maxBytes: EventNameRules.maxTypeBytes) {
            throw .invalidType(type, reason: reason)
        }
    }
}
