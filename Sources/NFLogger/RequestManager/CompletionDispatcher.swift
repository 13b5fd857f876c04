import Dispatch
import Atomics

/// Completion handler of every logging call.
public typealias LogCompletion = @Sendable (LogStatus) -> Void

/// Delivers statuses to completion handlers, always asynchronously on the completion queue and
/// never on the caller's thread, and counts them for diagnostics.
final class CompletionDispatcher: Sendable {
    let queue: DispatchQueue
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
        queue.async { completion(status) }
    }

    /// ``finish(_:_:)`` for ``LogStatus/disabled``, the Disabled path's: no status to build or switch on.
    @inline(__always)
    func finishDisabled(_ completion: LogCompletion?) {
        disabled.wrappingIncrement(ordering: .relaxed)
        guard let completion else { return }
        queue.async { completion(.disabled) }
    }

    /// Hands a committed batch's statuses to their completions in one hop to the queue.
    func finish(batch: [(LogCompletion, LogStatus)]) {
        guard !batch.isEmpty else { return }
        queue.async {
            for (completion, status) in batch { completion(status) }
        }
    }

    var counts: (recorded: Int, filtered: Int, disabled: Int, failed: Int) {
        (recorded.load(ordering: .relaxed), filtered.load(ordering: .relaxed),
         disabled.load(ordering: .relaxed), failed.load(ordering: .relaxed))
    }
}
