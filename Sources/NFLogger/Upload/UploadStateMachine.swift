import Foundation

/// The Uploader's decisions, with no I/O: whether a batch may go now, how many events the next
/// one holds, what an answer means for the batch and for the others, and how long each failure
/// waits. The ``Uploader`` does what it says (the database, the network, timers, flushes) and
/// tells it the times; so every rule here is tested with plain values (UploadStateMachineTests).
///
/// A failure waits in one of two ways. A batch that failed on its own (a dropped connection, a
/// 5xx without `Retry-After`) waits alone, as long as its own failures say. When the collector
/// asks for a pause (`Retry-After`), refuses the key, or fails `failuresBeforeWaitingAll` times in
/// a row with no delivery between, every batch waits (``phase``).
struct UploadStateMachine {
    /// A moment on the Uploader's clock: monotonic for waits, wall time for what is shown and kept.
    struct Instant: Equatable {
        let monotonic: UInt64
        let wallMilliseconds: Int64
    }

    enum Phase: Equatable {
        case ready
        /// Waiting after a failure: nothing new is sent before `until` (monotonic nanoseconds).
        case backingOff(until: UInt64)
        /// The collector refused the key or URL; same rule, with the longer wait.
        case paused(until: UInt64)
    }

    /// What came of sending a batch, as far as the rules care.
    enum Answer: Equatable {
        /// Not sent: a wait began while it was compressed.
        case heldBack
        /// Its body could not be compressed (not the network's fault: no attempt counted).
        case compressionFailed(String)
        /// The collector's certificate was refused.
        case untrustedCollector(String)
        /// No answer: the connection failed.
        case network(String)
        /// An answer, with the verdict docs/PROTOCOL.md gives it.
        case response(UploadVerdict, status: Int, message: String)

        /// An attempt to count on the batch's rows (before the wait it starts is read from the
        /// clock): a failed send or an answer to send again.
        var isAttempt: Bool {
            switch self {
            case .untrustedCollector, .network: true
            case .response(.retry, _, _): true
            case .heldBack, .compressionFailed, .response: false
            }
        }
    }

    /// What the Uploader does with a batch after its answer.
    enum Action: Equatable {
        /// Nothing: it was not sent (``Answer/heldBack``), or the failure already started a wait.
        case none
        /// Delete its rows (then ``delivered(at:)``).
        case deliver
        /// Give its rows back to the queue: it goes again in halves.
        case release
        /// Set its single event aside with the collector's reason.
        case quarantine(status: Int, reason: String)
        /// It waits alone, until `until` (its attempt counted already: ``Answer/isAttempt``).
        case retryAlone(until: UInt64, delay: TimeInterval)
        /// Every batch waits (``wait``; the attempt counted already). `hold`: a `Retry-After`
        /// to keep in the database, binding the next process too.
        case retryAll(wait: WaitStart, hold: Hold?)
        /// Every batch waits: a refusal (pause) or a failure that is not the batch's (compression).
        case waitAll(WaitStart)
    }

    /// A `Retry-After` to keep across launches, until a wall time.
    struct Hold: Equatable {
        let untilMilliseconds: Int64
        let status: Int
        let message: String
    }

    /// The outcome of a wait for every batch.
    enum WaitStart: Equatable {
        /// A new wait, until `until` (monotonic nanoseconds): hold the gate and arm the timer.
        case started(until: UInt64, delay: TimeInterval)
        /// A wait already in force ends later: it stands (a short backoff never cuts a
        /// `Retry-After` short).
        case alreadyLonger
    }

    /// What to do with a batch's answer, and whether the batch goes again as it went out.
    struct Settlement: Equatable {
        let action: Action
        /// Sent again unchanged (its compressed body may be kept for that); otherwise formed
        /// afresh when its turn comes.
        let sendsAgain: Bool
    }

    /// Consecutive deliveries after a split before batches grow back to the setting.
    static let deliveriesBeforeRegrowing = 16

    private(set) var settings: Configuration.Upload
    private(set) var phase = Phase.ready
    private var backoff: Backoff
    /// Halved on 413/400/422 to split a batch; back to the setting once the queue is empty.
    private(set) var batchMaxEvents: Int
    /// Consecutive deliveries since a split reduced the batch size.
    private var deliveriesSinceSplit = 0
    /// Batches that failed on their own, by row id: not sent again before this (monotonic
    /// nanoseconds). Their rows stay in the batch, so no other batch takes them meanwhile.
    private var batchWaits: [Int64: UInt64] = [:]
    /// How many times each batch not yet delivered has failed: its own wait grows with these,
    /// not with other batches' failures.
    private var batchFailures: [Int64: Int] = [:]
    /// Why the last attempt failed, while it is the story (cleared by a delivery with nothing waiting).
    private(set) var lastError: UploadError?
    /// When the wait in force ends, as a wall time.
    private(set) var nextAttempt: Date?

