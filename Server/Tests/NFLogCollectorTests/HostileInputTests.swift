import CollectorTestSupport
import Foundation
import NFLogCollector
import NFLogCollectorTesting
@_spi(NFLogShared) import NFLogSupport
import NFLogger
import Synchronization
import Testing

/// What an attacker on the internet can send a collector, each over real HTTP to a real collector:
/// every one gets its 4xx with a plain message, stores nothing, and leaks nothing about the server.
/// (Cases CollectorHTTPTests already covers — no or wrong key, a body over the limit with a
/// Content-Length, a gzip bomb at small limits, truncated or unlabelled gzip, `br`, a million
/// values — are not repeated here.)
@Suite("The collector under hostile input")
struct HostileInputTests {
    static let keyA = "key-of-app-a-0123456789"
    static let keyB = "key-of-app-b-0123456789"
    static let readA = "read-token-of-app-a-0123456789"
    static let readB = "read-token-of-app-b-0123456789"

    /// Limits small enough that each hostile body stays small.
    static func smallLimits() -> CollectorConfiguration {
        var configuration = CollectorConfiguration()
        configuration.maxBodyBytes = 64 * 1024
        configuration.maxInflatedBytes = 256 * 1024
        configuration.maxEventsPerBatch = 3
        configuration.json.maxValues = 10_000
        return configuration
    }

    static func batch(parameters: String) -> String {
        BatchFixtures.batch(events: [BatchFixtures.point(parameters: parameters)])
    }

