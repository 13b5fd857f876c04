import Dispatch
public import Foundation
import Logging
@_spi(NFLogShared) public import NFLogSupport

/// The SDK's facade: log point events and spans, switch modes, mark the app's background and
/// foreground.
///
/// Every call returns at once. The caller's thread only validates, stamps and enqueues; SQLite
/// runs on the logger's own serial queue, and each completion handler is called exactly once,
/// on the completion queue, never on the caller's thread. A logger never throws at the app and
/// never traps: everything that can go wrong arrives as a ``LogStatus``.
///
/// ```swift
/// let logger = try NFLogger(configuration: configuration)
/// logger.logEvent(name: "ui.tap", parameters: ["button": "buy"]) { status in
///     print(status)   // recorded 0193…
/// }
/// let span = logger.startEvent(name: "net.request", parameters: ["path": "/login"])
/// span.end(parameters: ["status": 200])
/// ```
public final class NFLogger: Sendable {
    /// The name this SDK reports itself as.
    public static let sdkName = "NFLogger"
    /// The version of this SDK.
    public static let sdkVersion = "0.1.0"

    /// The configuration the logger was created with.
    public let configuration: Configuration
    private let store: FacadeStateStore
    private let policyManager: PolicyManager?
    let requests: RequestManager
    let completions: CompletionDispatcher
    /// The transport the logger made (not one the app supplied), shut down on ``close(completion:)``.
    private let ownTransport: DefaultHTTPTransport?
    let clock: any EventClock
    /// Messages the ``ScriptBridge``s of this logger refused for their rate, for diagnostics.
    let bridgeDrops = Lock(0)

    /// Creates a logger. The database is opened in the background; if it cannot be opened (a
    /// read-only directory, a full disk), logging calls complete with
    /// ``NFLoggerError/storage(_:)`` until it can.
    ///
    /// - Throws: ``ConfigurationError`` if a configured value is out of range.
    public convenience init(configuration: Configuration) throws(ConfigurationError) {
        try self.init(configuration: configuration, clock: SystemEventClock())
    }

    init(configuration: Configuration, clock: any EventClock) throws(ConfigurationError) {
        try configuration.validate()
        self.configuration = configuration
        self.clock = clock
        let graph = LoggerGraph(configuration: configuration, clock: clock)
        store = graph.store
        completions = graph.completions
        requests = graph.requests
        policyManager = graph.policyManager
        ownTransport = graph.ownTransport
        graph.start()
        configuration.logger.debug("logger started", metadata: ["mode": "\(configuration.mode)"])
    }

    // MARK: Mode

    /// The app's choice of mode (or, until it makes one, the policy's or the configuration's).
    /// Setting it swaps the behaviour atomically: every call made after the assignment returns
    /// obeys the new mode, and no call in flight is lost or completed twice.
    ///
    /// The app's choice stands until the app chooses again, and combines with the policy's mode
    /// so that the more restrictive wins: `.disabled` set by the app (a user's opt-out) survives
    /// any policy, and a policy's `disabled` (an operator's kill switch) survives any app
    /// setting; with both in specific mode, a name must be selected by both. The policy's deny and
    /// sampling rules, privacy zones and minimum SDK version apply whatever the mode.
    public var mode: LogMode {
        get { store.read { $0.mode } }
        set {
            store.update { $0.setMode(newValue) }
            configuration.logger.debug("mode changed", metadata: ["mode": "\(newValue)"])
        }
    }

    /// The policy in force, if any (fetched, cached from an earlier run, or the configuration's
    /// ``Configuration/PolicyOptions/fallback``).
    public var policy: Policy? { store.read { $0.policy } }

    /// The policy's `auto` switches, read without copying the policy (the automatic sources ask
    /// on every record).
    @_spi(NFLogShared) public var automaticSources: AutomaticSources { store.read { $0.policy?.automatic ?? AutomaticSources() } }

    private var currentBehaviour: any LogBehaviour { store.read { $0.behaviour } }

    // MARK: Consent

    /// The user's consent to analytics: ``Consent/granted`` records and uploads,
    /// ``Consent/pending`` records on the device and uploads nothing, ``Consent/denied`` records
    /// nothing and deletes what was held while pending.
    ///
    /// Setting it takes effect for every call made after the assignment returns (as for
    /// ``mode``); calls made before it keep the consent they were made under. The value is saved
    /// and applies at every later start, over ``Configuration/initialConsent``.
    public var consent: Consent {
        get { store.read { $0.consent } }
        set { setConsent(newValue) }
    }

