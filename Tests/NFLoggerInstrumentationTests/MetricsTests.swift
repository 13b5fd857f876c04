import CoreMetrics
import Foundation
import NFLogger
import NFLoggerInstrumentation
import NFLoggerTesting
import Testing

// The factory's handlers are used directly: MetricsSystem.bootstrap is process-global and once only.
@Suite("NFMetricsFactory: swift-metrics as NFLogger measurements")
struct MetricsTests {
    @Test("A counter, a recorder, a timer and a meter become measurement events named metric.<label> with their dimensions")
    func measurements() async throws {
        let transport = RecordingTransport()
        let logger = try makeLogger(transport)
        let factory = NFMetricsFactory(logger: logger)
        Counter(label: "cache.miss", dimensions: [("cache", "images")], factory: factory).increment(by: 2)
        Recorder(label: "queue depth", dimensions: [("value", "clash")], aggregate: true, factory: factory).record(7.5)
        Timer(label: "db.query", factory: factory).recordMilliseconds(12)
        let meter = Meter(label: "pool.size", factory: factory)
        meter.set(4)
        meter.increment(by: 1)
        FloatingPointCounter(label: "bytes", factory: factory).increment(by: 0.25)
        Recorder(label: "bad", dimensions: [], aggregate: true, factory: factory).record(Double.infinity)
        #expect(await logger.flush().error == nil)
        await logger.close()

        let miss = try #require(transport.events(named: "metric.cache.miss").first)
        #expect(miss.type == "measurement" && miss.parameters == ["value": 2.0, "cache": "images"])
        let depth = try #require(transport.events(named: "metric.queue_depth").first)
        #expect(depth.parameters == ["value": 7.5, "dimension.value": "clash"])
        #expect(transport.events(named: "metric.db.query").first?.parameters["value"] == 12.0)
        #expect(transport.events(named: "metric.pool.size").map { $0.parameters["value"] } == [4.0, 5.0])
        #expect(transport.events(named: "metric.bytes").first?.parameters["value"] == 0.25)
        #expect(transport.events(named: "metric.bad").isEmpty && factory.droppedMeasurements == 1)
    }

    @Test("With an aggregate rule for metric.**, they fold into aggregates")
    func aggregates() async throws {
        let transport = RecordingTransport()
        let logger = try makeLogger(transport, policy: #"{"version":1,"mode":"active","rules":{"aggregate":[{"pattern":"metric.**","window_s":60,"dimensions":["route"]}]}}"#)
        let factory = NFMetricsFactory(logger: logger)
        let timer = Timer(label: "http.latency", dimensions: [("route", "/cart")], factory: factory)
        for milliseconds in 1...10 { timer.recordMilliseconds(milliseconds) }
        #expect(await logger.flush().error == nil)
        // A flush closes a window open a second or more.
        try await Task.sleep(nanoseconds: 1_200_000_000)
        #expect(await logger.flush().error == nil)
        await logger.close()
        #expect(transport.events.isEmpty)
        let aggregate = try #require(transport.aggregates.first { $0.name == "metric.http.latency" })
        #expect(aggregate.count == 10 && aggregate.dimensions == ["route": "/cart"])
        #expect(aggregate.measures["value"]?.sum == 55 && aggregate.measures["value"]?.max == 10)
    }

    @Test("auto.metrics false: nothing is recorded, every measurement counted")
    func policyOff() async throws {
        let transport = RecordingTransport()
        let logger = try makeLogger(transport, policy: policy(turningOff: "metrics"))
        let factory = NFMetricsFactory(logger: logger)
        Counter(label: "c", factory: factory).increment()
        Timer(label: "t", factory: factory).recordNanoseconds(1)
        #expect(await logger.flush().error == nil)
        await logger.close()
        #expect(transport.events.isEmpty && factory.droppedMeasurements == 2)
    }
}
