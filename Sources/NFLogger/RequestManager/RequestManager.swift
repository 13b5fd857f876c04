import Dispatch
import Foundation
import Logging
@_spi(NFLogShared) import NFLogSupport

/// The mediator between the facade and storage: the only path to the database.
///
/// The caller's thread only appends to a bounded in-memory queue (one short lock, in which the
/// event also gets its id and session). One serial dispatch queue drains it: everything waiting
/// is written in one SQLite transaction, and the completions run after the commit. Concurrent
/// calls therefore coalesce into few transactions, and no SQLite call ever runs on the app's thread.
final class RequestManager: @unchecked Sendable {
    // @unchecked: `database`, `uploaders`, `spare` and `filters` are touched only on `queue`; all other
    // state is immutable or inside the `pending` lock.
    private let queue: DispatchQueue
    private let pending: Lock<PendingState>
    private let database: DatabaseManager
    private let completions: CompletionDispatcher
    /// One per durable output: the collector's first when an upload URL is configured, then
    /// those of ``Configuration/outputs``. None: events stay on the device.
    private let uploaders: [Uploader]
    /// Handed each recorded event they match after its write commits.
    private let bestEffort: BestEffortOutputs
    private let maxPendingEvents: Int
    private let maxPendingBytes: Int
    /// The drained buffer, kept for reuse so the next burst does not regrow an array.
    private var spare: [PendingRequest] = []
    private let configurationLimits: Configuration.Limits
    private let encoder: ParameterEncoder
    /// The app's filters, applied to each drained batch before the aggregator and the write.
    private var filters: FilterChain
    private let logger: Logger
    /// The Pruner's periodic pass, armed only while the database holds something to keep in
    /// bounds (events stored, a consent change owed): an idle logger wakes for nothing.
    private var maintenanceWork: (any ScheduledWork)?
    /// Set on the queue when the logger closes: nothing is armed after it.
    private var maintenanceStopped = false
    /// Fires when the next open aggregate's window ends, so it closes (and travels) on time
    /// even if nothing else is written then.
    private var windowTimer: (any DispatchSourceTimer)?
    private var windowTimerDeadline: Int64?
    private let clock: any EventClock
    /// How often the Pruner's periodic pass runs.
    static let maintenanceInterval: TimeInterval = 60

    struct PendingRequest: Sendable {
        var request: StorageRequest
        /// The app's parameters, encoded into `request` on the queue just before the write (and
        /// let go of then).
        var parameters: LogParameters
        let completion: LogCompletion?
    }

    private struct PendingState {
        var items: [PendingRequest] = []
        var eventCount = 0
        var bytes = 0
        /// The batch being written now still occupies memory, so it counts against the bound.
        var inFlightEvents = 0
        var inFlightBytes = 0
        var drainScheduled = false
        var closed = false
        var ids = EventIDGenerator()
        var sessions: SessionTracker
    }

    /// - Parameters:
    ///   - uploaders: one per durable output, on `owner`'s queue (``LoggerGraph`` builds them).
    ///   - bestEffort: the outputs handed each committed event they match.
    init(configuration: Configuration, database: DatabaseManager, completions: CompletionDispatcher,
         uploaders: [Uploader], bestEffort: BestEffortOutputs, sessions: SessionTracker, clock: any EventClock, owner: QueueOwner) {
        let queue = owner.queue
        logger = configuration.logger
        self.queue = queue
        self.database = database
        self.completions = completions
        self.configurationLimits = configuration.limits
        self.maxPendingEvents = configuration.limits.maxPendingEvents
        self.maxPendingBytes = configuration.limits.maxPendingBytes
        self.encoder = ParameterEncoder(maxBytes: configuration.limits.maxParametersBytes)
        self.filters = FilterChain(configuration.filters)
        self.pending = Lock(PendingState(sessions: sessions))
        self.clock = clock
        self.uploaders = uploaders
        self.bestEffort = bestEffort
        // Open (and migrate) the database now, in the background, rather than on the first event;
        // then send whatever a previous run left behind.
        queue.async {
            _ = try? self.database.openIfNeeded()
            // Rows an earlier run held follow the consent in force now (released or deleted).
            _ = self.database.write([StorageRequest]())
            self.database.enforceLimits(includingAge: true)
            for uploader in self.uploaders { uploader.start() }
            self.armMaintenanceIfNeeded()
        }
    }

