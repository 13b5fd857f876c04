import Dispatch
import Foundation
import Synchronization
import Testing
@testable import NFLogger
import NFLogTestSupport

/// Configuration.completionQueue says: "Handlers run one after another, in the order their
/// statuses were decided, even on a concurrent queue".
@Suite("Completions on a concurrent completion queue run one after another, in order")
struct CompletionOrderTests {
    @Test("On a concurrent completion queue, a later status's handler does not run while an earlier one is still running")
    func concurrentQueueKeepsOrder() async throws {
        let directory = TemporaryDirectory()
        var configuration = directory.configuration()
        configuration.completionQueue = DispatchQueue(label: "completions.concurrent", attributes: .concurrent)
        let logger = try NFLogger(configuration: configuration)
        let order = Mutex<[String]>([])
        let secondRan = DispatchSemaphore(value: 0)

        // The first handler waits (bounded) for the second's: if handlers run one after another,
        // the wait times out and "first" is appended first.
        await withCheckedContinuation { (firstStarted: CheckedContinuation<Void, Never>) in
            logger.logEvent(name: "first.event") { _ in
                firstStarted.resume()
                _ = secondRan.wait(timeout: .now() + 2)
                order.withLock { $0.append("first") }
            }
        }
        await withCheckedContinuation { (bothDone: CheckedContinuation<Void, Never>) in
            logger.logEvent(name: "second.event") { _ in
                order.withLock { $0.append("second") }
                secondRan.signal()
                bothDone.resume()
            }
        }
        // Wait for the first's handler to finish too.
        let deadline = ContinuousClock.now + .seconds(hangLimitSeconds)
        while order.withLock({ $0.count }) < 2 && ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        #expect(order.withLock { $0 } == ["first", "second"])
        await logger.close()
    }
}
