import CollectorTestSupport
import Foundation
import NFLogCollector
import NFLogCollectorTesting
@_spi(NFLogShared) import NFLogSupport
import NFLogger
import Testing

@Suite("The collector over HTTP")
struct CollectorHTTPTests {
    let transport = DefaultHTTPTransport(timeout: hangLimitSeconds)

    func post(_ collector: some CollectorUnderTest, body: [UInt8], key: String? = TestCollector.appKey,
              encoding: String? = "gzip") async throws -> TransportResponse {
        try await CollectorClient(collector, key: key).post(body, encoding: encoding)
    }

    func gzip(_ text: String) throws -> [UInt8] { try CollectorClient.gzip(text) }

    func message(_ response: TransportResponse) -> String { CollectorClient.message(response.body) }

    @Test("A valid batch is stored once; sending it again stores nothing new and counts duplicates", arguments: StoreKind.all)
    func storeAndDeduplicate(_ kind: StoreKind) async throws {
        let collector = try await kind.startCollector()
        let ids = (0..<3).map { _ in UUID().uuidString.lowercased() }
        let body = try gzip(BatchFixtures.batch(events: [BatchFixtures.point(ids[0]), BatchFixtures.point(ids[1]), BatchFixtures.span(ids[2])]))

        let first = try await post(collector, body: body)
        #expect(first.status == 200)
        let answer = try #require(try JSONSerialization.jsonObject(with: first.body) as? [String: Any])
        #expect(answer["accepted"] as? Int == 3 && answer["duplicates"] as? Int == 0)

        let again = try await post(collector, body: body)
        let second = try #require(try JSONSerialization.jsonObject(with: again.body) as? [String: Any])
        #expect(again.status == 200 && second["accepted"] as? Int == 0 && second["duplicates"] as? Int == 3)

        let stats = try await collector.stats()
        #expect(stats.eventsStored == 3 && stats.duplicatesDropped == 3 && stats.batches == 1 && stats.requests == 2)
        #expect(stats.eventsByName == ["ui.tap": 2, "net.request": 1])

        let exported = try await collector.exportedEvents()
        #expect(Set(exported.map { $0.event.id.uuidString.lowercased() }) == Set(ids))
        let span = try #require(exported.first { $0.event.kind == .span })
        #expect(span.event.duration == 0.250125 && span.event.end == Date(timeIntervalSince1970: 1_750_000_000.250))
        #expect(span.event.endParameters["status"] == 200)
        #expect(span.context.appVersion == "2.1.0")
        await collector.stop()
    }

    @Test("An uncompressed batch (identity) is accepted too", arguments: StoreKind.all)
    func identity(_ kind: StoreKind) async throws {
        let collector = try await kind.startCollector()
        let response = try await post(collector, body: Array(BatchFixtures.batch(events: [BatchFixtures.point()]).utf8), encoding: nil)
        #expect(response.status == 200)
        #expect(try await collector.stats().eventsStored == 1)
        await collector.stop()
    }

    /// A bad request: what is sent, the status and the words its message must contain.
    struct BadRequest: Sendable, CustomTestStringConvertible {
        let label: String
        let body: @Sendable (CollectorHTTPTests) throws -> [UInt8]
        let key: String?
        let encoding: String?
        let status: Int
        let says: String
        var testDescription: String { label }
    }

