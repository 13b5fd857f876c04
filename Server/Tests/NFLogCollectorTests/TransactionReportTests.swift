import CollectorTestSupport
import Foundation
import NFLogCollectorTesting
@_spi(NFLogShared) import NFLogSupport
import NFLogger
import Testing
@testable import NFLogCollector

/// Transactions end to end through a real collector (docs/PROTOCOL.md, "Transactions"): an app
/// and its backend upload under the same app key, with their own contexts; the report joins the
/// backend's server spans to the app's client calls and splits each completed transaction's time.
@Suite("Transactions joined across app and backend")
struct TransactionReportTests {
    static let keyA = "key-of-app-a-0123456789"
    static let keyB = "key-of-app-b-0123456789"
    static let readA = "nfr_read-token-of-app-a"
    static let appSession = "0193a7c2-0000-7000-8000-0000000000a1"
    static let backendSession = "0193a7c2-0000-7000-8000-0000000000b1"

    static func start(_ kind: StoreKind) async throws -> RunningCollector {
        var configuration = CollectorConfiguration()
        configuration.keys = AppKeys([keyA: "a", keyB: "b"])
        configuration.readTokens = ReadTokens([readA: .apps(["a"])])
        configuration.rateLimit = nil
        return try await kind.startCollector(configuration: configuration)
    }

    /// A span with a fresh uuid, and its W3C span id.
    struct Span {
        let uuid = UUID().uuidString.lowercased()
        let name: String
        let type: String
        let duration: Double
        var transaction: String?
        var parent: String?
        var end: String?

        var spanID: String { UUID(uuidString: uuid).flatMap { SpanID(spanUUID: $0) }?.description ?? "" }