    /// Sets ``consent`` and reports, once the calls made before it are written and it is saved,
    /// how many held events a denial deleted (0 otherwise). If the database refused the change
    /// just then (busy, full), it says 0: the release or deletion is owed, done at the next
    /// write, and counted in ``Diagnostics/consentDeletedEvents``; a logger started later applies
    /// the saved consent to what an earlier run held. Concurrent calls take effect in one order,
    /// the same for the facade, the database and the saved file.
    public func setConsent(_ consent: Consent, completion: (@Sendable (_ deletedEvents: Int) -> Void)? = nil) {
        // Queued inside the facade's lock: concurrent changes reach the queue (and the saved
        // file) in the order the facade took them. Lock order: the facade's, then the queue's.
        let requests = self.requests, databaseURL = configuration.databaseURL
        store.update { state in
            state.setConsent(consent)
            requests.setConsent(consent, databaseURL: databaseURL, completion: completion)
        }
        configuration.logger.debug("consent changed", metadata: ["consent": "\(consent)"])
    }

    // MARK: Location

    /// Tells the SDK where the device is, for the policy's privacy zones: while inside one,
    /// new events complete with ``FilterReason/insidePrivacyZone`` and nothing is stored.
    /// The SDK keeps only the last location, in memory, and never logs or uploads it.
    public func updateLocation(latitude: Double, longitude: Double) {
        guard latitude.isFinite, longitude.isFinite, (-90...90).contains(latitude), (-180...180).contains(longitude) else {
            configuration.logger.warning("ignoring an invalid location")
            return
        }
        store.update { $0.setLocation((latitude, longitude)) }
    }

    /// Forgets the location: privacy zones no longer filter anything.
    public func clearLocation() {
        store.update { $0.setLocation(nil) }
    }

    // MARK: Policy

    /// Asks the collector for a newer policy now, instead of waiting for the refresh interval.
    public func refreshPolicy(completion: @escaping @Sendable (PolicyUpdate) -> Void) {
        guard let policyManager else {
            return completions.queue.async { completion(.failed(.notConfigured)) }
        }
        policyManager.refresh(completion: completion)
    }

    // MARK: Point events

    /// Logs a point event: something that happened at one instant.
    ///
    /// - Parameters:
    ///   - name: Dot-separated parts of ASCII letters, digits, `_` and `-`, at most 256 bytes:
    ///     `ui.tap`, `net.error.timeout`.
    ///   - type: A category with the same rules, at most 64 bytes. Default: `"event"`.
    ///   - parameters: JSON-compatible values, checked by the compiler (see ``LogParameters``),
    ///     at most ``Configuration/Limits/maxParametersBytes`` once encoded.
    ///   - context: The transaction the event belongs to: one of the app's
    ///     (``TransactionHandle/context``), or, on a backend, the one a request's `traceparent`
    ///     carried (``TransactionContext/init(traceparent:)``). Default: none.
    ///   - completion: Called exactly once, asynchronously, with the outcome:
    ///     ``LogStatus/recorded(_:)`` once the event is committed to SQLite.
    @inlinable
    public func logEvent(name: String, type: String = "event", parameters: LogParameters = [:],
                         in context: TransactionContext? = nil, completion: LogCompletion? = nil) {
        // Inlined into the app, so that a call without a transaction (nearly all) passes no
        // context at all: passing the optional lengthened the Disabled path (the log call's
        // instructions in scripts/bench).
        if let context {
            logPoint(name: name, type: type, parameters: parameters, context: context, completion: completion)
        } else {
            logPoint(name: name, type: type, parameters: parameters, completion: completion)
        }
    }

    @usableFromInline
    func logPoint(name: String, type: String, parameters: LogParameters, completion: LogCompletion?) {
        // Disabled is decided here, before the rest of the call is entered: its frame (and its
        // stack protector) cost the Disabled path more than the decision itself.
        if store.refusesEveryCall { return completions.finishDisabled(completion) }
        logAdmissible(name: name, type: type, parameters: parameters, link: nil, completion: completion)
    }

    @usableFromInline
    func logPoint(name: String, type: String, parameters: LogParameters, context: TransactionContext, completion: LogCompletion?) {
        if store.refusesEveryCall { return completions.finishDisabled(completion) }
        logAdmissible(name: name, type: type, parameters: parameters, link: EventLink(context), completion: completion)
    }

    /// A point event from web content (``ScriptBridge``): the native path, with the page's origin.
    func logFromPage(name: String, type: String, parameters: LogParameters, context: TransactionContext?, origin: String,
                     completion: @escaping LogCompletion) {
        if store.refusesEveryCall { return completions.finishDisabled(completion) }
        logAdmissible(name: name, type: type, parameters: parameters, link: EventLink(context, webOrigin: origin), completion: completion)
    }

    @inline(never)
    private func logAdmissible(name: String, type: String, parameters: LogParameters, link: EventLink?,
                               completion: LogCompletion?) {
        switch verdict(name: name, type: type) {
        case .refuse(let status): completions.finish(status, completion)
        case .admit(let whilePending):
            _ = requests.submit(draft(.point, name: name, type: type, whilePending: whilePending, link: link),
                                parameters: parameters, completion: completion)
        }
    }

