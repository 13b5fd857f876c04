import Dispatch
import Foundation
import Logging
@_spi(NFLogShared) import NFLogSupport

/// Sends the stored events to one durable output (the collector, or another: its ``BatchSink``),
/// a few batches at a time
/// (``Configuration/Upload/maxConcurrentUploads``), and settles each batch by the answer:
/// delivered (delete its rows), too big or refused (split it; quarantine a single refused event),
/// failed (back off and send the same batch again), or not allowed (pause).
///
/// What each answer means, how big a batch is and how long a failure waits is decided by its
/// ``UploadStateMachine``, a value with no I/O; the Uploader does the rest: it reads and settles
/// batches in the database, compresses and sends them, keeps failed bodies, arms the timers and
/// completes the flushes.
///
/// All its state lives on the RequestManager's queue; only the HTTP requests run elsewhere.
final class Uploader: @unchecked Sendable {
    // @unchecked: every mutable property is read and written only on `queue`, the
    // RequestManager's serial queue; the network call hands its result back to `queue`.
    private let queue: DispatchQueue
    /// ``queue`` as the owner every entry point checks (debug builds).
    private let owner: QueueOwner
    private let database: DatabaseManager
    /// Where batches go, and the output whose queue they come from.
    private let sink: any BatchSink
    let outputID: String
    /// The configuration's settings, which a policy may override field by field.
    private let baseSettings: Configuration.Upload
    private var settings: Configuration.Upload
    private let clock: any EventClock
    private let logger: Logger
    private let completionQueue: DispatchQueue
    /// Where batches are compressed: off the serial queue (so the next batch is prepared and
    /// events are written meanwhile) and off Swift's cooperative pool (milliseconds of CPU).
    private let compressionQueue = DispatchQueue(label: "nflog.upload.gzip")

    /// The decisions: waits, batch size, what each answer means.
    private var machine: UploadStateMachine
    /// Held closed while a wait is in force, for the requests already on their way out.
    private let gate = SendGate()
    /// Batches sent and not yet answered, by their row id.
    private var inFlight: [Int64: OutgoingBatch] = [:]
    /// Failed batches' compressed bodies, sent again as they went out.
    private var failedBodies = FailedBodies()
    private var suspended = false
    private var closed = false
    /// Consent is pending: events are held on the device, nothing is sent.
    private var consentPending = false
    /// The policy switched this output off (`outputs.disabled`): nothing is sent.
    private var disabled = false
    /// The request of each batch on the network, cancelled by ``close()``: a closed logger leaves
    /// nothing running (the batch stays stored and goes again next time; the collector keeps
    /// each event once).
    private var sending: [Int64: Task<Void, Never>] = [:]
    private var recordedSinceUpload = 0
    private var flushes = FlushWaiters()
    /// When the retry timer is set to fire (monotonic nanoseconds), so it is not set again for the same moment.
    private var wakeAt: UInt64?
    private var retryTimer: (any DispatchSourceTimer)?
    /// The interval's timer, armed only while there is something to send (events recorded since
    /// it last fired): an idle logger wakes for nothing. It fires once.
    private var intervalWork: (any ScheduledWork)?

    private(set) var uploadedEvents = 0
    private(set) var uploadedBatches = 0
    private(set) var retriedAttempts = 0
    private(set) var quarantinedEvents = 0
    var lastError: UploadError? { machine.lastError }
    var nextAttempt: Date? { machine.nextAttempt }

    /// - Parameters:
    ///   - clock: the one clock the Uploader reads: its monotonic reading for waits, its wall
    ///     reading for ``nextAttempt`` and batch times.
    ///   - random: the backoff's jitter (a seeded generator in tests).
    init(queue: DispatchQueue, database: DatabaseManager, sink: any BatchSink, outputID: String = Configuration.collectorOutputID,
         settings: Configuration.Upload, clock: any EventClock, logger: Logger, completionQueue: DispatchQueue,
         consent: Consent = .granted, random: any RandomNumberGenerator = SystemRandomNumberGenerator()) {
        self.queue = queue
        // Known before start(): its first trigger must already obey it.
        self.consentPending = consent == .pending
        self.owner = QueueOwner(queue: queue)
        self.database = database
        self.sink = sink
        self.outputID = outputID
        self.baseSettings = settings
        self.settings = settings
        self.clock = clock
        self.logger = logger
        self.completionQueue = completionQueue
        machine = UploadStateMachine(settings: settings, random: random)
    }

