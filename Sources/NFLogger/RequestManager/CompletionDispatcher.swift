import Dispatch
import Atomics

/// Completion handler of every logging call.
public typealias LogCompletion = @Sendable (LogStatus) -> Void

/// Delivers statuses to completion handlers, always asynchronously on the completion queue and
/// never on the caller's thread, and counts them for diagnostics.
final class CompletionDispatcher: Sendable {
    let queue: DispatchQueue
    private let recorded = ManagedAtomic<Int>(0)
    private let filtered = ManagedAtomic<Int>(0)
    private let disabled = ManagedAtomic<Int>(0)
    private let failed = ManagedAtomic<Int>(0)

    init(queue: DispatchQueue) {
        self.queue = queue
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
