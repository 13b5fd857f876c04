import Foundation
import NFLogCollectorTesting
import NFLogger

/// The `outputs` phase: what a second durable output costs, side by side with the collector
/// alone in the same run (the collector alone runs exactly the code path of the `durable` and
/// `e2e` phases: no routing on the write path).
extension Phases {
    /// The durable throughput (log call → commit) with the collector as the only durable output,
    /// and with a second one taking every event too (one `deliveries` row per event). Nothing is
    /// uploaded during the measure (the interval and threshold are far away).
    static func durableWithOutputs(events: Int, second: Bool) async throws -> Double {
        let directory = scratchDirectory("outputs-durable")
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = configuration(directory)
        // Never reached during the measure (port 9, discard; nothing is sent before the interval).
        guard let unreached = URL(string: "http://127.0.0.1:9/v1/events") else { throw BenchError("outputs: no URL") }
        configuration.uploadURL = unreached
        configuration.appKey = "bench"
        configuration.upload.interval = 3_600
        configuration.upload.countThreshold = Int.max
        if second {
            configuration.outputs = [CollectorOutput(id: "second", url: unreached, appKey: "bench")]
        }
        return try await durable(events: events, configuration: configuration, phase: "outputs")
    }

    /// N events logged and delivered to one collector, or to two (the second a ``CollectorOutput``
    /// taking every event): the time until every collector has every event.
    static func endToEndWithOutputs(events: Int, second: Bool) async throws -> Double {
        let (first, firstDirectory) = try await TestCollector.startScratch()
        let secondCollector = second ? try await TestCollector.startScratch() : nil
        let directory = scratchDirectory("outputs-e2e")
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = configuration(directory)
        configuration.uploadURL = first.eventsURL
        configuration.appKey = TestCollector.appKey
        if let (collector, _) = secondCollector {
            configuration.outputs = [CollectorOutput(id: "second", url: collector.eventsURL, appKey: TestCollector.appKey)]
        }
        let logger = try NFLogger(configuration: configuration)
        _ = await logger.flush()
        let start = ContinuousClock.now
        let deadline = start + .seconds(max(60, events / 2_500))
        _ = await produce(logger, events: events)
        func pending(_ result: FlushResult) -> Bool {
            result.remainingEvents > 0 || result.error != nil || result.outputs.values.contains { $0.remainingEvents > 0 || $0.error != nil }
        }
        var result = await logger.flush()
        while pending(result) {
            guard ContinuousClock.now < deadline else { throw BenchError("outputs end to end: undelivered at the deadline: \(result)") }
            try await Task.sleep(for: .milliseconds(5))
            result = await logger.flush()
        }
        let elapsed = seconds(ContinuousClock.now - start)
        await logger.close()
        let stored = [try await first.stats().eventsStored] + (secondCollector == nil ? [] : [try await secondCollector!.0.stats().eventsStored])
        await first.stop(removing: firstDirectory)
        if let (collector, collectorDirectory) = secondCollector { await collector.stop(removing: collectorDirectory) }
        guard stored.allSatisfy({ $0 == events }) else { throw BenchError("outputs end to end: stored \(stored) of \(events)") }
        return elapsed
    }
}
