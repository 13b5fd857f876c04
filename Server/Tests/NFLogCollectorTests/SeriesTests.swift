import CollectorTestSupport
import Foundation
import NFLogCollectorTesting
@_spi(NFLogShared) import NFLogSupport
import NFLogger
import Testing
@testable import NFLogCollector

/// The report over time (``EventStore/series(app:query:)``, on each store): buckets of UTC hours
/// and days, the range's bounds, the app version filter, the aggregates' caps, and the refusals;
/// figures checked by hand on ``SeriesFixtures``.
@Suite("The report over time")
struct SeriesTests {
    static let hour = SeriesFixtures.hour
    static let next = SeriesFixtures.hour + 3_600_000

    /// A new store of `kind` with `batches` stored as app `shop`.
    static func withStore(_ kind: StoreKind, _ batches: [Batch], _ body: (any EventStore) async throws -> Void) async throws {
        try await kind.withStore { store in
            for batch in batches { _ = try await store.store(batch, app: "shop", receivedAt: 1_750_000_000_000) }
            try await body(store)
        }
    }

    static func query(_ bucket: SeriesBucket = .hour, from: Int64? = nil, to: Int64? = nil, version: String? = nil) throws -> SeriesQuery {
        try SeriesQuery(bucket: bucket, from: from, to: to, appVersion: version, now: hour)
    }

    /// Whether `points` are `expected`: counts exact; round-trip percentiles within 1% (hours and
    /// days come from the rollups' buckets; seconds and minutes are exact).
    static func same(_ points: [ReportSeries.Point], _ expected: [ReportSeries.Point]) -> Bool {
        points.count == expected.count && zip(points, expected).allSatisfy { point, wanted in
            point.start == wanted.start && point.events == wanted.events && point.webEvents == wanted.webEvents
                && point.network.count == wanted.network.count
                && withinOnePercent(point.network.p50Milliseconds, of: wanted.network.p50Milliseconds)
                && withinOnePercent(point.network.p95Milliseconds, of: wanted.network.p95Milliseconds)
        }
    }

    static func point(_ start: Int64, _ events: Int, web: Int = 0, network: (Int, Double?, Double?)) -> ReportSeries.Point {
        ReportSeries.Point(start: start, events: events, webEvents: web,
                           network: ReportSeries.Network(count: network.0, p50Milliseconds: network.1, p95Milliseconds: network.2))
    }

