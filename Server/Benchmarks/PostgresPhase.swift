import Foundation
#if canImport(Glibc)
import Glibc
#endif
@_spi(NFLogShared) import NFLogSupport
import NFLogger
import PostgresNIO

/// The `postgres` phase: events/s ingested by 1, 2 and 4 `nflog-collector serve --postgres URL`
/// processes sharing one PostgreSQL, side by side with `nflog-collector serve --db FILE` in the
/// same run, 4 clients sending gzip batches of 1,000; the CPU each store costs per event (the
/// collectors' processes, and PostgreSQL's), and how often a PostgreSQL session was seen waiting
/// on a lock (`pg_stat_activity`, sampled every 10 ms).
///
/// The collectors are child processes (the `nflog-collector` executable built beside this one),
/// the SQLite one too: that is how they run in production (one process per collector, each with
/// its own event loops and connection pool, behind a load balancer), and all three pay the same
/// process and loopback costs, so the ratio compares the stores and nothing else. Each
/// measurement starts on an empty store (a new database; a new file). While each runs, the CPU
/// time of the collectors, of this process (the clients) and of the whole machine is sampled, so
/// what is left over is PostgreSQL's share (and anything else running).
enum PostgresPhase {
    static func run(_ report: inout Run.Report, quick: Bool) async throws {
        let events = quick ? 10_000 : 200_000
        let rounds = quick ? 1 : 3
        note("postgres: 1, 2 and 4 collectors over PostgreSQL, and the SQLite collector (\(events) events, 4 clients, gzip batches of 1,000, \(rounds) round\(rounds == 1 ? "" : "s"))…")
        let cluster: Cluster
        switch Cluster.start() {
        case .success(let started): cluster = started
        case .failure(let reason):
            report.lines.append(padded("postgres phase:") + "skipped: \(reason.description)")
            note("postgres: skipped: \(reason.description)")
            return
        }
        defer { cluster.stop() }
        let batches = try (0..<(events / 1_000)).map { try Phases.makeBatch(events: 1_000, batchNumber: $0, mixed: true) }
        enum Setup: CaseIterable { case sqlite, postgres1, postgres2, postgres4, baselineSQLite, baseline1, baseline4 }
        // Another build of nflog-collector (an earlier release, say) measured in the same rounds,
        // 1 and 4 collectors over PostgreSQL: a change to the store compared side by side.
        let baseline = ProcessInfo.processInfo.environment["NFLOG_BENCH_BASELINE_COLLECTOR"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
        let setups = Setup.allCases.filter { baseline != nil || ![.baselineSQLite, .baseline1, .baseline4].contains($0) }
        var results: [Setup: [Ingest]] = [:]
        for round in 0..<rounds {
            // Taking turns, so that neither always goes first.
            for setup in round % 2 == 0 ? setups : setups.reversed() {
                sync()
                switch setup {
                case .sqlite, .baselineSQLite:
                    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nflog-bench-pg-\(UUID().uuidString)")
                    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                    defer { try? FileManager.default.removeItem(at: directory) }
                    results[setup, default: []].append(try await ingest(batches, collectors: 1,
                        store: ["--db", directory.appendingPathComponent("collector.sqlite").path],
                        executable: setup == .baselineSQLite ? baseline : nil))
                case .postgres1, .postgres2, .postgres4, .baseline1, .baseline4:
                    let url = try await cluster.freshDatabase()
                    let result: Ingest
                    let collectors = [Setup.postgres1: 1, .postgres2: 2, .baseline1: 1][setup] ?? 4
                    do {
                        result = try await ingest(batches, collectors: collectors, store: ["--postgres", url, "--pool-size", "8"],
                                                  watching: url, executable: setup == .baseline1 || setup == .baseline4 ? baseline : nil)
                    } catch {
                        try? await cluster.dropDatabase(url)
                        throw error
                    }
                    try? await cluster.dropDatabase(url)
                    results[setup, default: []].append(result)
                }
            }
        }
        func median(_ setup: Setup) -> Ingest {
            let sorted = (results[setup] ?? []).sorted { $0.eventsPerSecond < $1.eventsPerSecond }
            return sorted[sorted.count / 2]
        }
        let sqlite = median(.sqlite), one = median(.postgres1), two = median(.postgres2), four = median(.postgres4)
        report.add("postgres_1_collector_events_per_s", one.eventsPerSecond)
        report.add("postgres_2_collectors_events_per_s", two.eventsPerSecond)
        report.add("sqlite_collector_events_per_s_same_run", sqlite.eventsPerSecond)
        report.add("postgres_1_to_sqlite_ratio", one.eventsPerSecond / sqlite.eventsPerSecond, places: 3)
        report.add("postgres_2_to_sqlite_ratio", two.eventsPerSecond / sqlite.eventsPerSecond, places: 3)
        report.add("postgres_2_to_1_ratio", two.eventsPerSecond / one.eventsPerSecond, places: 3)
        report.add("postgres_4_collectors_events_per_s", four.eventsPerSecond)
        report.add("postgres_4_to_1_ratio", four.eventsPerSecond / one.eventsPerSecond, places: 3)
        // CPU per event of the store's side: the collectors' processes, plus PostgreSQL's.
        report.add("sqlite_store_cpu_us_per_event", sqlite.storeMicrosecondsPerEvent, places: 2)
        report.add("postgres_1_store_cpu_us_per_event", one.storeMicrosecondsPerEvent, places: 2)
        report.add("postgres_1_to_sqlite_cpu_per_event_ratio", one.storeMicrosecondsPerEvent / sqlite.storeMicrosecondsPerEvent, places: 3)
        func locks(_ setup: Setup) -> LockWatch.Seen { (results[setup] ?? []).reduce(LockWatch.Seen()) { $0.adding($1.locks) } }
        let seen = locks(.postgres4)
        report.add("postgres_4_collectors_lock_waits_sampled", Double(seen.waits), places: 0)
        report.add("postgres_4_collectors_advisory_waits_sampled", Double(seen.advisory), places: 0)
        report.add("postgres_4_collectors_activity_samples", Double(seen.samples), places: 0)
        let of = rounds > 1 ? "; median of \(rounds)" : ""
        report.lines.append(padded("postgres, 1 collector:") + "\(Int(one.eventsPerSecond)) events/s (4 clients, gzip batches of 1,000, \(events) events\(of)) · \(one.cpu)")
        report.lines.append(padded("postgres, 2 collectors:") + "\(Int(two.eventsPerSecond)) events/s · \(two.cpu)")
        report.lines.append(padded("postgres, 4 collectors:") + "\(Int(four.eventsPerSecond)) events/s · \(four.cpu)")
        report.lines.append(padded("  lock waits, 4 collectors:") + "\(seen.waits) sessions seen waiting on a lock (and \(seen.advisory) on an advisory lock) in \(seen.samples) samples of pg_stat_activity"
            + (seen.queries.isEmpty ? "" : ": \(seen.queries.sorted().joined(separator: " | "))"))
        if let baseline, results[.baseline1] != nil {
            let old1 = median(.baseline1), old4 = median(.baseline4), oldSQLite = median(.baselineSQLite)
            report.add("baseline_sqlite_store_cpu_us_per_event", oldSQLite.storeMicrosecondsPerEvent, places: 2)
            report.add("sqlite_cpu_per_event_to_baseline_ratio", sqlite.storeMicrosecondsPerEvent / oldSQLite.storeMicrosecondsPerEvent, places: 3)
            report.add("postgres_1_cpu_per_event_to_baseline_ratio", one.storeMicrosecondsPerEvent / old1.storeMicrosecondsPerEvent, places: 3)
            report.lines.append(padded("baseline sqlite:") + "\(Int(oldSQLite.eventsPerSecond)) events/s, "
                + String(format: "%.1f µs of store CPU per event (this build ÷ baseline: sqlite ×%.3f, postgres ×%.3f)",
                          oldSQLite.storeMicrosecondsPerEvent, sqlite.storeMicrosecondsPerEvent / oldSQLite.storeMicrosecondsPerEvent,
                          one.storeMicrosecondsPerEvent / old1.storeMicrosecondsPerEvent))
            let old = locks(.baseline4)
            report.add("baseline_postgres_1_collector_events_per_s", old1.eventsPerSecond)
            report.add("baseline_postgres_4_collectors_events_per_s", old4.eventsPerSecond)
            report.add("baseline_postgres_1_store_cpu_us_per_event", old1.storeMicrosecondsPerEvent, places: 2)
            report.add("baseline_postgres_4_collectors_lock_waits_sampled", Double(old.waits), places: 0)
            report.lines.append(padded("baseline (\(baseline.lastPathComponent)):") + "1 collector \(Int(old1.eventsPerSecond)) events/s, "
                + String(format: "%.1f µs of store CPU per event", old1.storeMicrosecondsPerEvent)
                + " · 4 collectors \(Int(old4.eventsPerSecond)) events/s, \(old.waits) lock waits in \(old.samples) samples")
            if !old.queries.isEmpty { report.lines.append(padded("  baseline waited on:") + old.queries.sorted().joined(separator: " | ")) }
        }
        report.lines.append(padded("  store CPU per event:") + String(format: "sqlite %.1f µs · postgres %.1f µs (collector and PostgreSQL processes; ×%.2f)",
            sqlite.storeMicrosecondsPerEvent, one.storeMicrosecondsPerEvent, one.storeMicrosecondsPerEvent / sqlite.storeMicrosecondsPerEvent))
        report.lines.append(padded("sqlite collector, same run:") + "\(Int(sqlite.eventsPerSecond)) events/s · \(sqlite.cpu)")
        report.lines.append(padded("  postgres ÷ sqlite:") + String(format: "1 collector %.2f · 2 collectors %.2f · 2 ÷ 1 collector %.2f",
            one.eventsPerSecond / sqlite.eventsPerSecond, two.eventsPerSecond / sqlite.eventsPerSecond, two.eventsPerSecond / one.eventsPerSecond))
    }

    /// One measurement: its rate, and where the machine's CPU went meanwhile.
    struct Ingest {
        let eventsPerSecond: Double
        let cpu: String
        /// CPU µs per event stored of the collectors' processes and PostgreSQL's.
        let storeMicrosecondsPerEvent: Double
        /// What the look at pg_stat_activity saw meanwhile (nothing for SQLite).
        var locks = LockWatch.Seen()
    }

    /// Starts `collectors` child processes with the `store` arguments, has 4 clients send every
    /// batch once (client c to collector c mod n, as a load balancer keeping connections would),
    /// and checks that every event was stored.
    static func ingest(_ batches: [Data], collectors count: Int, store: [String], watching database: String? = nil,
                       executable: URL? = nil) async throws -> Ingest {
        var children: [CollectorChild] = []
        defer { for child in children { child.stop() } }
        for _ in 0..<count { children.append(try CollectorChild.start(store, executable: executable)) }
        let urls = children.map(\.url)
        let clients = 4
        let before = CPUSample(children)
        let start = ContinuousClock.now
        let watcher = database.map { url in Task { try await LockWatch.watch(url) } }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for client in 0..<clients {
                let url = urls[client % urls.count].appendingPathComponent("v1/events")
                group.addTask {
                    let transport = URLSessionTransport()
                    for index in stride(from: client, to: batches.count, by: clients) {
                        let response = try await transport.send(TransportRequest(url: url, method: "POST",
                            headers: [WireProtocol.appKeyHeader: WireProtocol.developmentKey, "Content-Encoding": "gzip",
                                      "Content-Type": "application/json"], body: batches[index]))
                        guard response.status == 200 else {
                            throw BenchError("collector answered \(response.status): \(String(decoding: response.body, as: UTF8.self))")
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        let elapsed = seconds(ContinuousClock.now - start)
        let after = CPUSample(children)
        watcher?.cancel()
        let watch = try await watcher?.value
        let stored = try await storedEvents(urls[urls.count - 1])
        guard stored == batches.count * 1_000 else { throw BenchError("\(stored) of \(batches.count * 1_000) events stored") }
        let storeSeconds = (after.collectors - before.collectors) + (after.postgres - before.postgres)
        var result = Ingest(eventsPerSecond: Double(stored) / elapsed, cpu: after.since(before),
                            storeMicrosecondsPerEvent: storeSeconds * 1e6 / Double(stored))
        if let watch { result.locks = watch }
        return result
    }

    /// events_stored of app dev, through GET /v1/stats with the development read token.
    static func storedEvents(_ base: URL) async throws -> Int {
        guard let url = URL(string: base.appendingPathComponent("v1/stats").absoluteString + "?app=dev") else { throw BenchError("no stats URL") }
        let response = try await DefaultHTTPTransport().send(TransportRequest(url: url, method: "GET",
            headers: ["Authorization": "Bearer \(WireProtocol.developmentReadToken)"], body: Data()))
        guard response.status == 200, let object = try JSONSerialization.jsonObject(with: response.body) as? [String: Any],
              let stored = object["events_stored"] as? Int else {
            throw BenchError("stats: \(response.status) \(String(decoding: response.body, as: UTF8.self))")
        }
        return stored
    }
}

/// A PostgreSQL server for the phase: NFLOG_POSTGRES_URL's, or a throwaway cluster of
/// `scripts/postgres` (stopped and removed at the end).
struct Cluster: Sendable {
    let url: String
    let directory: String?

    struct Unavailable: Error, CustomStringConvertible { let description: String }

    static func start() -> Result<Cluster, Unavailable> {
        if let url = ProcessInfo.processInfo.environment["NFLOG_POSTGRES_URL"], !url.isEmpty {
            return .success(Cluster(url: url, directory: nil))
        }
        guard FileManager.default.isExecutableFile(atPath: FileManager.default.currentDirectoryPath + "/scripts/postgres") else {
            return .failure(Unavailable(description: "no scripts/postgres here (run from the repository, as scripts/bench does) and NFLOG_POSTGRES_URL is not set"))
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("nflog-bench-cluster-\(UUID().uuidString)").path
        let started: (status: Int32, output: String, errors: String)
        do { started = try script(["start", directory]) } catch {
            return .failure(Unavailable(description: "scripts/postgres did not run: \(error)"))
        }
        let cluster = Cluster(url: started.output.split(separator: "\n").last.map(String.init) ?? "", directory: directory)
        guard started.status == 0, cluster.url.hasPrefix("postgres://") else {
            cluster.stop()
            let reason = started.errors.split(separator: "\n").last.map(String.init) ?? "exit \(started.status)"
            return .failure(Unavailable(description: "PostgreSQL is not available: \(reason)"))
        }
        return .success(cluster)
    }

    func stop() {
        guard let directory else { return }
        _ = try? Self.script(["stop", directory])
    }

    /// Runs scripts/postgres to its end: its exit status and what it printed. Not through
    /// `Process.waitUntilExit()`: the script's own children (pg_ctl, runuser, the server it
    /// leaves running) left Foundation's exit monitor waiting forever on an exited script here
    /// (a zombie never reaped), so the script is reaped with waitpid directly.
    private static func script(_ arguments: [String]) throws -> (status: Int32, output: String, errors: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("scripts/postgres")
        process.arguments = arguments
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // The output files are written by the script alone (the server logs to its own file),
        // so they end when it does.
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let complaint = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        var status: Int32 = 0
        let deadline = ContinuousClock.now + .seconds(120)
        while ContinuousClock.now < deadline {
            let reaped = waitpid(process.processIdentifier, &status, WNOHANG)
            if reaped == process.processIdentifier { return ((status >> 8) & 0xFF, printed, complaint) }
            // Foundation's monitor reaped it first: its status is there.
            if reaped < 0 { return (process.isRunning ? -1 : process.terminationStatus, printed, complaint) }
            usleep(10_000)
        }
        throw BenchError("scripts/postgres \(arguments.joined(separator: " ")) did not exit within 120 s")
    }

    /// A new, empty database on the server; its URL.
    func freshDatabase() async throws -> String {
        let name = "nflog_bench_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        try await admin("CREATE DATABASE \(name)")
        guard var components = URLComponents(string: url) else { throw BenchError("not a URL: \(url)") }
        components.path = "/" + name
        guard let fresh = components.string else { throw BenchError("no URL for \(name)") }
        return fresh
    }

    func dropDatabase(_ databaseURL: String) async throws {
        guard let name = URLComponents(string: databaseURL)?.path.dropFirst(), name.hasPrefix("nflog_bench_") else { return }
        try await admin("DROP DATABASE \(name) WITH (FORCE)")
    }

    /// One statement on the server's own database (trust or PGPASSWORD authentication, no TLS).
    private func admin(_ sql: String) async throws {
        guard let components = URLComponents(string: url) else { throw BenchError("not a URL: \(url)") }
        let database = String(components.path.dropFirst())
        let client = PostgresClient(configuration: PostgresClient.Configuration(
            host: components.host ?? "127.0.0.1", port: components.port ?? 5432, username: components.user ?? "postgres",
            password: components.password ?? ProcessInfo.processInfo.environment["PGPASSWORD"],
            database: database.isEmpty ? "postgres" : database, tls: .disable))
        let runner = Task { await client.run() }
        defer { runner.cancel() }
        try await client.query(PostgresQuery(unsafeSQL: sql))
    }
}

/// `nflog-collector serve --port 0 --rate-limit 0 …` as a child process (development mode).
final class CollectorChild {
    let process: Process
    let url: URL
    private let log: URL

    private init(process: Process, url: URL, log: URL) {
        self.process = process
        self.url = url
        self.log = log
    }

    /// Starts `executable`, by default the `nflog-collector` built beside this benchmark.
    static func start(_ store: [String], executable: URL? = nil) throws -> CollectorChild {
        let me = Bundle.main.executableURL ?? URL(fileURLWithPath: "/proc/self/exe")
        let log = FileManager.default.temporaryDirectory.appendingPathComponent("nflog-bench-collector-\(UUID().uuidString).log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let process = Process()
        process.executableURL = executable ?? me.deletingLastPathComponent().appendingPathComponent("nflog-collector")
        process.arguments = ["serve", "--port", "0", "--rate-limit", "0"] + store
        let output = Pipe()
        process.standardOutput = output
        process.standardError = try FileHandle(forWritingTo: log)
        try process.run()
        var line: [UInt8] = []
        while let byte = try? output.fileHandleForReading.read(upToCount: 1), let character = byte.first, character != 10 {
            line.append(character)
        }
        let first = String(decoding: line, as: UTF8.self)
        guard first.hasPrefix("listening on "), let url = URL(string: String(first.dropFirst("listening on ".count))) else {
            if process.isRunning { process.terminate() }
            process.waitUntilExit()
            let stderr = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            try? FileManager.default.removeItem(at: log)
            throw BenchError("nflog-collector \(process.arguments?.joined(separator: " ") ?? "") did not start (built beside nflog-bench? scripts/bench builds it): \(stderr.suffix(500))")
        }
        return CollectorChild(process: process, url: url, log: log)
    }

    var isRunning: Bool { process.isRunning }

    /// Whether the collector's log (its standard error) holds `text` yet.
    func logContains(_ text: String) -> Bool {
        ((try? String(contentsOf: log, encoding: .utf8)) ?? "").contains(text)
    }

    /// User and system CPU seconds used so far (/proc/PID/stat).
    var cpuSeconds: Double { CPUSample.processSeconds("/proc/\(process.processIdentifier)/stat") }

    func stop() {
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(at: log)
    }
}

/// CPU seconds of the machine (busy, all cores), of the collectors and of this process, at one
/// instant: two samples tell where the CPU went between them.
struct CPUSample {
    let machineBusy: Double
    let machineTotal: Double
    let collectors: Double
    let clients: Double
    /// Every `postgres` process's (the server's backends and workers).
    let postgres: Double

    init(_ children: [CollectorChild]) {
        let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
        let line = (try? String(contentsOfFile: "/proc/stat", encoding: .utf8))?.split(separator: "\n").first ?? ""
        // cpu user nice system idle iowait irq softirq steal …
        let fields = line.split(separator: " ").dropFirst().compactMap { Double($0) }
        let idle = fields.count > 4 ? fields[3] + fields[4] : 0
        machineTotal = fields.prefix(8).reduce(0, +) / ticks
        machineBusy = machineTotal - idle / ticks
        collectors = children.reduce(0) { $0 + $1.cpuSeconds }
        clients = Self.processSeconds("/proc/self/stat")
        postgres = Self.postgresSeconds()
    }

    /// The CPU seconds of the processes named `postgres`, from /proc.
    static func postgresSeconds() -> Double {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        var total = 0.0
        for pid in entries where pid.allSatisfy(\.isNumber) {
            guard let name = try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8),
                  name.trimmingCharacters(in: .whitespacesAndNewlines) == "postgres" else { continue }
            total += processSeconds("/proc/\(pid)/stat")
        }
        return total
    }

    static func processSeconds(_ path: String) -> Double {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8), let close = text.lastIndex(of: ")") else { return 0 }
        // After "pid (comm) ": state is field 3, utime 14 and stime 15.
        let fields = text[text.index(after: close)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// "CPU of all cores: collectors 41% · clients 18% · PostgreSQL 27% · the rest 3% · idle 11%".
    func since(_ before: CPUSample) -> String {
        let total = machineTotal - before.machineTotal
        guard total > 0 else { return "CPU not sampled" }
        let collectors = self.collectors - before.collectors, clients = self.clients - before.clients
        let busy = machineBusy - before.machineBusy
        let postgres = self.postgres - before.postgres
        let rest = max(busy - collectors - clients - postgres, 0)
        func share(_ value: Double) -> String { String(format: "%.0f%%", 100 * value / total) }
        return "CPU of all cores: collectors \(share(collectors)) · clients \(share(clients)) · PostgreSQL \(share(postgres)) · the rest \(share(rest)) · idle \(share(max(total - busy, 0)))"
    }
}

/// Looks at `pg_stat_activity` every 10 ms until cancelled: how many sessions of the database
/// were waiting on a lock (`wait_event_type = 'Lock'`: a tuple, a transaction id, a relation;
/// advisory locks counted apart), and what they ran. A batch waiting on another's row lock shows
/// here as a wait on its transaction id.
enum LockWatch {
    struct Seen: Sendable {
        /// Waits on anything but an advisory lock: rows, tuples, transaction ids, relations.
        var waits = 0
        var advisory = 0
        var samples = 0
        /// What the waiting sessions ran (wait event: the query's first 80 characters), once each.
        var queries: [String] = []

        /// The two looks' counts together.
        func adding(_ other: Seen) -> Seen {
            Seen(waits: waits + other.waits, advisory: advisory + other.advisory, samples: samples + other.samples,
                 queries: queries + other.queries.filter { !queries.contains($0) })
        }
    }

    static func watch(_ url: String) async throws -> Seen {
        guard let components = URLComponents(string: url) else { throw BenchError("not a URL: \(url)") }
        let client = PostgresClient(configuration: PostgresClient.Configuration(
            host: components.host ?? "127.0.0.1", port: components.port ?? 5432, username: components.user ?? "postgres",
            password: components.password ?? ProcessInfo.processInfo.environment["PGPASSWORD"],
            database: String(components.path.dropFirst()), tls: .disable))
        let runner = Task { await client.run() }
        defer { runner.cancel() }
        var seen = Seen()
        while !Task.isCancelled {
            do {
                for try await (event, query) in try await client.query("""
                    SELECT wait_event, left(query, 80) FROM pg_stat_activity
                    WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()
                    """).decode((String, String).self) {
                    // An advisory lock is waited for on purpose: the migration's, and the day
                    // partition's, which every collector takes for its first batch of a new day.
                    if event == "advisory" { seen.advisory += 1 } else { seen.waits += 1 }
                    let described = "\(event): \(query)"
                    if !seen.queries.contains(described) { seen.queries.append(described) }
                }
                seen.samples += 1
                try await Task.sleep(for: .milliseconds(10))
            } catch {
                if Task.isCancelled { break }
                throw error
            }
        }
        return seen
    }
}
