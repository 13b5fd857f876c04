import CollectorTestSupport
import Foundation
@testable import NFLogCollector
import Testing
@_spi(NFLogShared) import NFLogSupport

/// Batches for a report with every section: use cases completed and abandoned (some in
/// transactions whose backend logged server spans), network spans, sessions (ended, never
/// ended, ended before they started), web events from several origins, aggregates of several
/// names, windows and dimensions. Durations with fractions, so a mean summed in another order
/// would differ in its last bits.
enum ReportFixtures {
    typealias Span = TransactionReportTests.Span

    static func session(_ n: Int) -> String { String(format: "0193a7c2-0000-7000-8000-%012d", n) }

    /// A batch from one app instance (its context) with `sessions` (id, start, end).
    static func batch(appID: String, os: String, sessions: [(Int, Int64, Int64?)], events: [String], aggregates: [String] = []) -> String {
        let sessionsJSON = sessions.map { id, start, end in
            #"{"id":"\#(session(id))","started_at":\#(start)\#(end.map { #","ended_at":\#($0)"# } ?? "")}"#
        }
        return """
            {"version":1,"batch_id":"\(UUID().uuidString.lowercased())","sent_at":1750000005000,"sdk":{"name":"NFLogger","version":"0.1.0"},
             "context":{"app_id":"\(appID)","app_version":"2.1.0","os_name":"\(os)","os_version":"1","locale":"en_GB",
                        "sessions":[\(sessionsJSON.joined(separator: ","))]},
             "events":[\(events.joined(separator: ","))],"aggregates":[\(aggregates.joined(separator: ","))]}
            """
    }

    static func web(origin: String, session: Int) -> String {
        #"{"uuid":"\#(UUID().uuidString.lowercased())","session":"\#(Self.session(session))","name":"page.view","kind":"point","type":"event","timestamp":1750000000000,"source":"web","origin":"\#(origin)"}"#
    }

    static func point(session: Int) -> String {
        #"{"uuid":"\#(UUID().uuidString.lowercased())","session":"\#(Self.session(session))","name":"ui.tap","kind":"point","type":"event","timestamp":1750000000000}"#
    }