    // MARK: Spans

    /// Starts a span: something that takes time, such as a screen shown or a request in flight.
    /// The start is stored at once, so a crash before the end still leaves evidence.
    ///
    /// Parameters follow the rules of ``logEvent(name:type:parameters:in:completion:)``; in a
    /// transaction (`context`), the handle's ``SpanHandle/context`` is that transaction with the
    /// span as parent.
    /// - Returns: The handle to end the span with. Its ``SpanHandle/id`` also works with
    ///   ``endEvent(id:parameters:completion:)``.
    @discardableResult
    public func startEvent(name: String, type: String = "event", parameters: LogParameters = [:],
                           in context: TransactionContext? = nil, completion: LogCompletion? = nil) -> SpanHandle {
        startSpan(name: name, type: type, parameters: parameters, context: context, beginsTransaction: false, webOrigin: nil,
                  completion: completion)
    }

    /// Begins a transaction: a use case such as `form.signup` that the collector's report
    /// follows (started, completed, abandoned, time to complete) and that the app's requests to
    /// its own backend carry (``TransactionHandle/propagationHeaders(for:)``). It is a span of
    /// type `usecase` whose id is the transaction id; `completion` reports its start.
    public func beginTransaction(name: String, type: String = "usecase", parameters: LogParameters = [:],
                                 completion: LogCompletion? = nil) -> TransactionHandle {
        TransactionHandle(span: startSpan(name: name, type: type, parameters: parameters, context: nil,
                                          beginsTransaction: true, webOrigin: nil, completion: completion))
    }

    func startSpan(name: String, type: String, parameters: LogParameters, context: TransactionContext?,
                   beginsTransaction: Bool, webOrigin: String?, completion: LogCompletion?) -> SpanHandle {
        let whilePending: Bool
        switch verdict(name: name, type: type) {
        case .refuse(let refusal):
            completions.finish(refusal, completion)
            return SpanHandle(id: UUID(), name: name, start: SpanHandle.Start(refusal: refusal), logger: self)
        case .admit(let pending): whilePending = pending
        }
        let link: EventLink? = if webOrigin != nil || context != nil {
            EventLink(context, beginsTransaction: beginsTransaction, webOrigin: webOrigin)
        } else {
            beginsTransaction ? EventLink.beginsTransaction : nil
        }
        if let id = requests.submit(draft(.span, name: name, type: type, whilePending: whilePending, link: link),
                                    parameters: parameters, completion: completion) {
            return SpanHandle(id: id, name: name, start: .started, logger: self,
                              transaction: beginsTransaction ? id : context?.transactionID)
        }
        return SpanHandle(id: UUID(), name: name, start: .notStored, logger: self)
    }

    /// Ends the span with this id, for callers that kept the id rather than the ``SpanHandle``
    /// (it works across a restart of the app).
    ///
    /// Completes with ``LogStatus/recorded(_:)``, or ``NFLoggerError/unknownSpan(_:)`` if no span
    /// with this id was recorded, or ``NFLoggerError/spanAlreadyEnded(_:)``; the last two change
    /// nothing.
    public func endEvent(id: UUID, parameters: LogParameters = [:], completion: LogCompletion? = nil) {
        if store.refusesEveryCall { return completions.finish(.disabled, completion) }
        let (admission, whilePending) = store.read { ($0.behaviour.admitSpanEnd(context: $0.context), $0.context.consentPending) }
        switch admission {
        case .disable: return completions.finish(.disabled, completion)
        case .filter(let reason): return completions.finish(.filtered(reason), completion)
        case .record: break
        }
        let end = SpanEnd(id: id, loggedWhilePending: whilePending, wallMilliseconds: clock.wallMilliseconds(),
                          monotonicNanoseconds: clock.monotonicNanoseconds())
        requests.submit(end, parameters: parameters, completion: completion)
    }

    // MARK: App lifecycle

    /// Tells the logger the app went to the background.
    public func suspend() {
        requests.suspend(wallMilliseconds: clock.wallMilliseconds(), monotonicNanoseconds: clock.monotonicNanoseconds())
    }

    /// Tells the logger the app is in the foreground again. After more than
    /// ``Configuration/sessionIdleTimeout`` away, a new session begins.
    public func resume() {
        requests.resume(wallMilliseconds: clock.wallMilliseconds(), monotonicNanoseconds: clock.monotonicNanoseconds())
    }

    /// The id of the current session.
    public var sessionID: UUID { requests.currentSession.id }

    // MARK: Upload

