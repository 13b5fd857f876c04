import Foundation
import Testing
@testable import NFLogger

/// The Uploader's rules as plain values: no database, no network, no timers. Times are given by
/// hand; the jitter's generator always draws the top of the range, so each wait is its ceiling.
@Suite("Upload state machine: waits, batch sizes and what each answer means")
struct UploadStateMachineTests {
    /// Draws the largest value: a wait is then (a hair under) its ceiling.
    struct Ceiling: RandomNumberGenerator {
        mutating func next() -> UInt64 { .max }
    }

    static let second: UInt64 = 1_000_000_000

    func machine(lanes: Int = 2, batchMaxEvents: Int = 1_000) -> UploadStateMachine {
        var settings = Configuration.Upload()
        settings.maxConcurrentUploads = lanes
        settings.batchMaxEvents = batchMaxEvents
        settings.initialBackoff = 1
        settings.maxBackoff = 300
        settings.refusedBackoff = 3_600
        return UploadStateMachine(settings: settings, random: Ceiling())
    }

    func at(_ seconds: UInt64) -> UploadStateMachine.Instant {
        .init(monotonic: seconds * Self.second, wallMilliseconds: 1_750_000_000_000 + Int64(seconds) * 1_000)
    }

    func response(_ verdict: UploadVerdict, _ status: Int, _ message: String = "") -> UploadStateMachine.Answer {
        .response(verdict, status: status, message: message)
    }

    @Test("A batch that fails on its own waits alone, longer with each of its failures; the others keep going")
    func batchWaitsAlone() {
        var machine = machine()
        let first = machine.settle(7, eventCount: 10, .network("reset"), at: at(100))
        guard case .retryAlone(let until, let delay) = first.action else { Issue.record("\(first)"); return }
        #expect(first.sendsAgain)
        #expect(delay > 0.99 && delay <= 1)  // the first failure's ceiling: initialBackoff
        #expect(until > 100 * Self.second && until <= 101 * Self.second)
        #expect(machine.isWaitingAlone(7) && machine.maySend(inFlight: 1, at: 100 * Self.second))
        #expect(!machine.isWaiting(at: 100 * Self.second))
        #expect(machine.lastError == .network("reset"))
        // Its wait ends: it may go again, and its next failure waits twice as long.
        machine.endBatchWaits(at: 102 * Self.second)
        #expect(!machine.isWaitingAlone(7))
        _ = machine.settle(8, eventCount: 10, response(.delivered, 200), at: at(102))
        machine.delivered(at: 102 * Self.second)  // another batch's delivery resets the failures in a row
        let second = machine.settle(7, eventCount: 10, .network("reset"), at: at(103))
        guard case .retryAlone(_, let delay2) = second.action else { Issue.record("\(second)"); return }
        #expect(delay2 > 1.99 && delay2 <= 2)
    }

    @Test("Failures in a row past twice the lanes and one: every batch waits (the collector looks down)")
    func failuresInARowWaitAll() {
        var machine = machine(lanes: 2)  // 2 × 2 + 1 = 5
        #expect(machine.failuresBeforeWaitingAll == 5)
        for row in 1...4 {
            guard case .retryAlone = machine.settle(Int64(row), eventCount: 1, .network("x"), at: at(10)).action else {
                Issue.record("failure \(row) should wait alone"); return
            }
        }
        let fifth = machine.settle(5, eventCount: 1, .network("x"), at: at(10))
        guard case .retryAll(.started(let until, _), nil) = fifth.action else { Issue.record("\(fifth)"); return }
        #expect(machine.isWaiting(at: 10 * Self.second) && !machine.maySend(inFlight: 0, at: 10 * Self.second))
        #expect(!machine.isWaiting(at: until))
        #expect(machine.phase == .backingOff(until: until))
    }

    @Test("Retry-After makes every batch wait at least that long, and is kept for the next process")
    func retryAfterHolds() {
        var machine = machine()
        let settlement = machine.settle(1, eventCount: 5, response(.retry(after: 120), 503, "busy"), at: at(50))
        guard case .retryAll(.started(let until, let delay), let hold?) = settlement.action else { Issue.record("\(settlement)"); return }
        #expect(delay >= 120)
        #expect(until >= 170 * Self.second)
        #expect(hold == .init(untilMilliseconds: at(50).wallMilliseconds + 120_000, status: 503, message: "busy"))
        #expect(machine.lastError == .server(status: 503, message: "busy"))
        #expect(machine.nextAttempt.map { $0.timeIntervalSince1970 * 1_000 >= Double(hold.untilMilliseconds) - 1 } == true)
    }

