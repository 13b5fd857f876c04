/// The flushes waiting on the Uploader. A flush waits for everything stored before it (its
/// watermark) to be delivered, not for an empty queue, so an app that keeps logging cannot keep
/// it waiting; a failure that stops uploading completes every one of them with the reason.
struct FlushWaiters {
    struct Waiter {
        let uploadedAtStart: Int
        let quarantinedAtStart: Int
        let watermark: Outbox.Watermark?
        let completion: @Sendable (FlushResult) -> Void
    }

    private var waiting: [Waiter] = []

    var isEmpty: Bool { waiting.isEmpty }

    mutating func add(_ waiter: Waiter) { waiting.append(waiter) }

    /// Every waiting flush, removed.
    mutating func takeAll() -> [Waiter] {
        defer { waiting = [] }
        return waiting
    }

    /// The flushes whose watermark `isDelivered` says is reached, removed. A flush without a
    /// watermark (the database could not say) waits for an empty queue or a failure.
    mutating func takeSatisfied(_ isDelivered: (Outbox.Watermark) -> Bool) -> [Waiter] {
        var done: [Waiter] = []
        waiting.removeAll { waiter in
            guard let watermark = waiter.watermark, isDelivered(watermark) else { return false }
            done.append(waiter)
            return true
        }
        return done
    }
}