    deinit {
        maintenanceWork?.cancel()
        windowTimer?.cancel()
    }

    private enum Admitted {
        case queued(UUID, scheduleDrain: Bool)
        case refused(NFLoggerError)
    }

    /// What a call costs the in-memory queue, for its byte bound: the parameters as each value
    /// estimates its JSON (``LogValueConvertible/approximateJSONBytes``, O(1) per value), since
    /// they are encoded only on the queue.
    private static func approximateBytes(name: String, type: String, parameters: LogParameters) -> Int {
        var bytes = 96 + name.utf8.count + type.utf8.count + 24 * parameters.count
        bytes += parameters.approximateValueBytes
        return bytes
    }

    /// Queues a point event or the start of a span.
    /// - Returns: the event's id, or `nil` if it was refused (its completion has been told why).
    func submit(_ draft: EventDraft, parameters: LogParameters, completion: LogCompletion?) -> UUID? {
        let cost = Self.approximateBytes(name: draft.name, type: draft.type, parameters: parameters)
        let outcome = pending.withLock { state -> Admitted in
            if let refusal = refusal(state, cost: cost) { return .refused(refusal) }
            let id = state.ids.make(milliseconds: draft.wallMilliseconds)
            let record = EventRecord(id: id, session: state.sessions.current, draft: draft)
            return .queued(id, scheduleDrain: Self.append(.event(record), parameters, completion, cost: cost, to: &state))
        }
        switch outcome {
        case .queued(let id, let scheduleDrain):
            if scheduleDrain { queue.async { self.drain() } }
            return id
        case .refused(let error):
            completions.finish(.failed(error), completion)
            return nil
        }
    }

    /// Queues the end of a span.
    func submit(_ end: SpanEnd, parameters: LogParameters, completion: LogCompletion?) {
        let cost = Self.approximateBytes(name: "", type: "", parameters: parameters)
        let outcome = pending.withLock { state -> Admitted in
            if let refusal = refusal(state, cost: cost) { return .refused(refusal) }
            return .queued(end.id, scheduleDrain: Self.append(.endSpan(end), parameters, completion, cost: cost, to: &state))
        }
        switch outcome {
        case .queued(_, let scheduleDrain):
            if scheduleDrain { queue.async { self.drain() } }
        case .refused(let error):
            completions.finish(.failed(error), completion)
        }
    }

    private func refusal(_ state: PendingState, cost: Int) -> NFLoggerError? {
        if state.closed { return .closed }
        let events = state.eventCount + state.inFlightEvents
        let bytes = state.bytes + state.inFlightBytes
        if events >= maxPendingEvents || bytes + cost > maxPendingBytes {
            return .backpressure(pendingEvents: events, pendingBytes: bytes)
        }
        return nil
    }

    /// Appends under the lock. Returns whether the caller must schedule a drain.
    private static func append(_ request: consuming StorageRequest, _ parameters: consuming LogParameters,
                               _ completion: LogCompletion?, cost: Int, to state: inout PendingState) -> Bool {
        if request.isLoggingCall { state.eventCount += 1 }
        // Moved, not copied, into the queue: a copy retained and released every string in it.
        state.items.append(PendingRequest(request: request, parameters: parameters, completion: completion))
        state.bytes += cost
        guard !state.drainScheduled else { return false }
        state.drainScheduled = true
        return true
    }

    // MARK: Sessions

    func suspend(wallMilliseconds: Int64, monotonicNanoseconds: UInt64) {
        let scheduleDrain = pending.withLock { state -> Bool in
            guard !state.closed, state.sessions.suspend(monotonicNanoseconds: monotonicNanoseconds) else { return false }
            return Self.append(.sessionSuspended(state.sessions.current, atMilliseconds: wallMilliseconds), [:], nil, cost: 0, to: &state)
        }
        if scheduleDrain { queue.async { self.drain() } }
        // After the writes queued before it (the aggregates it closes hold the events logged
        // before it), however many turns of the queue the drain takes.
        afterPendingWrites { _, uploaders in
            self.closeAggregates(early: true)
            for uploader in uploaders { uploader.suspend() }
        }
    }

