import Foundation

/// The `analytics` phase: what the analysts' side costs as stores grow. A store is filled with
/// scripts/make-report-db's mix (1,000,000 events; `--quick` 100,000; NFLOG_BENCH_ANALYTICS_EVENTS
/// another size, e.g. 10,000,000), then `nflog-collector report` processes read it: the whole
/// report, a day of it, one app version, and the series by hour over every hour, each the median
/// of three runs, wall time of the process (its start included, about 0.05 s).
///
/// make-report-db writes rows directly, so the new store adds them to its hourly rollups the way
/// a store upgraded from before them does, as `serve` first opens it: that backfill is timed
/// too, then the daily compaction. With a PostgreSQL server (NFLOG_POSTGRES_URL, or a throwaway
/// cluster of scripts/postgres as the postgres phase starts one), the same rows are copied into a
/// PostgreSQL store (scripts/copy-to-postgres) that goes through the same backfill, compaction and
/// reads; each PostgreSQL report must equal the SQLite one byte for byte. With
/// NFLOG_BENCH_BASELINE_COLLECTOR=PATH (an earlier build), stores made and read by that build get
/// the same rows and the same reads, taking turns with this build's, so the two are compared
/// side by side in one run.
enum AnalyticsPhase {
    /// One store the phase reads: a build's, on SQLite or PostgreSQL.
    struct Store {
        let build: String
        let executable: URL?
        /// `--db PATH` or `--postgres URL` (serve), `--store URL` (report).
        let serve: [String]
        let read: [String]
        /// The SQLite file (for a PostgreSQL store, the one its rows came from).
        let sqlite: String
        let postgres: Bool

        /// The report keys' part naming the store: "" (SQLite, as before PostgreSQL was measured) or "postgres_".
        var kind: String { postgres ? "postgres_" : "" }
        var label: String { (build == "baseline" ? "baseline" : "this build") + (postgres ? " on PostgreSQL" : "") }
    }