    /// Writes every call already made, then uploads every stored event now (without waiting for
    /// the interval), and reports. It stops at the first failure, which the result names; the
    /// retry schedule then goes on by itself. It does not cut short a backoff or a collector's
    /// `Retry-After` in force (it reports the failure behind it), and while the app is suspended
    /// nothing is sent.
    public func flush(completion: @escaping @Sendable (FlushResult) -> Void) {
        requests.flush(completion: completion)
    }

    // MARK: Inspection and shutdown

    /// Reports what the logger has done and what its database holds, once every call made
    /// before this one has been written.
    public func diagnostics(completion: @escaping @Sendable (Diagnostics) -> Void) {
        let mode = currentBehaviour.mode
        let consent = self.consent
        let completions = self.completions
        let requests = self.requests
        let policy = policyManager?.currentStatus
            ?? PolicyStatus(source: configuration.policyOptions.fallback == nil ? .none : .defaultPolicy)
        let bestEffort = requests.bestEffortHanded
        requests.afterPendingWrites { database, uploaders in
            let uploader = uploaders.first { $0.outputID == Configuration.collectorOutputID }
            let counts = completions.counts
            let stored = try? database.storedCounts()
            let outbox = try? database.withOutbox { (outbox) throws(SQLiteError) in (try outbox.waitingCount(), try outbox.quarantinedCount()) }
            let snapshot = Diagnostics(
                mode: mode, recorded: counts.recorded, filtered: counts.filtered, disabled: counts.disabled,
                failed: counts.failed, pendingInMemory: requests.pendingCount,
                storedPointEvents: stored?.points ?? 0, storedSpanEvents: stored?.spans ?? 0,
                openSpans: stored?.openSpans ?? 0, waitingForUpload: outbox?.0 ?? 0,
                uploadedEvents: uploader?.uploadedEvents ?? 0, uploadedBatches: uploader?.uploadedBatches ?? 0,
                retriedUploads: uploader?.retriedAttempts ?? 0, quarantinedEvents: outbox?.1 ?? 0,
                lastUploadError: uploader?.lastError, nextUploadAttempt: uploader?.nextAttempt,
                prunedEvents: database.prunedEvents, abandonedSpans: database.abandonedSpans,
                consent: consent, consentDeletedEvents: database.consentDeletedEvents, policy: policy,
                lastStorageError: database.lastError, databaseResets: database.resets, databasePath: database.path,
                storedAggregates: stored?.aggregates ?? 0, aggregatedEvents: stored?.aggregatedEvents ?? 0,
                aggregateOverflowEvents: database.aggregateOverflowEvents,
                webMessagesRateLimited: self.bridgeDrops.withLock { $0 },
                outputs: OutputDiagnostics.all(uploaders, bestEffort: bestEffort(), database: database))
            completions.queue.async { completion(snapshot) }
        }
    }

    /// Writes every call already made, closes the database, then calls `completion`. Later calls
    /// complete with ``NFLoggerError/closed``.
    public func close(completion: (@Sendable () -> Void)? = nil) {
        let queue = completions.queue
        policyManager?.close()
        let transport = ownTransport
        requests.close {
            // Its connections close now, not when the logger is released: a server shutting down
            // would otherwise wait on them.
            transport?.shutdown()
            queue.async { completion?() }
        }
    }

    // MARK: The caller's-thread path

    private enum Verdict {
        case refuse(LogStatus)
        /// Go on; `whilePending`: consent was pending, so the event is held.
        case admit(whilePending: Bool)
    }

    /// Asks the behaviour and validates: the status to complete with at once, or go on.
    /// The behaviour decides inside the facade's lock, where it lives, so a call never copies it
    /// (a copy retains and releases its rules: a fifth of the Disabled path's instructions).
    @inline(__always)
    private func verdict(name: String, type: String) -> Verdict {
        if store.refusesEveryCall { return .refuse(.disabled) }
        do throws(NFLoggerError) {
            let (admission, whilePending) = try store.read { (state) throws(NFLoggerError) -> (Admission, Bool) in
                (try state.behaviour.admit(name: name, context: state.context), state.context.consentPending)
            }
            switch admission {
            case .record: break
            case .disable: return .refuse(.disabled)
            case .filter(let reason): return .refuse(.filtered(reason))
            }
            if type != "event" { try EventName.validateType(type) }
            return .admit(whilePending: whilePending)
        } catch {
            return .refuse(.failed(error))
        }
    }

    /// Stamps an admitted event with both clocks; the parameters are encoded on the queue.
    @inline(__always)
    private func draft(_ kind: EventKind, name: String, type: String, whilePending: Bool, link: EventLink?) -> EventDraft {
        EventDraft(kind: kind, name: name, type: type,
                   wallMilliseconds: clock.wallMilliseconds(), monotonicNanoseconds: clock.monotonicNanoseconds(),
                   loggedWhilePending: whilePending, link: link)
    }
}
