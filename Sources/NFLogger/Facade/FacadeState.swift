import Synchronization

/// Everything a logging call reads before it decides, kept under one lock in the facade: the
/// behaviour (built from the mode and the policy), and the privacy-zone verdict for the app's
/// last location. Changing any input rebuilds the derived values in the same critical section.
struct FacadeState {
    private(set) var mode: LogMode
    private(set) var policy: Policy?
    private(set) var behaviour: any LogBehaviour
    private(set) var location: (latitude: Double, longitude: Double)?
    private(set) var context: AdmissionContext

    init(mode: LogMode, policy: Policy?, samplingSeed: UInt64) {
        self.mode = policy?.logMode ?? mode
        self.policy = policy
        self.behaviour = DisabledBehaviour()
        self.context = AdmissionContext(insidePrivacyZone: false, samplingSeed: samplingSeed)
        rebuild()
    }

    /// The app chose a mode; the policy's deny, sampling, zones and minimum version still apply.
    mutating func setMode(_ mode: LogMode) {
        self.mode = mode
        rebuild()
    }

    /// A policy took effect (or, with `nil`, none is in force and `fallbackMode` applies).
    mutating func apply(_ policy: Policy?, fallbackMode: LogMode) {
        self.policy = policy
        self.mode = policy?.logMode ?? fallbackMode
        rebuild()
    }

    mutating func setLocation(_ location: (latitude: Double, longitude: Double)?) {
        self.location = location
        rebuild()
    }

    private mutating func rebuild() {
        behaviour = makeBehaviour(for: mode, policyRules: policy?.sharedRules ?? .none,
                                  sdkBelowMinimum: policy?.excludesThisSDK ?? false)
        if let location, let zones = policy?.privacyZones, !zones.isEmpty {
            context.insidePrivacyZone = zones.contains { $0.contains(latitude: location.latitude, longitude: location.longitude) }
        } else {
            context.insidePrivacyZone = false
        }
    }
}

/// The facade's state behind its lock, in a holder of its own so the policy manager can be
/// handed a way to change it while the logger is still being created.
final class FacadeStateStore: Sendable {
    let mutex: Mutex<FacadeState>

    init(_ state: FacadeState) {
        mutex = Mutex(state)
    }
}
