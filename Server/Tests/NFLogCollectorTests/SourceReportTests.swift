import CollectorTestSupport
import Foundation
import NFLogCollectorTesting
@_spi(NFLogShared) import NFLogSupport
import NFLogger
import Testing
@testable import NFLogCollector

/// Where events came from, through a real collector (docs/PROTOCOL.md, `events[].source` and
/// `events[].origin`): events logged by web content through the SDK's web bridge carry
/// `"source": "web"` and their page's origin; the report counts them beside the native ones and
/// the export gives the fields back for those events only.
@Suite("Event sources: native and web")
struct SourceReportTests {
    static let shop = "https://shop.example.com"
    static let local = "http://localhost:8080"

    /// An event of the batch, and the source and origin its export line must carry.
    struct Sent {
        let uuid: String
        let json: String
        let source: String?
        let origin: String?
    }

    /// `fields` (`"key":value` pairs) added before the event's closing brace.
    static func with(_ event: String, _ fields: String) -> String { String(event.dropLast()) + "," + fields + "}" }

    /// 4 native events (one says so), 5 web ones: two origins, one web event without an origin.
    static func events() -> [Sent] {
        func sent(_ make: (String) -> String, _ fields: String?, source: String? = nil, origin: String? = nil) -> Sent {
            let uuid = UUID().uuidString.lowercased()
            let event = make(uuid)
            return Sent(uuid: uuid, json: fields.map { with(event, $0) } ?? event, source: source, origin: origin)
        }
        return [
            sent({ BatchFixtures.point($0) }, nil),
            sent({ BatchFixtures.point($0) }, #""source":"native""#),
            sent({ BatchFixtures.span($0) }, nil),
            sent({ BatchFixtures.point($0, name: "ui.scroll") }, nil),
            sent({ BatchFixtures.point($0, name: "web.tap") }, #""source":"web","origin":"\#(shop)""#, source: "web", origin: shop),
            sent({ BatchFixtures.point($0, name: "web.tap") }, #""source":"web","origin":"\#(shop)""#, source: "web", origin: shop),
            sent({ BatchFixtures.span($0, name: "web.fetch") }, #""source":"web","origin":"\#(shop)""#, source: "web", origin: shop),
            sent({ BatchFixtures.point($0, name: "web.view") }, #""source":"web","origin":"\#(local)""#, source: "web", origin: local),
            sent({ BatchFixtures.point($0, name: "web.view") }, #""source":"web""#, source: "web"),
        ]
    }

    func post(_ collector: some CollectorUnderTest, _ events: [String]) async throws -> TransportResponse {
        try await CollectorClient(collector).post(try CollectorClient.gzip(BatchFixtures.batch(events: events)))
    }

    func report(_ collector: some CollectorUnderTest) async throws -> (AnalyticsReport, [String: Any]) {
        let response = try await CollectorClient.reader(collector).send("GET", "v1/report")
        #expect(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")
        let json = try #require(try JSONSerialization.jsonObject(with: response.body) as? [String: Any])
        return (try JSONDecoder().decode(AnalyticsReport.self, from: response.body), json)
    }

    @Test("The report counts native and web events and the web origins; a retried batch changes nothing", arguments: StoreKind.all)
    func reportCounts(_ kind: StoreKind) async throws {
        let collector = try await kind.startCollector()
        let sent = Self.events()
        let batch = BatchFixtures.batch(events: sent.map(\.json))
        for _ in 0..<2 {  // the same batch twice: the second is all duplicates
            let response = try await CollectorClient(collector).post(try CollectorClient.gzip(batch))
            #expect(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")
        }
        let (report, json) = try await report(collector)
        #expect(report.eventsStored == 9 && report.duplicatesDropped == 9)
        #expect(report.eventsBySource == AnalyticsReport.EventsBySource(native: 4, web: 5))
        #expect(report.webOrigins == 2)
        let bySource = try #require(json["events_by_source"] as? [String: Any])
        #expect(Set(bySource.keys) == ["native", "web"])
        #expect(bySource["native"] as? Int == 4 && bySource["web"] as? Int == 5)
        #expect(json["web_origins"] as? Int == 2)
        #expect(report.render().contains("\nSources: 4 native · 5 web (2 origins)\n"))
        await collector.stop()
    }

    @Test("An app without web events: all native, no origins, no Sources line", arguments: StoreKind.all)
    func nativeOnly(_ kind: StoreKind) async throws {
        let collector = try await kind.startCollector()
        let response = try await post(collector, [BatchFixtures.point(), BatchFixtures.span(), BatchFixtures.point()])
        #expect(response.status == 200)
        let (report, json) = try await report(collector)
        #expect(report.eventsBySource == AnalyticsReport.EventsBySource(native: 3, web: 0) && report.webOrigins == 0)
        #expect((json["events_by_source"] as? [String: Any])?["web"] as? Int == 0)
        #expect(!report.render().contains("Sources:"))
        await collector.stop()
    }

    @Test("A report written before sources existed decodes: every event native, no origins", arguments: StoreKind.all)
    func olderReport(_ kind: StoreKind) async throws {
        let collector = try await kind.startCollector()
        _ = try await post(collector, Self.events().map(\.json))
        let response = try await CollectorClient.reader(collector).send("GET", "v1/report")
        var json = try #require(try JSONSerialization.jsonObject(with: response.body) as? [String: Any])
        json["events_by_source"] = nil
        json["web_origins"] = nil
        let older = try JSONDecoder().decode(AnalyticsReport.self, from: try JSONSerialization.data(withJSONObject: json))
        #expect(older.eventsBySource == AnalyticsReport.EventsBySource(native: 9, web: 0) && older.webOrigins == 0)
        await collector.stop()
    }

    @Test("The export carries source and origin for web events, and only for them", arguments: StoreKind.all)
    func export(_ kind: StoreKind) async throws {
        let collector = try await kind.startCollector()
        let sent = Self.events()
        #expect(try await post(collector, sent.map(\.json)).status == 200)
        let lines = try await CollectorClient.reader(collector).send("GET", "v1/export")
        #expect(lines.status == 200)
        let objects = try String(decoding: lines.body, as: UTF8.self).split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(objects.count == sent.count)
        let byUUID = Dictionary(uniqueKeysWithValues: objects.map { ($0["uuid"] as? String ?? "", $0) })
        for event in sent {
            let line = try #require(byUUID[event.uuid])
            #expect(line["source"] as? String == event.source, "\(event.json)")
            #expect(line["origin"] as? String == event.origin, "\(event.json)")
            #expect((line["source"] == nil) == (event.source == nil) && (line["origin"] == nil) == (event.origin == nil))
        }
        // The testing library's reader of export lines takes them (it ignores the new keys).
        #expect(try await collector.exportedEvents().count == sent.count)
        await collector.stop()
    }

    static let badFields: [(String, String)] = [
        (#""source":"browser""#, "events[1].source"),
        (#""source":"WEB""#, "events[1].source"),
        (#""source":null"#, "events[1].source"),
        (#""source":true"#, "events[1].source"),
        (#""origin":"https://shop.example.com""#, "events[1].origin"),
        (#""source":"native","origin":"https://shop.example.com""#, "events[1].origin"),
        (#""source":"web","origin":"https://shop.example.com/cart""#, "events[1].origin"),
        (#""source":"web","origin":"https://Shop.example.com""#, "events[1].origin"),
        (#""source":"web","origin":"javascript://x""#, "events[1].origin"),
        (#""source":"web","origin":"https://shop.example.com:99999""#, "events[1].origin"),
        (#""source":"web","origin":"""#, "events[1].origin"),
        (#""source":"web","origin":7"#, "events[1].origin"),
    ]

    @Test("A bad source or origin is 400 with its path, and nothing of the batch is stored", arguments: Self.badFields)
    func refused(field: String, path: String) async throws {
        let collector = try await TestCollector.start()
        let good = Self.with(BatchFixtures.point(), #""source":"web","origin":"https://shop.example.com""#)
        let response = try await post(collector, [good, Self.with(BatchFixtures.point(), field), BatchFixtures.point()])
        #expect(response.status == 400)
        let object = try #require(try JSONSerialization.jsonObject(with: response.body) as? [String: Any])
        #expect((object["error"] as? [String: Any])?["path"] as? String == path, "\(String(decoding: response.body, as: UTF8.self))")
        let stats = try await collector.store.stats(app: TestCollector.app)
        #expect(stats.eventsStored == 0 && stats.requests == 0)
        let (report, _) = try await report(collector)
        #expect(report.eventsBySource == AnalyticsReport.EventsBySource(native: 0, web: 0) && report.webOrigins == 0)
        #expect(try await collector.exportedEvents().isEmpty)
        await collector.stop()
    }
}
