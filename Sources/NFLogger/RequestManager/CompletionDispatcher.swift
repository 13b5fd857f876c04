import Dispatch
import Atomics

/// Completion handler of every logging call.
public typealias LogCompletion = @Sendable (LogStatus) -> Void

/// Delivers statuses to completion handlers, always asynchronously on the completion queue and
/// never on the caller's thread, and counts them for diagnostics.
///
/// Statuses wait in one mailbox, in the order they were finished, and one hop to the queue runs
/// every status waiting when it runs; those finished while it runs go in the one hop it queues
/// as it ends: a hop (a block, a wake-up of the queue's thread) costs the process far more than
/// the completion it runs, so a burst of calls pays for a few, not one each. Entries move through a
/// ``CompletionBuffer`` (never copied) from the writer or the caller to the completion.
final class CompletionDispatcher: Sendable {
    let queue: DispatchQueue
    /// Statuses not yet handed to their completions, in order (`waiting`), whether a hop is
    /// queued or running that will run them or queue the one that does (`hopPending`: a call
    /// that finds it false sets it and queues one; only a hop clears it, as it ends with nothing
    /// waiting), and the storage the last run emptied (`spare`), so the next burst does not grow
    /// a buffer from nothing.
    private struct Mailbox: ~Copyable {
        var waiting: CompletionBuffer?
        var hopPending = false
        var spare: CompletionBuffer?

        /// Appends `entries` after what waits (a first batch is kept as it is: its storage, not
        /// a copy of its entries).
        mutating func append(moving entries: inout CompletionBuffer?) {
            guard var more = entries.take() else { return }
            if var queued = waiting.take() {
                queued.append(moving: &more)
                waiting = consume queued
            } else {
                waiting = consume more
            }
        }

        /// True when the caller must queue a hop: none is pending.
        mutating func claimHop() -> Bool {
            guard !hopPending else { return false }
            hopPending = true
            return true
        }
    }
    private let mailbox = Lock(Mailbox())
    /// The largest emptied storage kept for the next burst, in statuses (~40 bytes each).
    private static let spareCapacity = 4_096
    /// A new buffer's room, in statuses.
    private static let initialCapacity = 64
    // UnsafeAtomic (created here, destroyed in deinit): a ManagedAtomic reaches its storage
    // through a class method, an indirect call on every count.
    private let recorded = UnsafeAtomic<Int>.create(0)
    private let filtered = UnsafeAtomic<Int>.create(0)
    private let disabled = UnsafeAtomic<Int>.create(0)
    private let failed = UnsafeAtomic<Int>.create(0)

    init(queue: DispatchQueue) {
        self.queue = queue
    }

    deinit {
        for counter in [recorded, filtered, disabled, failed] { counter.destroy() }
    }

    func count(_ status: LogStatus) {
        switch status {
        case .recorded: recorded.wrappingIncrement(ordering: .relaxed)
        case .filtered: filtered.wrappingIncrement(ordering: .relaxed)
        case .disabled: disabled.wrappingIncrement(ordering: .relaxed)
        case .failed: failed.wrappingIncrement(ordering: .relaxed)
        }
    }

    /// Counts `status` and hands it to `completion`, if there is one.
    func finish(_ status: LogStatus, _ completion: LogCompletion?) {
        count(status)
        guard let completion else { return }
        post(completion, status)
    }

    /// ``finish(_:_:)`` for ``LogStatus/disabled``, the Disabled path's: no status to build or switch on.
    @inline(__always)
    func finishDisabled(_ completion: consuming LogCompletion?) {
        disabled.wrappingIncrement(ordering: .relaxed)
        guard let completion else { return }
        post(completion, .disabled)
    }

    /// Hands a committed batch's statuses to their completions, after any finished before them.
    func finish(batch: consuming CompletionBuffer) {
        guard !batch.isEmpty else { return }
        var incoming = Optional(batch)
        let hop = mailbox.withLock { (box: inout Mailbox) -> Bool in
            box.append(moving: &incoming)
            return box.claimHop()
        }
        if hop { queueHop() }
    }

    private func post(_ completion: consuming @escaping LogCompletion, _ status: consuming LogStatus) {
        // Built outside the lock and moved in: the closure below captures it by reference, and
        // taking it out is a move (capturing the two values would copy them into the buffer).
        var entry = Optional(Finished(completion: completion, status: status))
        let hop = mailbox.withLock { (box: inout Mailbox) -> Bool in
            if box.waiting == nil { box.waiting = box.spare.take() ?? CompletionBuffer(capacity: Self.initialCapacity) }
            if let finished = entry.take() { box.waiting?.append(finished) }
            return box.claimHop()
        }
        if hop { queueHop() }
    }

    /// Straight onto `queue`, even a concurrent one: at most one hop is pending at a time (the
    /// flag), so hops run one after another anyway, and each is queued behind the queue's other
    /// work. (A serial queue targeting `queue` drained every hop queued while one ran in the same
    /// turn, ahead of that work.)
    private func queueHop() {
        queue.async { self.deliverWaiting() }
    }

    /// On the completion queue: runs every status waiting, outside the lock (a completion may
    /// log again, and finish more). Statuses finished meanwhile queue no hop of their own: this
    /// one queues the next when it ends, behind whatever else the completion queue holds (it
    /// may be the main queue), so a steady stream of statuses never keeps the queue from its
    /// other work. Keeps the emptied storage for the next burst.
    private func deliverWaiting() {
        let taken = mailbox.withLock { (box: inout Mailbox) -> CompletionBuffer? in
            let statuses = box.waiting.take()
            if statuses == nil { box.hopPending = false }  // under the same lock: no status can slip past
            return statuses
        }
        guard var statuses = taken else { return }
        statuses.runAll()
        var emptied = Optional(statuses)
        let more = mailbox.withLock { (box: inout Mailbox) -> Bool in
            // Kept only up to a bound, so one burst does not hold its memory for the logger's life.
            if let capacity = emptied?.capacity, capacity <= Self.spareCapacity, capacity > box.spare?.capacity ?? 0 {
                swap(&box.spare, &emptied)
            }
            box.hopPending = box.waiting != nil
            return box.hopPending
        }
        if more { queueHop() }
    }

    var counts: (recorded: Int, filtered: Int, disabled: Int, failed: Int) {
        (recorded.load(ordering: .relaxed), filtered.load(ordering: .relaxed),
         disabled.load(ordering: .relaxed), failed.load(ordering: .relaxed))
    }
}
