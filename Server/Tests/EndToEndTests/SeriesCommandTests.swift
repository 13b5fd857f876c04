import Foundation
import NFLogCollector
import Testing
@_spi(NFLogShared) import NFLogSupport

/// `nflog-collector report --series hour|day` on a SQLite file: the store's series, as JSON or a
/// line per bucket, and refusals before anything is read.
@Suite("nflog-collector report --series")
struct SeriesCommandTests {
    static let hour: Int64 = 1_750_003_200_000  // 2025-06-15T16:00Z

    /// A store at `path` with, in app `shop`, three points in the hour before `hour`, two in it
    /// (one from web content) and a 12.5 ms round trip in it.
    static func fill(_ path: String) async throws {
        let session = UUID().uuidString.lowercased()
        func point(_ time: Int64, web: Bool = false) -> String {
            let source = web ? #","source":"web""# : ""
            return #"{"uuid":"\#(UUID().uuidString.lowercased())","session":"\#(session)","name":"ui.tap","kind":"point","type":"event","timestamp":\#(time)\#(source)}"#
        }
        let roundTrip = #"{"uuid":"\#(UUID().uuidString.lowercased())","session":"\#(session)","name":"net.request","kind":"span","type":"network","timestamp":\#(hour + 9),"start":\#(hour + 9),"end":\#(hour + 21),"duration_ms":12.5}"#
        let events = [point(hour - 3), point(hour - 2), point(hour - 1), point(hour), point(hour + 5, web: true), roundTrip]
        let batch = try BatchDecoder().decode(Array("""
            {"version":1,"batch_id":"\(UUID().uuidString.lowercased())","sent_at":1750000000500,"sdk":{"name":"NFLogger","version":"0.1.0"},
             "context":{"app_id":"a","app_version":"1","os_name":"iOS","os_version":"18","locale":"en",
                        "sessions":[{"id":"\(session)","started_at":1749999990000}]},
             "events":[\(events.joined(separator: ","))]}
            """.utf8))
        let store = try SQLiteEventStore(path: path, durableCommits: false)
        _ = try await store.store(batch, app: "shop", receivedAt: 1_750_000_000_000)
        await store.close()
    }

    @Test("--json prints the store's series; the text form a line per bucket with events")
    func prints() async throws {
        let path = RetentionCommandTests.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        try await Self.fill(path)
        let range = ["--from", String(Self.hour - 3_600_000), "--to", String(Self.hour + 3_600_000)]
        let json = try await StoreCommandTests.run(["report", "--db", path, "--app", "shop", "--series", "hour", "--json"] + range)
        #expect(json.status == 0)
        let series = try JSONDecoder().decode(ReportSeries.self, from: Data(json.output.utf8))
        let store = try SQLiteEventStore(path: path, durableCommits: false)
        let expected = try await store.series(app: "shop", query: try SeriesQuery(from: Self.hour - 3_600_000, to: Self.hour + 3_600_000, now: 0))
        await store.close()
        #expect(series == expected)
        #expect(series.points.map(\.events) == [3, 3] && series.points.map(\.webEvents) == [0, 1])

        let text = try await StoreCommandTests.run(["report", "--db", path, "--app", "shop", "--series", "hour"] + range)
        #expect(text.status == 0)
        #expect(text.output.contains("Series (app shop): hours from 2025-06-15T15:00Z to 2025-06-15T17:00Z (UTC, the end excluded)"), "\(text.output)")
        #expect(text.output.contains("  2025-06-15T15:00Z  3 events · 0 web · network p50 — · p95 — (n=0)"), "\(text.output)")
        // 12.5 ms within 1% (hours come from the rollups' buckets).
        #expect(text.output.contains("  2025-06-15T16:00Z  3 events · 1 web · network p50 12.6 ms · p95 12.6 ms (n=1)"), "\(text.output)")

        // --app-version: the batch's version "1" keeps every event; another keeps none.
        let sameVersion = try await StoreCommandTests.run(["report", "--db", path, "--app", "shop", "--series", "hour", "--json",
                                                           "--app-version", "1"] + range)
        let kept = try JSONDecoder().decode(ReportSeries.self, from: Data(sameVersion.output.utf8))
        #expect(kept.appVersion == "1" && kept.points.map(\.events) == [3, 3])
        let otherVersion = try await StoreCommandTests.run(["report", "--db", path, "--app", "shop", "--series", "hour", "--json",
                                                            "--app-version", "2"] + range)
        let none = try JSONDecoder().decode(ReportSeries.self, from: Data(otherVersion.output.utf8))
        #expect(none.appVersion == "2" && none.points.isEmpty)

        // Every app when none is named: a JSON array.
        let all = try await StoreCommandTests.run(["report", "--db", path, "--series", "day", "--json"] + range)
        #expect(try JSONDecoder().decode([ReportSeries].self, from: Data(all.output.utf8)).map(\.app) == ["shop"])
    }

    @Test("Refused before reading: a bucket that is not second, minute, hour or day, an empty range, too many buckets, --dimension",
          arguments: [["--series", "week"], ["--series", "hour", "--from", "5", "--to", "5"],
                      ["--series", "hour", "--from", "0", "--to", "7200000001"], ["--series", "day", "--dimension", "a=b"]])
    func refused(arguments: [String]) async throws {
        let path = RetentionCommandTests.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        try await Self.fill(path)
        #expect(try await StoreCommandTests.run(["report", "--db", path] + arguments).status != 0, "\(arguments)")
        // The same database with a valid range is read: the refusal is the arguments'.
        #expect(try await StoreCommandTests.run(["report", "--db", path, "--series", "hour", "--from", "0", "--to", "7200000000"]).status == 0)
    }
}
