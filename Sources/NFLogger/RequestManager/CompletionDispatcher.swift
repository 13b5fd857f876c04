import Dispatch
import Atomics

/// Completion handler of every logging call.
public typealias LogCompletion = @Sendable (LogStatus) -> Void

/// Delivers statuses to completion handlers, always asynchronously on the completion queue and
/// never on the caller's thread, and counts them for diagnostics.
///
/// Statuses wait in one mailbox, in the order they were finished, and one hop to the queue runs
/// every status waiting when it runs: a hop (a block, a wake-up of the queue's thread) costs the
/// process far more than the completion it runs, so a burst of calls pays for one, not one each.
final class CompletionDispatcher: Sendable {
    let queue: DispatchQueue
    /// A status and the completion it goes to. A struct, not a tuple: an array of tuples holding
    /// a closure and an enum is copied element by element through the runtime's value witnesses.
    struct Finished {
        let completion: LogCompletion
        let status: LogStatus
    }

    /// Statuses not yet handed to their completions (`waiting`: non-empty exactly when a hop
    /// that will run them has been queued, by the call that made it non-empty), and the storage
    /// the last hop emptied (`spare`), so the next burst does not grow an array from nothing.
    private struct Mailbox {
        var waiting: [Finished] = []
        var spare: [Finished] = []
    }
    private let mailbox = Lock(Mailbox())
    /// The largest emptied storage kept for the next burst, in statuses (~40 bytes each).
    private static let spareCapacity = 4_096
    // UnsafeAtomic (created here, destroyed in deinit): a ManagedAtomic reaches its storage
    // through a class method, an indirect call on every count.
    private let recorded = UnsafeAtomic<Int>.create(0)
    private let filtered = UnsafeAtomic<Int>.create(0)
    private let disabled = UnsafeAtomic<Int>.create(0)
    private let failed = UnsafeAtomic<Int>.create(0)

    /// Serial, targeting `queue`: hops run one after another even when `queue` is concurrent.
    private let hopQueue: DispatchQueue

    init(queue: DispatchQueue) {
        self.queue = queue
        self.hopQueue = DispatchQueue(label: "nflogger.completions.hops", target: queue)
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
    func finishDisabled(_ completion: LogCompletion?) {
        disabled.wrappingIncrement(ordering: .relaxed)
        guard let completion else { return }
        post(completion, .disabled)
    }

    /// Hands a committed batch's statuses to their completions, after any finished before them.
    func finish(batch: [Finished]) {
        guard !batch.isEmpty else { return }
        let hop = mailbox.withLock { box in
            guard box.waiting.isEmpty else {
                box.waiting.append(contentsOf: batch)
                return false
            }
            box.waiting = batch  // the batch's storage, not a copy of its elements
            return true
        }
        if hop { hopQueue.async { self.deliverWaiting() } }
    }

    private func post(_ completion: @escaping LogCompletion, _ status: LogStatus) {
        let hop = mailbox.withLock { box in
            box.waiting.append(Finished(completion: completion, status: status))
            return box.waiting.count == 1
        }
        if hop { hopQueue.async { self.deliverWaiting() } }
    }

    /// On the completion queue: runs every status waiting now, outside the lock (a completion
    /// may log again, and finish more), then keeps the emptied storage for the next burst.
    private func deliverWaiting() {
        var statuses = mailbox.withLock { box in
            var taken = box.spare
            box.spare = []
            swap(&taken, &box.waiting)
            return taken
        }
        for finished in statuses { finished.completion(finished.status) }
        // Kept only up to a bound, so one burst does not hold its memory for the logger's life.
        guard statuses.capacity <= Self.spareCapacity else { return }
        statuses.removeAll(keepingCapacity: true)
        mailbox.withLock { box in
            if box.spare.capacity < statuses.capacity { box.spare = statuses }
        }
    }

    var counts: (recorded: Int, filtered: Int, disabled: Int, failed: Int) {
        (recorded.load(ordering: .relaxed), filtered.load(ordering: .relaxed),
         disabled.load(ordering: .relaxed), failed.load(ordering: .relaxed))
    }
}
