import CollectorTestSupport
import Foundation
import NFLogCollector
@_spi(NFLogShared) import NFLogSupport
import Testing

/// `nflog-collector report --db` with `--app-version` (and `--from`): the real command on a real
/// SQLite file holding two app versions' batches.
@Suite("nflog-collector report --app-version")
struct ReportCommandTests {
    /// Runs the collector's command; returns its exit status, standard output and standard error.
    static func run(_ arguments: [String]) async throws -> (status: Int32, output: String, errors: String) {
        let process = ChildProcess()
        process.executableURL = RetentionCommandTests.executable
        process.arguments = arguments
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // Both pipes read at once, so neither fills while the other is drained.
        async let error = Child.offPool { String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self) }
        let text = await Child.offPool { () -> String in
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return String(decoding: data, as: UTF8.self)
        }
        return (process.terminationStatus, text, await error)
    }

    /// A batch of `version`: one use case run (a transaction) that logged a step and was given
    /// up, and `points` taps, at `at`.
    static func batch(version: String, points: Int, at: Int64) throws -> Batch {
        let session = UUID().uuidString.lowercased()
        let run = UUID()
        let runID = run.uuidString.lowercased()
        let spanID = SpanID(spanUUID: run)?.description ?? ""
        var events = [
            #"{"uuid":"\#(runID)","session":"\#(session)","name":"checkout","kind":"span","type":"usecase","timestamp":\#(at),"start":\#(at),"end":\#(at + 40),"duration_ms":40,"transaction":"\#(runID)","end_parameters":{"completed":false}}"#,
            #"{"uuid":"\#(UUID().uuidString.lowercased())","session":"\#(session)","name":"checkout.pay","kind":"point","type":"step","timestamp":\#(at + 5),"transaction":"\#(runID)","parent_span":"\#(spanID)"}"#,
        ]
        events += (0..<points).map { _ in
            #"{"uuid":"\#(UUID().uuidString.lowercased())","session":"\#(session)","name":"ui.tap","kind":"point","type":"event","timestamp":\#(at)}"#
        }
        return try BatchDecoder().decode(Array("""
            {"version":1,"batch_id":"\(UUID().uuidString.lowercased())","sent_at":\(at + 500),"sdk":{"name":"NFLogger","version":"0.1.0"},
             "context":{"app_id":"a","app_version":"\(version)","os_name":"iOS","os_version":"18","locale":"en",
                        "sessions":[{"id":"\(session)","started_at":\(at),"ended_at":\(at + 1_000)}]},
             "events":[\(events.joined(separator: ","))]}
            """.utf8))
    }

    @Test("--app-version narrows the report to that version's events and says so; an empty or too long one is refused")
    func appVersion() async throws {
        let path = RetentionCommandTests.temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = try SQLiteEventStore(path: path, durableCommits: false)
        _ = try await store.store(try Self.batch(version: "1.0", points: 3, at: 1_750_000_000_000), app: "shop", receivedAt: 1_750_000_001_000)
        _ = try await store.store(try Self.batch(version: "2.0", points: 7, at: 1_750_000_100_000), app: "shop", receivedAt: 1_750_000_101_000)
        await store.close()

        let json = try await Self.run(["report", "--db", path, "--app", "shop", "--app-version", "2.0", "--json"])
        #expect(json.status == 0, "\(json.errors)")
        let report = try JSONDecoder().decode(AnalyticsReport.self, from: Data(json.output.utf8))
        #expect(report.filter == ReportFilter(appVersion: "2.0"))
        #expect(report.eventsStored == 9 && report.eventsByName == ["checkout": 1, "checkout.pay": 1, "ui.tap": 7])
        #expect(report.versions.app == [.init(version: "2.0", events: 9)] && report.batches == 2)
        #expect(report.useCases["checkout"]?.steps == [UseCaseStep(name: "checkout.pay", reached: 1, left: 1)])
        #expect(json.output.contains(#""app_version" : "2.0""#))

        let whole = try JSONDecoder().decode(AnalyticsReport.self, from: Data(try await Self.run(
            ["report", "--db", path, "--app", "shop", "--json"]).output.utf8))
        #expect(whole.eventsStored == 14 && whole.versions.app.map(\.version) == ["2.0", "1.0"] && whole.filter == ReportFilter())

        // Both filters: version 1.0 has nothing after the second batch's time.
        let text = try await Self.run(["report", "--db", path, "--app", "shop", "--app-version", "1.0", "--from", "1750000100000"])
        #expect(text.status == 0)
        #expect(text.output.contains("Collector (app shop): 0 events stored"), "\(text.output)")
        #expect(text.output.contains("\nFilter: from 1750000100000 ms · app version 1.0\n"), "\(text.output)")

        for bad in ["", String(repeating: "v", count: 257)] {
            let refused = try await Self.run(["report", "--db", path, "--app-version", bad])
            #expect(refused.status != 0)
            #expect(refused.errors.contains("--app-version must be 1 to 256 bytes"), "\(refused.errors)")
        }
    }
}
