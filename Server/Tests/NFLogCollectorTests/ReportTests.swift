import CollectorTestSupport
import Foundation
import NFLogCollector
import NFLogCollectorTesting
@_spi(NFLogShared) import NFLogSupport
import NFLogger
import Testing

@Suite("The analysis report")
struct ReportTests {
    static let s1 = "0193a7c2-0000-7000-8000-0000000000a1"
    static let s2 = "0193a7c2-0000-7000-8000-0000000000a2"
    static let s3 = "0193a7c2-0000-7000-8000-0000000000a3"
    static let s4 = "0193a7c2-0000-7000-8000-0000000000a4"

    static func span(_ name: String, type: String, duration: Double, end: String? = nil, abandoned: Bool = false, session: String = s1) -> String {
        var text = #"{"uuid":"\#(UUID().uuidString.lowercased())","session":"\#(session)","name":"\#(name)","kind":"span","type":"\#(type)","timestamp":1000,"start":1000,"end":\#(1000 + Int(duration)),"duration_ms":\#(duration)"#
        if let end { text += #","end_parameters":\#(end)"# }
        if abandoned { text += #","abandoned":true"# }
        return text + "}"
    }

    static func point(_ name: String) -> String {
        #"{"uuid":"\#(UUID().uuidString.lowercased())","session":"\#(s1)","name":"\#(name)","kind":"point","type":"event","timestamp":1000}"#
    }

    /// The fixed input, and the numbers worked out by hand from it.
    static var batch: String {
        var events: [String] = []
        // form.signup: 4 completed (100, 200, 300, 400 ms), 1 given up by the user.
        for duration in [300.0, 100, 400, 200] { events.append(span("form.signup", type: "usecase", duration: duration, end: #"{"completed":true}"#)) }
        events.append(span("form.signup", type: "usecase", duration: 50, end: #"{"completed":false}"#))
        // flow.checkout: 1 completed (1000 ms), 1 closed by the SDK after a crash.
        events.append(span("flow.checkout", type: "usecase", duration: 1000))
        events.append(span("flow.checkout", type: "usecase", duration: 7, abandoned: true))
        // 10 network calls: 10, 20, …, 100 ms.
        for duration in stride(from: 100.0, through: 10, by: -10) { events.append(span("net.request", type: "network", duration: duration)) }
        // A span of another type, and 2 point events: counted, not analysed.
        events.append(span("screen.home", type: "screen", duration: 5_000))
        events.append(point("ui.tap"))
        events.append(point("ui.tap"))
        return """
        {"version":1,"batch_id":"\(UUID().uuidString.lowercased())","sent_at":5000,"sdk":{"name":"NFLogger","version":"0.1.0"},
         "context":{"app_id":"a","app_version":"1","os_name":"iOS","os_version":"18","locale":"en",
           "sessions":[{"id":"\(s1)","started_at":1000,"ended_at":2000},{"id":"\(s2)","started_at":10000,"ended_at":13000},
                       {"id":"\(s3)","started_at":20000,"ended_at":22000},{"id":"\(s4)","started_at":30000}]},
         "events":[\(events.joined(separator: ","))],
         "diagnostics":{"pruned":{"ui.scroll":7},"database_resets":[],"quarantined":2}}
        """
    }

    func storedReport(_ kind: StoreKind) async throws -> AnalyticsReport {
        var report: AnalyticsReport?
        try await kind.withStore { store in
            _ = try await store.store(try BatchDecoder().decode(Array(Self.batch.utf8)), app: "shop", receivedAt: 9_000)
            report = try await store.report(app: "shop")
        }
        return try #require(report)
    }

    @Test("Use cases: started, completed, abandoned, abandonment rate, and the completed ones' p50/p95 within 1% of the nearest rank", arguments: StoreKind.all)
    func useCases(_ kind: StoreKind) async throws {
        let report = try await storedReport(kind)
        let signup = try #require(report.useCases["form.signup"])
        // 5 started, 1 abandoned → 20 %. Completed, sorted: 100 200 300 400.
        // p50: rank ⌈0.50 × 4⌉ = 2 → 200.  p95: rank ⌈0.95 × 4⌉ = 4 → 400.  Mean: 1000 / 4 = 250.
        #expect(signup.started == 5 && signup.completed == 4 && signup.abandoned == 1 && signup.abandonmentRate == 0.2)
        #expect(signup.duration.matches(DurationSummary([100, 200, 300, 400])))
        #expect(withinOnePercent(signup.duration.p50Milliseconds, of: 200) && withinOnePercent(signup.duration.p95Milliseconds, of: 400)
                && signup.duration.meanMilliseconds == 250)
        let checkout = try #require(report.useCases["flow.checkout"])
        // 2 started, 1 abandoned by the SDK → 50 %; the only completed one: 1000.
        #expect(checkout.started == 2 && checkout.abandoned == 1 && checkout.abandonmentRate == 0.5)
        #expect(withinOnePercent(checkout.duration.p50Milliseconds, of: 1_000) && withinOnePercent(checkout.duration.p95Milliseconds, of: 1_000))
        #expect(report.useCases.count == 2)  // screen.home is not a use case
    }

    @Test("Network round trips and session durations", arguments: StoreKind.all)
    func networkAndSessions(_ kind: StoreKind) async throws {
        let report = try await storedReport(kind)
        // 10, 20, …, 100: p50 rank ⌈5⌉ = 5 → 50; p95 rank ⌈9.5⌉ = 10 → 100; mean 55.
        #expect(report.network.count == 10)
        #expect(withinOnePercent(report.network.p50Milliseconds, of: 50) && withinOnePercent(report.network.p95Milliseconds, of: 100)
                && report.network.meanMilliseconds == 55)
        // Ended sessions last 1000, 3000, 2000 (the fourth never went to the background).
        // Sorted 1000 2000 3000: p50 rank ⌈1.5⌉ = 2 → 2000; p95 rank ⌈2.85⌉ = 3 → 3000; mean 2000.
        // Within 1% (the rollup's buckets); the count and mean exact.
        #expect(report.sessions.matches(DurationSummary([1_000, 2_000, 3_000])))
        #expect(report.sessions.count == 3 && report.sessions.meanMilliseconds == 2_000)
    }

    @Test("Totals and device diagnostics; the text rendering says the same", arguments: StoreKind.all)
    func totals(_ kind: StoreKind) async throws {
        let report = try await storedReport(kind)
        #expect(report.eventsStored == 20 && report.pointEvents == 2 && report.spanEvents == 18)
        #expect(report.abandonedSpans == 1 && report.prunedOnDevices == 7 && report.quarantinedOnDevices == 2)
        let text = report.render()
        #expect(text.contains("Devices: 7 events pruned before upload · 1 spans abandoned · 0 database resets · 2 refused events quarantined"))
        // Percentiles within 1% of 200, 400, 50, 2000 and 3000 ms (the rollups' buckets).
        #expect(text.contains("Use case form.signup: 5 started · 4 completed · 1 abandoned (20.0%) · time to complete p50 198 ms · p95 399 ms (n=4)"))
        #expect(text.contains("Network round trip: p50 49.9 ms · p95 100 ms (n=10)"))
        #expect(text.contains("Session duration: p50 2019 ms · p95 3012 ms (n=3)"))
    }

    @Test("Nearest-rank percentiles on edge cases")
    func percentiles() {
        #expect(Percentiles.nearestRank(50, of: []) == nil)
        #expect(Percentiles.nearestRank(95, of: [7]) == 7)
        #expect(Percentiles.nearestRank(50, of: [1, 2]) == 1)
        #expect(Percentiles.nearestRank(95, of: Array(1...20).map(Double.init)) == 19)
        #expect(Percentiles.nearestRank(100, of: [1, 5, 9]) == 9)
    }

    @Test("Over HTTP with a read token: the report for its app, and a receipt audit", arguments: StoreKind.all)
    func overHTTP(_ kind: StoreKind) async throws {
        let collector = try await kind.startCollector()
        let transport = DefaultHTTPTransport(timeout: hangLimitSeconds)
        let body = try Gzip.compress(Array(Self.batch.utf8), level: 6)
        let posted = try await transport.send(TransportRequest(url: collector.eventsURL, method: "POST",
            headers: [WireProtocol.appKeyHeader: TestCollector.appKey, "Content-Encoding": "gzip"], body: Data(body)))
        #expect(posted.status == 200)
        let report = try await transport.send(TransportRequest(url: collector.url.appendingPathComponent("v1/report"), method: "GET",
            headers: ["Authorization": "Bearer \(TestCollector.readToken)"], body: Data()))
        let decoded = try JSONDecoder().decode(AnalyticsReport.self, from: report.body)
        #expect(decoded.useCases["form.signup"]?.abandonmentRate == 0.2 && withinOnePercent(decoded.network.p95Milliseconds, of: 100))

        let stored = try await collector.exportedEvents().map { $0.event.id.uuidString.lowercased() }
        let unknown = UUID().uuidString.lowercased()
        let lookup = try await transport.send(TransportRequest(url: collector.url.appendingPathComponent("v1/events/lookup"), method: "POST",
            headers: ["Authorization": "Bearer \(TestCollector.readToken)"],
            body: try JSONSerialization.data(withJSONObject: ["uuids": Array(stored.prefix(5)) + [unknown]])))
        let answer = try #require(try JSONSerialization.jsonObject(with: lookup.body) as? [String: Any])
        #expect(answer["found"] as? Int == 5 && answer["missing"] as? [String] == [unknown])
        await collector.stop()
    }
}
