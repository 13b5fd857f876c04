import Foundation
import Synchronization
import Testing
@testable import NFLogger

/// `CompletionBuffer` keeps its entries in chunks it moves by hand: every entry must run once, in
/// the order appended, with its own status, across chunks and buffers, and every closure it still
/// holds must be released when it is dropped.
@Suite("CompletionBuffer: chunks, in order, each status its own")
struct CompletionBufferTests {
    /// One status of each kind the buffer keeps differently (inline or boxed), by index.
    static func status(_ index: Int) -> LogStatus {
        switch index % 5 {
        case 0: .recorded(UUID(uuid: (0, 0, 0, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, UInt8(index >> 8 & 0xFF), UInt8(index & 0xFF))))
        case 1: .disabled
        case 2: .filtered(.droppedByFilter("filter \(index)"))
        case 3: .failed(.invalidParameter(key: "key \(index)", reason: "reason"))
        default: .filtered(.sampledOut)
        }
    }

    @Test("Entries appended across many chunks, then a second many-chunk buffer moved in: each runs once, in order, with its status")
    func chunksKeepOrder() {
        let ran = Mutex<[(Int, LogStatus)]>([])
        var first = CompletionBuffer(capacity: 1)  // a new chunk at 1, 2, 4, 8 … entries
        for index in 0..<1_000 {
            first.append({ status in ran.withLock { $0.append((index, status)) } }, Self.status(index))
        }
        var second = CompletionBuffer(capacity: 3)
        for index in 1_000..<1_700 {
            second.append({ status in ran.withLock { $0.append((index, status)) } }, Self.status(index))
        }
        first.append(moving: &second)
        let secondEmpty = second.isEmpty
        #expect(secondEmpty)
        second.runAll()  // nothing left in it
        first.runAll()
        let firstEmpty = first.isEmpty
        #expect(firstEmpty)
        let entries = ran.withLock { $0 }
        #expect(entries.map(\.0) == Array(0..<1_700))
        #expect(entries.allSatisfy { $0.1 == Self.status($0.0) })

        // The kept chunk is reused: more entries after a run, in order again.
        for index in 0..<10 { first.append({ status in ran.withLock { $0.append((index, status)) } }, Self.status(index)) }
        first.runAll()
        #expect(ran.withLock { $0.suffix(10).map(\.0) } == Array(0..<10))
    }

    @Test("Every filter reason, every kind of status, reaches its completion as it was finished")
    func everyStatusKept() {
        let reasons: [FilterReason] = [.notSelected, .denied, .sampledOut, .insidePrivacyZone, .sdkBelowMinimumVersion,
                                       .consentDenied, .noOutput, .droppedByFilter("pii"), .droppedByFilter("")]
        let statuses = reasons.map(LogStatus.filtered) + [.disabled, .recorded(UUID()), .failed(.closed),
                                                          .failed(.backpressure(pendingEvents: 3, pendingBytes: 4))]
        let ran = Mutex<[LogStatus]>([])
        var buffer = CompletionBuffer(capacity: 2)
        for status in statuses { buffer.append({ status in ran.withLock { $0.append(status) } }, status) }
        buffer.runAll()
        #expect(ran.withLock { $0 } == statuses)
    }

    @Test("An empty buffer moved in changes nothing; a buffer moved into an empty one keeps its order")
    func movingEmpty() {
        let ran = Mutex<[Int]>([])
        var empty = CompletionBuffer(capacity: 4)
        var full = CompletionBuffer(capacity: 2)
        for index in 0..<9 { full.append({ _ in ran.withLock { $0.append(index) } }, .disabled) }
        full.append(moving: &empty)
        empty.append(moving: &full)
        let fullEmpty = full.isEmpty
        let fullRoom = full.capacity
        #expect(fullEmpty)
        #expect(fullRoom == 4)  // the empty buffer's chunk, handed back: no new allocation
        empty.runAll()
        #expect(ran.withLock { $0 } == Array(0..<9))
    }

