import Dispatch
import Foundation
import NFLogger
import Synchronization

/// `--burst N`: N point events from one thread as fast as the SDK takes them, keeping at most
/// 10,000 in flight (below its in-memory bound, as a well-behaved producer does); times first
/// call → last commit, and first call → everything delivered.
struct Burst {
    let logger: NFLogger
    let tally: Tally
    let count: Int

    func run() async -> String {
        let window = min(10_000, logger.configuration.limits.maxPendingEvents / 2)
        let remaining = Atomic<Int>(count)
        let start = ContinuousClock.now
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let inFlight = DispatchSemaphore(value: window)
            let tally = self.tally, logger = self.logger, count = self.count
            DispatchQueue.global().async {
                for index in 0..<count {
                    inFlight.wait()
                    logger.logEvent(name: "bench.event", type: "bench", parameters: ["index": index, "screen": "home"]) { status in
                        tally.note(status)
                        inFlight.signal()
                        if remaining.subtract(1, ordering: .relaxed).newValue == 0 { done.resume() }
                    }
                }
            }
        }
        let committed = ContinuousClock.now - start
        var result = await logger.flush()
        while (result.remainingEvents > 0 || result.error != nil) && ContinuousClock.now - start < .seconds(120) {
            try? await Task.sleep(for: .milliseconds(20))
            result = await logger.flush()
        }
        let delivered = ContinuousClock.now - start
        func seconds(_ d: Duration) -> Double { Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18 }
        return String(format: "Burst: %d events committed in %.3f s (%.0f events/s from first call to last commit); all delivered %.3f s after the first call (%.0f events/s end to end)",
                      count, seconds(committed), Double(count) / seconds(committed), seconds(delivered), Double(count) / seconds(delivered))
    }
}