    @Test("Hours: an event at a bucket's first millisecond is in it, one a millisecond before is in the hour before; round trips by nearest rank, within 1%", arguments: StoreKind.all)
    func hours(_ kind: StoreKind) async throws {
        try await Self.withStore(kind, try SeriesFixtures.batches()) { store in
            let series = try await store.series(app: "shop", query: try Self.query(from: Self.hour - 3_600_000, to: Self.hour + 7_200_000))
            // The hour: 3 points and a web one, 5 round trips (10, 20, 30, 40, 99: p50 rank 3, p95
            // rank 5), an abandoned one (an event, not a round trip), 3.0.0's point.
            #expect(Self.same(series.points, [
                Self.point(Self.hour - 3_600_000, 1, network: (0, nil, nil)),
                Self.point(Self.hour, 10, web: 1, network: (5, 30, 99)),
                Self.point(Self.next, 1, network: (1, 7.5, 7.5)),
            ]), "\(series.points)")
            #expect(series.bucket == .hour && series.bucketMilliseconds == 3_600_000)
            #expect(series.from == Self.hour - 3_600_000 && series.to == Self.hour + 7_200_000 && series.appVersion == nil)
        }
    }

    @Test("from is inclusive and to exclusive, on the events' device timestamps", arguments: StoreKind.all)
    func bounds(_ kind: StoreKind) async throws {
        try await Self.withStore(kind, try SeriesFixtures.batches()) { store in
            // Without the hour's last millisecond (to is exclusive) and the one before (from is inclusive).
            let series = try await store.series(app: "shop", query: try Self.query(from: Self.hour, to: Self.hour + 3_599_999))
            #expect(Self.same(series.points, [Self.point(Self.hour, 9, web: 1, network: (5, 30, 99))]), "\(series.points)")
            let last = try await store.series(app: "shop", query: try Self.query(from: Self.hour + 3_599_999, to: Self.next + 1))
            #expect(Self.same(last.points, [Self.point(Self.hour, 1, network: (0, nil, nil)), Self.point(Self.next, 1, network: (1, 7.5, 7.5))]),
                    "\(last.points)")
        }
    }

    @Test("Days start at UTC midnight; a day holds every hour of it", arguments: StoreKind.all)
    func days(_ kind: StoreKind) async throws {
        try await Self.withStore(kind, try SeriesFixtures.batches()) { store in
            let series = try await store.series(app: "shop", query: try Self.query(.day, from: SeriesFixtures.day - 1, to: SeriesFixtures.day + 86_400_000))
            #expect(Self.same(series.points, [Self.point(SeriesFixtures.day, 12, web: 1, network: (6, 20, 99))]), "\(series.points)")
            #expect(series.bucketMilliseconds == 86_400_000 && series.from == SeriesFixtures.day - 1)
        }
    }

    @Test("Seconds and minutes: the same events in finer buckets (the dashboard's view of a short span of data)", arguments: StoreKind.all)
    func secondsAndMinutes(_ kind: StoreKind) async throws {
        try await Self.withStore(kind, try SeriesFixtures.batches()) { store in
            // The events of the hour's first second: the same 9 as its first 3,599,999 ms hold.
            let seconds = try await store.series(app: "shop", query: try Self.query(.second, from: Self.hour - 1_000, to: Self.hour + 1_000))
            #expect(seconds.points == [Self.point(Self.hour - 1_000, 1, network: (0, nil, nil)), Self.point(Self.hour, 9, web: 1, network: (5, 30, 99))])
            #expect(seconds.bucket == .second && seconds.bucketMilliseconds == 1_000)
            let minutes = try await store.series(app: "shop", query: try Self.query(.minute, from: Self.hour - 60_000, to: Self.hour + 60_000))
            #expect(minutes.points == [Self.point(Self.hour - 60_000, 1, network: (0, nil, nil)), Self.point(Self.hour, 9, web: 1, network: (5, 30, 99))])
            #expect(minutes.bucketMilliseconds == 60_000)
            #expect(seconds.render().contains("\n  2025-06-15T16:00:00Z  9 events"), "\(seconds.render())")
        }
    }

    @Test("Stats give the first and last time of the data kept, events' timestamps and aggregates' starts (the span the dashboard opens on); none for an app without data", arguments: StoreKind.all)
    func eventTimes(_ kind: StoreKind) async throws {
        try await Self.withStore(kind, try SeriesFixtures.batches()) { store in
            let stats = try await store.stats(app: "shop")
            // The first event, at hour - 1; the last aggregate, starting at next + 20 s after the last event.
            #expect(stats.firstEventMilliseconds == Self.hour - 1 && stats.lastEventMilliseconds == Self.next + 20_000)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            let json = String(decoding: try encoder.encode(stats), as: UTF8.self)
            #expect(json.contains(#""first_event_ms":\#(Self.hour - 1)"#) && json.contains(#""last_event_ms":\#(Self.next + 20_000)"#), "\(json)")
            let none = try await store.stats(app: "nobody")
            #expect(none.firstEventMilliseconds == nil && none.lastEventMilliseconds == nil)
            #expect(!String(decoding: try encoder.encode(none), as: UTF8.self).contains("event_ms"))
        }
    }

    @Test("app_version keeps only the events and aggregates of contexts with that version", arguments: StoreKind.all)
    func appVersion(_ kind: StoreKind) async throws {
        try await Self.withStore(kind, try SeriesFixtures.batches()) { store in
            let range = (from: Self.hour - 3_600_000, to: Self.hour + 7_200_000)
            let old = try await store.series(app: "shop", query: try Self.query(from: range.from, to: range.to, version: "2.1.0"))
            #expect(old.appVersion == "2.1.0")
            #expect(Self.same(old.points, [
                Self.point(Self.hour - 3_600_000, 1, network: (0, nil, nil)),
                Self.point(Self.hour, 8, web: 1, network: (4, 20, 40)),
                Self.point(Self.next, 1, network: (1, 7.5, 7.5)),
            ]), "\(old.points)")
            #expect(old.aggregates["perf.frame"]?["ms"]?.map(\.start) == [Self.hour])
            let new = try await store.series(app: "shop", query: try Self.query(from: range.from, to: range.to, version: "3.0.0"))
            #expect(Self.same(new.points, [Self.point(Self.hour, 2, network: (1, 99, 99))]), "\(new.points)")
            #expect(new.aggregates["perf.frame"]?["ms"] == [ReportSeries.MeasurePoint(start: Self.next, count: 1, mean: 4.4, p50: 4.4, p95: 4.4, p99: 4.4)])
            let none = try await store.series(app: "shop", query: try Self.query(from: range.from, to: range.to, version: "9"))
            #expect(none.points.isEmpty && none.aggregates.isEmpty && none.aggregatesOmitted == 0)
        }
    }

    @Test("Aggregates: each bucket's summaries merged, the same figures the report gives for that bucket's range", arguments: StoreKind.all)
    func aggregates(_ kind: StoreKind) async throws {
        try await Self.withStore(kind, try SeriesFixtures.batches()) { store in
            let series = try await store.series(app: "shop", query: try Self.query(from: Self.hour, to: Self.hour + 7_200_000))
            let frames = try #require(series.aggregates["perf.frame"]?["ms"])
            #expect(frames.map(\.start) == [Self.hour, Self.next])
            // The hour: 8.1, 16.7, 33.4, 9.9, 12.5; p50 within 1% of 12.5, p95 and p99 of 16.7 (rank ⌊q (n − 1)⌋).
            #expect(frames[0].count == 5)
            #expect(abs((frames[0].mean ?? 0) - 16.12) < 1e-9)
            #expect(abs((frames[0].p50 ?? 0) - 12.5) <= 0.125 && abs((frames[0].p95 ?? 0) - 16.7) <= 0.167)
            #expect(abs((frames[0].p99 ?? 0) - 16.7) <= 0.167)
            #expect(frames[1] == ReportSeries.MeasurePoint(start: Self.next, count: 1, mean: 4.4, p50: 4.4, p95: 4.4, p99: 4.4))
            // To the last bit what the report merges over the same hour.
            let report = try await store.report(app: "shop", filter: ReportFilter(from: Self.hour, to: Self.next))
            let merged = try #require(report.aggregates["perf.frame"]?.measures["ms"])
            #expect(frames[0] == ReportSeries.MeasurePoint(start: Self.hour, merged))
            #expect(series.aggregatesOmitted == 0)
        }
    }

    @Test("At most 20 names (the most events first), the rest counted; at most 16 measures a name, the first stored", arguments: StoreKind.all)
    func aggregateCaps(_ kind: StoreKind) async throws {
        try await Self.withStore(kind, [try SeriesFixtures.manyNames()]) { store in
            let series = try await store.series(app: "shop", query: try Self.query(from: Self.hour, to: Self.hour + 7_200_000))
            #expect(series.aggregates.keys.sorted() == (0..<20).map { String(format: "name.%02d", $0) })
            #expect(series.aggregatesOmitted == 2)
            let first = try #require(series.aggregates["name.00"])
            // `v` (first stored), then m00 … m14 of the aggregate with 17: 16 in all; `late` came after.
            #expect(first.keys.sorted() == (["v"] + (0..<15).map { String(format: "m%02d", $0) }).sorted())
            #expect(first["m00"]?.map(\.start) == [Self.hour, Self.next])
            #expect(first["m00"]?.map(\.count) == [1, 1])
            #expect(series.aggregates["name.19"]?["v"]?.first?.mean == 19)
        }
    }

    @Test("An app with nothing stored: no points, no aggregates, null app version, in the one shape", arguments: StoreKind.all)
    func empty(_ kind: StoreKind) async throws {
        try await Self.withStore(kind, []) { store in
            let series = try await store.series(app: "nobody", query: try Self.query(from: 0, to: 3_600_000))
            #expect(try SeriesFixtures.json(series) == #"{"aggregates":{},"aggregates_omitted":0,"app":"nobody","app_version":null,"bucket":"hour","bucket_ms":3600000,"from":0,"points":[],"to":3600000}"#)
        }
    }

    @Test("Defaults: to is the end of the bucket holding now, from 168 hours or 90 days before it")
    func defaults() throws {
        let now = Self.hour + 1_234
        let hours = try SeriesQuery(now: now)
        #expect(hours.bucket == .hour && hours.to == Self.next && hours.from == Self.next - 168 * 3_600_000)
        let days = try SeriesQuery(bucket: .day, now: now)
        #expect(days.to == SeriesFixtures.day + 86_400_000 && days.from == days.to - 90 * 86_400_000)
        // On a bucket's first millisecond, that bucket is the last one.
        #expect(try SeriesQuery(now: Self.hour).to == Self.next)
        // from only: to by default; to only: from by default, not before 0.
        #expect(try SeriesQuery(from: Self.hour, now: now).to == Self.next)
        #expect(try SeriesQuery(to: 1_000, now: now).from == 0)
        #expect(try SeriesQuery(from: 0, to: 2_000 * 3_600_000, now: now).bucketCount == 2_000)
    }

    @Test("Refused: a range of 2,001 buckets (naming from), from not before to, negative times, an empty or long app version",
          arguments: [
            (SeriesBucket.hour, Int64?.some(0), Int64?.some(2_000 * 3_600_000 + 1), String?.none, "from"),
            (.day, 0, 2_001 * 86_400_000, nil, "from"),
            (.hour, 5, 5, nil, "to"), (.hour, 10, 5, nil, "to"),
            (.hour, 1_750_010_000_000, nil, nil, "from"),  // after the default to
            (.hour, -1, nil, nil, "from"), (.hour, nil, -1, nil, "to"),
            (.hour, nil, nil, "", "app_version"), (.hour, nil, nil, String(repeating: "v", count: 257), "app_version"),
          ])
    func refused(bucket: SeriesBucket, from: Int64?, to: Int64?, version: String?, parameter: String) {
        #expect(throws: SeriesQuery.Invalid.self) {
            do throws(SeriesQuery.Invalid) { _ = try SeriesQuery(bucket: bucket, from: from, to: to, appVersion: version, now: Self.hour) } catch {
                #expect(error.parameter == parameter, "\(error.message)")
                throw error
            }
        }
    }
}