    init(settings: Configuration.Upload, random: any RandomNumberGenerator) {
        self.settings = settings
        batchMaxEvents = settings.batchMaxEvents
        backoff = Backoff(initial: settings.initialBackoff, maximum: settings.maxBackoff, jitter: .full, random: random)
    }

    /// Failures in a row (no delivery between) from which every batch waits, not just the failed
    /// one: each lane failed twice, and once more. Fewer would take a run of unlucky connections
    /// (three in a row are common when a third of requests fail) for a collector that is down.
    var failuresBeforeWaitingAll: Int { 2 * settings.maxConcurrentUploads + 1 }

    // MARK: Sending

    /// Whether a wait for every batch is in force. Nothing, not even a flush, cuts it short: the
    /// collector's `Retry-After` and the fleet-wide jitter are there to protect it.
    func isWaiting(at now: UInt64) -> Bool {
        switch phase {
        case .backingOff(let until), .paused(let until): now < until
        case .ready: false
        }
    }

    /// Whether another batch may go, with `inFlight` on the network.
    func maySend(inFlight: Int, at now: UInt64) -> Bool {
        inFlight < settings.maxConcurrentUploads && !isWaiting(at: now)
    }

    /// Forgets the waits of batches whose own backoff has ended: they may go again.
    mutating func endBatchWaits(at now: UInt64) {
        if !batchWaits.isEmpty { batchWaits = batchWaits.filter { $0.value > now } }  // usually none: no new dictionary
    }

    /// Whether this batch is waiting out its own backoff.
    func isWaitingAlone(_ rowID: Int64) -> Bool { batchWaits[rowID] != nil }

    /// The batches waiting out their own backoffs.
    var batchesWaitingAlone: Dictionary<Int64, UInt64>.Keys { batchWaits.keys }

    /// When the first batch waiting alone may go; `nil` when none waits.
    var earliestBatchWait: UInt64? { batchWaits.values.min() }

    /// Nothing is in flight or ready: the queue is empty. Batches may be full-size again.
    mutating func queueEmptied() {
        phase = .ready
        batchMaxEvents = settings.batchMaxEvents
    }

    /// A policy's settings (or the configuration's again). Batches shrink at once; they grow
    /// back only when nothing is in flight.
    mutating func apply(_ next: Configuration.Upload, nothingInFlight: Bool) {
        settings = next
        batchMaxEvents = min(batchMaxEvents, next.batchMaxEvents)
        if nothingInFlight { batchMaxEvents = next.batchMaxEvents }
    }

    /// The logger closes: no batch waits any more.
    mutating func close() {
        batchWaits = [:]
        batchFailures = [:]
    }

    // MARK: Answers

    /// What the answer to a batch (row id `rowID`, `eventCount` events) means.
    mutating func settle(_ rowID: Int64, eventCount: Int, _ answer: Answer, at now: Instant) -> Settlement {
        let settlement = decide(rowID, eventCount: eventCount, answer, at: now)
        if !settlement.sendsAgain { batchFailures[rowID] = nil }  // settled: its row id may be reused
        return settlement
    }

    private mutating func decide(_ rowID: Int64, eventCount: Int, _ answer: Answer, at now: Instant) -> Settlement {
        switch answer {
        case .heldBack:
            return Settlement(action: .none, sendsAgain: true)  // the wait that held it back ends with a trigger
        case .compressionFailed(let reason):
            return Settlement(action: .waitAll(backOff(.encoding(reason), retryAfter: nil, at: now)), sendsAgain: false)
        case .untrustedCollector(let reason):
            // May be a captive portal or an attacker: back off as after any failure, not a long pause.
            return Settlement(action: retry(rowID, .untrustedCollector(reason), retryAfter: nil, at: now), sendsAgain: true)
        case .network(let reason):
            return Settlement(action: retry(rowID, .network(reason), retryAfter: nil, at: now), sendsAgain: true)
        case .response(let verdict, let status, let message):
            switch verdict {
            case .delivered:
                return Settlement(action: .deliver, sendsAgain: false)
            case .split where eventCount > 1:
                // Too big, or one event in it is refused: send it again in halves to find out.
                batchMaxEvents = max(1, eventCount / 2)
                deliveriesSinceSplit = 0
                return Settlement(action: .release, sendsAgain: false)
            case .split:
                return Settlement(action: .quarantine(status: status, reason: message), sendsAgain: false)
            case .retry(let retryAfter):
                return Settlement(action: retry(rowID, .server(status: status, message: message), retryAfter: retryAfter, at: now),
                                  sendsAgain: true)
            case .pause:
                return Settlement(action: .waitAll(wait(settings.refusedBackoff, paused: true, .refused(status: status, message: message),
                                                        at: now)), sendsAgain: false)
            }
        }
    }