    func resume(wallMilliseconds: Int64, monotonicNanoseconds: UInt64) {
        let scheduleDrain = pending.withLock { state -> Bool in
            guard !state.closed else { return false }
            switch state.sessions.resume(monotonicNanoseconds: monotonicNanoseconds, wallMilliseconds: wallMilliseconds) {
            case .notSuspended, .newSession:
                return false  // a new session gets its row with its first event
            case .continued:
                return Self.append(.sessionResumed(state.sessions.current), [:], nil, cost: 0, to: &state)
            }
        }
        if scheduleDrain { queue.async { self.drain() } }
        afterPendingWrites { _, uploaders in for uploader in uploaders { uploader.resume() } }
    }

    var currentSession: Session { pending.withLock { $0.sessions.current } }

    // MARK: Consent

    /// Queues a consent change in order with the calls made before it: events logged before it
    /// keep the consent they were logged under. Once written (``finishConsent(_:_:)``), it is
    /// saved, gates the uploads, and the completion learns how many held events a denial deleted.
    /// A closed logger changes nothing: the completion gets 0.
    func setConsent(_ consent: Consent, databaseURL: URL, completion: (@Sendable (Int) -> Void)?) {
        let receipt = ConsentReceipt(databaseURL: databaseURL, completion: completion)
        let outcome = pending.withLock { state -> Bool? in
            guard !state.closed else { return nil }
            return Self.append(.consent(consent, receipt), [:], nil, cost: 0, to: &state)
        }
        switch outcome {
        case nil:
            logger.warning("consent set on a closed logger: not saved")
            if let completion { completions.queue.async { completion(0) } }
        case true?: queue.async { self.drain() }
        case false?: break
        }
    }

    /// After the write that carried a consent change (whether its effect on the held rows
    /// committed or is owed to the next write): save it, gate the uploads, tell the app.
    private func finishConsent(_ consent: Consent, _ receipt: ConsentReceipt) {
        do { try ConsentFile.save(consent, forDatabase: receipt.databaseURL) } catch {
            logger.error("the consent could not be saved; it applies until the app restarts", metadata: ["error": "\(error)"])
        }
        for uploader in uploaders { uploader.setConsent(consent) }
        let deleted = receipt.deletedEvents
        if deleted > 0 { logger.info("consent denied: held events deleted", metadata: ["events": "\(deleted)"]) }
        if let completion = receipt.completion { completions.queue.async { completion(deleted) } }
    }

    // MARK: The queue's side

    /// Writes what is waiting as one transaction, then comes back for the rest as a new turn of
    /// the queue until the in-memory queue is empty. One transaction per turn, not a loop: an app
    /// logging faster than the disk takes its events (pruning all along) would otherwise hold the
    /// queue for as long, and the uploads' answers, the timers and the flushes queued behind the
    /// drain would wait until it stopped logging.
    private func drain() {
        // Move the reusable buffer out of `spare` (not copy it), so the one handed to the
        // callers' side is uniquely referenced and their appends never copy it.
        var batch: [PendingRequest] = []
        swap(&batch, &spare)
        let hasWork = pending.withLock { state -> Bool in
            guard !state.items.isEmpty else {
                state.drainScheduled = false
                return false
            }
            swap(&state.items, &batch)
            (state.inFlightEvents, state.inFlightBytes) = (state.eventCount, state.bytes)
            (state.eventCount, state.bytes) = (0, 0)
            return true
        }
        guard hasWork else {
            spare = batch
            // A consent change whose effect on the held rows failed to commit (a busy or
            // full database) is retried whenever the queue has caught up.
            if database.owesConsent {
                _ = database.write([StorageRequest]())
                if !database.owesConsent { for uploader in uploaders { uploader.rowsBecameReady() } }
            }
            return
        }
        let statuses = encodeAndWrite(&batch)
        var delivered = CompletionBuffer(capacity: batch.count)
        var recorded = 0
        // By index: each request is read in place, not copied out of the batch.
        for (index, status) in zip(batch.indices, statuses) {
            guard batch[index].request.isLoggingCall else {
                if case .consent(let consent, let receipt) = batch[index].request { finishConsent(consent, receipt) }
                continue
            }
            completions.count(status)
            if status.isRecorded { recorded += 1 }
            if let completion = batch[index].completion { delivered.append(completion, status) }
        }
        // Written: no longer in flight, before the completions can let the app log more (a
        // producer waiting on them refilled the queue while an upload the write triggered
        // was still being prepared, and met a bound these events no longer occupied).
        pending.withLock { ($0.inFlightEvents, $0.inFlightBytes) = (0, 0) }
        completions.finish(batch: delivered)
        if !bestEffort.isEmpty { RequestsView.withRequests(batch) { bestEffort.hand($0, statuses) } }
        // Counts only: never a name or a parameter.
        logger.trace("wrote a transaction", metadata: ["requests": "\(batch.count)", "recorded": "\(recorded)"])
        recorded += database.takeClosedAggregates()
        if recorded > 0 {
            for uploader in uploaders { uploader.recorded(recorded) }
            armMaintenanceIfNeeded()
        }
        scheduleWindowTimer()
        batch.removeAll(keepingCapacity: true)
        spare = batch
        queue.async { self.drain() }  // `drainScheduled` stays set: the next turn clears it when empty
    }

