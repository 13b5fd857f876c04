import Foundation

/// The `analytics` phase: what the analysts' side costs as stores grow. A store is filled with
/// scripts/make-report-db's mix (1,000,000 events; `--quick` 100,000; NFLOG_BENCH_ANALYTICS_EVENTS
/// another size, e.g. 10,000,000), then `nflog-collector report` processes read it: the whole
/// report, a day of it, one app version, and the series by hour over every hour, each the median
/// of three runs, wall time of the process (its start included, about 0.05 s).
///
/// make-report-db writes rows directly, so the new store adds them to its hourly rollups the way
/// a store upgraded from before them does, as `serve` first opens it: that backfill is timed
/// too (and a baseline's, when it has rollups). With NFLOG_BENCH_BASELINE_COLLECTOR=PATH (an earlier build), a second store made and read
/// by that build gets the same rows and the same reads, taking turns with this build's, so the
/// two are compared side by side in one run.
enum AnalyticsPhase {
    static func run(_ report: inout Run.Report, quick: Bool) async throws {
        let events = ProcessInfo.processInfo.environment["NFLOG_BENCH_ANALYTICS_EVENTS"].flatMap(Int.init) ?? (quick ? 100_000 : 1_000_000)
        let baseline = ProcessInfo.processInfo.environment["NFLOG_BENCH_BASELINE_COLLECTOR"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
        note("analytics: report and series over \(events) stored events\(baseline == nil ? "" : ", beside \(baseline?.lastPathComponent ?? "")")…")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nflog-bench-analytics-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        var builds: [(name: String, executable: URL?)] = [("this build", nil)]
        if let baseline { builds.append(("baseline", baseline)) }
        var paths: [String: String] = [:]
        for build in builds {
            let path = directory.appendingPathComponent("\(build.name == "baseline" ? "baseline" : "current").sqlite").path
            paths[build.name] = path
            // An empty store of that build's schema, then the rows.
            try CollectorChild.start(["--db", path], executable: build.executable).stop()
            try execute(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "scripts/make-report-db", path, String(events)])
        }
        // Each store with rollups (this build's, and a baseline's from after them) adds the rows
        // to them as serve opens it; a baseline from before them has nothing to add.
        // Then a store with daily rollups compacts its past days (make-report-db's are all past).
        var backfills: [String: Double] = [:]
        var compactions: [String: Double] = [:]
        for build in builds {
            let path = paths[build.name] ?? ""
            guard try hasRollups(path) else { continue }
            let start = ContinuousClock.now
            let serving = try CollectorChild.start(["--db", path], executable: build.executable)
            func waitFor(_ line: String) async throws {
                while !serving.logContains(line) {
                    guard serving.isRunning else { throw BenchError("the collector stopped before its log said: \(line)") }
                    try await Task.sleep(for: .milliseconds(20))
                }
            }
            try await waitFor("the hourly rollups hold every stored event")
            backfills[build.name] = seconds(ContinuousClock.now - start)
            if try hasDailyRollups(path) {
                let compacting = ContinuousClock.now
                try await waitFor("the daily rollups hold every day before today")
                compactions[build.name] = seconds(ContinuousClock.now - compacting)
            }
            serving.stop()
        }
        if let compaction = compactions["this build"] { report.add("analytics_compaction_s", compaction, places: 2) }
        if let old = compactions["baseline"] { report.add("baseline_analytics_compaction_s", old, places: 2) }
        let backfill = backfills["this build"] ?? 0
        report.add("analytics_backfill_s", backfill, places: 2)
        report.add("analytics_backfill_events_per_s", Double(events) / backfill)
        if let old = backfills["baseline"] { report.add("baseline_analytics_backfill_s", old, places: 2) }

        // make-report-db's events are 100 ms apart from 2025-06-15 15:06:40 UTC.
        let first: Int64 = 1_750_000_000_000, last = first + Int64(events) * 100
        let cases: [(key: String, label: String, arguments: [String])] = [
            ("report", "report, everything", []),
            ("report_day", "report, one day", ["--from", String(first + 3_600_000), "--to", String(first + 25 * 3_600_000)]),
            ("report_version", "report, one app version", ["--app-version", "2.0.3"]),
            ("series_hour", "series by hour, every hour", ["--series", "hour", "--from", String(first / 3_600_000 * 3_600_000),
                                                           "--to", String((last / 3_600_000 + 1) * 3_600_000)]),
        ]
        let me = Bundle.main.executableURL ?? URL(fileURLWithPath: "/proc/self/exe")
        let current = me.deletingLastPathComponent().appendingPathComponent("nflog-collector")
        for item in cases {
            var times: [String: [Double]] = [:]
            for round in 0..<3 {
                for build in round % 2 == 0 ? builds : builds.reversed() {
                    let began = ContinuousClock.now
                    try execute(build.executable ?? current, ["report", "--db", paths[build.name] ?? "", "--app", "shop", "--json"] + item.arguments)
                    times[build.name, default: []].append(seconds(ContinuousClock.now - began))
                }
            }
            func median(_ name: String) -> Double { let sorted = (times[name] ?? [0]).sorted(); return sorted[sorted.count / 2] }
            let now = median("this build")
            report.add("analytics_\(item.key)_s", now, places: 3)
            var line = padded("\(item.label):") + String(format: "%.3f s", now)
            if baseline != nil {
                let old = median("baseline")
                report.add("baseline_analytics_\(item.key)_s", old, places: 3)
                report.add("analytics_\(item.key)_to_baseline_ratio", now / old, places: 3)
                line += String(format: " · baseline %.3f s (×%.2f)", old, now / old)
            }
            report.lines.append(line + " (\(events) events; median of 3)")
        }
        report.lines.append(padded("rollup backfill:") + String(format: "%.2f s for %d events (%.0f events/s), as an upgraded store's first serve", backfill, events, Double(events) / backfill)
                            + (backfills["baseline"].map { String(format: " · baseline %.2f s", $0) } ?? ""))
        if let compaction = compactions["this build"] {
            report.lines.append(padded("daily compaction:") + String(format: "%.2f s, every past day, after the backfill", compaction)
                                + (compactions["baseline"].map { String(format: " · baseline %.2f s", $0) } ?? ""))
        }
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// Whether the store at `path` has hourly rollups (a build from before them made it otherwise).
    private static func hasRollups(_ path: String) throws -> Bool { try hasTable("rollup_backfill", path) }

    /// Whether the store at `path` has daily rollups.
    private static func hasDailyRollups(_ path: String) throws -> Bool { try hasTable("rollup_compaction", path) }

    private static func hasTable(_ table: String, _ path: String) throws -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute(\"SELECT count(*) FROM sqlite_master WHERE name = ?\", (sys.argv[2],)).fetchone()[0])", path, table]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return text.trimmingCharacters(in: .whitespacesAndNewlines) == "1"
    }

    /// Runs a process to its end, its output discarded; throws unless it exits 0.
    private static func execute(_ executable: URL, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let complaint = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw BenchError("\(executable.lastPathComponent) \(arguments.joined(separator: " ")) exited \(process.terminationStatus): \(complaint.suffix(500))")
        }
    }
}