    /// A failed attempt of this batch: it waits alone, unless the collector asked for a wait
    /// (`Retry-After`) or failures in a row say it is down, when every batch waits.
    private mutating func retry(_ rowID: Int64, _ error: UploadError, retryAfter: TimeInterval?, at now: Instant) -> Action {
        guard retryAfter == nil, backoff.failures + 1 < failuresBeforeWaitingAll else {
            var hold: Hold?
            if let retryAfter, case .server(let status, let message) = error {
                hold = Hold(untilMilliseconds: now.wallMilliseconds &+ min(retryAfter, Backoff.longestRetryAfter).milliseconds,
                            status: status, message: message)
            }
            return .retryAll(wait: backOff(error, retryAfter: retryAfter, at: now), hold: hold)
        }
        _ = backoff.failed()
        let failures = batchFailures[rowID, default: 0] + 1
        batchFailures[rowID] = failures
        let delay = backoff.delay(afterFailures: failures)
        let end = Self.endOfWait(delay, at: now)
        batchWaits[rowID] = end.until
        lastError = error
        nextAttempt = end.at
        return .retryAlone(until: end.until, delay: delay)
    }

    /// The rows of a delivered batch are deleted: the next failure starts from the shortest wait,
    /// and after enough deliveries batches grow back from a split.
    mutating func delivered(at now: UInt64) {
        backoff.reset()
        if !isWaiting(at: now) && batchWaits.isEmpty {  // another batch's failure may have started a wait: keep its story
            lastError = nil
            nextAttempt = nil
        }
        if batchMaxEvents < settings.batchMaxEvents {
            deliveriesSinceSplit += 1
            if deliveriesSinceSplit >= Self.deliveriesBeforeRegrowing { batchMaxEvents = settings.batchMaxEvents }
        }
    }

    /// A single refused event is set aside: batches may be full-size again.
    mutating func quarantined() {
        batchMaxEvents = settings.batchMaxEvents
    }

    // MARK: Waiting

    /// A failure that is not one batch's (storage, compression), or one that makes every batch
    /// wait: exponential backoff with full jitter, never less than `Retry-After`.
    mutating func backOff(_ error: UploadError, retryAfter: TimeInterval?, at now: Instant) -> WaitStart {
        wait(backoff.failed(retryAfter: retryAfter), paused: false, error, at: now)
    }

    /// A `Retry-After` an earlier process was given, `remaining` seconds from now.
    mutating func resumeHold(remaining: TimeInterval, _ error: UploadError, at now: Instant) -> WaitStart {
        wait(remaining, paused: false, error, at: now)
    }

    private mutating func wait(_ delay: TimeInterval, paused: Bool, _ error: UploadError, at now: Instant) -> WaitStart {
        let (until, at) = Self.endOfWait(delay, at: now)
        lastError = error
        // A wait in force is never cut short: a network error on one connection, answered with a
        // short backoff, must not undo the `Retry-After` another batch was just given.
        switch phase {
        case .backingOff(let current), .paused(let current): if current >= until { return .alreadyLonger }
        case .ready: break
        }
        phase = paused ? .paused(until: until) : .backingOff(until: until)
        nextAttempt = at
        return .started(until: until, delay: delay)
    }

    /// When a wait of `delay` seconds (at most a week) ends: on the monotonic clock, saturating,
    /// for the timers; and as the wall time ``nextAttempt`` shows.
    static func endOfWait(_ delay: TimeInterval, at now: Instant) -> (until: UInt64, at: Date) {
        let nanoseconds = min(delay, 7 * 86_400).nanoseconds
        let (sum, overflow) = now.monotonic.addingReportingOverflow(nanoseconds)
        return (overflow ? .max : sum, Date(timeIntervalSince1970: Double(now.wallMilliseconds) / 1000 + Double(nanoseconds) / 1e9))
    }
}
