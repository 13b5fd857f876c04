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
    /// Statuses not yet handed to their completions. Non-empty exactly when a hop that will run
    /// them has been queued (the call that made it non-empty queued it).
    private let mailbox = Lock<[(LogCompletion, LogStatus)]>([])
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
    func finishDisabled(_ completion: LogCompletion?) {
        disabled.wrappingIncrement(ordering: .relaxed)
        guard let completion else { return }
        post(completion, .disabled)
    }

    /// Hands a committed batch's statuses to their completions, after any finished before them.
    func finish(batch: [(LogCompletion, LogStatus)]) {
        guard !batch.isEmpty else { return }
        let hop = mailbox.withLock { waiting in
            guard waiting.isEmpty else {
                waiting.append(contentsOf: batch)
                return false
            }
            waiting = batch  // the batch's storage, not a copy of its elements
            return true
        }
        if hop { queue.async { self.deliverWaiting() } }
    }

    private func post(_ completion: @escaping LogCompletion, _ status: LogStatus) {
        let hop = mailbox.withLock { waiting in
            waiting.append((completion, status))
            return waiting.count == 1
        }
        if hop { queue.async { self.deliverWaiting() } }
    }

    /// On the completion queue: runs every status waiting now, outside the lock (a completion
    /// may log again, and finish more).
    private func deliverWaiting() {
        let statuses = mailbox.withLock { waiting in
            defer { waiting.removeAll(keepingCapacity: false) }
            return waiting
        }
        for (completion, status) in statuses { completion(status) }
    }

    var counts: (recorded: Int, filtered: Int, disabled: Int, failed: Int) {
        (recorded.load(ordering: .relaxed), filtered.load(ordering: .relaxed),
         disabled.load(ordering: .relaxed), failed.load(ordering: .relaxed))
    }
}
