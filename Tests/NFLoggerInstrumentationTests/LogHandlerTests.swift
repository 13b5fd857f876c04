import Foundation
import Logging
import NFLogger
import NFLoggerInstrumentation
import NFLoggerTesting
import Testing
import Tracing

@Suite("NFLogHandler: swift-log records as point events")
struct LogHandlerTests {
    @Test("Records at or above the level become log.<label> events with message, level, source and flattened metadata; below it nothing")
    func recordsAboveTheLevel() async throws {
        let transport = RecordingTransport()
        let logger = try makeLogger(transport)
        let sink = NFLogSink(logger: logger)
        var log = Logger(label: "com.example.db pool") { sink.makeHandler(label: $0) }
        log[metadataKey: "pool"] = "main"
        log.debug("not recorded")
        log.info("connected", metadata: ["host": "db1", "nested": ["port": "5432", "tls": "on"], "list": ["a", "b"],
                                         "message": "a metadata key named like a parameter"])
        log.error("query failed", metadata: ["table": .stringConvertible(42)])
        #expect(await logger.flush().error == nil)
        await logger.close()

        let events = transport.events
        #expect(events.count == 2)
        #expect(events.allSatisfy { $0.name == "log.com.example.db_pool" && $0.type == "log" && $0.kind == .point })
        let connected = try #require(events.first { $0.parameters["message"] == "connected" })
        #expect(connected.parameters["level"] == "info")
        #expect(connected.parameters["source"] == "NFLoggerInstrumentationTests")
        #expect(connected.parameters["host"] == "db1" && connected.parameters["pool"] == "main")
        #expect(connected.parameters["nested.port"] == "5432" && connected.parameters["nested.tls"] == "on")
        #expect(connected.parameters["list"] == #"["a", "b"]"#)
        #expect(connected.parameters["metadata.message"] == "a metadata key named like a parameter")
        #expect(connected.parameters["truncated"] == nil)
        let failed = try #require(events.first { $0.parameters["message"] == "query failed" })
        #expect(failed.parameters["level"] == "error" && failed.parameters["table"] == "42")
    }

    @Test("Metadata is bounded: 32 keys, values cut at 1 KiB, truncated: true")
    func boundedMetadata() async throws {
        let transport = RecordingTransport()
        let logger = try makeLogger(transport)
        let sink = NFLogSink(logger: logger)
        let log = Logger(label: "bulk") { sink.makeHandler(label: $0) }
        var metadata: Logger.Metadata = [:]
        for index in 0..<50 { metadata["key\(index)"] = "value" }
        metadata["big"] = .string(String(repeating: "é", count: 2_000))
        log.info("many", metadata: metadata)
        #expect(await logger.flush().error == nil)
        await logger.close()
        let event = try #require(transport.events(named: "log.bulk").first)
        #expect(event.parameters["truncated"] == true)
        // message, level, source, truncated, and 32 of the metadata's keys.
        #expect(event.parameters.count == 4 + 32)
        if case .string(let big)? = event.parameters["big"] { #expect(big.utf8.count == 1_024) } else { Issue.record("big was left out") }
    }

    @Test("Labels become valid event names")
    func labels() throws {
        let transport = RecordingTransport()
        let sink = NFLogSink(logger: try makeLogger(transport))
        #expect(sink.makeHandler(label: "com.example.App").eventName == "log.com.example.App")
        #expect(sink.makeHandler(label: "..a..b c/d.é.").eventName == "log.a.b_c_d._")
        #expect(sink.makeHandler(label: "").eventName == "log")
        let long = sink.makeHandler(label: String(repeating: "x", count: 300) + ".tail").eventName
        #expect(long.utf8.count == 256 && long.hasPrefix("log.xxx") && !long.hasSuffix("tail"))
    }

    @Test("Over the rate limit, records are dropped and counted per label")
    func rateLimit() async throws {
        let transport = RecordingTransport()
        let logger = try makeLogger(transport)
        let sink = NFLogSink(logger: logger, rateLimit: LabelRateLimit(perSecond: 0.001, burst: 10))
        let noisy = Logger(label: "noisy") { sink.makeHandler(label: $0) }
        let quiet = Logger(label: "quiet") { sink.makeHandler(label: $0) }
        for index in 0..<25 { noisy.info("spam \(index)") }
        quiet.info("once")
        #expect(await logger.flush().error == nil)
        await logger.close()
        #expect(transport.events(named: "log.noisy").count == 10)
        #expect(transport.events(named: "log.quiet").count == 1)
        #expect(sink.droppedRecords(label: "noisy") == 15 && sink.droppedRecords(label: "quiet") == 0)
        #expect(sink.droppedRecords == ["noisy": 15])
        #expect(sink.makeHandler(label: "noisy").droppedRecords == 15, "a label's handlers share its bucket and count")
    }

    @Test("The SDK's own log (nflogger, nflogger.*) is never recorded, nor a record made while the handler is at work")
    func ownLogAndRecursion() async throws {
        let transport = RecordingTransport()
        let logger = try makeLogger(transport)
        let sink = NFLogSink(logger: logger)
        Logger(label: "nflogger") { sink.makeHandler(label: $0) }.error("own")
        Logger(label: "nflogger.requests") { sink.makeHandler(label: $0) }.error("own")
        let log = Logger(label: "app") { sink.makeHandler(label: $0) }
        // A metadata value whose text logs: the handler reads it while recording the first record.
        log.info("outer", metadata: ["value": .stringConvertible(Reentrant(log: log))])
        #expect(await logger.flush().error == nil)
        await logger.close()
        #expect(transport.events.map { $0.parameters["message"] } == ["outer"])
        #expect(transport.events.first?.parameters["value"] == "reentrant")
        #expect(sink.droppedRecords == ["app": 1], "the inner record is dropped and counted")
    }

    @Test("auto.log false in the policy: nothing is recorded, every record counted as dropped")
    func policyOff() async throws {
        let transport = RecordingTransport()
        let logger = try makeLogger(transport, policy: policy(turningOff: "log"))
        let sink = NFLogSink(logger: logger)
        let log = Logger(label: "app") { sink.makeHandler(label: $0) }
        for _ in 0..<3 { log.warning("off") }
        #expect(await logger.flush().error == nil)
        await logger.close()
        #expect(transport.events.isEmpty)
        #expect(sink.droppedRecords(label: "app") == 3)
    }

    @Test("A record made inside a traced span is logged into the span's transaction")
    func insideASpan() async throws {
        let transport = RecordingTransport()
        let logger = try makeLogger(transport)
        let sink = NFLogSink(logger: logger)
        let tracer = NFLoggerTracer(logger: logger)
        let log = Logger(label: "app") { sink.makeHandler(label: $0) }
        let span = tracer.startSpan("checkout", context: .topLevel)
        ServiceContext.$current.withValue(span.context) { log.info("inside") }
        log.info("outside")
        span.end()
        #expect(await logger.flush().error == nil)
        await logger.close()
        let root = try #require(transport.events(named: "checkout").first)
        let inside = try #require(transport.events.first { $0.parameters["message"] == "inside" })
        #expect(inside.transactionID == root.id && inside.parentSpanID == TransactionContext.spanID(of: root.id))
        let outside = try #require(transport.events.first { $0.parameters["message"] == "outside" })
        #expect(outside.transactionID == nil)
    }
}

/// A value whose description logs, as a careless model type's might.
struct Reentrant: CustomStringConvertible, Sendable {
    let log: Logger
    var description: String {
        log.info("inner")
        return "reentrant"
    }
}
