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

/// The dispatcher's mailbox moves entries through `CompletionBuffer`s by hand: every status must
/// reach its completion exactly once, in the order it was finished, whoever finished it.
@Suite("CompletionDispatcher: every status reaches its completion once, in order")
struct CompletionDispatcherTests {
    @Test("Single statuses and committed batches from four threads at once: each thread's run in its order, none lost or repeated")
    func threadsInterleaved() async {
        let dispatcher = CompletionDispatcher(queue: DispatchQueue(label: "completions.concurrent", attributes: .concurrent))
        let perThread = 5_000
        let seen = Mutex<[[Int]]>(Array(repeating: [], count: 4))
        let all = DispatchGroup()
        for _ in 0..<(4 * perThread) { all.enter() }
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            var index = 0
            while index < perThread {
                if index % 7 == 3 {  // a committed batch of up to 5, as the writer hands them over
                    var batch = CompletionBuffer(capacity: 2)  // grows while filled
                    let end = min(index + 5, perThread)
                    for value in index..<end {
                        batch.append({ _ in seen.withLock { $0[thread].append(value) }; all.leave() }, .recorded(UUID()))
                    }
                    dispatcher.finish(batch: batch)
                    index = end
                } else {
                    let value = index
                    let completion: LogCompletion = { _ in seen.withLock { $0[thread].append(value) }; all.leave() }
                    if index % 2 == 0 { dispatcher.finishDisabled(completion) } else { dispatcher.finish(.filtered(.denied), completion) }
                    index += 1
                }
            }
        }
        await withCheckedContinuation { done in all.notify(queue: .global()) { done.resume() } }
        for (thread, values) in seen.withLock({ $0 }).enumerated() {
            #expect(values == Array(0..<perThread), "thread \(thread)")
        }
    }

    @Test("A completion that finishes more statuses, and statuses finished while it runs: all run, after it, in order")
    func finishedWhileRunning() async {
        let dispatcher = CompletionDispatcher(queue: DispatchQueue(label: "completions"))
        let order = Mutex<[String]>([])
        let all = DispatchGroup()
        for _ in 0..<4 { all.enter() }
        Self.whileFirstRuns(dispatcher, all, record: { name in order.withLock { $0.append(name) } }, inside: {
            dispatcher.finishDisabled { _ in order.withLock { $0.append("from inside") }; all.leave() }
        }) {
            // Both finished while the first's hop runs.
            dispatcher.finishDisabled { _ in order.withLock { $0.append("second") }; all.leave() }
            var batch = CompletionBuffer(capacity: 1)
            batch.append({ status in order.withLock { $0.append("batch \(status.isRecorded)") }; all.leave() }, .recorded(UUID()))
            dispatcher.finish(batch: batch)
        }
        await withCheckedContinuation { done in all.notify(queue: .global()) { done.resume() } }
        #expect(order.withLock { $0 } == ["first", "second", "batch true", "from inside"])
        #expect(dispatcher.counts.disabled == 3)
    }
}

extension CompletionDispatcherTests {
    @Test("Statuses finished while a hop runs go in a hop queued behind the queue's other work: a stream of statuses never holds the completion queue (it may be the main queue)")
    func yieldsBetweenHops() async {
        let queue = DispatchQueue(label: "completions")
        let dispatcher = CompletionDispatcher(queue: queue)
        let order = Mutex<[String]>([])
        let all = DispatchGroup()
        for _ in 0..<3 { all.enter() }
        Self.whileFirstRuns(dispatcher, all, record: { name in order.withLock { $0.append(name) } }) {
            dispatcher.finishDisabled { _ in order.withLock { $0.append("second") }; all.leave() }  // while the first runs
            queue.async { order.withLock { $0.append("other work") }; all.leave() }  // the app's own block, queued after it
        }
        await withCheckedContinuation { done in all.notify(queue: .global()) { done.resume() } }
        #expect(order.withLock { $0 } == ["first", "other work", "second"])
    }
}

extension CompletionDispatcherTests {
    /// Finishes a first status whose completion waits until `during` has run here, then runs
    /// `inside` (from within that completion), records "first" and leaves `all`.
    static func whileFirstRuns(_ dispatcher: CompletionDispatcher, _ all: DispatchGroup, record: @escaping @Sendable (String) -> Void,
                               inside: @escaping @Sendable () -> Void = {}, during: () -> Void) {
        let firstRunning = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        dispatcher.finishDisabled { _ in
            firstRunning.signal()
            release.wait()
            inside()
            record("first")
            all.leave()
        }
        firstRunning.wait()
        during()
        release.signal()
    }
}
