import CollectorTestSupport
import Foundation
import NFLogCollectorTesting
@_spi(NFLogShared) import NFLogSupport
import NFLogger
import Testing
@testable import NFLogCollector

/// The report's funnels, versions and filters (a time range, an app version) on a SQLite store and
/// over HTTP, against the numbers worked out by hand in ``FunnelFixtures``.
@Suite("Report funnels, versions and filters")
struct FunnelReportTests {
    typealias F = FunnelFixtures

    /// Stores `batches` (and the first again: duplicates) in a new SQLite file, then runs `body`.
    static func withStore(_ batches: [Batch], _ body: (SQLiteEventStore) async throws -> Void) async throws {
        let path = StoreFixtures.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try SQLiteEventStore(path: path, durableCommits: false)
        for (offset, batch) in (batches + batches.prefix(1)).enumerated() {
            _ = try await store.store(batch, app: "shop", receivedAt: F.t0 + 3 * F.hour + Int64(offset))
        }
        try await body(store)
        await store.close()
    }

    static func steps(_ useCase: AnalyticsReport.UseCase?) -> [String] {
        (useCase?.steps ?? []).map { "\($0.name) \($0.reached)/\($0.left)" }
    }

    @Test("The funnel, by hand: runs reaching each step, abandoned runs leaving at their last, and before any")
    func funnel() async throws {
        try await Self.withStore(try F.decoded()) { store in
            let report = try await store.report(app: "shop")
            let checkout = try #require(report.useCases["checkout"])
            #expect(checkout.started == 7 && checkout.abandoned == 5 && checkout.completed == 2)
            // cart: R1 R2 R3 R5 R6 (R6 twice, one run), left by R3 and R5 (its cart is later than
            // its address); address: R1 R2 R5 R7, left by R2; pay: R1 (a span) and R7, left by R7
            // (its tie with address at the same time goes to the greater name). R4 logged none.
            #expect(Self.steps(checkout) == ["checkout.cart 5/2", "checkout.address 4/1", "checkout.pay 2/1"])
            #expect(checkout.stepsOmitted == 0 && checkout.leftBeforeFirstStep == 1)
            // Without transactions, no steps: every abandoned run left before a first one.
            let signup = try #require(report.useCases["signup"])
            #expect(signup.steps.isEmpty && signup.stepsOmitted == 0 && signup.leftBeforeFirstStep == 1)
            // The rest is the unfiltered report: the totals, and versions from the running counts.
            #expect(report.eventsStored == 24 && report.spanEvents == 11 && report.pointEvents == 13)
            #expect(report.duplicatesDropped == 17 && report.batches == 3 && report.abandonedSpans == 1)
            #expect(report.versions == VersionCounts(app: [.init(version: "2.1.0", events: 18), .init(version: "2.0", events: 6)],
                                                     sdk: [.init(name: "NFLogger", version: "0.1.0", events: 23),
                                                           .init(name: "NFLogger", version: "0.2.0", events: 1)]))
            #expect(report.filter == ReportFilter())

            let text = report.render()
            #expect(text.contains("\n  most left after step checkout.cart: 2 of 5 abandoned · 1 before a first step · 3 steps"))
            #expect(text.contains("\nVersions: app 2.1.0 (18), 2.0 (6) · SDK NFLogger 0.1.0 (23), NFLogger 0.2.0 (1)"))
            #expect(!text.contains("Filter:"))

