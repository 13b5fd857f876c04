@_spi(NFLogShared) import NFLogSupport

/// How the SDK treats new events. Chosen in ``Configuration/mode`` and changeable at runtime
/// through ``NFLogger/mode``.
public enum LogMode: Sendable, Equatable, CustomStringConvertible {
    /// Nothing is validated or stored; every call completes with ``LogStatus/disabled``.
    case disabled
    /// Every valid event is recorded.
    case active
    /// Only events whose names the rules select are recorded; the rest complete with
    /// ``LogStatus/filtered(_:)``.
    case specific(EventRules)

    public var description: String {
        switch self {
        case .disabled: "disabled"
        case .active: "active"
        case .specific(let rules): "specific(\(rules.allow.map(\.text).joined(separator: ", ")))"
        }
    }
}