    deinit {
        retryTimer?.cancel()
        intervalWork?.cancel()
    }

    // MARK: Triggers (all on `queue`)

    /// Sends what a previous run left behind (or waits out the hold it was given).
    func start() {
        owner.check()
        resumeHold()
        trigger()
    }

    /// A `Retry-After` an earlier process was given and that has not ended: this one waits it out
    /// too (at most a day, whatever the wall clock did meanwhile).
    private func resumeHold() {
        guard let hold = try? database.withOutbox(outputID, { (outbox) throws(SQLiteError) in try outbox.uploadHold() }) else { return }
        let remaining = hold.untilMilliseconds &- clock.wallMilliseconds()
        guard remaining > 0 else { return }
        let error = UploadError.server(status: hold.status, message: hold.message)
        started(machine.resumeHold(remaining: Double(min(remaining, 86_400_000)) / 1_000, error, at: now), error)
    }

    /// The clock's readings now.
    private var now: UploadStateMachine.Instant {
        UploadStateMachine.Instant(monotonic: clock.monotonicNanoseconds(), wallMilliseconds: clock.wallMilliseconds())
    }

    /// Arms the interval's timer unless it is armed: what was recorded goes at most one
    /// interval later. Each path that makes rows ready without recording triggers at once
    /// (consent granted, resumed, enabled, a flush) or arms it (``rowsBecameReady()``).
    private func armInterval() {
        guard intervalWork == nil, !closed else { return }
        intervalWork = clock.schedule(after: settings.interval.nanoseconds, leeway: .milliseconds(100), on: queue) { [weak self] in
            guard let self else { return }
            intervalWork = nil
            trigger()
        }
    }

    /// Takes a policy's upload settings (or, with `nil`, goes back to the configuration's).
    func apply(_ overrides: Policy.Upload?) {
        owner.check()
        var next = baseSettings
        if let interval = overrides?.interval { next.interval = interval }
        if let events = overrides?.batchMaxEvents { next.batchMaxEvents = events }
        if let bytes = overrides?.batchMaxBytes { next.batchMaxBytes = bytes }
        if let level = overrides?.gzipLevel { next.gzipLevel = level }
        let intervalChanged = next.interval != settings.interval
        settings = next
        machine.apply(next, nothingInFlight: inFlight.isEmpty)
        if intervalChanged, let armed = intervalWork {
            armed.cancel()
            intervalWork = nil
            armInterval()
        }
    }

    /// Rows became ready without being recorded by this process's calls (a span the Pruner
    /// abandoned, held rows a retried consent change released): they go within an interval.
    func rowsBecameReady() {
        owner.check()
        armInterval()
    }

    /// Counts newly recorded events; past the threshold, uploads without waiting for the interval.
    func recorded(_ count: Int) {
        owner.check()
        recordedSinceUpload += count
        armInterval()
        if recordedSinceUpload >= settings.countThreshold { trigger() }
    }

    /// Uploads now unless suspended, closed, held for consent, or waiting out a backoff or pause.
    private func trigger() {
        guard stopped == nil, !isWaiting else { return }
        fill()
    }

    /// Why nothing may be sent now, if something forbids it.
    private var stopped: UploadError? {
        if closed { return .closed }
        if suspended { return .suspended }
        if consentPending { return .consentPending }
        if disabled { return .outputDisabled }
        return nil
    }

    /// Whether a backoff or pause for every batch is still in force (``UploadStateMachine``).
    private var isWaiting: Bool { machine.isWaiting(at: clock.monotonicNanoseconds()) }

    /// Uploads everything stored, then reports. Stops at the first failure and says why; during
    /// a backoff it reports the failure that caused it without sending.
    func flush(_ completion: @escaping @Sendable (FlushResult) -> Void) {
        owner.check()
        let watermark = try? database.withOutbox(outputID) { (outbox) throws(SQLiteError) in try outbox.watermark() }
        flushes.add(.init(uploadedAtStart: uploadedEvents, quarantinedAtStart: quarantinedEvents,
                          watermark: watermark, completion: completion))
        if let stopped { return finishFlushes(stopped) }
        if isWaiting { return finishFlushes(lastError) }
        trigger()
    }