/// `GET /v1/report/series` and `GET /v1/report/policy` through a real collector on 127.0.0.1, on
/// each store.
@Suite("The report's views over HTTP")
struct SeriesHTTPTests {
    static let keyA = ReadAccessTests.keyA
    static let keyB = ReadAccessTests.keyB

    /// ReadAccessTests' collector (apps a and b, a policy for each), or one with only `policies`
    /// and tokens for a and for a and b: a's batches are the fixtures, b's one point at the
    /// fixtures' hour.
    static func start(_ kind: StoreKind, policies: URL? = nil) async throws -> RunningCollector {
        let collector: RunningCollector
        if let policies {
            var configuration = CollectorConfiguration()
            configuration.keys = AppKeys([keyA: "a", keyB: "b"])
            configuration.readTokens = ReadTokens([ReadAccessTests.readA: .apps(["a"]), ReadAccessTests.readAB: .apps(["a", "b"])])
            configuration.policiesDirectory = policies
            collector = try await kind.startCollector(configuration: configuration)
        } else {
            collector = try await ReadAccessTests.start(kind)
        }
        for batch in try SeriesFixtures.batches() { _ = try await collector.store.store(batch, app: "a", receivedAt: 1_750_000_000_000) }
        let other = try SeriesFixtures.batch(version: "2.1.0", events: [SeriesFixtures.point(at: SeriesFixtures.hour)])
        _ = try await collector.store.store(other, app: "b", receivedAt: 1_750_000_000_000)
        return collector
    }