    @Test("After a run the largest chunk is kept, not the small batch moved in last")
    func keepsLargestChunk() {
        let ran = Atomic<Int>(0)
        var waiting = CompletionBuffer(capacity: 64)
        for _ in 0..<10 { waiting.append({ _ in ran.add(1, ordering: .relaxed) }, .disabled) }
        var batch = CompletionBuffer(capacity: 3)
        for _ in 0..<3 { batch.append({ _ in ran.add(1, ordering: .relaxed) }, .recorded(UUID())) }
        waiting.append(moving: &batch)
        waiting.runAll()
        let room = waiting.capacity
        #expect(ran.load(ordering: .relaxed) == 13)
        #expect(room == 64)
    }

    /// Holds nothing but tells when it is freed.
    final class Tracked: Sendable {
        let freed: @Sendable () -> Void
        init(freed: @escaping @Sendable () -> Void) { self.freed = freed }
        deinit { freed() }
    }

    @Test("A buffer dropped before it runs releases every closure it holds, in every chunk; none runs")
    func droppedReleases() {
        let freed = Atomic<Int>(0)
        let ran = Atomic<Int>(0)
        do {
            var buffer = CompletionBuffer(capacity: 1)
            var other = CompletionBuffer(capacity: 1)
            for index in 0..<100 {
                let tracked = Tracked { freed.add(1, ordering: .relaxed) }
                let completion: LogCompletion = { _ in _ = tracked; ran.add(1, ordering: .relaxed) }
                if index < 60 { buffer.append(completion, Self.status(index)) } else { other.append(completion, Self.status(index)) }
            }
            buffer.append(moving: &other)
        }
        #expect(freed.load(ordering: .relaxed) == 100)
        #expect(ran.load(ordering: .relaxed) == 0)
    }
}

extension CompletionBufferTests {
    /// SplitMix64: the same operations for a seed on every run.
    struct SeededGenerator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

    @Test("Random appends, moves both ways, runs and drops on two buffers, against arrays: the same runs, in order, each closure freed once")
    func againstModel() {
        let created = Atomic<Int>(0)
        let freed = Atomic<Int>(0)
        let ran = Mutex<[(Int, LogStatus)]>([])
        for seed in 0..<300 {
            var random = SeededGenerator(state: UInt64(seed))
            var a = CompletionBuffer(capacity: Int.random(in: 1...4, using: &random))
            var b = CompletionBuffer(capacity: Int.random(in: 1...4, using: &random))
            var modelA: [Int] = [], modelB: [Int] = [], expected: [Int] = []
            var next = seed * 1_000
            func make(_ id: Int) -> LogCompletion {
                created.add(1, ordering: .relaxed)
                let tracked = Tracked { freed.add(1, ordering: .relaxed) }
                return { status in _ = tracked; ran.withLock { $0.append((id, status)) } }
            }
            ran.withLock { $0.removeAll() }
            for _ in 0..<200 {
                switch Int.random(in: 0..<12, using: &random) {
                case 0...3: a.append(make(next), Self.status(next)); modelA.append(next); next += 1
                case 4...6: b.append(make(next), Self.status(next)); modelB.append(next); next += 1
                case 7: a.append(moving: &b); modelA += modelB; modelB = []
                case 8: b.append(moving: &a); modelB += modelA; modelA = []
                case 9: a.runAll(); expected += modelA; modelA = []
                case 10: b.runAll(); expected += modelB; modelB = []
                default: b = CompletionBuffer(capacity: Int.random(in: 1...3, using: &random)); modelB = []  // dropped unrun
                }
                let (aEmpty, bEmpty) = (a.isEmpty, b.isEmpty)
                #expect(aEmpty == modelA.isEmpty && bEmpty == modelB.isEmpty, "seed \(seed)")
            }
            a.runAll()
            expected += modelA
            let got = ran.withLock { $0 }
            #expect(got.map(\.0) == expected, "seed \(seed)")
            #expect(got.allSatisfy { $0.1 == Self.status($0.0) }, "seed \(seed)")
        }
        #expect(freed.load(ordering: .relaxed) == created.load(ordering: .relaxed))
    }
}
