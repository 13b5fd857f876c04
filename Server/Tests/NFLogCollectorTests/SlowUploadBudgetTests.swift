@testable import NFLogCollector
import Synchronization
import Testing

/// A clock the test moves by hand: the budget's rules about time, with no wall clock in them.
final class ManualTime: Sendable {
    private let value = Mutex<Duration>(.zero)
    var clock: UploadClock { UploadClock { [self] in value.withLock { $0 } } }
    func advance(_ by: Duration) { value.withLock { $0 += by } }
}

/// Closes counted: which uploads the budget chose to close for room.
final class Closes: Sendable {
    private let closed = Mutex<[String]>([])
    func closer(_ name: String) -> @Sendable () -> Void { { [self] in closed.withLock { $0.append(name) } } }
    var all: [String] { closed.withLock { $0 } }
}

@Suite("The in-flight body budget: charged as bodies arrive, shared fairly, slowest closed first")
struct SlowUploadBudgetTests {
    static let a = ClientAddress(IPAddressBytes(bytes: [192, 0, 2, 1]))
    static let b = ClientAddress(IPAddressBytes(bytes: [192, 0, 2, 2]))

    static func budget(capacity: Int = 1_000, uploads: Int = 4, bytes: Int = 600, time: ManualTime) -> BodyBudget {
        BodyBudget(limits: .init(capacity: capacity, uploadsPerClient: uploads, bytesPerClient: bytes, window: .seconds(10)), clock: time.clock)
    }

    static func open(_ budget: BodyBudget, _ client: ClientAddress?, expected: Int = 4_000, _ name: String, _ closes: Closes) throws -> BodyBudget.Ticket {
        try budget.open(client: client, expected: expected, close: closes.closer(name)).get()
    }

    @Test("A declared length costs nothing until bytes arrive; what is taken is given back at the end")
    func chargedAsReceived() throws {
        let time = ManualTime(), closes = Closes()
        let budget = Self.budget(time: time)
        let ticket = try Self.open(budget, Self.a, expected: 4 * 1024 * 1024, "big", closes)
        #expect(budget.inUse == 0)
        #expect(budget.take(100, for: ticket) == nil)
        #expect(budget.inUse == 100)
        budget.close(ticket)
        #expect(budget.inUse == 0)
    }

    @Test("Past a client's uploads: refused while its uploads are young; once one is stalled, it is closed for the newcomer")
    func clientUploads() throws {
        let time = ManualTime(), closes = Closes()
        let budget = Self.budget(uploads: 2, time: time)
        let first = try Self.open(budget, Self.a, "first", closes)
        let second = try Self.open(budget, Self.a, "second", closes)
        #expect(budget.open(client: Self.a, expected: 10, close: {}).failure == .clientUploads)
        // Another address is not held back by it.
        #expect(budget.open(client: Self.b, expected: 10, close: {}).failure == nil)
        // Lookups (no client) are not counted per client.
        #expect(budget.open(client: nil, expected: 10, close: {}).failure == nil)

        // The first keeps sending, the second has stopped.
        for _ in 0..<20 {
            time.advance(.milliseconds(100))
            budget.received(1_000, for: first)
        }
        _ = second
        let third = budget.open(client: Self.a, expected: 10, close: {})
        #expect(third.failure == nil)
        #expect(closes.all == ["second"])
        #expect(budget.take(10, for: second) == .closed)
    }

    @Test("Past a client's bytes: its slow upload is closed for its new one; with none slow, 429's refusal")
    func clientBytes() throws {
        let time = ManualTime(), closes = Closes()
        let budget = Self.budget(bytes: 600, time: time)
        let stalled = try Self.open(budget, Self.a, "stalled", closes)
        #expect(budget.take(500, for: stalled) == nil)
        budget.received(500, for: stalled)
        let next = try Self.open(budget, Self.a, "next", closes)
        #expect(budget.take(200, for: next) == .clientBytes, "young: not judged yet")
        time.advance(.seconds(3))
        #expect(budget.take(200, for: next) == nil)
        #expect(closes.all == ["stalled"])
        #expect(budget.inUse == 200)
    }

