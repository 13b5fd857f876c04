import CollectorTestSupport
import Foundation
import NFLogCollector
import NFLogCollectorTesting
@_spi(NFLogShared) import NFLogSupport
@testable import NFLogger
import Synchronization
import Testing

/// Runs scripts/validate-json (Python's jsonschema) on documents.
enum SchemaCheck {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()  // Server/Tests/EndToEndTests/… → the repository
    static let schema = root.appendingPathComponent("docs/batch.schema.json")

    static let available: Bool = runBlocking(["python3", "-c", "import jsonschema"]).status == 0

    /// Runs off Swift's cooperative pool (two threads on a two-core machine): a Python process
    /// waited for on it, seconds long on a loaded machine, would stall every other test's async
    /// work, the collectors' included.
    static func run(_ arguments: [String]) async -> (status: Int32, output: String) {
        await Child.offPool { runBlocking(arguments) }
    }

    private static func runBlocking(_ arguments: [String]) -> (status: Int32, output: String) {
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        do { try process.run() } catch { return (-1, "\(error)") }
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }

    static func validate(_ documents: [Data]) async throws -> (status: Int32, output: String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nflog-schema-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        var paths: [String] = []
        for (index, document) in documents.enumerated() {
            let url = directory.appendingPathComponent("doc-\(index).json")
            try document.write(to: url)
            paths.append(url.path)
        }
        return await run(["python3", root.appendingPathComponent("scripts/validate-json").path, schema.path] + paths)
    }
}

/// Records every request body on its way to the real collector.
final class ForwardingRecorder: HTTPTransport {
    private let real = DefaultHTTPTransport(timeout: hangLimitSeconds)
    private let bodies = Mutex<[Data]>([])
    var recorded: [Data] { bodies.withLock { $0 } }

    func send(_ request: TransportRequest) async throws -> TransportResponse {
        let json = (try? Gzip.decompress(Array(request.body), maxOutputBytes: 64 << 20)).map { Data($0) } ?? request.body
        bodies.withLock { $0.append(json) }
        return try await real.send(request)
    }
}

@Suite("The wire format matches docs/PROTOCOL.md and docs/batch.schema.json")
struct ProtocolConformanceTests {
    @Test("Batches the SDK really sends validate against the schema and decode in the collector",
          .enabled(if: SchemaCheck.available, "needs python3 with jsonschema: python3 -m pip install jsonschema"))
    func sdkBatchesValidate() async throws {
        let collector = try await TestCollector.start()
        let transport = ForwardingRecorder()
        let scratch = TemporaryDirectory()
        var configuration = configuration(scratch, collector: collector.url, transport: transport)
        configuration.upload.batchMaxEvents = 40
        let logger = try NFLogger(configuration: configuration)
        _ = await logEvents(logger, points: 50, spans: 20)
        _ = await logger.logEvent(name: "tricky.params", parameters: ["quote": "a\"b\\c\n", "emoji": "🙂", "nested": ["x": [1, 2.5, .null, true] as LogValue]])
        logger.suspend()
        logger.resume()
        await deliverAll(logger)
        let bodies = transport.recorded
        #expect(bodies.count == 2)  // 71 events, 40 per batch
        let result = try await SchemaCheck.validate(bodies)
        #expect(result.status == 0, "\(result.output)")
        for body in bodies {
            #expect(throws: Never.self) { try BatchDecoder().decode(Array(body)) }
        }
        await logger.close()
        await collector.stop()
    }

