import FaultProxy
import Foundation
import NFLogCollector
import NFLogCollectorTesting
import NFLogger
import Testing
import NFLogTestSupport

/// Faults on real sockets: the SDK runs in a child process (`nflog-crash-child deliver`, so its
/// CPU time is its own), a `FaultProxy` on 127.0.0.1 stands between it and a real collector and
/// breaks connections the way the internet does.
@Suite("Network faults on real sockets", .serialized)
struct NetworkFaultTests {
    /// The child's figures for one run.
    struct Run {
        let status: Int32
        let json: [String: Any]
        var cpu: Double { json["cpu"] as? Double ?? .infinity }
        var seconds: Double { json["seconds"] as? Double ?? .infinity }
        var remaining: Int { json["remaining"] as? Int ?? -1 }
        var retried: Int { json["retried"] as? Int ?? -1 }
    }

    static func deliver(to url: URL, scratch: TemporaryDirectory, name: String, events: Int, extra: [String] = []) async throws -> Run {
        let run = try await Child.run(["deliver", "--db", scratch.url.appendingPathComponent("\(name).sqlite").path,
                                 "--collector", url.absoluteString, "--events", "\(events)",
                                 "--receipts", scratch.url.appendingPathComponent("\(name).receipts").path] + extra)
        return Run(status: run.status, json: run.json)
    }

    static func receipts(_ scratch: TemporaryDirectory, _ name: String) throws -> Set<UUID> {
        let text = try String(contentsOf: scratch.url.appendingPathComponent("\(name).receipts"), encoding: .utf8)
        return Set(text.split(separator: "\n").compactMap { UUID(uuidString: String($0)) })
    }

    /// How many times the collector stored each uuid.
    static func storedCounts(_ collector: TestCollector) async throws -> [UUID: Int] {
        var stored: [UUID: Int] = [:]
        for id in try await storedIDs(collector) { stored[id, default: 0] += 1 }
        return stored
    }

    @Test("30% of uploads faulted, every kind of fault: every receipted event stored exactly once, nothing sent before a Retry-After")
    func thirtyPercent() async throws {
        let collector = try await TestCollector.start()
        let proxy = try await FaultProxy.start(before: collector, rate: 0.3, seed: 12)
        let scratch = TemporaryDirectory()
        let events = 20_000
        // Uploads start at 50 events and retry fast (20 ms doubling to 200 ms), but the timer
        // ticks each second rather than the durability tests' 50 ms: an idle tick still looks
        // for work in SQLite, and over a faulty run's longer wall time those looks would be
        // counted against the faults.
        let options = ["--batch-max-events", "200", "--request-timeout-ms", "2000", "--upload-interval-ms", "1000"]

        // Clean and faulty runs take turns, twice. What the faults cost in CPU is printed here and
        // measured by the benchmark's faults phase (`faults_cpu_ratio`): a ratio of two timings
        // on a machine doing other work is a figure, not a rule a test can hold.
        var clean: [Run] = [], faulty: [Run] = []
        for round in 0..<2 {
            clean.append(try await Self.deliver(to: collector.url, scratch: scratch, name: "clean\(round)", events: events, extra: options))
            faulty.append(try await Self.deliver(to: proxy.url, scratch: scratch, name: "faulty\(round)", events: events, extra: options))
        }
        let counts = proxy.counts()
        await proxy.shutdown()

        for run in clean + faulty {
            #expect(run.status == 0 && run.remaining == 0, "\(run.json)")
        }
        let stored = try await Self.storedCounts(collector)
        for name in ["clean0", "clean1", "faulty0", "faulty1"] {
            let receipted = try Self.receipts(scratch, name)
            #expect(receipted.count == events, "\(name): \(receipted.count) receipts")
            #expect(receipted.filter { stored[$0] != 1 }.isEmpty, "\(name): every receipted event stored exactly once")
        }
        #expect(stored.count == 4 * events && stored.values.allSatisfy { $0 == 1 })

        let cleanCPU = clean.map(\.cpu).min() ?? .infinity, faultyCPU = faulty.map(\.cpu).min() ?? .infinity
        let cleanTime = clean.map(\.seconds).min() ?? .infinity, faultyTime = faulty.map(\.seconds).min() ?? .infinity
        print("thirtyPercent: clean \(cleanTime) s, \(cleanCPU) CPU-s; faulty \(faultyTime) s, \(faultyCPU) CPU-s (CPU ratio \(faultyCPU / cleanCPU)); proxy \(counts)")
        #expect(counts.faults.values.reduce(0, +) >= 30, "the proxy must have faulted: \(counts)")
        #expect(Set(counts.faults.keys) == Set(FaultKind.allCases.map(\.rawValue)), "every kind of fault was injected: \(counts.faults)")
        #expect(counts.earlyRequests == 0, "a request arrived before the Retry-After the proxy gave")
        await collector.stop()
    }

    @Test("A black hole (accepts, never answers): the request timeout fires, the batch is retried with backoff, the process stays near idle")
    func blackHole() async throws {
        let hole = try ReservedPort(listening: true)
        let scratch = TemporaryDirectory()
        let run = try await Self.deliver(to: hole.url, scratch: scratch, name: "hole", events: 100,
                                   extra: ["--request-timeout-ms", "1000", "--deadline-seconds", "6"])
        print("blackHole: \(run.json)")
        #expect(run.status != 0 && run.remaining == 100, "nothing can be delivered: \(run.json)")
        #expect(run.retried >= 3, "each timeout is followed by a retry: \(run.json)")
        #expect(run.cpu < 1.0, "waiting on a silent socket costs next to nothing: \(run.cpu) CPU-s in \(run.seconds) s")
    }

    @Test("A collector answering one byte a second: the request times out and is retried; the retries the collector already stored are dropped as duplicates; delivered once it answers normally")
    func oneByteASecond() async throws {
        let collector = try await TestCollector.start()
        let proxy = try await FaultProxy.start(before: collector, rate: 1) { settings in
            settings.faults = [.slowResponse]
            settings.slowByteInterval = .seconds(1)
        }
        let scratch = TemporaryDirectory()
        let slow = try await Self.deliver(to: proxy.url, scratch: scratch, name: "slow", events: 100,
                                    extra: ["--request-timeout-ms", "1000", "--deadline-seconds", "6"])
        let counts = proxy.counts()
        await proxy.shutdown()
        print("oneByteASecond: \(slow.json); proxy \(counts)")
        #expect(slow.status != 0 && slow.remaining == 100, "no answer ever completes: \(slow.json)")
        #expect(slow.retried >= 3 && counts.forwarded >= 3, "timed out and retried: \(slow.json), \(counts)")
        #expect(slow.cpu < 1.0, "a trickle of bytes costs next to nothing: \(slow.cpu) CPU-s in \(slow.seconds) s")

        // The same database, now straight to the collector.
        let flush = try await Child.run(["flush", "--db", scratch.url.appendingPathComponent("slow.sqlite").path,
                                   "--collector", collector.url.absoluteString])
        #expect(flush.status == 0 && flush.json["remaining"] as? Int == 0, "\(flush.json)")
        let stored = try await Self.storedCounts(collector)
        let receipted = try Self.receipts(scratch, "slow")
        #expect(receipted.count == 100 && stored.count == 100 && Set(stored.keys) == receipted)
        #expect(stored.values.allSatisfy { $0 == 1 })
        #expect(try await collector.stats().duplicatesDropped >= 200, "the timed-out requests had reached the collector")
        await collector.stop()
    }
}
