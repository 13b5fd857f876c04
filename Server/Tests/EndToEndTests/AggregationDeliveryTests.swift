import CollectorTestSupport
import Foundation
import NFLogCollector
import NFLogCollectorTesting
import NFLogger
import Testing

@Suite("Aggregates from the SDK to a real collector")
struct AggregationDeliveryTests {
    static let policy = #"{"version":1,"mode":"active","rules":{"aggregate":[{"pattern":"perf.frame","window_s":60,"dimensions":["screen"]}]}}"#

    @Test("Folded on the device, sent once though a response is lost, stored once; the report's percentiles are within 1% of the exact ones", arguments: StoreKind.all)
    func deliveredOnce(_ kind: StoreKind) async throws {
        let collector = try await kind.startCollector()
        let scratch = TemporaryDirectory()
        // The first upload reaches the collector, which commits it, and its answer is lost: the
        // same batch goes again and must not be stored twice.
        let transport = FaultInjectingTransport([.dropAfterResponse])
        var configuration = configuration(scratch, collector: collector.url, transport: transport)
        configuration.policyOptions.fallback = try Policy.parse(Data(Self.policy.utf8))
        let logger = try NFLogger(configuration: configuration)
        var random = SystemRandomNumberGenerator()
        var values: [String: [Double]] = [:]
        var aggregateIDs: Set<UUID> = []
        for index in 0..<3_000 {
            let screen = ["home", "feed", "cart"][index % 3]
            // Log-normal frame times around 9 ms.
            let u1 = Double.random(in: Double.ulpOfOne..<1, using: &random), u2 = Double.random(in: 0..<1, using: &random)
            let ms = 9 * exp(0.4 * sqrt(-2 * log(u1)) * cos(2 * .pi * u2))
            values[screen, default: []].append(ms)
            let status = await logger.logEvent(name: "perf.frame", parameters: ["ms": ms, "screen": screen])
            #expect(status.isAggregated)
            if let id = status.recordedID { aggregateIDs.insert(id) }
        }
        // Open more than a second: the flush closes them.
        try await Task.sleep(for: .milliseconds(1_100))
        let result = await deliverAll(logger)
        #expect(result.error == nil && result.remainingEvents == 0)
        await logger.close()
        #expect(transport.sent.count >= 2, "the lost answer made the SDK send again")

        let stored = try await collector.exportedAggregates()
        #expect(Set(stored.map(\.uuid)) == aggregateIDs, "each aggregate once, under the id its events' completions named")
        #expect(stored.map(\.count).reduce(0, +) == 3_000)
        let stats = try await collector.stats()
        #expect(stats.aggregatesStored == aggregateIDs.count)

        for (screen, screenValues) in values {
            let report = try await collector.report(filter: ReportFilter(dimension: .init(key: "screen", value: screen)))
            let measure = try #require(report.aggregates["perf.frame"]?.measures["ms"])
            #expect(measure.count == screenValues.count)
            let sorted = screenValues.sorted()
            for (q, reported) in [(0.5, measure.p50), (0.95, measure.p95), (0.99, measure.p99)] {
                let exact = sorted[Int((q * Double(sorted.count - 1)).rounded(.down))]
                let error = abs((try #require(reported)) - exact) / exact
                #expect(error <= 0.01, "\(screen) p\(Int(q * 100)): \(reported ?? 0) vs \(exact)")
            }
            #expect(abs((measure.mean ?? 0) - screenValues.reduce(0, +) / Double(screenValues.count)) < 1e-9)
        }
        await collector.stop()
    }
}