    @Test("Aggregates the SDK really sends (dimensions, an overflow series, a span's duration, no numbers at all) validate and decode",
          .enabled(if: SchemaCheck.available, "needs python3 with jsonschema: python3 -m pip install jsonschema"))
    func sdkAggregatesValidate() async throws {
        let collector = try await TestCollector.start()
        let transport = ForwardingRecorder()
        let scratch = TemporaryDirectory()
        var configuration = configuration(scratch, collector: collector.url, transport: transport)
        configuration.policyOptions.fallback = try Policy.parse(Data(#"""
            {"version":1,"mode":"active","rules":{"aggregate":[
              {"pattern":"perf.frame","window_s":3600,"dimensions":["screen"],"max_series":2},
              {"pattern":"net.**","window_s":3600},
              {"pattern":"ui.**","window_s":1}]}}
            """#.utf8))
        // The SDK's clock, moved by hand: the hour-long windows must not be cut by a real hour's end.
        let clock = ManualClock()
        let logger = try NFLogger(configuration: configuration, clock: clock)
        for (index, screen) in ["home", "feed", "cart", "pay"].enumerated() {
            _ = await logger.logEvent(name: "perf.frame", parameters: ["ms": 16.7 * Double(index + 1), "screen": screen, "note": "dropped"])
        }
        let span = await logger.startEvent(name: "net.request", parameters: ["bytes": 512]).span
        _ = await span.end(parameters: ["status": 200])
        _ = await logger.logEvent(name: "ui.tap", parameters: ["button": "buy"])  // nothing numeric: a count only
        _ = await logger.record(name: "perf.frame", value: 8, dimensions: ["screen": "home"])
        clock.advance(1.1)  // the 1 s window of ui.** has ended; the hour-long ones close at the flush
        let result = await deliverAll(logger)
        #expect(result.error == nil)
        let bodies = transport.recorded
        let check = try await SchemaCheck.validate(bodies)
        #expect(check.status == 0, "\(check.output)")
        var aggregates: [Batch.Aggregate] = []
        for body in bodies { aggregates += try BatchDecoder().decode(Array(body)).aggregates }
        #expect(aggregates.count == 5)
        #expect(aggregates.contains { $0.overflow && $0.count == 2 })
        #expect(aggregates.contains { $0.name == "net.request" && $0.measures.keys.sorted() == ["bytes", "duration_ms", "status"] })
        #expect(aggregates.contains { $0.name == "ui.tap" && $0.measures.isEmpty && $0.count == 1 })
        await logger.close()
        await collector.stop()
    }

    @Test("The example in docs/PROTOCOL.md validates and the collector accepts it")
    func documentedExample() async throws {
        let protocolText = try String(contentsOf: SchemaCheck.root.appendingPathComponent("docs/PROTOCOL.md"), encoding: .utf8)
        let start = try #require(protocolText.range(of: "```json\n{\n  \"version\": 1"))
        let end = try #require(protocolText.range(of: "```", range: start.upperBound..<protocolText.endIndex))
        let example = String(protocolText[protocolText.index(start.lowerBound, offsetBy: 8)..<end.lowerBound])
        let batch = try BatchDecoder().decode(Array(example.utf8))
        #expect(batch.events.count == 2 && batch.events[1].durationMilliseconds == 250.125)
        if SchemaCheck.available {
            let result = try await SchemaCheck.validate([Data(example.utf8)])
            #expect(result.status == 0, "\(result.output)")
        }
    }

    @Test("The schema refuses what the collector refuses",
          .enabled(if: SchemaCheck.available, "needs python3 with jsonschema: python3 -m pip install jsonschema"))
    func schemaRefuses() async throws {
        let session = "0193a7c2-0000-7000-8000-000000000001"
        func batch(_ event: String) -> Data {
            Data("""
            {"version":1,"batch_id":"0193a7c2-9d41-7b3e-8f00-6c2a5d1e4b70","sent_at":1,"sdk":{"name":"NFLogger","version":"0.1.0"},
             "context":{"app_id":"a","app_version":"1","os_name":"iOS","os_version":"18","locale":"en","sessions":[{"id":"\(session)","started_at":1}]},
             "events":[\(event)]}
            """.utf8)
        }
        let bad = [
            #"{"uuid":"x","session":"\#(session)","name":"a","kind":"point","type":"event","timestamp":1}"#,
            #"{"uuid":"0193a7c2-5b1e-7c3d-9f00-1a2b3c4d5e6f","session":"\#(session)","name":"a..b","kind":"point","type":"event","timestamp":1}"#,
            #"{"uuid":"0193a7c2-5b1e-7c3d-9f00-1a2b3c4d5e6f","session":"\#(session)","name":"a","kind":"point","type":"event","timestamp":1,"duration_ms":3}"#,
            #"{"uuid":"0193a7c2-5b1e-7c3d-9f00-1a2b3c4d5e6f","session":"\#(session)","name":"a","kind":"span","type":"event","timestamp":1}"#,
            #"{"uuid":"0193a7c2-5b1e-7c3d-9f00-1a2b3c4d5e6f","session":"\#(session)","name":"a","kind":"point","type":"event","timestamp":-1}"#,
        ]
        for event in bad {
            let document = batch(event)
            #expect(try await SchemaCheck.validate([document]).status == 1, "schema accepted \(event)")
            #expect(throws: BatchError.self) { try BatchDecoder().decode(Array(document)) }
        }
    }
}