    static func get(_ collector: some CollectorUnderTest, _ pathAndQuery: String, token: String) async throws -> TransportResponse {
        let url = try #require(URL(string: collector.url.absoluteString + "/" + pathAndQuery))
        return try await DefaultHTTPTransport(timeout: hangLimitSeconds).send(TransportRequest(url: url, method: "GET", headers: ["Authorization": "Bearer \(token)"], body: Data()))
    }

    @Test("The series as the store computes it, byte for byte; each token reads only its apps", arguments: StoreKind.all)
    func series(_ kind: StoreKind) async throws {
        let collector = try await Self.start(kind)
        let range = "from=\(SeriesFixtures.hour - 3_600_000)&to=\(SeriesFixtures.hour + 7_200_000)"
        let response = try await Self.get(collector, "v1/report/series?app=a&bucket=hour&\(range)", token: ReadAccessTests.readA)
        #expect(response.status == 200 && response.header("Content-Type") == "application/json")
        let query = try SeriesQuery(from: SeriesFixtures.hour - 3_600_000, to: SeriesFixtures.hour + 7_200_000, now: 0)
        #expect(String(decoding: response.body, as: UTF8.self) == (try SeriesFixtures.json(try await collector.store.series(app: "a", query: query))))
        let series = try JSONDecoder().decode(ReportSeries.self, from: response.body)
        #expect(series.points.map(\.events) == [1, 10, 1] && series.app == "a")

        // b's token cannot read a; a's cannot read b; b's series holds b's event only.
        for (token, app) in [(ReadAccessTests.readB, "a"), (ReadAccessTests.readA, "b")] {
            let refused = try await Self.get(collector, "v1/report/series?app=\(app)&\(range)", token: token)
            #expect(refused.status == 403, "\(CollectorClient.message(refused.body))")
        }
        let b = try JSONDecoder().decode(ReportSeries.self, from: try await Self.get(collector, "v1/report/series?app=b&\(range)", token: ReadAccessTests.readB).body)
        #expect(b.points.map(\.events) == [1] && b.aggregates.isEmpty)

        // app_version, and an app that stored nothing.
        let version = try JSONDecoder().decode(ReportSeries.self, from: try await Self.get(collector, "v1/report/series?app=a&app_version=3.0.0&\(range)",
                                                                                           token: ReadAccessTests.readA).body)
        #expect(version.points.map(\.events) == [2] && version.appVersion == "3.0.0")
        let empty = try await Self.get(collector, "v1/report/series?app=zzz&bucket=day", token: ReadAccessTests.readAll)
        let object = try #require(try JSONSerialization.jsonObject(with: empty.body) as? [String: Any])
        #expect((object["points"] as? [Any])?.isEmpty == true && object["app_version"] is NSNull && object["bucket"] as? String == "day")
        await collector.stop()
    }

