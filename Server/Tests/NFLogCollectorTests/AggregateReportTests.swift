import CollectorTestSupport
import Foundation
import NFLogCollectorTesting
@_spi(NFLogShared) import NFLogSupport
import NFLogger
import Testing
@testable import NFLogCollector

/// Aggregates end to end through a real collector: gzip batches over HTTP on 127.0.0.1, a real
/// store (SQLite, and PostgreSQL when NFLOG_POSTGRES_URL is set), the report and the export read
/// back over HTTP.
@Suite("Aggregates stored, merged and reported")
struct AggregateReportTests {
    static let keyA = "key-of-app-a-0123456789"
    static let keyB = "key-of-app-b-0123456789"
    static let readA = "nfr_read-token-of-app-a"
    static let readB = "nfr_read-token-of-app-b"
    static let base: Int64 = 1_750_000_020_000
    static let devices = 10
    static let windows = 10
    static let perWindow = 1_000

    static func start(_ kind: StoreKind) async throws -> RunningCollector {
        var configuration = CollectorConfiguration()
        configuration.keys = AppKeys([keyA: "a", keyB: "b"])
        configuration.readTokens = ReadTokens([readA: .apps(["a"]), readB: .apps(["b"])])
        configuration.rateLimit = nil
        return try await kind.startCollector(configuration: configuration)
    }

    /// 100,000 log-normal frame times (median 16 ms, σ 0.6), a fixed seed: values[device][window].
    static let values: [[[Double]]] = {
        var random = SeededRandom(seed: 42)
        return (0..<devices).map { _ in
            (0..<windows).map { _ in (0..<perWindow).map { _ in exp(log(16) + 0.6 * random.normal()) } }
        }
    }()

    /// A device's batch: one aggregate per window, screen home on even windows, cart on odd ones.
    static func batch(device: Int) -> String {
        let aggregates = (0..<windows).map { window in
            var aggregate = AggregateFixtures.aggregate(start: base + Int64(window) * 60_000, values: values[device][window],
                                                        dimensions: ["screen": window % 2 == 0 ? "home" : "cart", "device": "d\(device)"])
            aggregate["measures"] = ["ms": AggregateFixtures.summary(values[device][window]),
                                     "bytes": AggregateFixtures.summary(values[device][window].map { ($0 * 100).rounded() })]
            return AggregateFixtures.json(aggregate)
        }
        return AggregateFixtures.batch(aggregates: aggregates)
    }

    /// The exact value of rank ⌊q (n − 1)⌋ among `values`.
    static func exact(_ q: Double, _ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted[Int((q * Double(sorted.count - 1)).rounded(.down))]
    }

    func client(_ collector: some CollectorUnderTest, key: String) -> CollectorClient { CollectorClient(collector, key: key) }

    func report(_ collector: some CollectorUnderTest, token: String = readA, query: String = "") async throws -> AnalyticsReport {
        let url = try #require(URL(string: collector.url.absoluteString + "/v1/report" + query))
        let response = try await DefaultHTTPTransport(timeout: hangLimitSeconds).send(TransportRequest(url: url, method: "GET", headers: ["Authorization": "Bearer \(token)"], body: Data()))
        #expect(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")
        return try JSONDecoder().decode(AnalyticsReport.self, from: response.body)
    }

    /// Checks p50/p95/p99 of the report's `ms` within 1% of the exact values; returns the worst relative error.
    @discardableResult
    func checkQuantiles(_ statistics: MeasureStatistics?, _ values: [Double]) throws -> Double {
        let statistics = try #require(statistics)
        #expect(statistics.count == values.count)
        #expect(statistics.min == values.min() && statistics.max == values.max())
        #expect(abs((statistics.mean ?? 0) - values.reduce(0, +) / Double(values.count)) < 1e-9 * (statistics.mean ?? 1))
        var worst = 0.0
        for (q, reported) in [(0.50, statistics.p50), (0.95, statistics.p95), (0.99, statistics.p99)] {
            let exact = Self.exact(q, values)
            let error = abs((reported ?? .nan) - exact) / exact
            #expect(error <= 0.01, "p\(Int(q * 100)): \(reported ?? .nan) vs exact \(exact)")
            worst = max(worst, error.isNaN ? .infinity : error)
        }
        return worst
    }

