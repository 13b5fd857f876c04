import CollectorTestSupport
import FaultProxy
import Foundation
import NFLogCollectorTesting
@_spi(NFLogShared) import NFLogSupport
import NFLogger
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The collector's count of what devices pruned is an audit figure: it must equal what the
/// devices' pruners really deleted, however often a batch was sent again, its answer lost, or the
/// app or the collector killed. A batch keeps its id, events and prune counts until an answer
/// settles it, so the collector (which counts a batch's diagnostics once per batch id) hears each
/// prune once.
@Suite("Pruned counts told exactly once, through crashes and lost answers", .serialized)
struct PrunedCountsTests {
    enum Victim: String, CustomStringConvertible, Sendable {
        case app, collector
        var description: String { rawValue }
    }

    /// Kill rounds per run: enough for batches to be cut off at every stage.
    static let rounds = 6

    @Test("kill -9 of the app, or of the collector, through a proxy that loses answers after the commit: the collector's pruned counts by name are what the device's pruner deleted",
          arguments: [Victim.app, .collector])
    func prunedCountsExactlyOnce(_ victim: Victim) async throws {
        let scratch = TemporaryDirectory()
        let receipts = scratch.url.appendingPathComponent("receipts.txt").path
        let collectorPath = scratch.url.appendingPathComponent("collector.sqlite").path
        // The collector's port: one the system picks. The child collector, killed and started
        // again on the same port, needs it known first; the in-process one binds port 0 itself
        // (a port reserved and released first can be taken meanwhile by any socket of this
        // busy process: a clean-clone run beside two busy loops failed that way, EADDRINUSE).
        var port = 0
        if victim == .collector {
            let reserved = try ReservedPort()
            port = reserved.port
            reserved.release()
        }

        // The collector: in this process when the app is the victim, a child to kill otherwise.
        var inProcess: TestCollector?
        var served: (process: ChildProcess, output: Pipe)?
        func startServed() async throws {
            let child = try Child.start(["serve", "--port", "\(port)", "--db", collectorPath], executable: RetentionCommandTests.executable)
            let first = await Child.firstLine(of: child.output)
            guard first.hasPrefix("listening on ") else {
                child.process.terminate()
                throw ChildFailure(message: "the collector did not start: '\(first)'")
            }
            served = child
        }
        switch victim {
        case .app:
            let collector = try await TestCollector.start(databasePath: collectorPath)
            inProcess = collector
            port = collector.port
        case .collector: try await startServed()
        }

        // Answers lost after the collector committed, connections closed before the body, 503s
        // and 429s: every way a batch is left waiting with its fate unknown to the device.
        var settings = FaultProxyConfiguration(upstreamPort: port)
        settings.faultRate = 0.25
        // (Drawn with equal chances: an answer lost after the commit, the case that counted
        // twice, comes up twice as often as the others.)
        settings.faults = [.dropAfterUpstream, .dropAfterUpstream, .closeBeforeBody, .serviceUnavailable, .tooManyRequests]
        settings.seed = victim == .app ? 21 : 22
        let proxy = FaultProxy(settings)
        try await proxy.start()

        // A small row limit, so the children (which log far faster than they upload) prune all along.
        let arguments = ["--db", scratch.databaseURL.path, "--collector", proxy.url.absoluteString,
                         "--max-rows", "400", "--request-timeout-ms", "2000"]
        var random = SeededRandom(seed: victim == .app ? 31 : 32)
        func startApp() async throws -> ChildProcess {
            let child = try Child.start(["log", "--receipts", receipts] + arguments)
            _ = await Child.offPool { child.output.fileHandleForReading.availableData }  // "ready"
            return child.process
        }
        var app = try await startApp()
        for _ in 0..<Self.rounds {
            // Progress, not time: each round lets the app log (and prune) a few hundred events and
            // make a few uploads through the proxy first. The proxy draws its faults in request
            // order from its seed, so the same requests meet the same faults on any machine.
            try await waitForReceipts(receipts, atLeast: receiptCount(receipts) + 500)
            try await Self.waitForRequests(proxy, atLeast: proxy.counts().requests + 6)
            try await Task.sleep(for: .microseconds(20_000 + random.next() % 300_000))
            switch victim {
            case .app:
                let killed = app
                kill(killed.processIdentifier, SIGKILL)
                await Child.offPool { killed.waitUntilExit() }
                app = try await startApp()
            case .collector:
                if let child = served?.process {
                    kill(child.processIdentifier, SIGKILL)
                    await Child.offPool { child.waitUntilExit() }
                }
                try await startServed()
            }
        }
        let last = app
        kill(last.processIdentifier, SIGKILL)
        await Child.offPool { last.waitUntilExit() }
        let counts = proxy.counts()
        await proxy.shutdown()
        if let child = served?.process {
            child.terminate()
            await Child.offPool { child.waitUntilExit() }
        }

        // A clean run delivers what is left, straight to the collector (in this process now, on
        // the same database), with no row limit in the way.
        let collector: TestCollector
        if let inProcess { collector = inProcess } else { collector = try await TestCollector.start(databasePath: collectorPath, port: port) }
        let flush = try await Child.run(["flush", "--db", scratch.databaseURL.path, "--collector", collector.url.absoluteString,
                                         "--max-rows", "10000000"])
        #expect(flush.status == 0 && flush.json["remaining"] as? Int == 0, "\(flush.json)")

        let deleted = try Self.prunedTotals(scratch.databaseURL.path)
        let stats = try await collector.stats()
        let lines = try String(contentsOfFile: receipts, encoding: .utf8).split(separator: "\n")
        let receipted = Set(lines.compactMap { UUID(uuidString: String($0)) })
        var stored: [UUID: Int] = [:]
        for event in try await collector.exportedEvents() { stored[event.event.id, default: 0] += 1 }
        let missing = receipted.filter { stored[$0] == nil }.count
        let prunedTotal = deleted.values.reduce(0, +)
        print("prunedCounts, \(victim) killed \(Self.rounds) times: the device's pruner deleted \(prunedTotal) (\(deleted)), the collector counted \(stats.prunedOnDevices) (\(stats.prunedOnDevicesByName)); \(receipted.count) receipted, \(stored.count) stored, \(missing) receipted and missing, \(stats.duplicatesDropped) re-sent events dropped; proxy: \(counts)")

        #expect(prunedTotal > 0, "the row limit must have pruned")
        #expect(stats.prunedOnDevicesByName == deleted, "counted by name as deleted by name")
        #expect(stats.prunedOnDevices == prunedTotal)
        // Every receipted event the collector lacks was pruned (never stored, then dropped); the
        // pruned also include events committed just before a kill, whose receipt never got written.
        #expect(missing <= prunedTotal)
        #expect(stored.values.allSatisfy { $0 == 1 }, "no event stored twice")
        #expect(counts.faults[FaultKind.dropAfterUpstream.rawValue, default: 0] > 0, "answers were lost after the commit")
        await collector.stop()
    }

    struct ChildFailure: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    /// Waits until the proxy has seen `count` requests (bounded only against a hang).
    static func waitForRequests(_ proxy: FaultProxy, atLeast count: Int) async throws {
        let deadline = ContinuousClock.now + hangLimit
        while proxy.counts().requests < count {
            guard ContinuousClock.now < deadline else { throw ChildFailure(message: "no uploads through the proxy for \(hangLimit)") }
            try await Task.sleep(for: .milliseconds(10))
        }
    }

    /// The device's own record of what its pruner deleted, by event name.
    static func prunedTotals(_ path: String) throws -> [String: Int] {
        let connection = try SQLiteConnection(path: path, busyTimeoutMilliseconds: 5_000)
        let rows = try connection.prepare("SELECT name, count FROM pruned_totals WHERE count > 0")
            .collect { ($0.text(at: 0) ?? "", Int($0.int64(at: 1))) }
        return Dictionary(rows, uniquingKeysWith: +)
    }
}