    /// While consent is pending nothing is sent; granting (or denying, which deletes what was
    /// held) lets the events recorded with consent go.
    func setConsent(_ consent: Consent) {
        owner.check()
        consentPending = consent == .pending
        if consentPending { finishFlushes(.consentPending) } else { trigger() }
    }

    /// Switches the output off (nothing is sent; waiting flushes are told why) or on again.
    func setEnabled(_ enabled: Bool) {
        owner.check()
        guard disabled == enabled else { return }
        disabled = !enabled
        if disabled { finishFlushes(.outputDisabled) } else { trigger() }
    }

    var isEnabled: Bool { !disabled }

    func suspend() {
        owner.check()
        suspended = true
        finishFlushes(.suspended)
    }

    func resume() {
        owner.check()
        guard suspended else { return }
        suspended = false
        trigger()
    }

    func close() {
        owner.check()
        closed = true
        failedBodies.removeAll()
        machine.close()
        retryTimer?.cancel()
        intervalWork?.cancel()
        for task in sending.values { task.cancel() }
        sending = [:]
        finishFlushes(.closed)
    }

    // MARK: The send loop

    /// Sends batches until `maxConcurrentUploads` are in flight or nothing is ready; when nothing
    /// is in flight and nothing is ready, the queue is empty and waiting flushes are told.
    private func fill() {
        if let stopped { return finishFlushes(stopped) }
        while machine.maySend(inFlight: inFlight.count, at: clock.monotonicNanoseconds()) {
            guard let (batch, body) = prepareNext() else { break }
            send(batch, compressed: body)
        }
        guard inFlight.isEmpty && !isWaiting else { return }
        if let earliest = machine.earliestBatchWait {
            // Only batches that failed on their own are left, each waiting out its backoff: a
            // flush stops here and says why, as at any failure; the timer sends them later.
            armRetryTimer(at: earliest)
            return finishFlushes(lastError)
        }
        machine.queueEmptied()
        gate.open()
        recordedSinceUpload = 0
        finishFlushes(nil)
    }

    /// The next batch not already in flight, with its compressed body when it is a failed batch
    /// sent again unchanged; or `nil` (nothing ready, or a storage failure, which starts a backoff).
    private func prepareNext() -> (OutgoingBatch, Data?)? {
        machine.endBatchWaits(at: clock.monotonicNanoseconds())
        if let failed = failedBodies.take(where: { inFlight[$0] == nil && !machine.isWaitingAlone($0) }) {
            // Pruning or a database reset may have changed it meanwhile: then it is formed afresh.
            if (try? database.withOutbox(outputID) { (outbox) throws(SQLiteError) in try outbox.isIntact(failed.batch) }) == true {
                return (failed.batch, failed.body)
            }
        }
        let now = clock.wallMilliseconds()
        let maxEvents = machine.batchMaxEvents
        let busy = Set(inFlight.keys).union(machine.batchesWaitingAlone)
        do {
            let batch = try database.withOutbox(outputID) { (outbox) throws(SQLiteError) in
                try outbox.nextBatch(maxEvents: maxEvents, maxBytes: settings.batchMaxBytes, now: now, excluding: busy)
            }
            return batch.map { ($0, nil) }
        } catch {
            backOff(.storage(error))
            return nil
        }
    }

    private func send(_ batch: OutgoingBatch, compressed: Data?) {
        inFlight[batch.rowID] = batch
        recordedSinceUpload = 0
        let (sink, outputID, level, logger, queue, gate, clock) =
            (self.sink, self.outputID, settings.gzipLevel, self.logger, self.queue, self.gate, self.clock)
        compressionQueue.async {
            let body: Data
            if let compressed {
                body = compressed
            } else if sink.sendsCompressedBody {
                do throws(GzipError) { body = Data(try Gzip.compress(batch.body, level: level)) } catch {
                    return queue.async { self.settle(batch, body: nil, .failure(CompressionFailure(error: error))) }
                }
            } else {
                body = Data()  // the sink reads the batch itself
            }
            logger.trace("uploading batch", metadata: ["output": "\(outputID)", "batch": "\(batch.id)", "events": "\(batch.eventCount)",
                                                       "bytes": "\(body.count)"])
            // Another batch's failure may have started a wait while this one was compressed.
            guard gate.isOpen(at: clock.monotonicNanoseconds()) else {
                return queue.async { self.settle(batch, body: body, .failure(HeldBack())) }
            }
            let task = Task {
                let outcome: Result<TransportResponse, any Error>
                do { outcome = .success(try await sink.send(batch, body: body)) } catch { outcome = .failure(error) }
                queue.async { self.settle(batch, body: body, outcome) }
            }
            queue.async {
                if self.closed {
                    task.cancel()
                } else if self.inFlight[batch.rowID] != nil {  // not settled already
                    self.sending[batch.rowID] = task
                }
            }
        }
    }