    static let badRequests: [BadRequest] = [
        BadRequest(label: "no key", body: { try $0.gzip(BatchFixtures.batch(events: [BatchFixtures.point()])) },
                   key: nil, encoding: "gzip", status: 401, says: "missing app key"),
        BadRequest(label: "wrong key", body: { try $0.gzip(BatchFixtures.batch(events: [BatchFixtures.point()])) },
                   key: "not-the-key", encoding: "gzip", status: 401, says: "unknown app key"),
        BadRequest(label: "labelled gzip, not gzip", body: { _ in Array(BatchFixtures.batch(events: [BatchFixtures.point()]).utf8) },
                   key: TestCollector.appKey, encoding: "gzip", status: 400, says: "not valid gzip data"),
        BadRequest(label: "truncated gzip", body: { Array(try $0.gzip(BatchFixtures.batch(events: [BatchFixtures.point()])).dropLast(10)) },
                   key: TestCollector.appKey, encoding: "gzip", status: 400, says: "truncated"),
        BadRequest(label: "malformed JSON", body: { try $0.gzip(#"{"version":1,"events":["#) },
                   key: TestCollector.appKey, encoding: "gzip", status: 400, says: "malformed JSON"),
        BadRequest(label: "schema violation", body: { try $0.gzip(BatchFixtures.batch(events: [BatchFixtures.point(name: "a..b")])) },
                   key: TestCollector.appKey, encoding: "gzip", status: 400, says: "events[0].name"),
        BadRequest(label: "unsupported encoding", body: { _ in Array("{}".utf8) },
                   key: TestCollector.appKey, encoding: "br", status: 415, says: "not supported"),
        BadRequest(label: "body over the limit", body: { _ in [UInt8](repeating: 0x20, count: 70_000) },
                   key: TestCollector.appKey, encoding: nil, status: 413, says: "limit is 65536"),
        BadRequest(label: "gzip bomb", body: { _ in try Gzip.compress([UInt8](repeating: 0x20, count: 2_000_000), level: 9) },
                   key: TestCollector.appKey, encoding: "gzip", status: 413, says: "inflates to more than 262144 bytes"),
    ]

    @Test("Every bad request gets its 4xx with a message, and nothing is stored", arguments: badRequests)
    func badRequest(_ bad: BadRequest) async throws {
        var configuration = CollectorConfiguration()
        configuration.maxBodyBytes = 64 * 1024
        configuration.maxInflatedBytes = 256 * 1024
        let collector = try await TestCollector.start(configuration: configuration)
        let response = try await post(collector, body: try bad.body(self), key: bad.key, encoding: bad.encoding)
        #expect(response.status == bad.status)
        #expect(message(response).contains(bad.says), "message was: \(message(response))")
        #expect(!String(decoding: response.body, as: UTF8.self).contains("/work/"), "no internal path in an error")
        let stats = try await collector.stats()
        #expect(stats.eventsStored == 0 && stats.requests == 0)
        await collector.stop()
    }

    @Test("A violation names its path in the error body, so a sender can tell an event from the batch")
    func errorPath() async throws {
        var configuration = CollectorConfiguration()
        configuration.json.maxStringBytes = 100
        let collector = try await TestCollector.start(configuration: configuration)
        let long = BatchFixtures.point(parameters: #"{"blob":"\#(String(repeating: "x", count: 200))"}"#)
        let response = try await post(collector, body: try gzip(BatchFixtures.batch(events: [BatchFixtures.point(), long])))
        #expect(response.status == 400)
        let object = try #require(try JSONSerialization.jsonObject(with: response.body) as? [String: Any])
        #expect((object["error"] as? [String: Any])?["path"] as? String == "events[1].parameters.blob")
        await collector.stop()
    }

    @Test("A store that fails answers 503 with a message and Retry-After, never an empty 500", arguments: StoreKind.all)
    func storeFailure(_ kind: StoreKind) async throws {
        let collector = try await kind.startCollector()
        await collector.store.close()  // a fault injected on purpose
        let response = try await post(collector, body: try gzip(BatchFixtures.batch(events: [BatchFixtures.point()])))
        #expect(response.status == 503)
        #expect(message(response).contains("unavailable"))
        #expect(response.header("Retry-After") == "5")
        await collector.stop()
    }

    @Test("A small body that parses into a huge tree is refused (value budget)")
    func amplification() async throws {
        let collector = try await TestCollector.start()
        let bomb = #"{"version":1,"events":["# + String(repeating: "0,", count: 2_000_000) + "0]}"
        let response = try await post(collector, body: try gzip(bomb))
        #expect(response.status == 400)
        #expect(message(response).contains("more than 1000000 values"))
        await collector.stop()
    }

    @Test("Stats need a key and only show the key's own app")
    func statsScoped() async throws {
        let collector = try await TestCollector.start()
        let noKey = try await transport.send(TransportRequest(url: collector.url.appendingPathComponent("v1/stats"), method: "GET", headers: [:], body: Data()))
        #expect(noKey.status == 401)
        let health = try await transport.send(TransportRequest(url: collector.url.appendingPathComponent("health"), method: "GET", headers: [:], body: Data()))
        #expect(health.status == 200)
        await collector.stop()
    }

    @Test("Development mode refuses a non-loopback host")
    func developmentLoopbackOnly() throws {
        var configuration = CollectorConfiguration()
        configuration.host = "0.0.0.0"
        let store = try SQLiteEventStore(path: FileManager.default.temporaryDirectory.appendingPathComponent("nflog-\(UUID().uuidString).sqlite").path)
        #expect(throws: CollectorError.self) { try CollectorServer(configuration: configuration, store: store) }
        configuration.keys = AppKeys(["a-real-key-123": "shop"])
        // Real keys, but the development read token still accepted: anyone could read app dev.
        #expect(throws: CollectorError.self) { try CollectorServer(configuration: configuration, store: store) }
        configuration.readTokens = ReadTokens(["a-real-read-token": .apps(["shop"])])
        #expect((try? CollectorServer(configuration: configuration, store: store)) != nil)
    }

    @Test("Keys files: valid, and each mistake named")
    func keysFiles() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("keys-\(UUID().uuidString).json")
        try Data(#"{"keys":[{"app":"shop","key":"k-0123456789"}]}"#.utf8).write(to: url)
        let keys = try AppKeys(contentsOf: url)
        #expect(keys.app(forKey: "k-0123456789") == "shop" && keys.app(forKey: "dev-key") == nil && !keys.isDevelopment)
        for (text, says) in [(#"{"keys":[]}"#, "empty"), (#"{"keys":[{"app":"x"}]}"#, "keys[0]"),
                             (#"{"keys":[{"app":"x","key":"short"}]}"#, "8…256"), ("[]", "\"keys\" array"),
                             (#"{"keys":[{"app":"x","key":"k-0123456789"},{"app":"y","key":"k-0123456789"}]}"#, "twice")] {
            try Data(text.utf8).write(to: url)
            #expect { try AppKeys(contentsOf: url) } throws: { ($0 as? AppKeysError)?.reason.contains(says) == true }
        }
    }
}