    /// Runs the filters, folds, encodes each request's parameters, then writes those that are left
    /// in one transaction. A request a filter dropped or failed, or whose parameters fail (a
    /// non-finite double, too many bytes), is settled alone. The filters may add requests (an
    /// event replaced by several) to `batch`, after the one they came from.
    /// - Returns: one status per request of `batch` as it is on return, in order.
    private func encodeAndWrite(_ batch: inout [PendingRequest]) -> [LogStatus] {
        var settled = filters.isEmpty ? [:] : filters.apply(to: &batch)
        var failures = Self.foldMatching(&batch, rules: database.aggregateRules)
        failures.merge(ParameterEncoding.encode(&batch, with: encoder)) { first, _ in first }
        for (index, failure) in failures where settled[index] == nil { settled[index] = .failed(failure) }
        if settled.isEmpty { return RequestsView.withRequests(batch) { database.write($0) } }
        let writable = batch.indices.filter { settled[$0] == nil }.map { batch[$0].request }
        var written = database.write(writable).makeIterator()
        return batch.indices.map { index in
            if let status = settled[index] { return status }
            return written.next() ?? .failed(.closed)
        }
    }

    /// Turns the point events a `rules.aggregate` rule matches into folds: their parameters are
    /// not encoded, only their numbers and dimensions kept. A non-finite number fails its event,
    /// as it would fail a stored one.
    private static func foldMatching(_ batch: inout [PendingRequest], rules: [AggregateRule]) -> [Int: NFLoggerError] {
        guard !rules.isEmpty else { return [:] }
        var failures: [Int: NFLoggerError] = [:]
        for index in batch.indices {
            guard case .event(let record) = batch[index].request, record.draft.kind == .point,
                  let rule = rules.rule(for: record.draft.name) else { continue }
            do {
                batch[index].request = .fold(try Fold(record, parameters: batch[index].parameters, rule: rule), record.session)
            } catch {
                failures[index] = error
            }
            batch[index].parameters = [:]
        }
        return failures
    }

    // MARK: Aggregates

    /// Closes the aggregates whose windows ended (with `early`, those open a second or more)
    /// and tells the uploader about them.
    private func closeAggregates(early: Bool) {
        database.closeAggregates(early: early)
        let closed = database.takeClosedAggregates()
        if closed > 0 { for uploader in uploaders { uploader.recorded(closed) } }
        scheduleWindowTimer()
    }

    /// Keeps one timer armed for the next window's end.
    private func scheduleWindowTimer() {
        guard let next = database.nextAggregateClose else {
            windowTimer?.cancel()
            (windowTimer, windowTimerDeadline) = (nil, nil)
            return
        }
        guard next != windowTimerDeadline else { return }
        windowTimer?.cancel()
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let delay = max(0, next - clock.wallMilliseconds()) + 5  // just past the end: closing is `end <= now`
        timer.schedule(deadline: .now() + .milliseconds(Int(min(delay, 86_400_000))), leeway: .milliseconds(100))
        timer.setEventHandler { [weak self] in
            guard let self else { return }
            self.windowTimerDeadline = nil
            self.closeAggregates(early: false)
        }
        timer.resume()
        (windowTimer, windowTimerDeadline) = (timer, next)
    }

    /// Runs `body` on the queue after every request queued before this call has been written
    /// (one drain turn takes everything queued so far).
    func afterPendingWrites(_ body: @escaping @Sendable (DatabaseManager, [Uploader]) -> Void) {
        queue.async {
            self.drain()
            body(self.database, self.uploaders)
        }
    }