    @Test("Ten devices' aggregates merge into quantiles within 1% of the exact ones; a batch sent twice is stored once", arguments: StoreKind.all)
    func mergedQuantiles(_ kind: StoreKind) async throws {
        let collector = try await Self.start(kind)
        let client = client(collector, key: Self.keyA)
        for device in 0..<Self.devices {
            let response = try await client.post(try CollectorClient.gzip(Self.batch(device: device)))
            #expect(response.status == 200, "\(String(decoding: response.body, as: UTF8.self))")
        }
        let all = Self.values.flatMap { $0.flatMap { $0 } }
        #expect(all.count == 100_000)
        let report = try await report(collector)
        let frames = try #require(report.aggregates["perf.frame"])
        #expect(frames.records == 100 && frames.count == 100_000 && report.aggregatesOmitted == 0)
        let worst = try checkQuantiles(frames.measures["ms"], all)
        print("aggregate merge: worst relative error of p50/p95/p99 over 100,000 values: \(worst)")
        #expect(frames.measures["bytes"]?.count == 100_000)
        #expect(report.render().contains("Aggregated measurements:"))
        #expect(report.render().contains("perf.frame (100000 events in 100 aggregates) ms: n=100000"))

        // The same batch twice (the fixtures make new uuids per call, so a new one, sent twice):
        // stored once, counted as duplicates, in the answers and the stats.
        let text = Self.batch(device: 4)
        let first = try JSONSerialization.jsonObject(with: try await client.post(try CollectorClient.gzip(text)).body) as? [String: Any]
        let second = try JSONSerialization.jsonObject(with: try await client.post(try CollectorClient.gzip(text)).body) as? [String: Any]
        #expect(first?["accepted"] as? Int == 10 && first?["duplicates"] as? Int == 0)
        #expect(second?["accepted"] as? Int == 0 && second?["duplicates"] as? Int == 10)
        let stats = try await CollectorClient.reader(collector, token: Self.readA).json("GET", "v1/stats")
        #expect(stats["aggregates_stored"] as? Int == 110 && stats["aggregate_duplicates_dropped"] as? Int == 10)
        #expect(stats["aggregated_events"] as? Int == 110_000 && stats["events_stored"] as? Int == 0)
        #expect(try await self.report(collector).aggregates["perf.frame"]?.records == 110)
        await collector.stop()
    }

