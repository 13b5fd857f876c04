import Foundation
import NFLogger

/// When the demo stops waiting for its uploads: only once they stop making progress, never at a
/// moment counted from the start of the run (a slow simulation would leave no time for a retry).
/// Progress is an event newly delivered to an output. Giving up takes a quiet period *and*
/// several failed attempts within it, so a machine on which every attempt takes long still gets
/// its attempts; `limit` bounds a wait in which nothing fails either (a long `Retry-After`).
struct DeliveryPatience: Sendable {
    var quiet: Duration = .seconds(60)
    var failedAttempts = 3
    var limit: Duration = .seconds(600)
}

/// Watches delivery counts over time; the clock is the caller's (`now`), so the rule is tested
/// without waiting.
struct ProgressWatch {
    let patience: DeliveryPatience
    private(set) var lastProgress: ContinuousClock.Instant
    private var delivered: Int
    private var retriesAtProgress: Int

    /// - Parameter notBefore: the quiet period starts no earlier than this (the end of an
    ///   offline period, in which nothing can be delivered).
    init(patience: DeliveryPatience = DeliveryPatience(), delivered: Int, retries: Int, now: ContinuousClock.Instant,
         notBefore: ContinuousClock.Instant? = nil) {
        self.patience = patience
        self.delivered = delivered
        retriesAtProgress = retries
        lastProgress = max(now, notBefore ?? now)
    }

    /// Notes the counts seen at `now` (delivered: events delivered so far; retries: failed
    /// attempts so far); whether to keep waiting.
    mutating func keepWaiting(delivered: Int, retries: Int, now: ContinuousClock.Instant) -> Bool {
        if delivered > self.delivered {
            self.delivered = delivered
            retriesAtProgress = retries
            lastProgress = max(lastProgress, now)
            return true
        }
        let quiet = now - lastProgress
        if quiet >= patience.limit { return false }
        return quiet < patience.quiet || retries - retriesAtProgress < patience.failedAttempts
    }
}

extension NFLogger {
    /// Delivered and failed-attempt counts over every output (the collector and the app's own).
    func deliveryCounts() async -> (delivered: Int, retries: Int) {
        let outputs = await diagnostics().outputs
        return (outputs.reduce(0) { $0 + $1.delivered }, outputs.reduce(0) { $0 + $1.retries })
    }

    /// Flushes until nothing waits, or until delivery stops making progress (``ProgressWatch``).
    /// Returns the last flush's result.
    func deliverAll(patience: DeliveryPatience = DeliveryPatience(), notBefore: ContinuousClock.Instant? = nil) async -> FlushResult {
        var flushed = await flush()
        let start = await deliveryCounts()
        var watch = ProgressWatch(patience: patience, delivered: start.delivered, retries: start.retries, now: .now, notBefore: notBefore)
        while flushed.remainingEvents > 0 || flushed.error != nil {
            let counts = await deliveryCounts()
            guard watch.keepWaiting(delivered: counts.delivered, retries: counts.retries, now: .now) else { break }
            try? await Task.sleep(for: .milliseconds(100))
            flushed = await flush()
        }
        return flushed
    }
}