    @Test("Without from and to: the 168 hours up to the end of the current one", arguments: StoreKind.all)
    func defaultRange(_ kind: StoreKind) async throws {
        let collector = try await Self.start(kind)
        let before = Int64(Date().timeIntervalSince1970 * 1000)
        let series = try JSONDecoder().decode(ReportSeries.self, from: try await Self.get(collector, "v1/report/series", token: ReadAccessTests.readA).body)
        let after = Int64(Date().timeIntervalSince1970 * 1000)
        let ends = Set([before, after].map { $0 / 3_600_000 * 3_600_000 + 3_600_000 })
        #expect(ends.contains(series.to) && series.from == series.to - 168 * 3_600_000 && series.bucket == .hour)
        await collector.stop()
    }

    @Test("400 naming the parameter: a bucket that is not second, minute, hour or day, too many buckets, from not before to, bad integers, an empty app version")
    func badRequests() async throws {
        let collector = try await Self.start(.sqlite)
        let cases = [
            ("bucket=week", "bucket"), ("bucket=", "bucket"), ("from=0&to=7200000001", "from"), ("bucket=day&from=0&to=172886400000", "from"),
            ("from=5&to=5", "to"), ("from=10&to=5", "to"), ("from=-1", "from"), ("from=abc", "from"), ("to=1.5", "to"),
            ("app_version=", "app_version"), ("from=99999999999999", "from"),
        ]
        for (query, parameter) in cases {
            let response = try await Self.get(collector, "v1/report/series?\(query)", token: ReadAccessTests.readA)
            let object = try JSONSerialization.jsonObject(with: response.body) as? [String: Any]
            let error = object?["error"] as? [String: Any]
            #expect(response.status == 400 && error?["path"] as? String == parameter,
                    "\(query): \(response.status) \(CollectorClient.message(response.body))")
        }
        // The largest range allowed is answered.
        #expect(try await Self.get(collector, "v1/report/series?from=0&to=7200000000", token: ReadAccessTests.readA).status == 200)
        await collector.stop()
    }

    @Test("The served policy: the ETag GET /v1/policy sends, the file's modification time, the document; each app its own")
    func policy() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nflog-policies-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data(#"{"version":1,"mode":"active"}"#.utf8).write(to: directory.appendingPathComponent("default.json"))
        let collector = try await Self.start(.sqlite, policies: directory)
        let file = directory.appendingPathComponent("a.json")
        let text = #"{"version":1,"mode":"disabled"}"#
        try Data(text.utf8).write(to: file)
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSince1970: 1_750_000_123.5)], ofItemAtPath: file.path)

        let served = try await CollectorClient(collector, key: Self.keyA).send("GET", "v1/policy")
        let response = try await Self.get(collector, "v1/report/policy?app=a", token: ReadAccessTests.readAB)
        #expect(response.status == 200)
        let etag = try #require(served.header("ETag"))
        #expect(String(decoding: response.body, as: UTF8.self) == #"{"app":"a","changed_ms":1750000123500,"etag":\#(etag.debugDescription),"policy":\#(text)}"#)
        // b is served default.json.
        let b = try JSONSerialization.jsonObject(with: try await Self.get(collector, "v1/report/policy?app=b", token: ReadAccessTests.readAB).body) as? [String: Any]
        let servedB = try await CollectorClient(collector, key: Self.keyB).send("GET", "v1/policy")
        #expect((b?["policy"] as? [String: Any])?["mode"] as? String == "active" && b?["etag"] as? String == servedB.header("ETag"))
        #expect(try await Self.get(collector, "v1/report/policy?app=b", token: ReadAccessTests.readA).status == 403)

        // A file that is not a valid policy: 500 naming it, as devices get.
        try Data(#"{"version":1,"mode":"loud"}"#.utf8).write(to: file)
        let broken = try await Self.get(collector, "v1/report/policy?app=a", token: ReadAccessTests.readA)
        #expect(broken.status == 500 && CollectorClient.message(broken.body).contains("a.json"))
        await collector.stop()
    }

    @Test("A collector that serves no policy: every field null")
    func noPolicy() async throws {
        let collector = try await TestCollector.start()
        let response = try await Self.get(collector, "v1/report/policy", token: TestCollector.readToken)
        #expect(response.status == 200)
        #expect(String(decoding: response.body, as: UTF8.self) == #"{"app":"dev","changed_ms":null,"etag":null,"policy":null}"#)
        await collector.stop()
    }
}
