import Atomics
@_spi(NFLogShared) import NFLogSupport

/// Everything a logging call reads before it decides, kept under one lock in the facade: the
/// behaviour (built from the modes and the policy), and the privacy-zone verdict for the app's
/// last location. Changing any input rebuilds the derived values in the same critical section.
///
/// Three inputs decide the mode:
/// - the configuration's mode: the mode the logger starts in, until the app chooses one;
/// - the policy's mode, while a policy is in force;
/// - the app's own choice at runtime (``NFLogger/mode``), which replaces the configuration's (the
///   same party set both) and combines with the policy's so that the more restrictive wins: a
///   user's opt-out survives any policy, and an operator's kill switch survives any app setting.
struct FacadeState {
    private(set) var configuredMode: LogMode
    private(set) var appMode: LogMode?
    private(set) var policy: Policy?
    private(set) var behaviour: any LogBehaviour
    private(set) var location: (latitude: Double, longitude: Double)?
    private(set) var context: AdmissionContext
    /// The user's consent: denied refuses every call, whatever the modes.
    private(set) var consent: Consent

    init(mode: LogMode, policy: Policy?, samplingSeed: UInt64, consent: Consent = .granted) {
        self.configuredMode = mode
        self.policy = policy
        self.consent = consent
        self.behaviour = DisabledBehaviour()
        self.context = AdmissionContext(insidePrivacyZone: false, samplingSeed: samplingSeed)
        rebuild()
    }

    /// The mode the app sees: its own choice, or else the baseline (the policy's or the configuration's).
    var mode: LogMode { appMode ?? baseMode }

    private var baseMode: LogMode { policy?.mode ?? configuredMode }

    /// The app chose a mode; it stands until the app chooses again.
    mutating func setMode(_ mode: LogMode) {
        appMode = mode
        rebuild()
    }

    /// A policy took effect (or, with `nil`, none is in force).
    mutating func apply(_ policy: Policy?) {
        self.policy = policy
        rebuild()
    }

    mutating func setConsent(_ consent: Consent) {
        self.consent = consent
        rebuild()
    }

    mutating func setLocation(_ location: (latitude: Double, longitude: Double)?) {
        self.location = location
        rebuild()
    }

    private mutating func rebuild() {
        context.consentPending = consent == .pending
        behaviour = consent == .denied ? DisabledBehaviour(reason: .consentDenied)
            : makeBehaviour(base: policy?.mode ?? (appMode == nil ? configuredMode : .active), app: appMode, policyRules: policy?.sharedRules ?? .none,
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
    private let state: Lock<FacadeState>
    /// Whether every call is refused with ``LogStatus/disabled`` (the behaviour is a
    /// ``DisabledBehaviour`` without a reason): the Disabled path's one load instead of taking
    /// the lock and asking the behaviour, about half the instructions (the bench's log-call phase).
    ///
    /// Invariant: written only inside the lock, after the behaviour it mirrors, with release
    /// ordering; read with acquire ordering. A call that reads `false` takes the lock and reads
    /// the behaviour itself, so a mode set before a call began always decides it.
    /// An `UnsafeAtomic` (created here, destroyed in `deinit`): a `ManagedAtomic` reaches its
    /// storage through a class method, an indirect call on every load.
    private let disabled = UnsafeAtomic<Bool>.create(false)

    init(_ state: FacadeState) {
        self.state = Lock(state)
        disabled.store(state.behaviour.refusesEveryCall, ordering: .releasing)
    }

    deinit {
        disabled.destroy()
    }

    /// Reads the state under the lock.
    @inline(__always)
    func read<Result, Failure: Error>(_ body: (borrowing FacadeState) throws(Failure) -> Result) throws(Failure) -> Result {
        try state.withLock { (state: inout FacadeState) throws(Failure) -> Result in try body(state) }
    }

    /// Changes the state under the lock, keeping the Disabled flag in step.
    func update(_ body: (inout FacadeState) -> Void) {
        state.withLock { state in
            body(&state)
            disabled.store(state.behaviour.refusesEveryCall, ordering: .releasing)
        }
    }

    /// Every call is refused with ``LogStatus/disabled``: read without the lock.
    @inline(__always)
    var refusesEveryCall: Bool { disabled.load(ordering: .acquiring) }
}