    @Test("The time range and dimension filters select the aggregates; the export lists them; each app sees its own", arguments: StoreKind.all)
    func filtersExportAndScope(_ kind: StoreKind) async throws {
        let collector = try await Self.start(kind)
        for device in 0..<3 {
            #expect(try await client(collector, key: Self.keyA).post(try CollectorClient.gzip(Self.batch(device: device))).status == 200)
        }
        // App b: one aggregate of another name, with the same uuid as one of a's.
        let shared = UUID().uuidString.lowercased()
        let own = AggregateFixtures.aggregate(shared, name: "perf.launch", values: [100, 200])
        #expect(try await client(collector, key: Self.keyA).post(try CollectorClient.gzip(
            AggregateFixtures.batch(aggregates: [AggregateFixtures.json(AggregateFixtures.aggregate(shared, values: [1]))]))).status == 200)
        #expect(try await client(collector, key: Self.keyB).post(try CollectorClient.gzip(
            AggregateFixtures.batch(aggregates: [AggregateFixtures.json(own)]))).status == 200)

        // Windows 2, 3 and 4 of devices 0-2: start in [base + 120 s, base + 300 s).
        let ranged = try await report(collector, query: "?from=\(Self.base + 120_000)&to=\(Self.base + 300_000)")
        let inRange = try #require(ranged.aggregates["perf.frame"])
        let rangeValues = (0..<3).flatMap { device in (2..<5).flatMap { Self.values[device][$0] } }
        #expect(inRange.records == 9 && inRange.count == rangeValues.count)
        try checkQuantiles(inRange.measures["ms"], rangeValues)
        #expect(ranged.eventsStored == 0 && ranged.batches == 4)  // the rest of the report is not filtered

        // screen=home (URL-encoded '='): even windows only; the extra aggregate (base window, home) too.
        let home = try await report(collector, query: "?dimension=screen%3Dhome")
        let homeValues: [Double] = (0..<3).flatMap { device in stride(from: 0, to: Self.windows, by: 2).flatMap { Self.values[device][$0] } } + [1]
        #expect(home.aggregates["perf.frame"]?.records == 16)
        try checkQuantiles(home.aggregates["perf.frame"]?.measures["ms"], homeValues)
        let both = try await report(collector, query: "?dimension=device=d1&from=\(Self.base + 60_000)&to=\(Self.base + 120_000)")
        #expect(both.aggregates["perf.frame"]?.records == 1 && both.aggregates["perf.frame"]?.count == Self.perWindow)
        #expect(try await report(collector, query: "?dimension=screen=nowhere").aggregates.isEmpty)
        for bad in ["?from=-1", "?to=x", "?from=5&to=4", "?dimension=novalue", "?dimension==v"] {
            let url = try #require(URL(string: collector.url.absoluteString + "/v1/report" + bad))
            let response = try await DefaultHTTPTransport(timeout: hangLimitSeconds).send(TransportRequest(url: url, method: "GET", headers: ["Authorization": "Bearer \(Self.readA)"], body: Data()))
            #expect(response.status == 400, "\(bad)")
        }

        // App b sees its own aggregate only, and a sees none of b's.
        let reportB = try await report(collector, token: Self.readB)
        #expect(Set(reportB.aggregates.keys) == ["perf.launch"] && reportB.aggregates["perf.launch"]?.count == 2)
        #expect(try await report(collector).aggregates["perf.launch"] == nil)

        // The export, paged over HTTP with its own row numbers; and the typed export of every app.
        let reader = CollectorClient.reader(collector, token: Self.readA)
        let events = try await reader.send("GET", "v1/export", headers: [:])  // the default: events, and there are none
        #expect(events.status == 200 && events.body.isEmpty)
        var lines: [[String: Any]] = []
        var after = "0"
        while true {
            let url = try #require(URL(string: collector.url.absoluteString + "/v1/export?kind=aggregates&limit=7&after=\(after)"))
            let response = try await DefaultHTTPTransport(timeout: hangLimitSeconds).send(TransportRequest(url: url, method: "GET", headers: ["Authorization": "Bearer \(Self.readA)"], body: Data()))
            #expect(response.status == 200)
            for line in String(decoding: response.body, as: UTF8.self).split(separator: "\n") {
                lines.append(try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]))
            }
            guard let next = response.headers.first(where: { $0.key.lowercased() == "x-nflog-next-after" })?.value else { break }
            after = next
        }
        #expect(lines.count == 31 && lines.allSatisfy { $0["app"] as? String == "a" })
        #expect(lines.first?["window_s"] as? Int == 60 && (lines.first?["dimensions"] as? [String: String])?["screen"] == "home")
        #expect(lines.first?["context"] is [String: Any] && lines.first?["measures"] is [String: Any] && lines.first?["overflow"] == nil)
        let badKind = try #require(URL(string: collector.url.absoluteString + "/v1/export?kind=spans"))
        #expect(try await DefaultHTTPTransport(timeout: hangLimitSeconds).send(TransportRequest(url: badKind, method: "GET", headers: ["Authorization": "Bearer \(Self.readA)"], body: Data())).status == 400)

        let exported = try await collector.exportedAggregates()
        #expect(exported.count == 32 && exported.filter { $0.app == "b" }.map(\.name) == ["perf.launch"])
        let first = try #require(exported.first)
        #expect(first.windowSeconds == 60 && first.count == Self.perWindow && first.dimensions == ["screen": "home", "device": "d0"])
        #expect(first.measures["ms"]?.count == Self.perWindow && first.measures["ms"]?.min == Self.values[0][0].min())
        let p50 = try #require(first.measures["ms"]?.quantile(0.5))
        #expect(abs(p50 - Self.exact(0.5, Self.values[0][0])) / Self.exact(0.5, Self.values[0][0]) <= 0.01)
        await collector.stop()
    }

    @Test("An app's aggregates past 1,000 names are counted, not listed; the most events first", arguments: StoreKind.all)
    func boundedNames(_ kind: StoreKind) async throws {
        try await kind.withStore { store in
            var texts: [String] = []
            for index in 0..<1_005 {
                texts.append(AggregateFixtures.json(AggregateFixtures.aggregate(name: "perf.n\(index)", values: index == 1_004 ? [1, 2, 3, 4] : [1])))
            }
            for chunk in stride(from: 0, to: texts.count, by: 500) {
                let batch = try BatchDecoder().decode(Array(AggregateFixtures.batch(aggregates: Array(texts[chunk..<min(chunk + 500, texts.count)])).utf8))
                _ = try await store.store(batch, app: "a", receivedAt: 1)
            }
            let report = try await store.report(app: "a")
            #expect(report.aggregates.count == 1_000 && report.aggregatesOmitted == 5)
            #expect(report.aggregates["perf.n1004"]?.count == 4 && report.aggregates["perf.n0"] != nil && report.aggregates["perf.n999"] == nil)
        }
    }
}

/// The values and the errors measured are the same each run.
extension SeededRandom {
    /// Uniform in (0, 1).
    mutating func uniform() -> Double { (Double(next() >> 11) + 0.5) / Double(1 << 53) }

    /// Standard normal (Box-Muller).
    mutating func normal() -> Double { sqrt(-2 * log(uniform())) * cos(2 * .pi * uniform()) }
}