    static func useCase(_ name: String, duration: Double, completed: Bool) -> Span {
        Span(name: name, type: "usecase", duration: duration, end: #"{"completed":\#(completed)}"#)
    }

    /// The app's and its backend's batches.
    static func rich() throws -> [Batch] {
        var app: [String] = []
        var backend: [String] = []
        for i in 0..<23 {
            app.append(useCase("checkout", duration: 100.1 + Double(i * i) * 0.7, completed: i % 4 != 3).json(session: session(1)))
            app.append(useCase("signup", duration: 3_000.3 - Double(i) * 11.9, completed: i % 2 == 0).json(session: session(2)))
            app.append(Span(name: "net.request", type: "network", duration: 0.1 * Double(i % 7) + 20.3 * Double(i % 5))
                .json(session: session(1)))
        }
        app.append(useCase("Zebra", duration: 5, completed: true).json(session: session(1)))
        app.append(useCase("zebra", duration: 7.25, completed: false).json(session: session(1)))
        // Transactions: a use case, its client calls, the backend's server spans (one nested).
        for i in 0..<9 {
            let transaction = TransactionReportTests.useCase(i < 6 ? "pay" : "refund", duration: 900.5 + Double(i) * 37.3,
                                                            completed: i != 4)
            let call = TransactionReportTests.call(in: transaction, duration: 400.25 + Double(i) * 13.1)
            let second = TransactionReportTests.call(in: transaction, duration: 50.5 + Double(i))
            let server = TransactionReportTests.server(under: call, duration: 300.125 + Double(i) * 3.3)
            let nested = TransactionReportTests.server(under: server, duration: 100, name: "db.query")
            let secondServer = TransactionReportTests.server(under: second, duration: i % 2 == 0 ? 60 : 20.75)
            app += [transaction.json(session: session(1)), call.json(session: session(1)), second.json(session: session(1))]
            backend += [server.json(session: session(9)), nested.json(session: session(9)), secondServer.json(session: session(9))]
        }
        for origin in ["https://shop.example", "https://shop.example", "https://help.example", "https://a.example"] {
            app.append(web(origin: origin, session: 2))
        }
        app += (0..<5).map { _ in point(session: 3) }

        func aggregate(_ name: String, start: Int64, values: [Double], dimensions: [String: String]?) -> String {
            AggregateFixtures.json(AggregateFixtures.aggregate(name: name, start: start, values: values, dimensions: dimensions))
        }
        let aggregates = [
            aggregate("perf.frame", start: 1_750_000_020_000, values: [8.1, 16.7, 33.4], dimensions: ["screen": "home"]),
            aggregate("perf.frame", start: 1_750_000_080_000, values: [9.9, 12.5], dimensions: ["screen": "cart"]),
            aggregate("perf.frame", start: 1_750_000_020_000, values: [4.4, 70.1, 15, 15], dimensions: ["screen": "home"]),
            aggregate("net.latency", start: 1_750_000_140_000, values: [120.5, 80.25], dimensions: ["screen": "home"]),
            aggregate("net.latency", start: 1_750_000_020_000, values: [33.3], dimensions: nil),
            aggregate("disk.write", start: 1_750_000_200_000, values: [1, 2, 3, 4, 5], dimensions: ["screen": "5"]),
        ]
        let sessions: [(Int, Int64, Int64?)] = [
            (1, 1_749_999_990_000, 1_750_000_100_000), (2, 1_749_999_990_500, 1_750_000_000_250),
            (3, 1_750_000_000_000, nil), (4, 1_750_000_050_000, 1_750_000_040_000), (5, 1_750_000_000_000, 1_750_000_000_000),
        ]
        // The second batch: session 1 suspended again, later (its end only grows).
        let later = [(1, 1_749_999_990_000, 1_750_000_200_000)] + sessions.dropFirst()
        return [
            try PostgresFixtures.decode(batch(appID: "com.example.shop", os: "iOS", sessions: sessions,
                                              events: Array(app.prefix(60)))),
            try PostgresFixtures.decode(batch(appID: "com.example.shop", os: "iOS", sessions: later,
                                              events: Array(app.dropFirst(60)), aggregates: aggregates)),
            try PostgresFixtures.decode(batch(appID: "com.example.shop.api", os: "Linux", sessions: [(9, 1_749_999_000_000, nil)],
                                              events: backend)),
        ]
    }

    /// More use-case and aggregate names than a report lists (1,000 each): ties broken by name
    /// in byte order (upper case before lower case).
    static func manyNames() throws -> [Batch] {
        var events: [String] = []
        var aggregates: [String] = []
        for i in 0..<1_003 {
            let name = (i % 2 == 0 ? "Flow." : "flow.") + String(format: "%04d", i)
            events.append(useCase(name, duration: Double(i), completed: true).json(session: session(1)))
            aggregates.append(AggregateFixtures.json(AggregateFixtures.aggregate(name: name, values: [1])))
        }
        // A few started more often, so the order is not only by name.
        for name in ["flow.0999", "Flow.1002"] {
            events.append(useCase(name, duration: 1.5, completed: false).json(session: session(1)))
        }
        return try [PostgresFixtures.decode(batch(appID: "com.example.shop", os: "iOS", sessions: [(1, 1_000, 2_000)],
                                                  events: events, aggregates: aggregates))]
    }
}

@Suite("PostgreSQL's report against SQLite's", .enabled(if: TestDatabase.serverURL != nil, PostgresTests.skipMessage))
struct PostgresReportTests {
    static func json(_ report: AnalyticsReport) throws -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: try encoder.encode(report), as: UTF8.self)
    }

    /// Stores `batches` (and a retry of the first) into both stores as `app`, then runs `body`.
    static func withBoth(_ batchesByApp: [String: [Batch]],
                         _ body: (PostgresEventStore, SQLiteEventStore) async throws -> Void) async throws {
        try await TestDatabase.with { url in
            let postgres = try await PostgresEventStore(url: url, poolSize: 2)
            let path = StoreFixtures.temporaryPath()
            defer { try? FileManager.default.removeItem(atPath: path) }
            let sqlite = try SQLiteEventStore(path: path, durableCommits: false)
            for (app, batches) in batchesByApp.sorted(by: { $0.key < $1.key }) {
                for (offset, batch) in (batches + batches.prefix(1)).enumerated() {
                    let receivedAt = 1_750_000_000_000 + Int64(offset)
                    let expected = try await sqlite.store(batch, app: app, receivedAt: receivedAt)
                    #expect(try await postgres.store(batch, app: app, receivedAt: receivedAt) == expected)
                }
            }
            try await body(postgres, sqlite)
            await postgres.close()
            await sqlite.close()
        }
    }

    @Test("The whole report is SQLite's, byte for byte in JSON: use cases, server split, network, sessions, sources, aggregates")
    func sameReport() async throws {
        try await Self.withBoth(["shop": try ReportFixtures.rich(), "many": try ReportFixtures.manyNames()]) { postgres, sqlite in
            for app in ["shop", "many", "none"] {
                let expected = try await sqlite.report(app: app)
                let report = try await postgres.report(app: app)
                #expect(try Self.json(report) == (try Self.json(expected)), "app \(app)")
                #expect(report == expected)
            }
            // The fixture reaches every section (a report equal because empty would prove nothing).
            let shop = try await postgres.report(app: "shop")
            #expect(shop.useCases.keys.sorted() == ["Zebra", "checkout", "pay", "refund", "signup", "zebra"])
            #expect(shop.useCases["checkout"]?.abandoned == 5 && shop.useCases["checkout"]?.completed == 18)
            #expect(shop.useCases["pay"]?.server?.transactions == 5 && shop.useCases["refund"]?.server?.transactions == 3)
            #expect(shop.useCases["signup"]?.server == nil)
            #expect(shop.network.count == 23 + 18 && shop.sessions.count == 3)
            #expect(shop.eventsBySource.web == 4 && shop.webOrigins == 3)
            #expect(shop.aggregates.keys.sorted() == ["disk.write", "net.latency", "perf.frame"])
            #expect(shop.aggregates["perf.frame"]?.records == 3 && shop.aggregates["perf.frame"]?.count == 9)
            let many = try await postgres.report(app: "many")
            #expect(many.useCases.count == 1_000 && many.useCasesOmitted == 3)
            #expect(many.useCases["flow.0999"] != nil && many.useCases["Flow.1002"] != nil && many.useCases["flow.1001"] == nil)
            #expect(many.aggregates.count == 1_000 && many.aggregatesOmitted == 3)
            #expect(many.aggregates["Flow.0998"] != nil && many.aggregates["flow.1001"] == nil)
        }
    }

    @Test("Funnels, versions, and filters by time range and app version: SQLite's report, byte for byte")
    func sameFunnelsAndFilters() async throws {
        typealias F = FunnelFixtures
        let batches = ["funnel": try F.decoded(), "wizard": try F.manySteps(), "shop": try ReportFixtures.rich()]
        try await Self.withBoth(batches) { postgres, sqlite in
            let filters = [
                ReportFilter(),
                ReportFilter(from: F.t0 + F.hour),
                ReportFilter(to: F.t0 + F.hour),
                ReportFilter(from: F.t0 + 10, to: F.t0 + F.hour + 21),
                ReportFilter(appVersion: "2.0"),
                ReportFilter(from: F.t0 + F.hour, appVersion: "2.1.0"),
                ReportFilter(appVersion: "2.1.0", dimension: .init(key: "screen", value: "home")),
                ReportFilter(from: 1_750_000_020_000, to: 1_750_000_140_001, appVersion: "2.1.0"),
                ReportFilter(appVersion: "9.9"),
                ReportFilter(to: 1_000),
            ]
            for app in batches.keys.sorted() {
                for filter in filters {
                    let expected = try await sqlite.report(app: app, filter: filter)
                    let report = try await postgres.report(app: app, filter: filter)
                    #expect(try Self.json(report) == (try Self.json(expected)), "app \(app), \(filter)")
                }
            }
            // The cases reach what they test (equal because empty would prove nothing); the
            // numbers themselves are checked by hand in FunnelReportTests.
            let late = try await postgres.report(app: "funnel", filter: ReportFilter(from: F.t0 + F.hour))
            #expect(late.eventsStored == 11 && late.useCases["checkout"]?.steps.map(\.reached) == [2, 2, 1])
            #expect(late.useCases["checkout"]?.steps.map(\.left) == [0, 1, 1] && late.useCases["checkout"]?.leftBeforeFirstStep == 1)
            let old = try await postgres.report(app: "funnel", filter: ReportFilter(appVersion: "2.0"))
            #expect(old.eventsStored == 6 && old.versions.app == [.init(version: "2.0", events: 6)])
            let wizard = try await postgres.report(app: "wizard")
            #expect(wizard.useCases["wizard"]?.steps.count == 50 && wizard.useCases["wizard"]?.stepsOmitted == 2)
            let all = try await postgres.report(app: "funnel")
            #expect(all.useCases["checkout"]?.steps.map(\.name) == ["checkout.cart", "checkout.address", "checkout.pay"])
            #expect(all.versions.sdk.count == 2)
            // A filter that selects every event counts them (rather than reading the totals) to the
            // same figures, on both stores: only `filter` differs.
            for store in [postgres as any EventStore, sqlite] {
                for (app, version) in [("shop", "2.1.0"), ("wizard", "3.0")] {
                    var whole = try Self.object(try await store.report(app: app))
                    var selected = try Self.object(try await store.report(app: app, filter: ReportFilter(from: 0, appVersion: version)))
                    whole["filter"] = nil
                    selected["filter"] = nil
                    #expect(NSDictionary(dictionary: whole) == NSDictionary(dictionary: selected), "app \(app)")
                }
            }
        }
    }

    static func object(_ report: AnalyticsReport) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: Data(try json(report).utf8)) as? [String: Any] ?? [:]
    }

    @Test("A filter (time range, dimension) selects the same aggregates on both stores")
    func sameFilteredReport() async throws {
        try await Self.withBoth(["shop": try ReportFixtures.rich()]) { postgres, sqlite in
            let filters = [
                ReportFilter(from: 1_750_000_050_000),
                ReportFilter(to: 1_750_000_100_000),
                ReportFilter(from: 1_750_000_020_000, to: 1_750_000_140_001),
                ReportFilter(dimension: .init(key: "screen", value: "home")),
                ReportFilter(from: 1_750_000_030_000, dimension: .init(key: "screen", value: "home")),
                ReportFilter(dimension: .init(key: "screen", value: "5")),
                ReportFilter(dimension: .init(key: "missing", value: "home")),
                ReportFilter(from: 1_760_000_000_000),
            ]
            for filter in filters {
                let expected = try await sqlite.report(app: "shop", filter: filter)
                let report = try await postgres.report(app: "shop", filter: filter)
                #expect(try Self.json(report) == (try Self.json(expected)), "\(filter)")
            }
            let home = try await postgres.report(app: "shop", filter: ReportFilter(dimension: .init(key: "screen", value: "home")))
            #expect(home.aggregates["perf.frame"]?.records == 2 && home.aggregates["net.latency"]?.records == 1)
            #expect(home.aggregates["disk.write"] == nil)
            let late = try await postgres.report(app: "shop", filter: ReportFilter(from: 1_750_000_050_000))
            #expect(late.aggregates.keys.sorted() == ["disk.write", "net.latency", "perf.frame"])
            #expect(late.aggregates["perf.frame"]?.records == 1)
        }
    }
}