    /// A batch that could not be compressed: not the network's fault, so not counted as an attempt.
    private struct CompressionFailure: Error {
        let error: GzipError
    }

    /// A batch not sent because a wait began while it was compressed: it goes when the wait ends.
    private struct HeldBack: Error {}

    private func settle(_ batch: OutgoingBatch, body: Data?, _ outcome: Result<TransportResponse, any Error>) {
        inFlight[batch.rowID] = nil
        sending[batch.rowID] = nil
        let answer = answer(outcome)
        // The attempt is counted first, and the wait then read from the clock: a write that waits
        // behind another connection's lock must not eat into the wait it precedes.
        if answer.isAttempt { countAttempt(batch) }
        let settlement = machine.settle(batch.rowID, eventCount: batch.eventCount, answer, at: now)
        act(on: settlement.action, for: batch)
        // A batch to be sent again goes as it went out; one the answer settled (delivered, split,
        // quarantined) or that pauses uploads is formed afresh when its turn comes.
        if settlement.sendsAgain, sink.sendsCompressedBody, let body { failedBodies.keep(batch, body: body) }
        if isWaiting || machine.isWaitingAlone(batch.rowID) {
            // The upload failed: its events are queued data again, and may now be the oldest
            // beyond the row limit, which did not count them while they were on the network.
            database.enforceLimits(includingAge: false)
        }
        finishSatisfiedFlushes()
        // Keep the pipe full, unless a failure just started a wait (its timer resumes).
        if stopped == nil && !isWaiting { fill() }
    }

    /// What the state machine needs to know of a send's outcome.
    private func answer(_ outcome: Result<TransportResponse, any Error>) -> UploadStateMachine.Answer {
        switch outcome {
        case .failure(is HeldBack):
            return .heldBack
        case .failure(let failure as CompressionFailure):
            return .compressionFailed("\(failure.error)")
        case .failure(let failure as UntrustedCollector):
            // A security event, not weather: said at error level.
            logger.error("refusing the collector's certificate; events stay on the device", metadata: ["host": "\(failure.host)"])
            return .untrustedCollector(failure.description)
        case .failure(let error):
            return .network(describeTransportError(error))
        case .success(let response):
            let verdict = UploadVerdict(response)
            // A delivery's body is not read: its message would be parsed for nothing on every batch.
            return .response(verdict, status: response.status, message: verdict == .delivered ? "" : response.errorMessage)
        }
    }

    /// Does what the state machine decided for a batch: the database, the logs, the waits.
    private func act(on action: UploadStateMachine.Action, for batch: OutgoingBatch) {
        switch action {
        case .none:
            return
        case .deliver:
            delivered(batch)
        case .release:
            logger.debug("splitting a refused batch", metadata: ["events": "\(batch.eventCount)"])
            do { try database.withOutbox(outputID) { (outbox) throws(SQLiteError) in try outbox.release(batch) } } catch {
                return backOff(.storage(error))
            }
        case .quarantine(let status, let reason):
            quarantine(batch, status: status, reason: reason)
        case .retryAlone(_, let delay):
            logger.debug("upload failed; retrying the batch later",
                         metadata: ["output": "\(outputID)", "error": "\(machine.lastError.map { "\($0)" } ?? "")", "delay_s": "\(delay)"])
        case .retryAll(let wait, let hold):
            if let hold {
                // The collector's wait binds the next process too (a crash, a restart).
                try? database.withOutbox(outputID) { (outbox) throws(SQLiteError) in
                    try outbox.holdUploads(untilMilliseconds: hold.untilMilliseconds, status: hold.status, message: hold.message)
                }
            }
            started(wait, machine.lastError)
        case .waitAll(let wait):
            if let error = machine.lastError, case .refused = error {
                logger.error("the output refused uploads; pausing them", metadata: ["output": "\(outputID)", "error": "\(error)"])
            }
            started(wait, machine.lastError)
        }
    }

