import FaultProxy
import Foundation
import NFLogCollectorTesting

extension Phases {
    /// What one `nflog-crash-child deliver` run cost the SDK's process.
    struct DeliveryCost {
        let seconds: Double
        let cpu: Double
    }

    /// The faults phase's figures: the same events delivered straight to the collector and
    /// through the fault proxy, and what the proxy did.
    struct Faults {
        let clean: DeliveryCost
        let faulty: DeliveryCost
        let proxy: FaultProxyCounts
        /// The seconds of `Retry-After` the proxy handed out: time the SDK was asked to wait.
        let mandatedWait: Double
    }

    /// The request timeout both runs use: a stalled request costs this much, whatever the SDK does.
    static let faultsRequestTimeoutMs = 2_000

    /// `events` events logged and delivered by the SDK in a child process (so its CPU time is its
    /// own), with the SDK's default upload schedule, first straight to a collector on 127.0.0.1,
    /// then through a `FaultProxy` faulting 30% of uploads with every kind of fault. Every event
    /// must be stored exactly once.
    static func faults(events: Int) async throws -> Faults {
        let (collector, collectorDirectory) = try await TestCollector.startScratch()
        var settings = FaultProxyConfiguration(upstreamPort: collector.port)
        settings.faultRate = 0.3
        settings.seed = 1
        settings.retryAfterSeconds = 1
        settings.slowByteInterval = .milliseconds(2)
        let proxy = FaultProxy(settings)
        try await proxy.start()
        let directory = scratchDirectory("faults")
        defer { try? FileManager.default.removeItem(at: directory) }

        let clean = try deliver(events: events, to: collector.url, database: directory.appendingPathComponent("clean.sqlite"))
        sync()
        let faulty = try deliver(events: events, to: proxy.url, database: directory.appendingPathComponent("faulty.sqlite"))
        let counts = proxy.counts()
        await proxy.shutdown()
        let stats = try await collector.stats()
        await collector.stop(removing: collectorDirectory)
        guard stats.eventsStored == 2 * events else {
            throw BenchError("faults: \(stats.eventsStored) of \(2 * events) events stored")
        }
        let refusals = (counts.faults[FaultKind.serviceUnavailable.rawValue] ?? 0) + (counts.faults[FaultKind.tooManyRequests.rawValue] ?? 0)
        return Faults(clean: clean, faulty: faulty, proxy: counts, mandatedWait: Double(refusals * settings.retryAfterSeconds))
    }

    /// Runs `nflog-crash-child deliver` (built beside this executable) and reads its figures.
    private static func deliver(events: Int, to url: URL, database: URL) throws -> DeliveryCost {
        let (succeeded, printed) = try runChild("nflog-crash-child", [
            "deliver", "--sdk-defaults", "--db", database.path, "--collector", url.absoluteString, "--events", String(events),
            "--request-timeout-ms", String(faultsRequestTimeoutMs), "--deadline-seconds", "300"])
        let last = printed.split(separator: "\n").last.map(String.init) ?? ""
        guard succeeded, let object = (try? JSONSerialization.jsonObject(with: Data(last.utf8))) as? [String: Any],
              let seconds = object["seconds"] as? Double, let cpu = object["cpu"] as? Double,
              object["uploaded"] as? Int == events else {
            throw BenchError("the delivering child failed; it printed: \(printed)")
        }
        return DeliveryCost(seconds: seconds, cpu: cpu)
    }
}
