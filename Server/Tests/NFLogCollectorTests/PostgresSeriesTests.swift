import CollectorTestSupport
import Foundation
@testable import NFLogCollector
import Testing

@Suite("PostgreSQL's report over time against SQLite's", .enabled(if: TestDatabase.serverURL != nil, PostgresTests.skipMessage))
struct PostgresSeriesTests {
    @Test("The same series, byte for byte in JSON: hours and days, ranges, app versions, the aggregates' caps, an empty app")
    func sameSeries() async throws {
        let batches = [
            "shop": try SeriesFixtures.batches(), "many": [try SeriesFixtures.manyNames()], "rich": try ReportFixtures.rich(),
        ]
        try await PostgresReportTests.withBoth(batches) { postgres, sqlite in
            let hour = SeriesFixtures.hour
            let queries = [
                try SeriesQuery(from: hour - 3_600_000, to: hour + 7_200_000, now: 0),
                try SeriesQuery(from: hour, to: hour + 3_599_999, now: 0),
                try SeriesQuery(bucket: .day, from: SeriesFixtures.day - 2 * 86_400_000, to: SeriesFixtures.day + 86_400_000, now: 0),
                try SeriesQuery(from: hour - 3_600_000, to: hour + 7_200_000, appVersion: "2.1.0", now: 0),
                try SeriesQuery(bucket: .day, from: SeriesFixtures.day - 2 * 86_400_000, to: SeriesFixtures.day + 86_400_000,
                                appVersion: "3.0.0", now: 0),
                try SeriesQuery(now: hour),
                try SeriesQuery(bucket: .day, now: hour + 86_400_000),
            ]
            for app in ["shop", "many", "rich", "none"] {
                for query in queries {
                    let expected = try SeriesFixtures.json(try await sqlite.series(app: app, query: query))
                    #expect(try SeriesFixtures.json(try await postgres.series(app: app, query: query)) == expected, "app \(app), \(query)")
                }
            }
            // Not vacuous: the fixtures fill points, network percentiles and aggregates.
            let shop = try await postgres.series(app: "shop", query: queries[0])
            #expect(shop.points.count == 3 && shop.aggregates["perf.frame"]?["ms"]?.count == 2)
            let rich = try await postgres.series(app: "rich", query: queries[2])
            #expect(rich.points.first?.network.count ?? 0 > 0 && rich.aggregates.count == 3)
        }
    }
}