    private func countAttempt(_ batch: OutgoingBatch) {
        try? database.withOutbox(outputID) { (outbox) throws(SQLiteError) in try outbox.countAttempt(batch) }
        retriedAttempts += 1
    }

    private func delivered(_ batch: OutgoingBatch) {
        do {
            let deleted = try database.withOutbox(outputID) { (outbox) throws(SQLiteError) in try outbox.delivered(batch) }
            uploadedEvents += deleted
            uploadedBatches += 1
        } catch {
            // Delivered but not deleted: the same batch goes again and the collector's
            // de-duplication drops it. Nothing is lost either way.
            return backOff(.storage(error))
        }
        machine.delivered(at: clock.monotonicNanoseconds())
    }

    /// The collector refused this single event for good: set it aside with its reason.
    private func quarantine(_ batch: OutgoingBatch, status: Int, reason: String) {
        let now = clock.wallMilliseconds()
        logger.warning("an output refused an event; it is quarantined for that output",
                       metadata: ["output": "\(outputID)", "status": "\(status)", "reason": "\(reason)"])
        do {
            try database.withOutbox(outputID) { (outbox) throws(SQLiteError) in
                try outbox.quarantine(batch, status: status, reason: reason, now: now)
            }
        } catch {
            return backOff(.storage(error))
        }
        quarantinedEvents += batch.eventCount
        machine.quarantined()
    }

    // MARK: Waiting

    /// A failure that is no batch's own (storage): every batch waits, as ``Backoff`` says.
    private func backOff(_ error: UploadError) {
        started(machine.backOff(error, retryAfter: nil, at: now), error)
    }

    /// A wait for every batch the state machine started (or kept: a longer one was in force).
    private func started(_ wait: UploadStateMachine.WaitStart, _ error: UploadError?) {
        if case .started(let until, let delay) = wait {
            logger.debug("upload failed; retrying later", metadata: ["output": "\(outputID)", "error": "\(error.map { "\($0)" } ?? "")", "delay_s": "\(delay)"])
            gate.close(until: until)
            armRetryTimer(at: until)
        }
        finishFlushes(error)
    }

    /// Wakes the uploader at `until` (monotonic nanoseconds): the end of a wait, or of a failed
    /// batch's backoff. Dispatch's clock and ours may disagree by a hair: a timer that fires
    /// before the wait is over sets itself again for the rest.
    private func armRetryTimer(at until: UInt64) {
        guard wakeAt != until else { return }
        retryTimer?.cancel()
        wakeAt = until
        let now = clock.monotonicNanoseconds()
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + .nanoseconds(Int(clamping: until > now ? until - now : 0)), leeway: .milliseconds(10))
        timer.setEventHandler { [weak self] in
            guard let self else { return }
            wakeAt = nil
            let now = clock.monotonicNanoseconds()
            if now < until { return armRetryTimer(at: until) }
            trigger()
        }
        timer.resume()
        retryTimer = timer
    }

    /// Completes every waiting flush: with `error` when a failure stopped uploading, or because
    /// the queue is empty.
    private func finishFlushes(_ error: UploadError?) {
        guard !flushes.isEmpty else { return }
        complete(flushes.takeAll(), error: error)
    }

    /// Completes the flushes whose events (those stored before the call) are all delivered.
    private func finishSatisfiedFlushes() {
        guard !flushes.isEmpty else { return }
        let done = flushes.takeSatisfied { watermark in
            (try? database.withOutbox(outputID) { (outbox) throws(SQLiteError) in try outbox.hasWaiting(upTo: watermark) }) == false
        }
        if !done.isEmpty { complete(done, error: nil) }
    }

    private func complete(_ finished: [FlushWaiters.Waiter], error: UploadError?) {
        let remaining = (try? database.withOutbox(outputID) { (outbox) throws(SQLiteError) in try outbox.waitingCount() }) ?? 0
        let uploaded = uploadedEvents
        let quarantined = quarantinedEvents
        completionQueue.async {
            for flush in finished {
                flush.completion(FlushResult(uploadedEvents: uploaded - flush.uploadedAtStart, remainingEvents: remaining,
                                             quarantinedEvents: quarantined - flush.quarantinedAtStart, error: error))
            }
        }
    }
}
