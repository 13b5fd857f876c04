import ArgumentParser
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import NFLogger

/// `nflog-bench [--quick]`: the figures, measured side by side in one run, human lines first
/// and a JSON object with every figure on the last line.
@main
struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nflog-bench",
        abstract: "Benchmark the NFLogger SDK and collector (build with -c release; scripts/bench does).",
        subcommands: [Run.self, OfflineChild.self],
        defaultSubcommand: Run.self)
}

/// `nflog-bench run`: every phase (or those `--only` names), in this order.
struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "run", abstract: "Run the benchmark.")

    @Flag(help: "A smoke variant of a few seconds (smaller counts), for CI.")
    var quick = false

    @Option(help: "Run only these phases, for profiling one (comma-separated: \(Phase.allCases.map(\.rawValue).joined(separator: ", "))).",
            transform: { text in
                try text.split(separator: ",").map { name in
                    guard let phase = Phase(rawValue: String(name)) else { throw ValidationError("unknown phase '\(name)'") }
                    return phase
                }
            })
    var only: [Phase] = Phase.allCases

    /// The phases, named as `--only` takes them.
    enum Phase: String, CaseIterable {
        case logCall = "log-call", deviceCost = "device-cost", durable, e2e, faults, collector, memory, aggregate, instrumentation, outputs, postgres, analytics
    }

    func run() async throws {
        #if DEBUG
        note("warning: this is a debug build; the figures mean little (scripts/bench builds with -c release)")
        #endif
        var report = Report()
        // Each phase starts with the disk's write-back done (sync), so one phase's writes do not
        // slow the next one down.
        if only.contains(.logCall) { sync(); try await logCall(&report) }
        if only.contains(.deviceCost) { sync(); try await deviceCost(&report) }
        if only.contains(.durable) { sync(); try await durable(&report) }
        if only.contains(.e2e) { sync(); try await endToEnd(&report) }
        if only.contains(.faults) { sync(); try await faults(&report) }
        if only.contains(.collector) { sync(); try await collector(&report) }
        if only.contains(.memory) { sync(); try memory(&report) }
        if only.contains(.aggregate) { sync(); try await aggregate(&report) }
        if only.contains(.instrumentation) { sync(); try await instrumentation(&report) }
        if only.contains(.outputs) { sync(); try await outputs(&report) }
        // PostgresPhase.swift: its own throwaway cluster (scripts/postgres), skipped without one.
        if only.contains(.postgres) { sync(); try await PostgresPhase.run(&report, quick: quick) }
        // AnalyticsPhase.swift: report and series over a store of make-report-db's mix.
        if only.contains(.analytics) { sync(); try await AnalyticsPhase.run(&report, quick: quick) }
        report.figures["machine_cpus"] = Double(ProcessInfo.processInfo.activeProcessorCount)
        report.figures["quick"] = quick ? 1 : 0
        print(report.lines.joined(separator: "\n"))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        print(String(decoding: try encoder.encode(report.figures), as: UTF8.self))
    }

    /// Human lines for the terminal and the figures for the JSON line.
    struct Report {
        var figures: [String: Double] = [:]
        var lines: [String] = []

        mutating func add(_ key: String, _ value: Double, places: Int = 0) {
            let scale = pow(10, Double(places))
            figures[key] = (value * scale).rounded() / scale
        }
    }

    private func logCall(_ report: inout Report) async throws {
        let calls = quick ? 20_000 : 100_000
        note("1/10 the log call (\(calls) calls each)…")
        let cases = [
            Phases.LogCallCase(key: "active", label: "active", mode: .active, completion: false),
            Phases.LogCallCase(key: "active_completion", label: "active with completion", mode: .active, completion: true),
            Phases.LogCallCase(key: "disabled", label: "disabled", mode: .disabled, completion: false),
        ]
        let results = try await Phases.logCall(cases, calls: calls)
        let overhead = Phases.timerOverhead(samples: calls)
        report.add("log_call_timer_overhead_ns", Double(overhead))
        for (item, result) in zip(cases, results) {
            report.add("log_call_\(item.key)_median_ns", Double(result.median))
            report.add("log_call_\(item.key)_p99_ns", Double(result.p99))
            report.lines.append(padded("log call, \(item.label):") + "median \(result.median) ns · p99 \(result.p99) ns")
        }
        report.lines.append(padded("  (included in each: the timer)") + "median \(overhead) ns")
        note("   and its instructions, counted by callgrind…")
        if let counts = try InstructionCount.measure(calls: quick ? 2_000 : 10_000, modes: ["active", "disabled"]) {
            let active = counts["active"] ?? 0, disabled = counts["disabled"] ?? 0
            report.add("log_call_instructions", active)
            report.add("log_call_disabled_instructions", disabled)
            report.lines.append(padded("log call, instructions:") + "active \(Int(active)) · disabled \(Int(disabled)) (callgrind, caller's thread)")
        } else {
            report.lines.append(padded("log call, instructions:") + "not counted (valgrind or strip is not installed)")
        }
    }

    /// What an event costs the app's whole process, all threads (callgrind): logged as apps
    /// write it, committed, nothing uploaded. `disabled_beyond_harness` is Disabled mode less the
    /// same loop with the call replaced by one that runs the completion at once;
    /// `disabled_queued_beyond_harness` the same with the completion queue held through the loop
    /// (one hop for all: the figure repeats, where an idle completion thread's wakes follow the
    /// scheduler). Then what
    /// delivering it to a collector (this process's, on 127.0.0.1) adds to the app's process.
    private func deviceCost(_ report: inout Report) async throws {
        let calls = quick ? 2_000 : 20_000
        note("   device cost: whole-process instructions per event (callgrind, \(calls) events)…")
        guard let counts = try InstructionCount.deviceCost(calls: calls) else {
            report.lines.append(padded("device cost:") + "not counted (valgrind or strip is not installed)")
            return
        }
        let active = counts["whole-active"] ?? 0, disabled = counts["whole-disabled"] ?? 0
        let harness = counts["whole-harness"] ?? 0, app = counts["app"] ?? 0
        let disabledQueued = counts["whole-disabled-queued"] ?? 0
        report.add("device_cost_instructions_per_event", active)
        report.add("device_cost_disabled_instructions_per_event", disabled)
        report.add("device_cost_harness_instructions_per_event", harness)
        report.add("device_cost_disabled_beyond_harness", disabled - harness)
        report.add("device_cost_disabled_queued_beyond_harness", disabledQueued - harness)
        report.add("device_cost_app_call_instructions", app)
        report.lines.append(padded("device cost, whole process:") + "\(Int(active)) instructions/event committed · disabled \(Int(disabled)) (the app's own loop: \(Int(harness)), so disabled costs \(Int(disabled - harness)) more; \(Int(disabledQueued - harness)) more with the completion queue busy through the loop)")
        report.lines.append(padded("log call as apps write it:") + "\(Int(app)) instructions on the caller's thread (literal parameters, a completion)")
        note("   device cost: delivery, whole-process instructions per event (callgrind, \(calls) events)…")
        if let delivery = try await Phases.deliveryCost(calls: calls, active: active) {
            report.add("device_cost_delivery_instructions_per_event", delivery)
            report.lines.append(padded("delivery, whole process:") + "\(Int(delivery)) instructions/event more to upload it (read, JSON, gzip, HTTP, marked delivered)")
        }
        // Past the storage's 60 s pass and two upload intervals: any timer left armed shows.
        let seconds = quick ? 2 : 65
        note("   device cost: an idle logger left alone \(seconds) s (callgrind)…")
        if let idle = try InstructionCount.idle(seconds: seconds) {
            report.add("device_cost_idle_instructions", idle)
            report.add("device_cost_idle_seconds", Double(seconds))
            report.lines.append(padded("idle logger:") + "\(Int(idle)) instructions in \(seconds) s (nothing stored, an upload URL set)")
        }
    }

    private func durable(_ report: inout Report) async throws {
        let events = quick ? 100_000 : 1_000_000
        note("2/10 durable throughput and 3/10 the raw SQLite baseline (\(events) each)…")
        let durable = try await Phases.durable(events: events)
        sync()
        let baseline = try Phases.sqliteBaseline(rows: events)
        report.add("durable_events_per_s", durable)
        report.add("sqlite_baseline_rows_per_s", baseline)
        guard durable.isFinite, baseline.isFinite, baseline > 0 else { throw BenchError("durable \(durable), baseline \(baseline): no time measured") }
        report.add("durable_to_baseline_ratio", durable / baseline, places: 3)
        report.lines.append(padded("durable throughput:") + "\(Int(durable)) events/s (log call → SQLite commit, \(events) events)")
        report.lines.append(padded("raw SQLite baseline:") + "\(Int(baseline)) rows/s (WAL, synchronous=NORMAL, 1,000 rows per transaction)")
        report.lines.append(padded("durable ÷ baseline:") + String(format: "%.2f", durable / baseline))
    }

    private func endToEnd(_ report: inout Report) async throws {
        note("4/10 end to end…")
        for events in quick ? [20_000] : [100_000, 1_000_000] {
            // The shorter run is the noisier: its median of five is reported (and its range).
            // While URLSession is still a transport on Linux, the shorter run is measured with it
            // too, the two taking turns (A B, then B A) so that neither always goes first and a
            // slow spell of the machine falls on both.
            let runs = events <= 100_000 && !quick ? 5 : 1
            let transports: [Phases.Transport] = events <= 100_000 ? Phases.Transport.allCases : [.standard]
            var results: [Phases.Transport: [Phases.EndToEnd]] = [:]
            for round in 0..<runs {
                for transport in round % 2 == 0 ? transports : transports.reversed() {
                    results[transport, default: []].append(try await Phases.endToEnd(events: events, transport: transport))
                    sync()
                }
            }
            let key = events >= 1_000_000 ? "e2e_\(events / 1_000_000)m" : "e2e_\(events / 1_000)k"
            var medians: [Phases.Transport: Double] = [:]
            for transport in transports {
                let sorted = (results[transport] ?? []).sorted { $0.seconds < $1.seconds }
                guard !sorted.isEmpty else { continue }
                let result = sorted[sorted.count / 2]
                medians[transport] = result.seconds
                let prefix = transport == .standard ? key : "\(key)_\(transport.rawValue)"
                report.add("\(prefix)_seconds", result.seconds, places: 3)
                report.add("\(prefix)_events_per_s", result.eventsPerSecond)
                var line = padded("end to end, \(events) events\(transport == .standard ? "" : " (URLSession)"):")
                    + String(format: "%.3f s · %.0f events/s", result.seconds, result.eventsPerSecond)
                if transport == .standard {
                    report.add("\(key)_wire_bytes_per_event", result.wireBytesPerEvent, places: 1)
                    report.add("\(key)_compression_ratio", result.compressionRatio, places: 2)
                    line += String(format: " · %.1f bytes on the wire per event · gzip ratio %.1f", result.wireBytesPerEvent, result.compressionRatio)
                }
                if runs > 1, let fastest = sorted.first, let slowest = sorted.last {
                    report.add("\(prefix)_seconds_min", fastest.seconds, places: 3)
                    report.add("\(prefix)_seconds_max", slowest.seconds, places: 3)
                    line += String(format: " (median of %d runs: %.3f–%.3f s)", runs, fastest.seconds, slowest.seconds)
                }
                report.lines.append(line)
            }
            if events == (quick ? 20_000 : 1_000_000), let standard = medians[.standard] {
                // The same rows inserted raw, in the same run: the end-to-end time as a multiple of
                // it carries over between machines. The docs' machine inserted 1,000,000 in 1.04 s
                // (961,000 rows/s), so the target of 3 s there is 2.88 of it.
                sync()
                let baseline = Double(events) / (try Phases.sqliteBaseline(rows: events))
                report.add("\(key)_sqlite_baseline_seconds", baseline, places: 3)
                report.add("\(key)_to_sqlite_baseline_time_ratio", standard / baseline, places: 2)
                report.lines.append(padded("  ÷ raw SQLite baseline, time:") + String(format: "%.2f (the same %d rows inserted raw: %.3f s; 3 s on the docs' machine is 2.88)", standard / baseline, events, baseline))
            }
            if let standard = medians[.standard], let urlSession = medians[.urlSession], urlSession > 0 {
                report.add("\(key)_default_to_urlsession_ratio", standard / urlSession, places: 3)
                report.lines.append(padded("  default ÷ URLSession transport:") + String(format: "%.2f (time; below 1 is faster)", standard / urlSession))
            }
        }
    }

    private func outputs(_ report: inout Report) async throws {
        let durableEvents = quick ? 20_000 : 200_000
        let deliveredEvents = quick ? 10_000 : 100_000
        let rounds = quick ? 1 : 3
        note("10/10 outputs: the collector alone and with a second durable output, taking turns (\(rounds) rounds)…")
        var durable: [Bool: [Double]] = [:], delivered: [Bool: [Double]] = [:]
        for round in 0..<rounds {
            for second in round % 2 == 0 ? [false, true] : [true, false] {
                durable[second, default: []].append(try await Phases.durableWithOutputs(events: durableEvents, second: second))
                sync()
                delivered[second, default: []].append(try await Phases.endToEndWithOutputs(events: deliveredEvents, second: second))
                sync()
            }
        }
        func median(_ values: [Double]?) -> Double {
            let sorted = (values ?? []).sorted()
            return sorted.isEmpty ? .nan : sorted[sorted.count / 2]
        }
        let (oneRate, twoRate) = (median(durable[false]), median(durable[true]))
        let (oneTime, twoTime) = (median(delivered[false]), median(delivered[true]))
        report.add("outputs_durable_one_events_per_s", oneRate)
        report.add("outputs_durable_two_events_per_s", twoRate)
        report.add("outputs_durable_two_to_one_ratio", twoRate / oneRate, places: 3)
        report.add("outputs_e2e_one_seconds", oneTime, places: 3)
        report.add("outputs_e2e_two_seconds", twoTime, places: 3)
        report.add("outputs_e2e_two_to_one_ratio", twoTime / oneTime, places: 3)
        report.lines.append(padded("outputs, durable (\(durableEvents)):") + String(format: "collector alone %.0f events/s · with a second durable output %.0f events/s (%.2f×)", oneRate, twoRate, twoRate / oneRate))
        report.lines.append(padded("outputs, end to end (\(deliveredEvents)):") + String(format: "one collector %.3f s · two collectors %.3f s (%.2f× the time; medians of %d)", oneTime, twoTime, twoTime / oneTime, rounds))
    }

    private func faults(_ report: inout Report) async throws {
        let events = quick ? 20_000 : 100_000
        note("5/10 faults: \(events) events through a proxy faulting 30% of uploads, and without it (the SDK in a child process)…")
        let result = try await Phases.faults(events: events)
        let key = "faults_\(events / 1_000)k"
        report.add("\(key)_seconds", result.faulty.seconds, places: 3)
        report.add("\(key)_cpu_seconds", result.faulty.cpu, places: 3)
        report.add("\(key)_clean_seconds", result.clean.seconds, places: 3)
        report.add("\(key)_clean_cpu_seconds", result.clean.cpu, places: 3)
        report.add("\(key)_time_ratio", result.faulty.seconds / result.clean.seconds, places: 2)
        report.add("\(key)_cpu_ratio", result.faulty.cpu / result.clean.cpu, places: 2)
        report.add("\(key)_requests", Double(result.proxy.requests))
        report.add("\(key)_faults_injected", Double(result.proxy.faults.values.reduce(0, +)))
        report.add("\(key)_retry_after_seconds", result.mandatedWait, places: 1)
        report.add("\(key)_early_requests", Double(result.proxy.earlyRequests))
        // The Retry-After seconds are the collector's to set, not the SDK's to spend faster.
        let lessRetryAfter = (result.faulty.seconds - result.mandatedWait) / result.clean.seconds
        report.add("\(key)_time_ratio_less_retry_after", lessRetryAfter, places: 2)
        report.lines.append(padded("faults, \(events) events, 30%:") + String(format: "%.3f s · %.3f CPU-s (clean: %.3f s · %.3f CPU-s) → %.2f× the time, %.2f× the CPU",
            result.faulty.seconds, result.faulty.cpu, result.clean.seconds, result.clean.cpu,
            result.faulty.seconds / result.clean.seconds, result.faulty.cpu / result.clean.cpu))
        report.lines.append(padded("  the proxy:") + "\(result.proxy.requests) requests, \(result.proxy.faults.values.reduce(0, +)) faults (\(result.proxy.faults.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))), "
            + String(format: "%.0f s of Retry-After given, %d requests before one ended; without those seconds, %.2f× the time",
                     result.mandatedWait, result.proxy.earlyRequests, lessRetryAfter))
    }

    private func collector(_ report: inout Report) async throws {
        let events = quick ? 20_000 : 200_000
        note("6/10 the collector (\(events) events, 4 clients)…")
        // As `nflog-collector serve` stores (each acknowledged batch fsynced), and without the
        // fsync (as before issue 13), taking turns; then durable with the SDK's batches of 1,000.
        var durable: [Double] = [], fast: [Double] = []
        for _ in 0..<(quick ? 1 : 3) {
            durable.append(try await Phases.collectorIngest(events: events, durableCommits: true))
            sync()
            fast.append(try await Phases.collectorIngest(events: events, durableCommits: false))
            sync()
        }
        let ingest = median(durable), unsynced = median(fast)
        let thousands = try await Phases.collectorIngest(events: events, batchSize: 1_000, durableCommits: true)
        report.add("collector_ingest_events_per_s", ingest)
        report.add("collector_ingest_unsynced_events_per_s", unsynced)
        report.add("collector_ingest_durable_to_unsynced_ratio", ingest / unsynced, places: 3)
        report.add("collector_ingest_batches_of_1000_events_per_s", thousands)
        report.lines.append(padded("collector ingest:") + "\(Int(ingest)) events/s (4 clients, gzip batches of 500, each commit fsynced; median of \(durable.count))")
        report.lines.append(padded("  without the fsync:") + "\(Int(unsynced)) events/s → durable ÷ unsynced " + String(format: "%.2f", ingest / unsynced))
        report.lines.append(padded("  batches of 1,000, fsynced:") + "\(Int(thousands)) events/s")
        if let decode = try InstructionCount.decodeCost(batches: quick ? 2 : 20) {
            report.add("collector_decode_instructions_per_event", decode)
            report.lines.append(padded("  decoding a batch:") + "\(Int(decode)) instructions per event (callgrind: parsed and checked, batches of 1,000)")
        }
    }

    private func memory(_ report: inout Report) throws {
        let events = quick ? 100_000 : 1_000_000
        note("7/10 memory, \(events) events offline (in a child process)…")
        let offline = try OfflineChild.spawn(events: events)
        report.add("offline_peak_rss_mb", offline.peakRSS, places: 1)
        report.add("offline_start_rss_mb", offline.startRSS, places: 1)
        report.add("database_bytes_per_event", offline.bytesPerEvent, places: 1)
        report.lines.append(padded("offline, \(events) events:") + String(format: "peak RSS %.1f MB (%.1f MB before the SDK started) · %.1f database bytes per event",
            offline.peakRSS, offline.startRSS, offline.bytesPerEvent))
    }

    private func aggregate(_ report: inout Report) async throws {
        let events = quick ? 20_000 : 100_000
        note("8/10 aggregation: \(events) perf.frame events with and without the aggregate rule, side by side…")
        let (plain, aggregated) = try await Phases.aggregate(events: events)
        for (key, side) in [("plain", plain), ("aggregated", aggregated)] {
            let sorted = side.callTimes.sorted()
            report.add("aggregate_\(key)_log_call_median_ns", Double(percentile(50, sorted)))
            report.add("aggregate_\(key)_log_call_p99_ns", Double(percentile(99, sorted)))
            report.add("aggregate_\(key)_rows", Double(side.rows))
            report.add("aggregate_\(key)_wire_bytes", Double(side.wireBytes))
            report.add("aggregate_\(key)_cpu_us_per_event", side.cpuSeconds / Double(events) * 1e6, places: 2)
            report.lines.append(padded("aggregation, \(key):") + "\(side.rows) rows · \(side.wireBytes) bytes on the wire in \(side.requests) requests · "
                + String(format: "%.2f µs CPU per event · log call median %d ns, p99 %d ns", side.cpuSeconds / Double(events) * 1e6,
                         percentile(50, sorted), percentile(99, sorted)))
        }
        let bytesRatio = Double(plain.wireBytes) / Double(max(1, aggregated.wireBytes))
        let callRatio = Double(percentile(50, aggregated.callTimes.sorted())) / Double(max(1, percentile(50, plain.callTimes.sorted())))
        let cpuRatio = aggregated.cpuSeconds / max(1e-9, plain.cpuSeconds)
        report.add("aggregate_wire_bytes_ratio", bytesRatio, places: 1)
        report.add("aggregate_log_call_ratio", callRatio, places: 3)
        report.add("aggregate_cpu_ratio", cpuRatio, places: 3)
        report.lines.append(padded("  plain ÷ aggregated wire bytes:") + String(format: "%.0f× fewer bytes; log call aggregated ÷ plain %.2f; CPU %.2f", bytesRatio, callRatio, cpuRatio))
    }

    private func instrumentation(_ report: inout Report) async throws {
        let calls = quick ? 10_000 : 50_000
        note("9/10 the automatic sources on the caller's thread (\(calls) calls each)…")
        let results = try await Phases.instrumentation(calls: calls)
        for result in results {
            report.add("instrumentation_\(result.key)_median_ns", Double(result.median))
            report.lines.append(padded("\(result.label):") + "median \(result.median) ns")
        }
    }

    /// The middle value (the upper middle of an even count).
    private func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }
}