    @Test("A full budget closes the slowest upload, not a fast one, not one whose body is in, not one that is nearly done")
    func slowestFirst() throws {
        let time = ManualTime(), closes = Closes()
        let budget = Self.budget(capacity: 1_000, uploads: 10, bytes: 1_000, time: time)
        let clients = (1...5).map { ClientAddress(IPAddressBytes(bytes: [192, 0, 2, UInt8($0)])) }
        let fast = try Self.open(budget, clients[0], expected: 2_000_000, "fast", closes)
        let trickle = try Self.open(budget, clients[1], expected: 100_000, "trickle", closes)
        let stalled = try Self.open(budget, clients[2], expected: 100_000, "stalled", closes)
        let done = try Self.open(budget, clients[3], expected: 200, "done", closes)
        for ticket in [fast, trickle, stalled] { #expect(budget.take(250, for: ticket) == nil) }
        #expect(budget.take(200, for: done) == nil)
        budget.received(250, for: stalled)
        budget.received(200, for: done)
        budget.finish(done)
        for _ in 0..<30 {
            time.advance(.milliseconds(100))
            budget.received(50_000, for: fast)
            budget.received(10, for: trickle)
        }
        let newcomer = try Self.open(budget, clients[4], expected: 100, "newcomer", closes)
        #expect(budget.take(100, for: newcomer) == nil)
        #expect(closes.all == ["stalled"], "the stalled one goes first")
        #expect(budget.take(300, for: newcomer) == nil)
        #expect(closes.all == ["stalled", "trickle"])
        // Only the fast one and the finished one hold the rest: nothing more is closed.
        #expect(budget.take(400, for: newcomer) == .full)
        #expect(closes.all == ["stalled", "trickle"])
    }

    @Test("A young upload that sent a burst and stopped is slow half a second after its last byte")
    func burstThenStall() throws {
        let time = ManualTime(), closes = Closes()
        let budget = Self.budget(capacity: 1_000, uploads: 10, bytes: 1_000, time: time)
        let burst = try Self.open(budget, Self.a, "burst", closes)
        #expect(budget.take(900, for: burst) == nil)
        budget.received(900, for: burst)
        let newcomer = try Self.open(budget, Self.b, "newcomer", closes)
        time.advance(.milliseconds(400))
        #expect(budget.take(200, for: newcomer) == .full)
        time.advance(.milliseconds(100))
        #expect(budget.take(200, for: newcomer) == nil)
        #expect(closes.all == ["burst"])
    }

    @Test("Nothing slow: the newcomer waits its patience, then is refused; room given back in time lets it in")
    func fullWithNothingSlow() async throws {
        let time = ManualTime(), closes = Closes()
        let budget = Self.budget(capacity: 1_000, uploads: 10, bytes: 1_000, time: time)
        let holder = try Self.open(budget, Self.a, "holder", closes)
        #expect(budget.take(900, for: holder) == nil)
        let newcomer = try Self.open(budget, Self.b, "newcomer", closes)
        #expect(await budget.reserve(200, for: newcomer, patience: .milliseconds(50)) == .full)
        budget.close(holder)
        #expect(await budget.reserve(200, for: newcomer, patience: .milliseconds(50)) == nil)
        #expect(closes.all.isEmpty)
    }

    @Test("The recent-bytes estimate slides: a burst counts for a span and a half at most, then nothing")
    func recentBytes() {
        var recent = RecentBytes(span: .seconds(1), now: .zero)
        recent.add(1_000, now: .milliseconds(100))
        #expect(recent.count(now: .milliseconds(900)) == 1_000)
        #expect(recent.count(now: .milliseconds(1_500)) == 500)
        #expect(recent.count(now: .milliseconds(2_100)) == 0)
        recent.add(10, now: .seconds(5))
        #expect(recent.count(now: .seconds(5)) == 10)
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