    static func run(_ report: inout Run.Report, quick: Bool) async throws {
        let events = ProcessInfo.processInfo.environment["NFLOG_BENCH_ANALYTICS_EVENTS"].flatMap(Int.init) ?? (quick ? 100_000 : 1_000_000)
        let baseline = ProcessInfo.processInfo.environment["NFLOG_BENCH_BASELINE_COLLECTOR"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
        note("analytics: report and series over \(events) stored events\(baseline == nil ? "" : ", beside \(baseline?.lastPathComponent ?? "")")…")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nflog-bench-analytics-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        var builds: [(name: String, executable: URL?)] = [("current", nil)]
        if let baseline { builds.append(("baseline", baseline)) }
        var stores: [Store] = []
        for build in builds {
            let path = directory.appendingPathComponent("\(build.name).sqlite").path
            // An empty store of that build's schema, then the rows.
            try CollectorChild.start(["--db", path], executable: build.executable).stop()
            try execute(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "scripts/make-report-db", path, String(events)])
            stores.append(Store(build: build.name, executable: build.executable, serve: ["--db", path], read: ["--db", path], sqlite: path,
                                postgres: false))
        }
        var cluster: Cluster?
        switch Cluster.start() {
        case .success(let started): cluster = started
        case .failure(let reason): report.lines.append(padded("analytics on PostgreSQL:") + "skipped: \(reason.description)")
        }
        // Stopped (a throwaway cluster removed) however the phase ends; the databases are dropped
        // at its end (on NFLOG_POSTGRES_URL's server, a failed run leaves its nflog_bench_ ones).
        defer { cluster?.stop() }
        var databases: [String] = []
        if let cluster {
            for build in builds {
                let url = try await cluster.freshDatabase()
                databases.append(url)
                // An empty database of that build's schema, then the same rows as its SQLite store.
                try CollectorChild.start(["--postgres", url], executable: build.executable).stop()
                let source = stores.first { $0.build == build.name }?.sqlite ?? ""
                try execute(URL(fileURLWithPath: "/usr/bin/env"), ["python3", "scripts/copy-to-postgres", source, url])
                stores.append(Store(build: build.name, executable: build.executable, serve: ["--postgres", url], read: ["--store", url],
                                    sqlite: source, postgres: true))
            }
        }

        // Each store with rollups (this build's, and a baseline's from after them) adds the rows
        // to them as serve opens it; a baseline from before them has nothing to add.
        // Then a store with daily rollups compacts its past days (make-report-db's are all past).
        var backfills: [String: Double] = [:]
        var compactions: [String: Double] = [:]
        for store in stores {
            guard try hasRollups(store.sqlite) else { continue }
            let start = ContinuousClock.now
            let serving = try CollectorChild.start(store.serve, executable: store.executable)
            func waitFor(_ line: String) async throws {
                while !serving.logContains(line) {
                    guard serving.isRunning else { throw BenchError("the collector stopped before its log said: \(line)") }
                    try await Task.sleep(for: .milliseconds(20))
                }
            }
            try await waitFor("the hourly rollups hold every stored event")
            backfills[store.label] = seconds(ContinuousClock.now - start)
            if try hasDailyRollups(store) {
                let compacting = ContinuousClock.now
                try await waitFor("the daily rollups hold every day before today")
                compactions[store.label] = seconds(ContinuousClock.now - compacting)
            }
            serving.stop()
        }
        for store in stores {
            let prefix = (store.build == "baseline" ? "baseline_" : "") + "analytics_" + store.kind
            if let backfill = backfills[store.label] {
                report.add(prefix + "backfill_s", backfill, places: 2)
                if store.build == "current" { report.add(prefix + "backfill_events_per_s", Double(events) / backfill) }
            }
            if let compaction = compactions[store.label] { report.add(prefix + "compaction_s", compaction, places: 2) }
        }

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
                for store in round % 2 == 0 ? stores : stores.reversed() {
                    // The first round keeps each answer: this build's PostgreSQL one must be its SQLite one.
                    let output = round == 0 ? directory.appendingPathComponent("\(item.key)-\(store.build)-\(store.kind).json") : nil
                    let began = ContinuousClock.now
                    try execute(store.executable ?? current, ["report"] + store.read + ["--app", "shop", "--json"] + item.arguments,
                                output: output)
                    times[store.label, default: []].append(seconds(ContinuousClock.now - began))
                }
            }
            if stores.contains(where: { $0.postgres }) {
                let answers = try ["", "postgres_"].map { try Data(contentsOf: directory.appendingPathComponent("\(item.key)-current-\($0).json")) }
                guard answers[0] == answers[1] else { throw BenchError("\(item.label): PostgreSQL's report differs from SQLite's") }
            }
            func median(_ label: String) -> Double { let sorted = (times[label] ?? [0]).sorted(); return sorted[sorted.count / 2] }
            for store in stores where store.build == "current" {
                let now = median(store.label)
                report.add("analytics_\(store.kind)\(item.key)_s", now, places: 3)
                var line = padded("\(item.label)\(store.postgres ? ", PostgreSQL" : ""):") + String(format: "%.3f s", now)
                if let old = stores.first(where: { $0.build == "baseline" && $0.postgres == store.postgres }).map({ median($0.label) }) {
                    report.add("baseline_analytics_\(store.kind)\(item.key)_s", old, places: 3)
                    report.add("analytics_\(store.kind)\(item.key)_to_baseline_ratio", now / old, places: 3)
                    line += String(format: " · baseline %.3f s (×%.2f)", old, now / old)
                }
                report.lines.append(line + " (\(events) events; median of 3)")
            }
        }
        for store in stores where store.build == "current" {
            let backfill = backfills[store.label] ?? 0
            let old = stores.first { $0.build == "baseline" && $0.postgres == store.postgres }.flatMap { backfills[$0.label] }
            report.lines.append(padded("rollup backfill\(store.postgres ? ", PostgreSQL" : ""):")
                                + String(format: "%.2f s for %d events (%.0f events/s), as an upgraded store's first serve", backfill, events,
                                         Double(events) / backfill)
                                + (old.map { String(format: " · baseline %.2f s", $0) } ?? ""))
            if let compaction = compactions[store.label] {
                let old = stores.first { $0.build == "baseline" && $0.postgres == store.postgres }.flatMap { compactions[$0.label] }
                report.lines.append(padded("daily compaction\(store.postgres ? ", PostgreSQL" : ""):")
                                    + String(format: "%.2f s, every past day, after the backfill", compaction)
                                    + (old.map { String(format: " · baseline %.2f s", $0) } ?? ""))
            }
        }
        for url in databases { try? await cluster?.dropDatabase(url) }
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// Whether the store at `path` has hourly rollups (a build from before them made it otherwise).
    private static func hasRollups(_ path: String) throws -> Bool { try hasTable("rollup_backfill", path) }

    /// Whether `store` has daily rollups (a build from before them made it otherwise; one made
    /// them on SQLite before PostgreSQL).
    private static func hasDailyRollups(_ store: Store) throws -> Bool {
        guard store.postgres, let url = store.serve.last else { return try hasTable("rollup_compaction", store.sqlite) }
        return try printed(["psql", "-X", "-At", url, "-c", "SELECT to_regclass('rollup_compaction') IS NOT NULL"]) == "t"
    }

    private static func hasTable(_ table: String, _ path: String) throws -> Bool {
        try printed(["python3", "-c", "import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute(\"SELECT count(*) FROM sqlite_master WHERE name = ?\", (sys.argv[2],)).fetchone()[0])", path, table]) == "1"
    }

    /// What `command` (found on PATH) prints, trimmed.
    private static func printed(_ command: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = command
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Runs a process to its end, its output written to `output` or discarded; throws unless it exits 0.
    private static func execute(_ executable: URL, _ arguments: [String], output: URL? = nil) throws {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        if let output {
            _ = FileManager.default.createFile(atPath: output.path, contents: nil)
            process.standardOutput = try FileHandle(forWritingTo: output)
        } else {
            process.standardOutput = FileHandle.nullDevice
        }
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