    /// `batch(parameters: "{\"p\":PLACEHOLDER}")` with `middle` spliced in as raw bytes.
    static func batch(parameterBytes middle: [UInt8]) -> [UInt8] {
        let parts = batch(parameters: #"{"p":"PLACEHOLDER"}"#).components(separatedBy: "PLACEHOLDER")
        return Array(parts[0].utf8) + middle + Array(parts[1].utf8)
    }

    /// A hostile `POST /v1/events`: what is sent, the status and the words its message must contain.
    struct Hostile: Sendable, CustomTestStringConvertible {
        let label: String
        let body: @Sendable () throws -> [UInt8]
        var encoding: String? = "gzip"
        var key: String? = TestCollector.appKey
        let status: Int
        let says: String
        var testDescription: String { label }
    }

    static let gzipped: @Sendable (String) throws -> [UInt8] = { try CollectorClient.gzip($0) }
    static let valid: @Sendable () throws -> [UInt8] = { try gzipped(BatchFixtures.batch(events: [BatchFixtures.point()])) }

    static let hostileBatches: [Hostile] = [
        Hostile(label: "JSON nested 80 deep (limit 64)", body: {
            try gzipped(batch(parameters: #"{"deep":"# + String(repeating: "[", count: 80) + String(repeating: "]", count: 80) + "}"))
        }, status: 400, says: "nested deeper than 64 levels"),
        Hostile(label: "a string value of 70,000 bytes (limit 65,536)", body: {
            try gzipped(batch(parameters: #"{"blob":""# + String(repeating: "x", count: 70_000) + #""}"#))
        }, status: 400, says: "a string is longer than 65536 bytes"),
        Hostile(label: "an object key of 70,000 bytes (limit 65,536)", body: {
            try gzipped(batch(parameters: #"{""# + String(repeating: "k", count: 70_000) + #"":1}"#))
        }, status: 400, says: "a string is longer than 65536 bytes"),
        Hostile(label: "20,000 values (limit 10,000)", body: {
            try gzipped(batch(parameters: #"{"many":["# + Array(repeating: "0", count: 20_000).joined(separator: ",") + "]}"))
        }, status: 400, says: "more than 10000 values"),
        Hostile(label: "4 events (limit 3)", body: {
            try gzipped(BatchFixtures.batch(events: (0..<4).map { _ in BatchFixtures.point() }))
        }, status: 413, says: "holds 4 events; the limit is 3 per batch"),
        Hostile(label: "invalid UTF-8 in a string (C3 28)", body: {
            try Gzip.compress(batch(parameterBytes: [0x41, 0xC3, 0x28]), level: 6)
        }, status: 400, says: "a string is not valid UTF-8"),
        Hostile(label: "overlong UTF-8 encoding of '/' (C0 AF)", body: {
            try Gzip.compress(batch(parameterBytes: [0xC0, 0xAF]), level: 6)
        }, status: 400, says: "a string is not valid UTF-8"),
        Hostile(label: "a UTF-16 surrogate encoded as UTF-8 (ED A0 80)", body: {
            try Gzip.compress(batch(parameterBytes: [0xED, 0xA0, 0x80]), level: 6)
        }, status: 400, says: "a string is not valid UTF-8"),
        Hostile(label: "invalid UTF-8 in an uncompressed body (FF FE)", body: {
            batch(parameterBytes: [0xFF, 0xFE])
        }, encoding: nil, status: 400, says: "a string is not valid UTF-8"),
        Hostile(label: "a raw NUL byte inside a string", body: {
            try Gzip.compress(batch(parameterBytes: [0x61, 0x00, 0x62]), level: 6)
        }, status: 400, says: "a control character must be escaped"),
        Hostile(label: "gzip bomb: 20 MB of zeros in about 20 KB", body: {
            try Gzip.compress([UInt8](repeating: 0, count: 20_000_000), level: 9)
        }, status: 413, says: "inflates to more than 262144 bytes"),
        Hostile(label: "gzip followed by trailing bytes", body: { try valid() + Array("garbage".utf8) }, status: 400, says: "bytes follow the gzip member"),
        Hostile(label: "two gzip members back to back", body: { try valid() + valid() }, status: 400, says: "follow the gzip member"),
        Hostile(label: "gzip header with corrupt deflate data", body: {
            var bytes = try valid()
            for index in 10..<min(bytes.count - 8, 40) { bytes[index] ^= 0xA5 }
            return bytes
        }, status: 400, says: "not valid gzip data"),
        Hostile(label: "gzip magic only, 17 bytes", body: { [0x1F, 0x8B] + [UInt8](repeating: 0, count: 15) }, status: 400, says: "shorter than any gzip member"),
        Hostile(label: "gzip bytes labelled identity", body: valid, encoding: nil, status: 400, says: "malformed JSON"),
        Hostile(label: "Content-Encoding: deflate", body: valid, encoding: "deflate", status: 415, says: "not supported"),
        Hostile(label: "Content-Encoding: gzip, gzip (stacked)", body: valid, encoding: "gzip, gzip", status: 415, says: "not supported"),
        Hostile(label: "Content-Encoding: br", body: valid, encoding: "br", status: 415, says: "not supported"),
        Hostile(label: "an app key of 8 KiB", body: valid, key: String(repeating: "k", count: 8192), status: 401, says: "unknown app key"),
        Hostile(label: "the app key with one byte more", body: valid, key: TestCollector.appKey + "x", status: 401, says: "unknown app key"),
        Hostile(label: "a prefix of the app key", body: valid, key: String(TestCollector.appKey.dropLast()), status: 401, says: "unknown app key"),
        Hostile(label: "the app key in capitals", body: valid, key: TestCollector.appKey.uppercased(), status: 401, says: "unknown app key"),
        Hostile(label: "the SHA-256 of the app key in its place", body: valid, key: AppKeys.sha256Hex(of: TestCollector.appKey), status: 401, says: "unknown app key"),
    ]

    @Test("Each hostile batch gets its 4xx with a plain message, and nothing is stored", arguments: hostileBatches)
    func hostileBatch(_ hostile: Hostile) async throws {
        let collector = try await TestCollector.start(configuration: Self.smallLimits())
        let response = try await CollectorClient(collector, key: hostile.key).post(try hostile.body(), encoding: hostile.encoding)
        Self.checkRefusal(hostile.label, status: response.status, body: response.body)
        #expect(response.status == hostile.status)
        #expect(CollectorClient.message(response.body).contains(hostile.says), "message was: \(CollectorClient.message(response.body))")
        try await Self.expectNothingStored(collector)
        // The refusal changed nothing: the collector still takes a good batch.
        #expect(try await CollectorClient(collector).post(try Self.valid()).status == 200)
        await collector.stop()
    }

    @Test("Content-Encoding: x-gzip is gzip (RFC 9110 §8.4.1.3)")
    func xGzip() async throws {
        let collector = try await TestCollector.start(configuration: Self.smallLimits())
        #expect(try await CollectorClient(collector).post(try Self.valid(), encoding: "x-gzip").status == 200)
        #expect(try await collector.stats().eventsStored == 1)
        await collector.stop()
    }

    @Test("A body over the limit sent chunked, with no Content-Length to refuse it by, is cut off at the limit: 413")
    func chunkedOverLimit() async throws {
        let collector = try await TestCollector.start(configuration: Self.smallLimits())
        let chunk = [UInt8](repeating: 0x20, count: 16 * 1024)
        let response = try await RawHTTP.exchange(
            port: collector.port,
            head: "POST /v1/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\(WireProtocol.appKeyHeader): \(TestCollector.appKey)\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked",
            body: RawHTTP.chunked(Array(repeating: chunk, count: 8)))
        Self.checkRefusal("128 KiB sent chunked, no Content-Length (limit 64 KiB)", status: response.status, body: Data(response.body))
        #expect(response.status == 413)
        #expect(CollectorClient.message(Data(response.body)).contains("larger than 65536 bytes"))
        try await Self.expectNothingStored(collector)
        await collector.stop()
    }

    @Test("A gzip bomb at the default limits (17 MiB in 17 KB) is stopped at 16 MiB while inflating")
    func gzipBombAtDefaults() async throws {
        let collector = try await TestCollector.start()
        let bomb = try Gzip.compress([UInt8](repeating: 0, count: 17 * 1024 * 1024), level: 9)
        #expect(bomb.count < 64 * 1024)
        let response = try await CollectorClient(collector).post(bomb)
        Self.checkRefusal("gzip bomb, 17 MiB of zeros in \(bomb.count) bytes, default limits", status: response.status, body: response.body)
        #expect(response.status == 413)
        #expect(CollectorClient.message(response.body).contains("inflates to more than 16777216 bytes"))
        try await Self.expectNothingStored(collector)
        await collector.stop()
    }

    @Test("A key over its rate limit gets 429 with Retry-After ≥ 1 on every endpoint; other keys and unknown keys are not affected")
    func rateLimit() async throws {
        var configuration = CollectorConfiguration()
        configuration.keys = AppKeys([Self.keyA: "a", Self.keyB: "b"])
        // One token per 100 s after a burst of 2: the third request is refused however slow the machine.
        configuration.rateLimit = try RateLimit(requestsPerSecond: 0.01, burst: 2)
        let collector = try await TestCollector.start(configuration: configuration)
        let a = CollectorClient(collector, key: Self.keyA)
        #expect(try await a.post(try Self.valid()).status == 200)
        #expect(try await a.post(try Self.valid()).status == 200)

        let limited = try await a.post(try Self.valid())
        Self.checkRefusal("third request within the burst of 2 (0.01/s)", status: limited.status, body: limited.body, retryAfter: limited.header("Retry-After"))
        #expect(limited.status == 429)
        let retryAfter = try #require(limited.header("Retry-After").flatMap(Int.init), "Retry-After must be whole seconds")
        #expect(retryAfter >= 1 && retryAfter <= 100)
        #expect(CollectorClient.message(limited.body).contains("too many requests"))
        // The key's other endpoint shares its bucket (read endpoints take read tokens, not keys).
        let policy = try await a.send("GET", "v1/policy")
        #expect(policy.status == 429 && policy.header("Retry-After") != nil, "v1/policy answered \(policy.status)")

        // Unknown keys are told 401 (they never reach, nor spend, a real key's allowance).
        let unknown = try await CollectorClient(collector, key: "not-a-key-0123456789").post(try Self.valid())
        #expect(unknown.status == 401)
        // Another app's key has its own bucket.
        #expect(try await CollectorClient(collector, key: Self.keyB).post(try Self.valid()).status == 200)

        let stats = try await collector.store.stats(app: "a")
        #expect(stats.eventsStored == 2 && stats.requests == 2, "the refused batch must not be stored")
        await collector.stop()
    }

    @Test("One app's events never appear in another app's stats, report, lookup, export or policy", arguments: StoreKind.all)
    func appsIsolated(_ kind: StoreKind) async throws {
        let policies = FileManager.default.temporaryDirectory.appendingPathComponent("nflog-policies-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: policies, withIntermediateDirectories: true)
        try Data(#"{"version":1,"mode":"active","refresh_interval_s":4321}"#.utf8).write(to: policies.appendingPathComponent("a.json"))
        try Data(#"{"version":1,"mode":"disabled"}"#.utf8).write(to: policies.appendingPathComponent("default.json"))
        var configuration = CollectorConfiguration()
        configuration.keys = AppKeys([Self.keyA: "a", Self.keyB: "b"])
        configuration.policiesDirectory = policies
        configuration.readTokens = ReadTokens([Self.readA: .apps(["a"]), Self.readB: .apps(["b"])])
        let collector = try await kind.startCollector(configuration: configuration)
        let a = CollectorClient(collector, key: Self.keyA)
        let b = CollectorClient(collector, key: Self.keyB)
        let readsA = CollectorClient.reader(collector, token: Self.readA)
        let readsB = CollectorClient.reader(collector, token: Self.readB)

        let ids = (0..<3).map { _ in UUID().uuidString.lowercased() }
        let body = try CollectorClient.gzip(BatchFixtures.batch(events: [BatchFixtures.point(ids[0]), BatchFixtures.point(ids[1]), BatchFixtures.span(ids[2])]))
        #expect(try await a.post(body).status == 200)

        let statsB = try await readsB.json("GET", "v1/stats")
        #expect(statsB["events_stored"] as? Int == 0 && (statsB["events_by_name"] as? [String: Any])?.isEmpty == true)
        #expect(try await readsA.json("GET", "v1/stats")["events_stored"] as? Int == 3)

        let reportB = try JSONDecoder().decode(AnalyticsReport.self, from: try await readsB.send("GET", "v1/report").body)
        #expect(reportB.app == "b" && reportB.eventsStored == 0 && reportB.eventsByName.isEmpty)
        #expect(reportB.pointEvents == 0 && reportB.spanEvents == 0 && reportB.batches == 0)
        #expect(try JSONDecoder().decode(AnalyticsReport.self, from: try await readsA.send("GET", "v1/report").body).eventsStored == 3)

        let lookup = Array(#"{"uuids":["\#(ids.joined(separator: #"",""#))"]}"#.utf8)
        let foundByB = try await readsB.json("POST", "v1/events/lookup", body: lookup)
        #expect(foundByB["found"] as? Int == 0 && (foundByB["missing"] as? [String]).map(Set.init) == Set(ids))
        #expect(try await readsA.json("POST", "v1/events/lookup", body: lookup)["found"] as? Int == 3)

        #expect(try await Self.exported(collector.store, app: "b").isEmpty)
        #expect(try await Self.exported(collector.store, app: "a").count == 3)

        #expect(String(decoding: try await a.send("GET", "v1/policy").body, as: UTF8.self).contains("4321"))
        #expect(!String(decoding: try await b.send("GET", "v1/policy").body, as: UTF8.self).contains("4321"))

        // The same uuids from app b are b's own events, not duplicates of a's; a sees no change.
        let again = try JSONSerialization.jsonObject(with: try await b.post(body).body) as? [String: Any]
        #expect(again?["accepted"] as? Int == 3 && again?["duplicates"] as? Int == 0)
        let statsA = try await readsA.json("GET", "v1/stats")
        #expect(statsA["events_stored"] as? Int == 3 && statsA["duplicates_dropped"] as? Int == 0 && statsA["requests"] as? Int == 1)
        await collector.stop()
    }

    @Test("No error body, from any endpoint, holds a stack trace, a source path or an internal type name")
    func noLeaks() async throws {
        var configuration = Self.smallLimits()
        configuration.keys = AppKeys([Self.keyA: "a"])
        let collector = try await TestCollector.start(configuration: configuration)
        let a = CollectorClient(collector, key: Self.keyA)
        let none = CollectorClient(collector, key: nil)
        let reads = CollectorClient.reader(collector)
        let uuids = { (count: Int) in Array(#"{"uuids":[\#(Array(repeating: #""\#(UUID().uuidString)""#, count: count).joined(separator: ","))]}"#.utf8) }
        let requests: [(String, () async throws -> TransportResponse)] = [
            ("GET /nope (no such endpoint)", { try await a.send("GET", "nope") }),
            ("GET /v1/events (wrong method)", { try await a.send("GET", "v1/events") }),
            ("DELETE /v1/stats (wrong method)", { try await a.send("DELETE", "v1/stats") }),
            ("PUT /v1/policy (wrong method)", { try await a.send("PUT", "v1/policy", body: [1, 2, 3]) }),
            ("GET /v1/policy (no policies configured)", { try await a.send("GET", "v1/policy") }),
            ("GET /v1/report, no key", { try await none.send("GET", "v1/report") }),
            ("GET /v1/stats, unknown key", { try await CollectorClient(collector, key: "nope-nope-nope").send("GET", "v1/stats") }),
            ("POST /v1/events/lookup, malformed JSON", { try await reads.send("POST", "v1/events/lookup", body: Array(#"{"uuids":["#.utf8)) }),
            ("POST /v1/events/lookup, not a UUID", { try await reads.send("POST", "v1/events/lookup", body: Array(#"{"uuids":["zz"]}"#.utf8)) }),
            ("POST /v1/events/lookup, 10,001 uuids", { try await reads.send("POST", "v1/events/lookup", body: uuids(10_001)) }),
            ("POST /v1/events/lookup, body over 1 MiB", { try await reads.send("POST", "v1/events/lookup", body: [UInt8](repeating: 0x20, count: (1 << 20) + 1)) }),
            ("POST /v1/events/lookup, JSON nested 100 000 deep", { try await reads.send("POST", "v1/events/lookup", body: Array((String(repeating: "[", count: 100_000)).utf8)) }),
            ("POST /v1/events, empty body", { try await a.post([], encoding: nil) }),
            ("POST /v1/events, random bytes as gzip", { try await a.post((0..<4096).map { _ in UInt8.random(in: 0...255) }) }),
            ("POST /v1/events, a JSON array", { try await a.post(Array("[]".utf8), encoding: nil) }),
            ("POST /v1/events, version 2", { try await a.post(Array(#"{"version":2}"#.utf8), encoding: nil) }),
            ("POST /v1/events, body over 64 KiB", { try await a.post([UInt8](repeating: 0x7B, count: 70_000), encoding: nil) }),
        ]
        for (label, send) in requests {
            let response = try await send()
            Self.checkRefusal(label, status: response.status, body: response.body)
        }
        // What URLSession will not send.
        let raw: [(String, String, [UInt8])] = [
            ("not HTTP at all", "GARBAGE", []),
            ("an app key header of 100 KiB", "GET /v1/stats HTTP/1.1\r\nHost: x\r\n\(WireProtocol.appKeyHeader): \(String(repeating: "k", count: 100 * 1024))", []),
            ("Content-Length and chunked together", "POST /v1/events HTTP/1.1\r\nHost: x\r\n\(WireProtocol.appKeyHeader): \(Self.keyA)\r\nContent-Length: 5\r\nTransfer-Encoding: chunked", RawHTTP.chunked([Array("{}".utf8)])),
            ("a path with ../ and a NUL escape", "GET /v1/../../etc/passwd%00 HTTP/1.1\r\nHost: x\r\n\(WireProtocol.appKeyHeader): \(Self.keyA)", []),
        ]
        for (label, head, body) in raw {
            // A connection the server closes without an answer leaks nothing either.
            guard let response = try? await RawHTTP.exchange(port: collector.port, head: head, body: body) else {
                Self.record(label, "connection closed, no response")
                continue
            }
            Self.checkRefusal(label, status: response.status, body: Data(response.body))
        }
        try await Self.expectNothingStored(collector, app: "a")
        await collector.stop()
    }

    // MARK: - Helpers

    /// Words that would mean an error body shows the server's insides.
    static let leaks = ["/work", "/Sources", "/home", "/root", "/tmp", "/usr", ".swift", "Error(", "NIOCore", "NIOHTTP",
                        "Hummingbird", "Swift.", "Foundation.", "NFLogCollector", "Thread ", "Fatal", "0x0000", "#0 ", "backtrace"]

    /// A refusal: 4xx/5xx, and a body that is empty or exactly `{"error":{"message":…}}` (with
    /// an optional `path`) and leaks nothing. Records the row for the closing note.
    static func checkRefusal(_ label: String, status: Int, body: Data, retryAfter: String? = nil) {
        let text = String(decoding: body, as: UTF8.self)
        record(label, "\(status) \(text)" + (retryAfter.map { " Retry-After: \($0)" } ?? ""))
        #expect(status >= 400, "\(label): \(status)")
        for word in leaks { #expect(!text.contains(word), "\(label): the error body shows \(word): \(text)") }
        guard !body.isEmpty else { return }
        let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any]
        let error = object?["error"] as? [String: Any]
        #expect(object?.count == 1 && error?["message"] is String, "\(label): not the documented error shape: \(text)")
        let fields = Set((error ?? [:]).keys)
        #expect(fields.isSubset(of: ["message", "path"]), "\(label): \(text)")
        #expect(body.count <= 2048, "\(label): an error body of \(body.count) bytes")
    }

    /// One line of the table of hostile inputs and answers (`swift test … | grep HOSTILE`).
    static func record(_ label: String, _ answer: String) {
        print("HOSTILE | \(label) | \(answer)")
    }

    static func expectNothingStored(_ collector: TestCollector, app: String = TestCollector.app) async throws {
        let stats = try await collector.store.stats(app: app)
        #expect(stats.eventsStored == 0 && stats.requests == 0 && stats.batches == 0)
        #expect(try await collector.exportedEvents().isEmpty)
    }

    static func exported(_ store: any EventStore, app: String) async throws -> [[UInt8]] {
        let lines = Lines()
        try await store.exportEvents(app: app) { lines.append($0) }
        return lines.all
    }
}

/// Export lines gathered from the store's queue.
private final class Lines: Sendable {
    // Appended from the store's queue, read after the export returns: the Mutex orders the two.
    private let lines = Mutex<[[UInt8]]>([])

    func append(_ line: [UInt8]) { lines.withLock { $0.append(line) } }
    var all: [[UInt8]] { lines.withLock { $0 } }
}
