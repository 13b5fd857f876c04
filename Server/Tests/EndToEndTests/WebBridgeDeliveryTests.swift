import CollectorTestSupport
import Foundation
import NFLogCollectorTesting
import NFLogger
import Testing

@Suite("Web content through the bridge to a real collector")
struct WebBridgeDeliveryTests {
    @Test("A page's events reach the collector once, marked web with their origin, in the app's session; the report counts native and web apart", arguments: StoreKind.all)
    func delivered(_ kind: StoreKind) async throws {
        let collector = try await kind.startCollector()
        let scratch = TemporaryDirectory()
        var configuration = configuration(scratch, collector: collector.url)
        configuration.webBridge.allowedOrigins = ["https://help.example.com"]
        let logger = try NFLogger(configuration: configuration)
        let bridge = ScriptBridge(logger: logger)
        _ = await logger.logEvent(name: "app.open")
        for index in 0..<3 {
            let reply = await bridge.handle(message: Data(#"{"v":1,"id":\#(index),"call":"logEvent","name":"help.tap","parameters":{"i":\#(index)}}"#.utf8),
                                            origin: "https://help.example.com")
            #expect(String(decoding: reply, as: UTF8.self).contains(#""status":"recorded""#))
        }
        // From an iframe of another origin: refused, nothing stored.
        let refused = await bridge.handle(message: Data(#"{"v":1,"id":9,"call":"logEvent","name":"help.tap"}"#.utf8), origin: "https://ads.example.net")
        #expect(String(decoding: refused, as: UTF8.self).contains("originNotAllowed"))
        #expect(await deliverAll(logger).error == nil)
        await logger.close()

        let events = try await collector.exportedEvents().map(\.event)
        let web = events.filter { $0.name == "help.tap" }
        #expect(web.count == 3 && web.allSatisfy { $0.webOrigin == "https://help.example.com" })
        #expect(Set(events.map(\.sessionID)).count == 1)
        let report = try await collector.report()
        #expect(report.eventsBySource.native == 1 && report.eventsBySource.web == 3 && report.webOrigins == 1)
        await collector.stop()
    }
}