            // The JSON: the new keys, the filter's parts all null.
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            let json = String(decoding: try encoder.encode(report), as: UTF8.self)
            #expect(json.contains(#""filter":{"app_version":null,"dimension":null,"from":null,"to":null}"#))
            #expect(json.contains(#""left_before_first_step":1,"#) && json.contains(#""steps_omitted":0"#))
            #expect(json.contains(#"{"left":2,"name":"checkout.cart","reached":5}"#))
            #expect(try JSONDecoder().decode(AnalyticsReport.self, from: Data(json.utf8)) == report)
        }
    }

    @Test("A time range and an app version narrow every section; batches and duplicates stay the app's")
    func filters() async throws {
        try await Self.withStore(try F.decoded()) { store in
            // Hour 1: R4 R5 (2.1.0), R6 R7 (2.0); one signup, given up.
            let late = try await store.report(app: "shop", filter: ReportFilter(from: F.t0 + F.hour))
            #expect(late.eventsStored == 11 && late.spanEvents == 5 && late.pointEvents == 6 && late.abandonedSpans == 0)
            #expect(late.eventsByName == ["checkout": 4, "checkout.cart": 3, "checkout.address": 2, "checkout.pay": 1, "signup": 1])
            #expect(late.eventsBySource == .init(native: 11, web: 0))
            #expect(late.duplicatesDropped == 17 && late.batches == 3)
            let checkout = try #require(late.useCases["checkout"])
            #expect(checkout.started == 4 && checkout.abandoned == 3 && checkout.completed == 1)
            #expect(withinOnePercent(checkout.duration.p50Milliseconds, of: 250))
            #expect(Self.steps(checkout) == ["checkout.address 2/0", "checkout.cart 2/1", "checkout.pay 1/1"])
            #expect(checkout.leftBeforeFirstStep == 1)
            #expect(late.useCases["signup"]?.started == 1 && late.useCases["signup"]?.completed == 0)
            // Sessions by their start: only the 2.0 one, 5 s into hour 1, ended 64,995 ms later.
            #expect(late.sessions.count == 1 && withinOnePercent(late.sessions.p50Milliseconds, of: 64_995)
                    && late.sessions.meanMilliseconds == 64_995)
            #expect(late.versions.app == [.init(version: "2.0", events: 6), .init(version: "2.1.0", events: 5)])
            #expect(late.filter == ReportFilter(from: F.t0 + F.hour))
            #expect(late.render().contains("\nFilter: from \(F.t0 + F.hour) ms\n"))

            // Hour 0 (to is exclusive): R1 R2 R3, the backend's span.
            let early = try await store.report(app: "shop", filter: ReportFilter(to: F.t0 + F.hour))
            #expect(early.eventsStored == 13 && early.abandonedSpans == 1)
            let first = try #require(early.useCases["checkout"])
            #expect(first.started == 3 && first.abandoned == 2)
            #expect(Self.steps(first) == ["checkout.cart 3/1", "checkout.address 2/1", "checkout.pay 1/0"])
            #expect(first.leftBeforeFirstStep == 0)
            #expect(early.sessions.count == 1 && withinOnePercent(early.sessions.p50Milliseconds, of: 301_000)
                    && early.sessions.meanMilliseconds == 301_000)
            #expect(early.versions.sdk == [.init(name: "NFLogger", version: "0.1.0", events: 12),
                                           .init(name: "NFLogger", version: "0.2.0", events: 1)])

            // App version 2.0: R6 and R7 only; ties between steps broken by name.
            let old = try await store.report(app: "shop", filter: ReportFilter(appVersion: "2.0"))
            #expect(old.eventsStored == 6 && old.versions == VersionCounts(app: [.init(version: "2.0", events: 6)],
                                                                            sdk: [.init(name: "NFLogger", version: "0.1.0", events: 6)]))
            let oldCheckout = try #require(old.useCases["checkout"])
            #expect(oldCheckout.started == 2 && oldCheckout.abandoned == 1 && old.useCases["signup"] == nil)
            #expect(Self.steps(oldCheckout) == ["checkout.address 1/0", "checkout.cart 1/0", "checkout.pay 1/1"])
            #expect(old.sessions.count == 1 && old.render().contains("\nFilter: app version 2.0\n"))

            // Both: 2.1.0 in hour 1 (R4, R5 and a signup).
            let both = try await store.report(app: "shop", filter: ReportFilter(from: F.t0 + F.hour, appVersion: "2.1.0"))
            #expect(both.eventsStored == 5 && both.useCases["checkout"]?.started == 2 && both.useCases["checkout"]?.abandoned == 2)
            #expect(Self.steps(both.useCases["checkout"]) == ["checkout.address 1/0", "checkout.cart 1/1"])
            #expect(both.useCases["checkout"]?.leftBeforeFirstStep == 1 && both.sessions.count == 0)

            // An app version no event has: an empty report, the app-wide counts kept.
            let none = try await store.report(app: "shop", filter: ReportFilter(appVersion: "9.9"))
            #expect(none.eventsStored == 0 && none.eventsByName.isEmpty && none.useCases.isEmpty && none.versions == VersionCounts())
            #expect(none.network.count == 0 && none.sessions.count == 0 && none.batches == 3)
        }
    }

    @Test("At most 50 steps per use case: the most reached, ties by name; the rest counted")
    func stepCap() async throws {
        try await Self.withStore(try F.manySteps()) { store in
            let wizard = try #require(try await store.report(app: "shop").useCases["wizard"])
            let expected = ["wizard.step50 2/0", "wizard.step51 2/0"] + (0..<48).map { String(format: "wizard.step%02d 1/0", $0) }
            // The failed run's last step (latest time) is step00: listed, with its leaver.
            #expect(Self.steps(wizard) == expected.enumerated().map { $0.offset == 2 ? "wizard.step00 1/1" : $0.element })
            #expect(wizard.steps.count == 50 && wizard.stepsOmitted == 2 && wizard.leftBeforeFirstStep == 0)
        }
    }

    @Test("A time range reads its hours' events through events_hours; runs and steps come from their own indexes")
    func plans() async throws {
        let path = StoreFixtures.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try SQLiteEventStore(path: path, durableCommits: false)
        await store.close()
        let connection = try SQLiteConnection(path: path, busyTimeoutMilliseconds: 1_000)
        func plan(_ sql: String, _ filter: ReportFilter) throws -> [String] {
            let statement = try connection.prepare("EXPLAIN QUERY PLAN " + sql)
            try SQLiteReportSelection(filter: filter).bind(statement, app: "shop")
            return try statement.collect { $0.text(at: 3) ?? "" }
        }
        for filter in [ReportFilter(from: F.t0, to: F.t0 + F.hour), ReportFilter(from: F.t0), ReportFilter(to: F.t0)] {
            let selection = SQLiteReportSelection(filter: filter)
            let scan = try plan("SELECT count(*) FROM events INDEXED BY events_hours WHERE app = ?1\(selection.events())", filter)
            #expect(scan.contains { $0.contains("USING INDEX events_hours (app=? AND <expr>") }, "\(scan)")
        }
        // The funnel's statement, as the report prepares it: only covering index searches.
        let filter = ReportFilter(from: F.t0, appVersion: "2.0")
        let funnel = try plan(FunnelAnalysis.sql(SQLiteReportSelection(filter: filter)), filter)
        #expect(funnel.contains { $0.contains("SEARCH u USING COVERING INDEX events_runs (app=?") }, "\(funnel)")
        #expect(funnel.contains { $0.contains("SEARCH s USING COVERING INDEX events_steps (app=? AND transaction_id=? AND parent_span=?") },
                "\(funnel)")
        #expect(!funnel.contains { $0.contains("SCAN u") || $0.contains("SCAN s") || $0.contains("autoindex_events") }, "\(funnel)")
    }

    /// `GET /v1/report` with `query` (already URL-encoded) and the development read token.
    static func report(_ collector: TestCollector, _ query: String) async throws -> TransportResponse {
        let url = try #require(URL(string: collector.url.absoluteString + "/v1/report" + query))
        return try await DefaultHTTPTransport(timeout: hangLimitSeconds).send(TransportRequest(url: url, method: "GET",
                                                                      headers: ["Authorization": "Bearer \(TestCollector.readToken)"],
                                                                      body: Data()))
    }

    /// The JSON object of a `200` to `GET /v1/report` with `query`.
    static func reportJSON(_ collector: TestCollector, _ query: String) async throws -> [String: Any] {
        let response = try await report(collector, query)
        #expect(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")
        return try #require(try JSONSerialization.jsonObject(with: response.body) as? [String: Any])
    }

    @Test("Over HTTP: ?app_version= filters and is echoed; empty or over 256 bytes is 400 naming it")
    func overHTTP() async throws {
        let collector = try await TestCollector.start()
        for batch in F.batches() {
            let response = try await CollectorClient(collector).post(try CollectorClient.gzip(batch))
            #expect(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")
        }
        let old = try await Self.reportJSON(collector, "?app_version=2.0&from=\(F.t0)")
        #expect(old["events_stored"] as? Int == 6 && old["batches"] as? Int == 3)
        let filter = try #require(old["filter"] as? [String: Any])
        #expect(filter["app_version"] as? String == "2.0" && filter["from"] as? Int64 == F.t0)
        #expect(filter["to"] is NSNull && filter["dimension"] is NSNull)
        let checkout = try #require((old["use_cases"] as? [String: [String: Any]])?["checkout"])
        #expect((checkout["steps"] as? [[String: Any]])?.map { $0["name"] as? String } == ["checkout.address", "checkout.cart", "checkout.pay"])
        #expect(checkout["left_before_first_step"] as? Int == 0 && checkout["steps_omitted"] as? Int == 0)
        let versions = try #require(old["versions"] as? [String: [[String: Any]]])
        #expect(versions["app"]?.first?["version"] as? String == "2.0" && versions["sdk"]?.first?["events"] as? Int == 6)
        // The URL-encoded form reads the same; the whole report has every version.
        #expect(try await Self.reportJSON(collector, "?app_version=2%2E0")["events_stored"] as? Int == 6)
        #expect(try await Self.reportJSON(collector, "")["events_stored"] as? Int == 24)

        for bad in ["", String(repeating: "v", count: 257)] {
            let response = try await Self.report(collector, "?app_version=\(bad)")
            #expect(response.status == 400)
            let error = (try JSONSerialization.jsonObject(with: response.body) as? [String: Any])?["error"] as? [String: Any]
            #expect(error?["path"] as? String == "app_version", "\(String(decoding: response.body, as: UTF8.self))")
        }
        // 256 bytes is a version like any other: none has it.
        #expect(try await Self.reportJSON(collector, "?app_version=\(String(repeating: "v", count: 256))")["events_stored"] as? Int == 0)
        await collector.stop()
    }
}
