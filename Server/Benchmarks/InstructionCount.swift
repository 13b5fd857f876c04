import Foundation
import NFLogger

/// Instructions per log call, counted by callgrind: unlike times on this (virtual) machine,
/// instruction counts repeat from run to run, so they show what a change did to the call.
///
/// The benchmark runs `nflog-count-calls` (built beside it) under `valgrind --tool=callgrind`,
/// collecting only inside its `nflog_bench_counted_call` (and what that calls, on the caller's
/// thread): the queue's thread, which writes the events, is not counted. It is a separate
/// program with a synchronous `main`: valgrind 3.19 crashes in `dispatch_main`, where an async
/// `main` such as this one's waits.
enum InstructionCount {
    /// The figure per mode, or `nil` when valgrind or strip is not installed.
    static func measure(calls: Int, modes: [String]) throws -> [String: Double]? {
        try counting { counter in
            var counts: [String: Double] = [:]
            for mode in modes {
                counts[mode] = Double(try counter.count(calls: calls, mode: mode, only: "nflog_bench_counted_call")) / Double(calls)
            }
            return counts
        }
    }

    /// What each event costs the whole process (every thread, start to exit), per `whole-…` mode:
    /// a run of `calls` events minus the same run with none, ÷ `calls`. And the call as apps
    /// write it (`app`: literal parameters and a completion), on the caller's thread.
    static func deviceCost(calls: Int) throws -> [String: Double]? {
        try counting { counter in
            var counts: [String: Double] = [:]
            for mode in ["whole-active", "whole-disabled", "whole-disabled-queued", "whole-harness"] {
                let events = try counter.count(calls: calls, mode: mode, only: nil)
                let none = try counter.count(calls: 0, mode: mode, only: nil)
                counts[mode] = Double(events - none) / Double(calls)
            }
            counts["app"] = Double(try counter.count(calls: calls, mode: "app", only: "nflog_bench_app_call")) / Double(calls)
            return counts
        }
    }

    /// What delivering an event costs the app's whole process: `whole-deliver` (the events of
    /// `whole-active`, then each uploaded to `collector`, a collector in another process, so only
    /// the app's side is counted), each run less the same with none, ÷ `calls`, less `active`
    /// (`whole-active`'s figure).
    static func deliveryCost(calls: Int, collector: URL, key: String, active: Double) throws -> Double? {
        try counting { counter in
            let environment = ["NFLOG_COUNT_COLLECTOR": collector.absoluteString, "NFLOG_COUNT_KEY": key]
            let events = try counter.count(calls: calls, mode: "whole-deliver", only: nil, environment: environment)
            let none = try counter.count(calls: 0, mode: "whole-deliver", only: nil, environment: environment)
            return Double(events - none) / Double(calls) - active
        }
    }

    /// Instructions an idle logger runs over `seconds` (every thread): the run left alone that
    /// long less the same run with 0 seconds.
    static func idle(seconds: Int) throws -> Double? {
        try counting { counter in
            Double(try counter.count(calls: seconds, mode: "idle", only: nil) - counter.count(calls: 0, mode: "idle", only: nil))
        }
    }

    /// What the collector's decoder (parsing and checking a batch) costs an event: `batches`
    /// batches of 1,000 events decoded, less none, ÷ the events.
    static func decodeCost(batches: Int) throws -> Double? {
        try counting { counter in
            let some = try counter.count(calls: batches, mode: "decode", only: nil)
            let none = try counter.count(calls: 0, mode: "decode", only: nil)
            return Double(some - none) / Double(batches * 1_000)
        }
    }

    /// Runs `nflog-count-calls` (built beside this program) under callgrind.
    struct Counter {
        let valgrind: String
        let program: URL
        let directory: URL

        /// Instructions of one run: inside `only` (and what it calls, on that thread), or all.
        func count(calls: Int, mode: String, only symbol: String?, environment: [String: String] = [:]) throws -> Int {
            let output = directory.appendingPathComponent("callgrind.\(mode).\(calls).out")
            var arguments = ["--tool=callgrind", "--callgrind-out-file=\(output.path)"]
            if let symbol { arguments += ["--collect-atstart=no", "--toggle-collect=\(symbol)"] }
            arguments += [program.path, String(calls), mode]
            guard InstructionCount.run(valgrind, arguments, environment: environment) else { throw BenchError("callgrind failed for mode \(mode)") }
            return try InstructionCount.totalInstructions(in: output)
        }
    }

    /// A counter over a stripped copy of `nflog-count-calls`, or `nil` without valgrind or strip.
    private static func counting<T>(_ body: (Counter) throws -> T) throws -> T? {
        guard let valgrind = which("valgrind"), let strip = which("strip") else { return nil }
        let me = (Bundle.main.executableURL ?? URL(fileURLWithPath: "/proc/self/exe"))
            .deletingLastPathComponent().appendingPathComponent("nflog-count-calls")
        let directory = scratchDirectory("callgrind")
        defer { try? FileManager.default.removeItem(at: directory) }
        // Valgrind 3.19 cannot read Swift 6's DWARF 5 debug info; the symbol table is enough.
        let copy = directory.appendingPathComponent("nflog-count-calls")
        try FileManager.default.copyItem(at: me, to: copy)
        guard run(strip, ["--strip-debug", copy.path]) else { throw BenchError("strip --strip-debug failed") }
        return try body(Counter(valgrind: valgrind, program: copy, directory: directory))
    }

    /// The `totals:` (or `summary:`) line of a callgrind output file: instructions executed.
    fileprivate static func totalInstructions(in file: URL) throws -> Int {
        let text = try String(contentsOf: file, encoding: .utf8)
        for line in text.split(separator: "\n") where line.hasPrefix("totals:") || line.hasPrefix("summary:") {
            if let value = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) { return value }
        }
        throw BenchError("no totals in \(file.lastPathComponent)")
    }

    private static func which(_ tool: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(tool)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    fileprivate static func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:]) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, given in given }
        }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationReason == .exit && process.terminationStatus == 0
    }
}