    /// Applies a policy's upload settings and storage limits (or, with `nil`, the configuration's)
    /// from the next batch and the next write on.
    func apply(_ policy: Policy?) {
        queue.async {
            let disabled = policy?.disabledOutputs ?? []
            for uploader in self.uploaders {
                uploader.apply(policy?.upload)
                uploader.setEnabled(!disabled.contains(uploader.outputID))
            }
            self.database.limits = StorageLimits(self.configurationLimits, policy: policy)
            self.database.aggregateRules = policy?.aggregates ?? []
            self.database.disabledOutputs = disabled
            self.bestEffort.disabled = disabled
        }
    }

    // MARK: Maintenance

    /// Drops events past the age limit, abandons timed-out spans, enforces the row and byte limits
    /// and gives space back to the disk: the Pruner's periodic pass, on the queue.
    func maintain() {
        queue.async { self.maintainNow() }
    }

    private func maintainNow() {
        let abandonedBefore = database.abandonedSpans
        let owed = database.owesConsent
        if owed { _ = database.write([StorageRequest]()) }
        closeAggregates(early: false)
        database.enforceLimits(includingAge: true)
        if database.abandonedSpans > abandonedBefore || (owed && !database.owesConsent) {
            for uploader in uploaders { uploader.rowsBecameReady() }
        }
    }

    /// Arms the next periodic pass, unless one is armed or there is nothing to maintain. After
    /// a pass, it is armed again only while something is still stored: the pass recounts what is.
    private func armMaintenanceIfNeeded() {
        guard maintenanceWork == nil, !maintenanceStopped, database.needsMaintenance else { return }
        maintenanceWork = clock.schedule(after: Self.maintenanceInterval.nanoseconds, leeway: .seconds(1), on: queue) { [weak self] in
            guard let self else { return }
            maintenanceWork = nil
            maintainNow()
            armMaintenanceIfNeeded()
        }
    }

    /// Writes what is queued, then delivers everything stored to every enabled durable output,
    /// and reports once each has finished (see ``FlushResult/outputs``).
    func flush(completion: @escaping @Sendable (FlushResult) -> Void) {
        afterPendingWrites { [completions] database, uploaders in
            // An aggregate open a second or more goes with this flush.
            self.closeAggregates(early: true)
            let enabled = uploaders.filter(\.isEnabled)
            guard !enabled.isEmpty else {
                let remaining = (try? database.withOutbox { (outbox) throws(SQLiteError) in try outbox.waitingCount() }) ?? 0
                let error: UploadError = uploaders.isEmpty ? .notConfigured : .outputDisabled
                completions.queue.async { completion(FlushResult(uploadedEvents: 0, remainingEvents: remaining, quarantinedEvents: 0, error: error)) }
                return
            }
            if uploaders.count == 1, enabled[0].outputID == Configuration.collectorOutputID { return enabled[0].flush(completion) }
            let results = FlushCollector(outputs: uploaders.map(\.outputID), completion: completion)
            for uploader in uploaders {
                let id = uploader.outputID
                guard uploader.isEnabled else {
                    // Switched off by the policy: not a failure of this flush, but said in its result.
                    let waiting = (try? database.withOutbox(id) { (outbox) throws(SQLiteError) in try outbox.waitingCount() }) ?? 0
                    results.finished(id, FlushResult(uploadedEvents: 0, remainingEvents: waiting, quarantinedEvents: 0, error: .outputDisabled))
                    continue
                }
                uploader.flush { results.finished(id, $0) }
            }
        }
    }

    /// Refuses new requests, writes what is queued, closes the database, then calls `completion`.
    func close(completion: @escaping @Sendable () -> Void) {
        pending.withLock { $0.closed = true }
        afterPendingWrites { database, _ in
            self.closeAggregates(early: true)
            self.maintenanceStopped = true
            self.maintenanceWork?.cancel()
            self.windowTimer?.cancel()
            for uploader in self.uploaders { uploader.close() }
            database.close()
            completion()
        }
    }

    var pendingCount: Int { pending.withLock { $0.eventCount } }

    /// On the queue: each best-effort output's id, whether the policy disabled it, and how many
    /// events it was handed.
    var bestEffortHanded: @Sendable () -> [(id: String, enabled: Bool, handed: Int)] {
        { [bestEffort] in bestEffort.ids.map { ($0, !bestEffort.disabled.contains($0), bestEffort.handed[$0] ?? 0) } }
    }
}
