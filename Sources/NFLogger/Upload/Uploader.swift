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
/// A failure waits in one of two ways. A batch that failed on its own (a dropped connection, a
/// 5xx without `Retry-After`) while the collector answers others waits alone: the other batches
/// keep going, as one broken connection says nothing about the collector. When the collector
/// asks for a pause (`Retry-After`), refuses the key, or fails `failuresBeforeWaitingAll` times
/// in a row with no delivery between (it looks down), nothing at all is sent until the wait ends.
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

    private enum Phase {
        case ready
        /// Waiting after a failure: nothing new is sent before `until` (monotonic nanoseconds).
        case backingOff(until: UInt64)
        /// The collector refused the key or URL; same rule, with the longer wait.
        case paused(until: UInt64)
    }
    private var phase = Phase.ready
    /// Held closed while a wait is in force, for the requests already on their way out.
    private let gate = SendGate()
    private var backoff: Backoff
    /// Batches sent and not yet answered, by their row id.
    private var inFlight: [Int64: OutgoingBatch] = [:]
    /// Batches whose send failed, by row id, each slimmed to what settling it needs, with the
    /// compressed body that went out: the retry sends the same bytes without reading, encoding and
    /// compressing its events again. Up to `failedBodiesMaxBytes` of bodies; a batch beyond that
    /// is formed afresh when its turn comes.
    private var failedBodies: [Int64: (batch: OutgoingBatch, body: Data)] = [:]
    private var failedBodiesBytes = 0
    /// While batches wait out their own backoffs, many may be waiting at once (at 30% faults,
    /// often more than four): 1 MiB holds ~50 batches of 1,000 typical events, or two of the
    /// largest, incompressible ones.
    static let failedBodiesMaxBytes = 1 << 20
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
    /// Halved on 413/400/422 to split a batch; back to the setting once the queue is empty.
    private var batchMaxEvents: Int
    private var recordedSinceUpload = 0
    private var flushes = FlushWaiters()
    /// Batches that failed on their own, by row id: not sent again before this (monotonic
    /// nanoseconds). Their rows stay in the batch, so no other batch takes them meanwhile.
    private var batchWaits: [Int64: UInt64] = [:]
    /// How many times each batch not yet delivered has failed: its own wait grows with these,
    /// not with other batches' failures.
    private var batchFailures: [Int64: Int] = [:]
    /// Failures in a row (no delivery between) from which every batch waits, not just the failed
    /// one: each lane failed twice, and once more. Fewer would take a run of unlucky connections
    /// (three in a row come every 37 requests when 30% fail) for a collector that is down.
    private var failuresBeforeWaitingAll: Int { 2 * settings.maxConcurrentUploads + 1 }
    /// When the retry timer is set to fire (monotonic nanoseconds), so it is not set again for the same moment.
    private var wakeAt: UInt64?
    /// Consecutive deliveries since a split reduced the batch size; at 16 it goes back up.
    private var deliveriesSinceSplit = 0
    static let deliveriesBeforeRegrowing = 16
    private var retryTimer: (any DispatchSourceTimer)?
    private var intervalTimer: (any DispatchSourceTimer)?

    private(set) var uploadedEvents = 0
    private(set) var uploadedBatches = 0
    private(set) var retriedAttempts = 0
    private(set) var quarantinedEvents = 0
    private(set) var lastError: UploadError?
    private(set) var nextAttempt: Date?

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
        self.batchMaxEvents = settings.batchMaxEvents
        backoff = Backoff(initial: settings.initialBackoff, maximum: settings.maxBackoff, jitter: .full, random: random)
    }

    deinit {
        retryTimer?.cancel()
        intervalTimer?.cancel()
    }

    // MARK: Triggers (all on `queue`)

    /// Starts the interval timer and sends what a previous run left behind.
    func start() {
        owner.check()
        scheduleInterval()
        resumeHold()
        trigger()
    }

    /// A `Retry-After` an earlier process was given and that has not ended: this one waits it out
    /// too (at most a day, whatever the wall clock did meanwhile).
    private func resumeHold() {
        guard let hold = try? database.withOutbox(outputID, { (outbox) throws(SQLiteError) in try outbox.uploadHold() }) else { return }
        let remaining = hold.untilMilliseconds &- clock.wallMilliseconds()
        guard remaining > 0 else { return }
        wait(Double(min(remaining, 86_400_000)) / 1_000, then: { .backingOff(until: $0) },
             .server(status: hold.status, message: hold.message))
    }

    private func scheduleInterval() {
        intervalTimer?.cancel()
        guard !closed else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        let interval = settings.interval.dispatchInterval
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(100))
        timer.setEventHandler { [weak self] in self?.trigger() }
        timer.resume()
        intervalTimer = timer
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
        batchMaxEvents = min(batchMaxEvents, next.batchMaxEvents)
        if inFlight.isEmpty { batchMaxEvents = next.batchMaxEvents }
        if intervalChanged && intervalTimer != nil { scheduleInterval() }
    }

    /// Counts newly recorded events; past the threshold, uploads without waiting for the interval.
    func recorded(_ count: Int) {
        owner.check()
        recordedSinceUpload += count
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

    /// Whether a backoff or pause is still in force. Nothing, not even a flush, cuts it short:
    /// the collector's `Retry-After` and the fleet-wide jitter are there to protect it.
    private var isWaiting: Bool {
        switch phase {
        case .backingOff(let until), .paused(let until): clock.monotonicNanoseconds() < until
        case .ready: false
        }
    }

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
        failedBodies = [:]
        failedBodiesBytes = 0
        batchWaits = [:]
        batchFailures = [:]
        retryTimer?.cancel()
        intervalTimer?.cancel()
        for task in sending.values { task.cancel() }
        sending = [:]
        finishFlushes(.closed)
    }

    // MARK: The send loop

    /// Sends batches until `maxConcurrentUploads` are in flight or nothing is ready; when nothing
    /// is in flight and nothing is ready, the queue is empty and waiting flushes are told.
    private func fill() {
        if let stopped { return finishFlushes(stopped) }
        while inFlight.count < settings.maxConcurrentUploads && !isWaiting {
            guard let (batch, body) = prepareNext() else { break }
            send(batch, compressed: body)
        }
        guard inFlight.isEmpty && !isWaiting else { return }
        if let earliest = batchWaits.values.min() {
            // Only batches that failed on their own are left, each waiting out its backoff: a
            // flush stops here and says why, as at any failure; the timer sends them later.
            armRetryTimer(at: earliest)
            return finishFlushes(lastError)
        }
        phase = .ready
        gate.open()
        batchMaxEvents = settings.batchMaxEvents
        recordedSinceUpload = 0
        finishFlushes(nil)
    }

    /// The next batch not already in flight, with its compressed body when it is a failed batch
    /// sent again unchanged; or `nil` (nothing ready, or a storage failure, which starts a backoff).
    private func prepareNext() -> (OutgoingBatch, Data?)? {
        if !batchWaits.isEmpty {  // the usual case is none: no new dictionary per batch then
            let monotonicNow = clock.monotonicNanoseconds()
            batchWaits = batchWaits.filter { $0.value > monotonicNow }
        }
        if let (rowID, failed) = failedBodies.first(where: { inFlight[$0.key] == nil && batchWaits[$0.key] == nil }) {
            failedBodies[rowID] = nil
            failedBodiesBytes -= failed.body.count
            // Pruning or a database reset may have changed it meanwhile: then it is formed afresh.
            if (try? database.withOutbox(outputID) { (outbox) throws(SQLiteError) in try outbox.isIntact(failed.batch) }) == true {
                return (failed.batch, failed.body)
            }
        }
        let now = clock.wallMilliseconds()
        let maxEvents = batchMaxEvents
        let busy = Set(inFlight.keys).union(batchWaits.keys)
        do {
            let batch = try database.withOutbox(outputID) { (outbox) throws(SQLiteError) in
                try outbox.nextBatch(maxEvents: maxEvents, maxBytes: settings.batchMaxBytes, now: now, excluding: busy)
            }
            return batch.map { ($0, nil) }
        } catch {
            backOff(.storage(error), retryAfter: nil)
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
        handle(batch, outcome)
        // A batch to be sent again goes as it went out; one the answer settled (delivered, split,
        // quarantined) or that pauses uploads is formed afresh when its turn comes.
        let sendsAgain = switch outcome {
        case .failure(let error): !(error is CompressionFailure)
        case .success(let response): if case .retry = UploadVerdict(response) { true } else { false }
        }
        if !sendsAgain { batchFailures[batch.rowID] = nil }  // settled: its row id may be reused
        if sendsAgain, sink.sendsCompressedBody, let body, failedBodies[batch.rowID] == nil,
           failedBodiesBytes + body.count <= Self.failedBodiesMaxBytes {
            failedBodiesBytes += body.count
            failedBodies[batch.rowID] = (batch.retained, body)
        }
        if isWaiting || batchWaits[batch.rowID] != nil {
            // The upload failed: its events are queued data again, and may now be the oldest
            // beyond the row limit, which did not count them while they were on the network.
            database.enforceLimits(includingAge: false)
        }
        finishSatisfiedFlushes()
        // Keep the pipe full, unless a failure just started a wait (its timer resumes).
        if stopped == nil && !isWaiting { fill() }
    }

    private func handle(_ batch: OutgoingBatch, _ outcome: Result<TransportResponse, any Error>) {
        let response: TransportResponse
        switch outcome {
        case .failure(is HeldBack):
            return  // not sent: nothing to count; the wait that held it back ends with a trigger
        case .failure(let failure as CompressionFailure):
            return backOff(.encoding("\(failure.error)"), retryAfter: nil)
        case .failure(let failure as UntrustedCollector):
            // A security event, not weather: said at error level. It may be a captive portal or an
            // attacker, so back off as after any failure rather than pausing for long.
            logger.error("refusing the collector's certificate; events stay on the device", metadata: ["host": "\(failure.host)"])
            return retry(batch, .untrustedCollector(failure.description), retryAfter: nil)
        case .failure(let error):
            return retry(batch, .network(describeTransportError(error)), retryAfter: nil)
        case .success(let value):
            response = value
        }
        let status = response.status
        switch UploadVerdict(response) {
        case .delivered:
            delivered(batch)
        case .split where batch.eventCount > 1:
            // Too big, or one event in it is refused: send it again in halves to find out.
            logger.debug("splitting a refused batch", metadata: ["status": "\(status)", "events": "\(batch.eventCount)"])
            batchMaxEvents = max(1, batch.eventCount / 2)
            deliveriesSinceSplit = 0
            do { try database.withOutbox(outputID) { (outbox) throws(SQLiteError) in try outbox.release(batch) } } catch {
                return backOff(.storage(error), retryAfter: nil)
            }
        case .split:
            quarantine(batch, status: status, reason: response.errorMessage)
        case .retry(let retryAfter):
            retry(batch, .server(status: status, message: response.errorMessage), retryAfter: retryAfter)
        case .pause:
            pause(.refused(status: status, message: response.errorMessage))
        }
    }

    private func delivered(_ batch: OutgoingBatch) {
        do {
            let deleted = try database.withOutbox(outputID) { (outbox) throws(SQLiteError) in try outbox.delivered(batch) }
            uploadedEvents += deleted
            uploadedBatches += 1
        } catch {
            // Delivered but not deleted: the same batch goes again and the collector's
            // de-duplication drops it. Nothing is lost either way.
            return backOff(.storage(error), retryAfter: nil)
        }
        backoff.reset()
        if !isWaiting && batchWaits.isEmpty {  // another batch's failure may have started a wait: keep its story
            lastError = nil
            nextAttempt = nil
        }
        if batchMaxEvents < settings.batchMaxEvents {
            deliveriesSinceSplit += 1
            if deliveriesSinceSplit >= Self.deliveriesBeforeRegrowing { batchMaxEvents = settings.batchMaxEvents }
        }
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
            return backOff(.storage(error), retryAfter: nil)
        }
        quarantinedEvents += batch.eventCount
        // The refused event is out of the way: batches may be full-size again.
        batchMaxEvents = settings.batchMaxEvents
    }

    // MARK: Waiting

    private func retry(_ batch: OutgoingBatch, _ error: UploadError, retryAfter: TimeInterval?) {
        try? database.withOutbox(outputID) { (outbox) throws(SQLiteError) in try outbox.countAttempt(batch) }
        retriedAttempts += 1
        guard retryAfter == nil, backoff.failures + 1 < failuresBeforeWaitingAll else {
            if let retryAfter, case .server(let status, let message) = error {
                // The collector's wait binds the next process too (a crash, a restart).
                let until = clock.wallMilliseconds() &+ min(retryAfter, Backoff.longestRetryAfter).milliseconds
                try? database.withOutbox(outputID) { (outbox) throws(SQLiteError) in
                    try outbox.holdUploads(untilMilliseconds: until, status: status, message: message)
                }
            }
            return backOff(error, retryAfter: retryAfter)
        }
        // This batch alone waits, as long as its own failures say; the others go on.
        _ = backoff.failed()
        let failures = batchFailures[batch.rowID, default: 0] + 1
        batchFailures[batch.rowID] = failures
        let delay = backoff.delay(afterFailures: failures)
        logger.debug("upload failed; retrying the batch later", metadata: ["output": "\(outputID)", "error": "\(error)", "delay_s": "\(delay)"])
        let end = endOfWait(delay)
        batchWaits[batch.rowID] = end.until
        lastError = error
        nextAttempt = end.at
    }

    /// When a wait of `delay` seconds (at most a week) ends: on the monotonic clock, saturating,
    /// for the timers; and as the wall time ``nextAttempt`` shows.
    private func endOfWait(_ delay: TimeInterval) -> (until: UInt64, at: Date) {
        let nanoseconds = min(delay, 7 * 86_400).nanoseconds
        let (sum, overflow) = clock.monotonicNanoseconds().addingReportingOverflow(nanoseconds)
        return (overflow ? .max : sum, Date(timeIntervalSince1970: Double(clock.wallMilliseconds()) / 1000 + Double(nanoseconds) / 1e9))
    }

    /// Waits as ``Backoff`` says: exponential with full jitter, never less than `Retry-After`.
    private func backOff(_ error: UploadError, retryAfter: TimeInterval?) {
        let delay = backoff.failed(retryAfter: retryAfter)
        logger.debug("upload failed; retrying later", metadata: ["output": "\(outputID)", "error": "\(error)", "delay_s": "\(delay)"])
        wait(delay, then: { .backingOff(until: $0) }, error)
    }

    private func pause(_ error: UploadError) {
        logger.error("the output refused uploads; pausing them", metadata: ["output": "\(outputID)", "error": "\(error)"])
        wait(settings.refusedBackoff, then: { .paused(until: $0) }, error)
    }

    private func wait(_ delay: TimeInterval, then phaseUntil: (UInt64) -> Phase, _ error: UploadError) {
        let (until, at) = endOfWait(delay)
        lastError = error
        // A wait in force is never cut short: a network error on one connection, answered with a
        // short backoff, must not undo the `Retry-After` another batch was just given.
        if case .backingOff(let current) = phase, current >= until { return finishFlushes(error) }
        if case .paused(let current) = phase, current >= until { return finishFlushes(error) }
        phase = phaseUntil(until)
        gate.close(until: until)
        nextAttempt = at
        armRetryTimer(at: until)
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
