import Dispatch
import Foundation
import Synchronization
import Testing
@testable import NFLogger
import NFLoggerTesting
import NFLogTestSupport

@Suite("Concurrent logging")
struct ConcurrencyTests {
    @Test("An app logging faster than the database takes its events (pruning all along) does not hold the queue: uploads are answered and sent meanwhile")
    func uploadsWhileFlooded() async throws {
        let transport = RecordingTransport()
        var configuration = transport.configuration()
        configuration.limits.maxStoredEvents = 200  // every write prunes
        configuration.upload.batchMaxEvents = 50
        let logger = try NFLogger(configuration: configuration)
        let stop = Mutex(false)
        let stopped = DispatchSemaphore(value: 0)
        // Flat out from a thread of its own: the in-memory queue never empties while it runs.
        Thread.detachNewThread {
            var index = 0
            while !stop.withLock({ $0 }) {
                logger.logEvent(name: "flood.event", parameters: ["index": index, "pad": "0123456789abcdef"])
                index += 1
            }
            stopped.signal()
        }
        // Awaited, not timed: the uploads' answers get their turns between the writes. A queue
        // held by the drain would answer two uploads and then nothing until the flood stops.
        let deadline = ContinuousClock.now + .seconds(hangLimitSeconds)
        while transport.batches.filter(\.isAccepted).count < 20 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        let floodGoingOn = !stop.withLock { $0 }
        stop.withLock { $0 = true }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async { stopped.wait(); done.resume() }
        }
        #expect(floodGoingOn && transport.batches.filter(\.isAccepted).count >= 20, "\(transport.batches.count) uploads")
        let diagnostics = await logger.diagnostics()
        #expect(diagnostics.prunedEvents > 0, "the flood outran the row limit")
        await logger.close()
    }

    @Test("8 threads × 10,000 events: every completion exactly once, the row count exact")
    func eightThreads() async throws {
        let directory = TemporaryDirectory()
        var configuration = directory.configuration()
        configuration.limits.maxPendingEvents = 100_000  // this test is about exactness, not backpressure
        configuration.limits.maxPendingBytes = 64 << 20
        let logger = try NFLogger(configuration: configuration)
        let threads = 8, perThread = 10_000, total = threads * perThread
        let calls = CallLedger(count: total)

        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            calls.onComplete = { done.resume() }
            DispatchQueue.global().async {
                DispatchQueue.concurrentPerform(iterations: threads) { thread in
                    for index in 0..<perThread {
                        let call = thread * perThread + index
                        logger.logEvent(name: "load.event", parameters: ["thread": thread, "index": index]) { status in
                            calls.complete(call, status)
                        }
                    }
                }
            }
        }
        // Give a doubled completion time to show up before counting.
        try await Task.sleep(for: .milliseconds(200))
        #expect(calls.maxCompletions == 1)
        #expect(calls.completedCalls == total)
        #expect(calls.recorded == total)
        let diagnostics = await logger.diagnostics()
        #expect(diagnostics.storedPointEvents == total)
        await logger.close()
        let reader = try DatabaseReader(directory.databaseURL)
        #expect(try reader.int("SELECT count(*) FROM point_events") == total)
        #expect(try reader.int("SELECT count(DISTINCT uuid) FROM point_events") == total)
        // Every (thread, index) pair arrived exactly once.
        #expect(try reader.int("""
            SELECT count(*) FROM (SELECT DISTINCT json_extract(parameters, '$.thread'), json_extract(parameters, '$.index') FROM point_events)
            """) == total)
    }

    @Test("Past the in-memory bound, calls complete .failed(.backpressure) and nothing else is lost")
    func backpressure() async throws {
        let directory = TemporaryDirectory()
        var configuration = directory.configuration()
        configuration.limits.maxPendingEvents = 50
        let logger = try NFLogger(configuration: configuration)
        let total = 20_000
        let calls = CallLedger(count: total)
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            calls.onComplete = { done.resume() }
            for call in 0..<total {
                logger.logEvent(name: "burst.event") { calls.complete(call, $0) }
            }
        }
        #expect(calls.maxCompletions == 1)
        #expect(calls.backpressured > 0, "a 50-event bound must refuse some of a 20,000-event burst")
        #expect(calls.recorded + calls.backpressured == total)
        let diagnostics = await logger.diagnostics()
        #expect(diagnostics.storedPointEvents == calls.recorded)
    }

    @Test("Switching modes while 8 threads log: no call lost or completed twice; calls after the switch obey it")
    func switchUnderLoad() async throws {
        let directory = TemporaryDirectory()
        var configuration = directory.configuration()
        configuration.limits.maxPendingEvents = 100_000
        let logger = try NFLogger(configuration: configuration)
        let threads = 8, perThread = 4_000, total = threads * perThread
        let calls = CallLedger(count: total)
        let switched = Atomic<Bool>(false)
        let afterSwitch = CallLedger(count: total)  // calls that began after the switch returned

        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            calls.onComplete = { done.resume() }
            DispatchQueue.global().async {
                DispatchQueue.concurrentPerform(iterations: threads + 1) { thread in
                    if thread == threads {
                        usleep(2_000)
                        logger.mode = .disabled
                        switched.store(true, ordering: .sequentiallyConsistent)
                        return
                    }
                    for index in 0..<perThread {
                        let call = thread * perThread + index
                        let begunAfterSwitch = switched.load(ordering: .sequentiallyConsistent)
                        logger.logEvent(name: "load.event") { status in
                            if begunAfterSwitch { afterSwitch.complete(call, status) }
                            calls.complete(call, status)
                        }
                    }
                }
            }
        }
        try await Task.sleep(for: .milliseconds(200))
        #expect(calls.maxCompletions == 1)
        #expect(calls.completedCalls == total)
        #expect(calls.recorded + calls.disabled == total)
        #expect(afterSwitch.recorded == 0, "a call begun after the switch must see the disabled mode")
        #expect(await logger.diagnostics().storedPointEvents == calls.recorded)
    }

    @Test("Completions never run on the caller's thread, not even for refusals")
    func neverSynchronous() async throws {
        let directory = TemporaryDirectory()
        let logger = try NFLogger(configuration: directory.configuration())
        let key = DispatchSpecificKey<Int>()
        let caller = DispatchQueue(label: "caller")
        caller.setSpecific(key: key, value: 1)
        let log = StatusLog()
        let onCaller = Atomic<Int>(0)
        let check: LogCompletion = { status in
            if DispatchQueue.getSpecific(key: key) != nil { onCaller.wrappingAdd(1, ordering: .relaxed) }
            log.append(status)
        }
        caller.sync {
            logger.logEvent(name: "ok.event", completion: check)
            logger.logEvent(name: "bad name", completion: check)
            logger.logEvent(name: "ok.event", parameters: ["x": Double.nan], completion: check)
            logger.mode = .disabled
            logger.logEvent(name: "ok.event", completion: check)
            logger.startEvent(name: "ok.span", completion: check).end(completion: check)
        }
        await log.wait(for: 6)
        #expect(onCaller.load(ordering: .relaxed) == 0)
    }
}

/// Counts, per call, how many times its completion ran, and what it said.
final class CallLedger: @unchecked Sendable {
    // @unchecked: every field below is read and written only under `lock`.
    private let lock = NSLock()
    private var completions: [UInt8]
    private var remaining: Int
    private(set) var recordedCount = 0, disabledCount = 0, backpressureCount = 0, completedCount = 0, maxCount = 0
    var onComplete: (@Sendable () -> Void)?

    init(count: Int) {
        completions = Array(repeating: 0, count: count)
        remaining = count
    }

    func complete(_ call: Int, _ status: LogStatus) {
        lock.lock()
        completions[call] &+= 1
        maxCount = max(maxCount, Int(completions[call]))
        if completions[call] == 1 { completedCount += 1; remaining -= 1 }
        switch status {
        case .recorded: recordedCount += 1
        case .disabled: disabledCount += 1
        case .failed(.backpressure): backpressureCount += 1
        default: break
        }
        let finished = remaining == 0 && completions[call] == 1
        let callback = onComplete
        lock.unlock()
        if finished { callback?() }
    }

    private func read<T>(_ body: () -> T) -> T { lock.lock(); defer { lock.unlock() }; return body() }
    var maxCompletions: Int { read { maxCount } }
    var completedCalls: Int { read { completedCount } }
    var recorded: Int { read { recordedCount } }
    var disabled: Int { read { disabledCount } }
    var backpressured: Int { read { backpressureCount } }
}