/// The memory phase runs in a child process, so its peak RSS is its own.
struct OfflineChild: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "offline-child", abstract: "(internal) log events with the collector unreachable.", shouldDisplay: false)

    @Option var events: Int

    func run() async throws {
        let startRSS = currentRSSMegabytes()  // the process before the SDK: runtime, Foundation, linked libraries
        let directory = scratchDirectory("offline")
        defer { try? FileManager.default.removeItem(at: directory) }
        var configuration = Phases.configuration(directory, pending: 20_000)
        configuration.uploadURL = URL(string: "http://127.0.0.1:\(try closedPort())/v1/events")
        configuration.appKey = "dev-key"
        configuration.upload.maxBackoff = 1
        let logger = try NFLogger(configuration: configuration)
        _ = await Phases.produce(logger, events: events)
        let diagnostics = await logger.diagnostics()
        await logger.close()
        let path = directory.appendingPathComponent("events.sqlite").path
        let bytes = fileSize(path) + fileSize(path + "-wal")
        print(#"{"peak_rss_mb":\#(peakRSSMegabytes()),"start_rss_mb":\#(startRSS),"bytes":\#(bytes),"stored":\#(diagnostics.storedPointEvents)}"#)
    }

    /// A port on 127.0.0.1 that refuses connections: bound to find a free one, then closed.
    private func closedPort() throws -> Int {
        #if canImport(Glibc)
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let socket = Darwin.socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard socket >= 0 else { throw BenchError("socket() failed: errno \(errno)") }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { address in
                bind(socket, address, length) == 0 && getsockname(socket, address, &length) == 0
            }
        }
        guard bound else { throw BenchError("could not bind a port on 127.0.0.1: errno \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Runs the child, which must log every event: peak RSS, RSS before the SDK, bytes per event.
    static func spawn(events: Int) throws -> (peakRSS: Double, startRSS: Double, bytesPerEvent: Double) {
        let (succeeded, printed) = try runChild(nil, ["offline-child", "--events", String(events)])
        guard succeeded else { throw BenchError("the offline child failed; it printed: \(printed)") }
        guard let object = (try? JSONSerialization.jsonObject(with: Data(printed.utf8))) as? [String: Any],
              let peak = object["peak_rss_mb"] as? Double, let startRSS = object["start_rss_mb"] as? Double,
              let bytes = object["bytes"] as? Int, let stored = object["stored"] as? Int else {
            throw BenchError("the offline child printed: \(printed)")
        }
        guard stored == events else { throw BenchError("the offline child stored \(stored) of \(events) events") }
        return (peak, startRSS, Double(bytes) / Double(stored))
    }
}
