import Crypto
import Foundation
import InMemoryLogging
import Logging
@testable import NFLogCollector
import NFLogCollectorTesting
@_spi(NFLogShared) import NFLogSupport
import Synchronization
import Testing

@Suite("Serving policies")
struct PolicyServingTests {
    @Test("A policy file that is not a valid policy is not served: 500 naming the file, never signed; fixed, it is served again", arguments: [
        (#"{"broken": "#, "not JSON"),
        (#"{"version":1,"mode":"sometimes"}"#, "an unknown mode"),
        (#"{"version":1,"mode":"active","typo":1}"#, "an unknown field"),
        (#"{"version":1,"mode":"active","expires_at":"2001-01-01T00:00:00Z"}"#, "expired"),
    ])
    func brokenPolicyNotServed(text: String, what: String) async throws {
        let policies = FileManager.default.temporaryDirectory.appendingPathComponent("nflog-policies-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: policies, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: policies) }
        let file = policies.appendingPathComponent("dev.json")
        try Data(text.utf8).write(to: file)
        var configuration = CollectorConfiguration()
        configuration.policiesDirectory = policies
        configuration.policySigningKey = Curve25519.Signing.PrivateKey()
        let collector = try await TestCollector.start(configuration: configuration)
        let client = CollectorClient(collector, key: TestCollector.appKey)

        let refused = try await client.send("GET", "v1/policy")
        #expect(refused.status == 500, "\(what)")
        let message = try #require(((try JSONSerialization.jsonObject(with: refused.body) as? [String: Any])?["error"] as? [String: Any])?["message"] as? String)
        #expect(message.contains("dev.json") && message.contains("not a valid policy"), "\(message)")
        #expect(refused.header("ETag") == nil && refused.header(WireProtocol.signatureHeader) == nil)

        try Data(#"{"version":1,"mode":"active"}"#.utf8).write(to: file)
        let served = try await client.send("GET", "v1/policy")
        #expect(served.status == 200 && served.header(WireProtocol.signatureHeader) != nil)
        await collector.stop()
    }

    @Test("A recurring problem is logged once per interval, then with how many times it happened")
    func throttledLog() {
        let captured = InMemoryLogHandler()
        var logger = Logger(label: "test") { _ in captured }
        logger.logLevel = .trace
        var lines: [String] { captured.entries.map(\.message.description) }
        let time = ManualTime()  // moved by hand, never by waiting
        let log = ThrottledLog(interval: .seconds(60), clock: time.clock)
        for _ in 0..<5 { log.log("disk", level: .error, logger: logger, "the disk is full") }
        log.log("policy:a.json", level: .error, logger: logger, "a.json is broken")
        #expect(lines == ["the disk is full", "a.json is broken"])
        time.advance(.seconds(59))
        log.log("disk", level: .error, logger: logger, "the disk is full")
        #expect(lines.count == 2, "within the interval: counted, not logged")
        time.advance(.seconds(1))
        log.log("disk", level: .error, logger: logger, "the disk is full")
        #expect(lines.last == "the disk is full (6 times since the last report)")
    }
}

@Suite("What the collector logs")
struct CollectorLogTests {
    @Test("Uploads the client abandons (a body cut short, a chunked body never finished, garbage) are never warnings or errors; the collector goes on")
    func abandonedUploadsAreNotErrors() async throws {
        let captured = InMemoryLogHandler()
        var logger = Logger(label: "nflog-collector") { _ in captured }
        logger.logLevel = .warning
        let collector = try await TestCollector.start(logger: logger)
        let head = RawHTTP.uploadHead + "\r\n"
        for _ in 0..<20 {
            try await RawHTTP.abandon(port: collector.port, bytes: Array((head + "Content-Length: 100000\r\n\r\n{\"version\":1").utf8))
            try await RawHTTP.abandon(port: collector.port, bytes: Array((head + "Transfer-Encoding: chunked\r\n\r\n10\r\n0123456789").utf8))
            try await RawHTTP.abandon(port: collector.port, bytes: Array("POST /v1/events HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\n".utf8))
        }
        // Still serving, and nothing was said at warning level or above.
        let health = try await RawHTTP.exchange(port: collector.port, head: "GET /health HTTP/1.1\r\nHost: x")
        #expect(health.status == 200)
        try await Task.sleep(for: .milliseconds(200))
        #expect(captured.entries.isEmpty, "logged: \(captured.entries.prefix(3).map(\.message))")
        await collector.stop()
    }
}

@Suite("HTTP details clients rely on")
struct HTTPDetailTests {
    @Test("Expect: 100-continue is answered at once, so a client sends its body without waiting; the final answer follows")
    func continueAnswered() async throws {
        let collector = try await TestCollector.start()
        let head = RawHTTP.uploadHead
        let body = Array(BatchFixtures.batch(events: [BatchFixtures.point(UUID().uuidString.lowercased())]).utf8)
        // The client sends no body before an answer: without the 100 it would wait for its
        // timeout (curl: a second; this client: `hangLimit`, then fails).
        let (interim, final) = try await RawHTTP.expectingContinue(port: collector.port, head: head, body: body)
        #expect(interim.status == 100)
        #expect(final.status == 200, "\(String(decoding: final.body, as: UTF8.self))")
        #expect(try await collector.stats().eventsStored == 1)
        await collector.stop()
    }
}

@Suite("Durable acknowledgements")
struct DurabilityModeTests {
    @Test("The collector's store fsyncs each commit (synchronous=FULL) unless told otherwise; the SDK's database does not")
    func synchronousModes() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nflog-sync-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let full = try SQLiteConnection(path: directory.appendingPathComponent("a.sqlite").path, busyTimeoutMilliseconds: 1_000)
        try full.enableWriteAheadLog(durableCommits: true)
        #expect(try full.scalarInt("PRAGMA synchronous") == 2)  // FULL
        let normal = try SQLiteConnection(path: directory.appendingPathComponent("b.sqlite").path, busyTimeoutMilliseconds: 1_000)
        try normal.enableWriteAheadLog()
        #expect(try normal.scalarInt("PRAGMA synchronous") == 1)  // NORMAL
        #expect(try SQLiteEventStore(path: directory.appendingPathComponent("c.sqlite").path).writerPragma("synchronous") == 2)
    }
}