        func json(session: String) -> String {
            var text = #"{"uuid":"\#(uuid)","session":"\#(session)","name":"\#(name)","kind":"span","type":"\#(type)","timestamp":1750000000000,"start":1750000000000,"end":\#(1_750_000_000_000 + Int64(duration)),"duration_ms":\#(duration)"#
            if let transaction { text += #","transaction":"\#(transaction)""# }
            if let parent { text += #","parent_span":"\#(parent)""# }
            if let end { text += #","end_parameters":\#(end)"# }
            return text + "}"
        }
    }

    static func point(transaction: String?, session: String = appSession) -> String {
        var text = #"{"uuid":"\#(UUID().uuidString.lowercased())","session":"\#(session)","name":"ui.tap","kind":"point","type":"interaction","timestamp":1750000000100"#
        if let transaction { text += #","transaction":"\#(transaction)""# }
        return text + "}"
    }

    static func batch(appID: String, os: String, session: String, events: [String]) -> String {
        """
        {"version":1,"batch_id":"\(UUID().uuidString.lowercased())","sent_at":1750000005000,"sdk":{"name":"NFLogger","version":"0.1.0"},
         "context":{"app_id":"\(appID)","app_version":"2.1.0","os_name":"\(os)","os_version":"1","locale":"en_GB",
                    "sessions":[{"id":"\(session)","started_at":1749999990000}]},
         "events":[\(events.joined(separator: ","))]}
        """
    }

    static func app(_ events: [String]) -> String { batch(appID: "com.example.shop", os: "iOS", session: appSession, events: events) }
    static func backend(_ events: [String]) -> String { batch(appID: "com.example.shop.api", os: "Linux", session: backendSession, events: events) }

    /// A use case (the transaction's own span) with its id as the transaction.
    static func useCase(_ name: String, duration: Double, completed: Bool = true) -> Span {
        var span = Span(name: name, type: "usecase", duration: duration, end: #"{"outcome":"\#(completed ? "completed" : "failed")","completed":\#(completed)}"#)
        span.transaction = span.uuid
        return span
    }

    static func call(in transaction: Span, duration: Double) -> Span {
        Span(name: "net.request", type: "network", duration: duration, transaction: transaction.uuid)
    }

    /// A backend span continuing `parent` (the header's span id), or nested under a backend span.
    static func server(under parent: Span, duration: Double, name: String = "http.server") -> Span {
        Span(name: name, type: "server", duration: duration, transaction: parent.transaction, parent: parent.spanID)
    }

    /// What the app and its backend upload, and the split worked out by hand from it.
    struct Scenario {
        var app: [String] = []
        var backend: [String] = []
        /// Uploaded by app b under its own key, with app a's transaction ids.
        var otherApp: [String] = []
        /// Every span and point carrying a transaction, for the export check.
        var withTransaction: [String: String] = [:]
        var withParent: [String: String] = [:]

        init() {
            // T1: 1000.5 ms; one call of 400.25, made under a step the app logged (so its parent is
            // a span of the app's own: the step is not a call), answered by a 300.125 ms server
            // span, under which the backend logged a 120 ms query (nested: not a call either).
            let t1 = useCase("flow.checkout", duration: 1_000.5)
            let step1 = Span(name: "checkout.pay", type: "step", duration: 450, transaction: t1.uuid)
            var c1 = call(in: t1, duration: 400.25)
            c1.parent = step1.spanID
            let s1 = server(under: c1, duration: 300.125)
            let q1 = server(under: s1, duration: 120, name: "db.query")
            // T2: 800 ms; one call of 500 with two server spans (200, 550): the longest counts,
            // and is longer than the call, so the network's share is 0.
            let t2 = useCase("flow.checkout", duration: 800)
            let c2 = call(in: t2, duration: 500)
            let s2a = server(under: c2, duration: 200)
            let s2b = server(under: c2, duration: 550)
            // T3: 1200 ms; two calls, 300 (server 250) and 200 (server 50).
            let t3 = useCase("flow.checkout", duration: 1_200)
            let c3a = call(in: t3, duration: 300)
            let c3b = call(in: t3, duration: 200)
            let s3a = server(under: c3a, duration: 250)
            let s3b = server(under: c3b, duration: 50)
            // T4: completed, called a backend that logged nothing: no split. App b's spans carry
            // T4's and T1's ids and parent span ids: they must not join.
            let t4 = useCase("flow.checkout", duration: 900)
            let c4 = call(in: t4, duration: 100)
            // T5: failed, though its backend answered: not completed, no split.
            let t5 = useCase("flow.checkout", duration: 50, completed: false)
            let c5 = call(in: t5, duration: 40)
            let s5 = server(under: c5, duration: 30)
            // Another use case, no backend at all.
            let t6 = useCase("form.signup", duration: 3_000)
            let c6 = call(in: t6, duration: 100)

            for span in [t1, step1, c1, t2, c2, t3, c3a, c3b, t4, c4, t5, c5, t6, c6] { app.append(span.json(session: appSession)) }
            app.append(point(transaction: t1.uuid))
            app.append(point(transaction: nil))
            for span in [s1, q1, s2a, s2b, s3a, s3b, s5] { backend.append(span.json(session: backendSession)) }
            for span in [server(under: c4, duration: 80), server(under: c1, duration: 999)] {
                otherApp.append(span.json(session: backendSession))
            }
            for span in [t1, step1, c1, t2, c2, t3, c3a, c3b, t4, c4, t5, c5, t6, c6, s1, q1, s2a, s2b, s3a, s3b, s5] {
                withTransaction[span.uuid] = span.transaction
                if let parent = span.parent { withParent[span.uuid] = parent }
            }
        }
    }

    // The split over T1, T2, T3, by hand:
    //   client  = duration − calls: 1000.5 − 400.25 = 600.25; 800 − 500 = 300; 1200 − 500 = 700
    //   network = Σ (call − its longest server span, ≥ 0): 100.125; max(500 − 550, 0) = 0; 50 + 150 = 200
    //   server  = Σ longest server spans: 300.125; 550; 250 + 50 = 300
    // Nearest rank over 3 values: p50 rank ⌈1.5⌉ = 2, p95 rank ⌈2.85⌉ = 3.
    static let client = (p50: 600.25, p95: 700.0, mean: (300 + 600.25 + 700) / 3)
    static let network = (p50: 100.125, p95: 200.0, mean: (0 + 100.125 + 200) / 3)
    static let server = (p50: 300.125, p95: 550.0, mean: (300 + 300.125 + 550) / 3)

    func expect(_ summary: DurationSummary, _ expected: (p50: Double, p95: Double, mean: Double),
                sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(summary.count == 3, sourceLocation: sourceLocation)
        for (value, wanted) in [(summary.p50Milliseconds, expected.p50), (summary.p95Milliseconds, expected.p95),
                                (summary.meanMilliseconds, expected.mean)] {
            #expect(abs((value ?? .nan) - wanted) < 1e-9, "\(value ?? .nan) vs \(wanted)", sourceLocation: sourceLocation)
        }
    }

    func post(_ collector: some CollectorUnderTest, key: String = keyA, _ text: String) async throws {
        let response = try await CollectorClient(collector, key: key).post(try CollectorClient.gzip(text))
        #expect(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")
    }

    func report(_ collector: some CollectorUnderTest) async throws -> (AnalyticsReport, [String: Any]) {
        let reader = CollectorClient.reader(collector, token: Self.readA)
        let response = try await reader.send("GET", "v1/report")
        #expect(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")
        let json = try #require(try JSONSerialization.jsonObject(with: response.body) as? [String: Any])
        return (try JSONDecoder().decode(AnalyticsReport.self, from: response.body), json)
    }

    @Test("The report splits completed transactions with server spans into client, network and server time", arguments: StoreKind.all)
    func split(_ kind: StoreKind) async throws {
        let collector = try await Self.start(kind)
        let scenario = Scenario()
        try await post(collector, Self.app(scenario.app))
        try await post(collector, Self.backend(scenario.backend))
        try await post(collector, key: Self.keyB, Self.backend(scenario.otherApp))

        let (report, json) = try await report(collector)
        let checkout = try #require(report.useCases["flow.checkout"])
        // Five started, T5 failed: four completed, the split over the three with server spans.
        #expect(checkout.started == 5 && checkout.completed == 4 && checkout.abandoned == 1)
        let split = try #require(checkout.server)
        #expect(split.transactions == 3)
        expect(split.client, Self.client)
        expect(split.network, Self.network)
        expect(split.server, Self.server)
        // A use case whose transactions have no server events has no split: the key is absent.
        #expect(report.useCases["form.signup"]?.completed == 1 && report.useCases["form.signup"]?.server == nil)
        let useCases = try #require(json["use_cases"] as? [String: [String: Any]])
        #expect(useCases["form.signup"]?["server"] == nil)
        let server = try #require(useCases["flow.checkout"]?["server"] as? [String: Any])
        #expect(Set(server.keys) == ["transactions", "client", "network", "server"])
        #expect(server["transactions"] as? Int == 3)
        #expect(Set((server["network"] as? [String: Any] ?? [:]).keys) == ["count", "p50_ms", "p95_ms", "mean_ms"])
        #expect((server["server"] as? [String: Any])?["p95_ms"] as? Double == 550)

        let text = report.render()
        #expect(text.contains("Use case flow.checkout: 5 started · 4 completed · 1 abandoned (20.0%) · time to complete"))
        #expect(text.contains("\n  server split (n=3): client p50 600 ms p95 700 ms · network p50 100 ms p95 200 ms · server p50 300 ms p95 550 ms"))
        #expect(text.components(separatedBy: "server split").count == 2)  // form.signup has none
        await collector.stop()
    }

    @Test("Another app's spans with the same transaction ids never join; a duplicate batch changes nothing", arguments: StoreKind.all)
    func scopeAndDuplicates(_ kind: StoreKind) async throws {
        let collector = try await Self.start(kind)
        let scenario = Scenario()
        let app = Self.app(scenario.app)
        let backend = Self.backend(scenario.backend)
        try await post(collector, app)
        try await post(collector, backend)
        let before = try await report(collector).0
        // App b stores the spans that would have joined T4 (and lengthened T1's server span),
        // then the same batches again: a's split is as before.
        try await post(collector, key: Self.keyB, Self.backend(scenario.otherApp))
        try await post(collector, app)
        try await post(collector, backend)
        let after = try await report(collector).0
        #expect(after.useCases == before.useCases)
        #expect(after.duplicatesDropped == scenario.app.count + scenario.backend.count)
        let split = try #require(after.useCases["flow.checkout"]?.server)
        #expect(split.transactions == 3)
        expect(split.server, Self.server)
        // App b has transactions but no use cases of its own: nothing to split.
        let b = try await collector.store.report(app: "b")
        #expect(b.useCases.isEmpty && b.spanEvents == 2)
        await collector.stop()
    }

    @Test("The export carries transaction and parent_span when the event had them, and only then", arguments: StoreKind.all)
    func export(_ kind: StoreKind) async throws {
        let collector = try await Self.start(kind)
        let scenario = Scenario()
        try await post(collector, Self.app(scenario.app))
        try await post(collector, Self.backend(scenario.backend))
        let exported = try await collector.exportedEvents()
        #expect(exported.count == scenario.app.count + scenario.backend.count)
        for event in exported where event.event.kind == .span {
            let uuid = event.event.id.uuidString.lowercased()
            #expect(event.event.transactionID?.uuidString.lowercased() == scenario.withTransaction[uuid])
            #expect(event.event.parentSpanID.map { String(format: "%016llx", $0) } == scenario.withParent[uuid])
        }
        let points = exported.filter { $0.event.kind == .point }
        #expect(points.count == 2 && points.filter { $0.event.transactionID == nil }.count == 1
                && points.allSatisfy { $0.event.parentSpanID == nil })

        // The raw lines: the keys absent when the event had none, lowercase hex when present.
        let lines = LinesBox()
        try await collector.store.exportEvents(app: "a") { lines.append(String(decoding: $0, as: UTF8.self)) }
        let withParent = lines.all.filter { $0.contains(#""parent_span":"#) }
        #expect(withParent.count == scenario.withParent.count)
        #expect(lines.all.filter { !$0.contains(#""transaction":"#) }.count == 1)  // the point logged outside any
        await collector.stop()
    }
}

/// Export lines gathered from the store's queue.
private final class LinesBox: @unchecked Sendable {
    // @unchecked: `lines` is only touched under `lock`.
    private let lock = NSLock()
    private var lines: [String] = []

    func append(_ line: String) {
        lock.lock()
        lines.append(line)
        lock.unlock()
    }

    var all: [String] {
        lock.lock()
        defer { lock.unlock() }
        return lines
    }

    @Test("The SQLite splits query walks the calls and looks each one's use case up by uuid, whatever the filter: never every use case span of the app")
    func splitsQueryPlan() async throws {
        let path = StoreFixtures.temporaryPath()
        defer { for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) } }
        let store = try SQLiteEventStore(path: path, durableCommits: false)
        let filters = [ReportFilter(), ReportFilter(appVersion: "2.0"), ReportFilter(from: 1_000, to: 7_200_000),
                       ReportFilter(from: 1_000, to: 7_200_000, appVersion: "2.0")]
        for filter in filters {
            let plan = try await store.onWriter { c in
                try c.prepare("EXPLAIN QUERY PLAN " + TransactionAnalysis.sql(SQLiteReportSelection(filter: filter))).collect { $0.text(at: 3) ?? "" }
            }
            // With a version or a range the planner once chose `SEARCH u USING INDEX events_spans`:
            // 2.4 s over 10,000,000 events, for a store without a single call.
            #expect(plan.contains { $0.contains("SEARCH u USING INDEX sqlite_autoindex_events_1 (app=? AND uuid=?)") }, "\(filter): \(plan)")
            #expect(!plan.contains { $0.contains("events_spans") }, "\(filter): \(plan)")
        }
        await store.close()
    }
}
