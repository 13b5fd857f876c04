import Dispatch
import Foundation
import Logging
@_spi(NFLogShared) import NFLogSupport

/// A logger's objects, built in one place: what each is handed, and the one queue that owns the
/// database and the uploads. ``NFLogger`` keeps what its calls need; nothing else builds a
/// collaborator of its own (the RequestManager is handed its uploaders and best-effort outputs).
struct LoggerGraph {
    let store: FacadeStateStore
    let completions: CompletionDispatcher
    let requests: RequestManager
    let policyManager: PolicyManager?
    /// The transport the graph made (not one the app supplied), shut down on close.
    let ownTransport: DefaultHTTPTransport?
    private let initialPolicy: Policy?

    init(configuration: Configuration, clock: any EventClock) {
        let installID = configuration.policyOptions.installID.map { ($0, true) } ?? InstallID.load(forDatabase: configuration.databaseURL)
        if !installID.1 {
            configuration.logger.warning("the install id could not be saved; sampling decisions may change at the next start")
        }
        // A policy cached by an earlier run applies from the first call, before the network answers.
        let cache = PolicyCache(forDatabase: configuration.databaseURL)
        let verifier = configuration.policyOptions.publicKey.map(PolicyVerifier.init(publicKey:))
        let cached = configuration.policyURL == nil ? nil
            : PolicyManager.loadCached(cache, verifier: verifier, logger: configuration.logger)
        let initialPolicy = cached?.policy ?? configuration.policyOptions.fallback
        self.initialPolicy = initialPolicy
        let consent = ConsentFile.load(forDatabase: configuration.databaseURL) ?? configuration.initialConsent
        let store = FacadeStateStore(FacadeState(mode: configuration.mode, policy: initialPolicy,
                                                 samplingSeed: Sampling.seed(installID: installID.0), consent: consent))
        self.store = store
        let label = "nflogger.\(configuration.appID)"
        let completions = CompletionDispatcher(queue: configuration.completionQueue ?? DispatchQueue(label: label + ".completions"))
        self.completions = completions
        // The one queue that owns the database and the uploads (checked in debug builds).
        let owner = QueueOwner(queue: DispatchQueue(label: label + ".requests", qos: .utility))
        let database = DatabaseManager(owner: owner,
            path: configuration.databaseURL.path,
            busyTimeoutMilliseconds: Int32(clamping: configuration.limits.busyTimeout.milliseconds),
            properties: StandardProperties(appID: configuration.appID, appVersion: configuration.appVersion),
            limits: StorageLimits(configuration.limits, policy: initialPolicy), consent: consent,
            cipher: configuration.encryptionKey.map(ParameterCipher.init(key:)), outputs: DurableOutputSet(configuration),
            clock: clock, logger: configuration.logger)
        let sessions = SessionTracker(idleTimeoutNanoseconds: configuration.sessionIdleTimeout.nanoseconds,
                                      wallMilliseconds: clock.wallMilliseconds())
        let transport = configuration.makeTransport()
        ownTransport = configuration.network.transport == nil ? transport as? DefaultHTTPTransport : nil
        let uploaders = Self.sinks(configuration, transport: transport).map { id, sink in
            Uploader(queue: owner.queue, database: database, sink: sink, outputID: id, settings: configuration.upload, clock: clock,
                     logger: configuration.logger, completionQueue: completions.queue, consent: consent)
        }
        let requests = RequestManager(configuration: configuration, database: database, completions: completions,
                                      uploaders: uploaders, bestEffort: BestEffortOutputs(configuration.outputs),
                                      sessions: sessions, clock: clock, owner: owner)
        self.requests = requests
        if let url = configuration.policyURL, let appKey = configuration.appKey {
            let apply: @Sendable (Policy?) -> Void = { policy in
                Self.apply(policy, to: store, requests: requests, configuration: configuration)
            }
            policyManager = PolicyManager(
                url: url, appKey: appKey,
                transport: transport,
                verifier: verifier, cache: cache,
                defaultRefresh: configuration.policyOptions.fallback?.refreshInterval ?? configuration.policyOptions.refreshInterval,
                logger: configuration.logger, completionQueue: completions.queue, initial: cached,
                fallbackSource: configuration.policyOptions.fallback == nil ? .none : .defaultPolicy, apply: apply)
        } else {
            policyManager = nil
        }
    }

    /// The policy in force from the start applies before any call; then the policy checks begin.
    func start() {
        requests.apply(initialPolicy)
        policyManager?.start()
    }

    /// Each durable output's id and where its batches go: the collector at `uploadURL` first,
    /// then the configuration's outputs in order. None: events stay on the device.
    static func sinks(_ configuration: Configuration, transport: any HTTPTransport) -> [(String, any BatchSink)] {
        var sinks: [(String, any BatchSink)] = []
        if let url = configuration.uploadURL, let appKey = configuration.appKey {
            sinks.append((Configuration.collectorOutputID, CollectorSink(transport: transport, url: url, appKey: appKey)))
        }
        for output in configuration.outputs {
            if let collector = output as? CollectorOutput {
                sinks.append((collector.id, CollectorSink(transport: transport, url: collector.url, appKey: collector.appKey)))
            } else if let durable = output as? any DurableOutput {
                sinks.append((durable.id, DurableOutputSink(output: durable)))
            }
        }
        return sinks
    }

    /// A policy came (or went, `nil`): the facade's state and the queue's rules take it.
    private static func apply(_ policy: Policy?, to store: FacadeStateStore, requests: RequestManager, configuration: Configuration) {
        let effective = policy ?? configuration.policyOptions.fallback
        store.update { $0.apply(effective) }
        requests.apply(effective)
    }
}