    @Test("A shorter wait never cuts a longer one short")
    func longerWaitStands() {
        var machine = machine()
        _ = machine.settle(1, eventCount: 5, response(.retry(after: 600), 429), at: at(0))
        let phase = machine.phase
        let storage = machine.backOff(.encoding("x"), retryAfter: nil, at: at(1))
        #expect(storage == .alreadyLonger)
        #expect(machine.phase == phase)
        #expect(machine.lastError == .encoding("x"))  // the story is the latest failure, the wait the longest
    }

    @Test("A refusal pauses every batch for refusedBackoff; the batch goes again formed afresh")
    func refusalPauses() {
        var machine = machine()
        let settlement = machine.settle(1, eventCount: 5, response(.pause, 401, "bad key"), at: at(0))
        #expect(settlement == .init(action: .waitAll(.started(until: 3_600 * Self.second, delay: 3_600)), sendsAgain: false))
        #expect(machine.phase == .paused(until: 3_600 * Self.second))
        #expect(machine.lastError == .refused(status: 401, message: "bad key"))
    }

    @Test("413 halves the batch size; 16 deliveries in a row grow it back; a single refused event is quarantined")
    func splitAndRegrow() {
        var machine = machine(batchMaxEvents: 1_000)
        #expect(machine.settle(1, eventCount: 1_000, response(.split, 413), at: at(0)) == .init(action: .release, sendsAgain: false))
        #expect(machine.batchMaxEvents == 500)
        #expect(machine.settle(2, eventCount: 500, response(.split, 413), at: at(0)).action == .release)
        #expect(machine.batchMaxEvents == 250)
        for _ in 1..<UploadStateMachine.deliveriesBeforeRegrowing { machine.delivered(at: 0) }
        #expect(machine.batchMaxEvents == 250)
        machine.delivered(at: 0)
        #expect(machine.batchMaxEvents == 1_000)
        // One event the collector refuses for good: set aside, and batches are full-size again.
        _ = machine.settle(3, eventCount: 8, response(.split, 422), at: at(0))
        let single = machine.settle(4, eventCount: 1, response(.split, 422, "events[0].name: bad"), at: at(0))
        #expect(single == .init(action: .quarantine(status: 422, reason: "events[0].name: bad"), sendsAgain: false))
        machine.quarantined()
        #expect(machine.batchMaxEvents == 1_000)
    }

    @Test("A policy shrinks batches at once; they grow back only with nothing in flight")
    func policySettings() {
        var machine = machine(batchMaxEvents: 1_000)
        var smaller = machine.settings
        smaller.batchMaxEvents = 100
        machine.apply(smaller, nothingInFlight: false)
        #expect(machine.batchMaxEvents == 100)
        var larger = machine.settings
        larger.batchMaxEvents = 2_000
        machine.apply(larger, nothingInFlight: false)
        #expect(machine.batchMaxEvents == 100)
        machine.apply(larger, nothingInFlight: true)
        #expect(machine.batchMaxEvents == 2_000)
    }

    @Test("A delivery clears the last error only when nothing waits")
    func deliveryClearsTheStory() {
        var machine = machine()
        _ = machine.settle(1, eventCount: 1, .network("reset"), at: at(0))
        machine.delivered(at: 0)
        #expect(machine.lastError == .network("reset"))  // batch 1 still waits alone
        machine.endBatchWaits(at: 10 * Self.second)
        _ = machine.settle(1, eventCount: 1, response(.delivered, 200), at: at(10))
        machine.delivered(at: 10 * Self.second)
        #expect(machine.lastError == nil && machine.nextAttempt == nil)
    }

    @Test("Held back: nothing counted, sent again as it was; a compression failure waits every batch and forms it afresh")
    func heldBackAndCompression() {
        var machine = machine()
        #expect(machine.settle(1, eventCount: 3, .heldBack, at: at(0)) == .init(action: .none, sendsAgain: true))
        #expect(machine.lastError == nil && !machine.isWaiting(at: 0))
        let compression = machine.settle(1, eventCount: 3, .compressionFailed("zlib"), at: at(0))
        guard case .waitAll(.started) = compression.action else { Issue.record("\(compression)"); return }
        #expect(!compression.sendsAgain)
        #expect(machine.lastError == .encoding("zlib"))
    }

    @Test("The queue emptied: ready again, batches full-size; close forgets every batch's wait")
    func emptyAndClose() {
        var machine = machine(batchMaxEvents: 10)
        _ = machine.settle(1, eventCount: 10, response(.split, 413), at: at(0))
        _ = machine.settle(2, eventCount: 1, .network("x"), at: at(0))
        #expect(machine.earliestBatchWait != nil)
        machine.close()
        #expect(machine.earliestBatchWait == nil && !machine.isWaitingAlone(2))
        machine.queueEmptied()
        #expect(machine.phase == .ready && machine.batchMaxEvents == 10)
    }
}
