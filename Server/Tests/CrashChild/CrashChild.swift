import ArgumentParser
import Foundation
import NFLogger
#if canImport(Glibc)
import Glibc
#endif

/// A child process for the durability and network-fault tests and the benchmark's `faults` phase:
/// it logs, uploads, gets killed, fills a disk, and measures its own CPU time while it delivers.
/// Not part of the product; the end-to-end tests and `nflog-bench` spawn it.
@main
struct CrashChild: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nflog-crash-child",
        subcommands: [Log.self, Fold.self, Flush.self, Fill.self, Offline.self, Deliver.self])

    static func main() async {
        // Dies with the process that started it: a test run stopped or timed out must not leave
        // children logging flat out beside whatever runs next. (prctl's PR_SET_PDEATHSIG is a C
        // variadic, which Swift cannot call; the parent's pid changing says the same.)
        let parent = getppid()
        Thread.detachNewThread {
            while getppid() == parent { usleep(200_000) }
            _exit(3)
        }
        await main(nil)
    }
}

struct Common: ParsableArguments {
    @Option var db: String
    @Option var collector: String?
    @Option(help: "A second collector every event also goes to (a durable CollectorOutput with the id `second`).")
    var secondCollector: String?
    @Option var maxRows: Int?
    @Option(help: "The whole-exchange timeout of one upload request.") var requestTimeoutMs: Int?
    @Option var batchMaxEvents: Int?
    @Option(help: "The upload timer's period (the tests' fast schedule ticks every 50 ms).") var uploadIntervalMs: Int?
    @Flag(help: "Keep the SDK's default upload schedule (batches, thresholds, backoff) instead of the tests' fast one.")
    var sdkDefaults = false
    @Option(help: "Set the consent (granted, pending, denied) and wait until it is saved, before logging.")
    var setConsent: String?
    @Option(help: "Fold the events this pattern matches (rules.aggregate: 60 s windows, the `screen` dimension).")
    var aggregate: String?

    func configuration() -> Configuration {
        var configuration = Configuration(databaseURL: URL(fileURLWithPath: db), appID: "com.example.crash", appVersion: "1.0")
        if let collector, let url = URL(string: collector) {
            configuration.uploadURL = url.appendingPathComponent("v1/events")
            configuration.appKey = "dev-key"
        }
        if !sdkDefaults {
            configuration.upload.interval = 0.05
            configuration.upload.countThreshold = 50
            configuration.upload.batchMaxEvents = 100
            configuration.upload.initialBackoff = 0.02
            configuration.upload.maxBackoff = 0.2
        }
        if let secondCollector, let url = URL(string: secondCollector) {
            configuration.outputs = [CollectorOutput(id: "second", url: url.appendingPathComponent("v1/events"), appKey: "dev-key")]
        }
        if let maxRows { configuration.limits.maxStoredEvents = maxRows }
        if let requestTimeoutMs { configuration.upload.requestTimeout = Double(requestTimeoutMs) / 1_000 }
        if let batchMaxEvents { configuration.upload.batchMaxEvents = batchMaxEvents }
        if let uploadIntervalMs { configuration.upload.interval = Double(uploadIntervalMs) / 1_000 }
        if let aggregate {
            configuration.policyOptions.fallback = try? Policy.parse(Data(
                #"{"version":1,"mode":"active","rules":{"aggregate":[{"pattern":"\#(aggregate)","window_s":60,"dimensions":["screen"]}]}}"#.utf8))
        }
        return configuration
    }
}

/// Appends receipts with one write(2) per line, so a kill leaves at most one partial line.
final class Receipts: @unchecked Sendable {
    // @unchecked: only written from the logger's serial completion queue.
    private let fd: Int32
    init(path: String) { fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0o644) }
    func add(_ id: UUID) {
        let line = Array((id.uuidString.lowercased() + "\n").utf8)
        _ = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
    }
}

/// Logs points and spans until killed; every `.recorded` completion appends the uuid to the receipts.
struct Log: AsyncParsableCommand {
    @OptionGroup var common: Common
    @Option var receipts: String
    @Option(help: "Pause 2 ms after every this many points: the pace, and so how many events a trial leaves to deliver.")
    var pauseEvery = 50

    func run() async throws {
        let logger = try NFLogger(configuration: common.configuration())
        if let text = common.setConsent {
            guard let consent = Consent(rawValue: text) else { throw ValidationError("unknown consent \(text)") }
            await logger.setConsent(consent)
        }
        let receipts = Receipts(path: receipts)
        let keep: LogCompletion = { status in if case .recorded(let id) = status { receipts.add(id) } }
        FileHandle.standardOutput.write(Data("ready\n".utf8))
        var index = 0
        while true {
            logger.logEvent(name: "crash.point", parameters: ["index": index], completion: keep)
            if index % 10 == 0 {
                let span = logger.startEvent(name: "crash.span", parameters: ["index": index], completion: keep)
                if index % 20 == 0 { span.end(completion: keep) }  // the other half may be open when killed
            }
            index += 1
            if index % max(1, pauseEvery) == 0 { try await Task.sleep(for: .milliseconds(2)) }
        }
    }
}

/// Logs frame times the `--aggregate` rule folds, until killed; every folded event appends its
/// aggregate's uuid to the receipts (one line per event).
struct Fold: AsyncParsableCommand {
    @OptionGroup var common: Common
    @Option var receipts: String

    func run() async throws {
        let logger = try NFLogger(configuration: common.configuration())
        let receipts = Receipts(path: receipts)
        let keep: LogCompletion = { status in if case .recorded(let id) = status, status.isAggregated { receipts.add(id) } }
        FileHandle.standardOutput.write(Data("ready\n".utf8))
        var index = 0
        while true {
            logger.logEvent(name: "crash.frame", parameters: ["ms": Double(index % 97) + 0.5, "screen": ["a", "b", "c"][index % 3]],
                            completion: keep)
            index += 1
            if index % 50 == 0 { try await Task.sleep(for: .milliseconds(2)) }
        }
    }
}

/// Delivers everything stored, then prints what the logger knows as JSON and exits.
struct Flush: AsyncParsableCommand {
    @OptionGroup var common: Common

    func run() async throws {
        let logger = try NFLogger(configuration: common.configuration())
        let start = ContinuousClock.now
        var result = await logger.flush()
        // Every durable output's queue, not only the collector's, must be empty.
        func pending(_ result: FlushResult) -> Bool {
            result.remainingEvents > 0 || result.error != nil || result.outputs.values.contains { $0.remainingEvents > 0 || $0.error != nil }
        }
        // Gives up only after 60 s without progress (nothing more delivered), not 60 s in all: a
        // large backlog through a faulty proxy on a loaded machine takes as long as it takes.
        var progressAt = ContinuousClock.now  // not `start`: opening a large database may take a while first
        while pending(result) && ContinuousClock.now - progressAt < .seconds(60) {
            try await Task.sleep(for: .milliseconds(50))
            result = await logger.flush()
            if result.uploadedEvents > 0 { progressAt = .now }  // this flush delivered something
        }
        let diagnostics = await logger.diagnostics()
        await logger.close()
        let remaining = result.remainingEvents + result.outputs.filter { $0.key != "collector" }.values.reduce(0) { $0 + $1.remainingEvents }
        // Why it stopped, when it did not finish: the test prints this line with its failure.
        let summary: [String: Any] = [
            "remaining": remaining, "uploaded": diagnostics.uploadedEvents, "pruned": diagnostics.prunedEvents,
            "stored_rows": diagnostics.storedPointEvents + diagnostics.storedSpanEvents,
            "retried": diagnostics.retriedUploads, "quarantined": diagnostics.quarantinedEvents,
            "seconds": Double((ContinuousClock.now - start).components.seconds), "error": result.error.map { "\($0)" } ?? "",
        ]
        let line = (try? JSONSerialization.data(withJSONObject: summary, options: [.sortedKeys])) ?? Data("{}".utf8)
        print(String(decoding: line, as: UTF8.self))
        if remaining > 0 { throw ExitCode.failure }
    }
}

/// Logs under a file-size limit (a full disk), then lifts it and logs again.
struct Fill: AsyncParsableCommand {
    @OptionGroup var common: Common
    @Option var fileSizeLimit: Int

    func run() async throws {
        signal(SIGXFSZ, SIG_IGN)  // a write past the limit fails with EFBIG instead of killing us
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit)
        let original = limit.rlim_cur
        limit.rlim_cur = rlim_t(fileSizeLimit)
        setrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit)
        let logger = try NFLogger(configuration: common.configuration())
        var recordedBefore = 0, storageFailures = 0, otherFailures = 0
        for index in 0..<4_000 {
            switch await logger.logEvent(name: "fill.point", parameters: ["index": index, "pad": String(repeating: "x", count: 400)]) {
            case .recorded: recordedBefore += 1
            case .failed(.storage): storageFailures += 1
            default: otherFailures += 1
            }
        }
        limit.rlim_cur = original  // space comes back
        setrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit)
        var recordedAfter = 0
        for index in 0..<100 {
            if (await logger.logEvent(name: "fill.after", parameters: ["index": index])).isRecorded { recordedAfter += 1 }
        }
        let stored = await logger.diagnostics().storedPointEvents
        await logger.close()
        print(#"{"recorded_before":\#(recordedBefore),"storage_failures":\#(storageFailures),"other_failures":\#(otherFailures),"recorded_after":\#(recordedAfter),"stored":\#(stored)}"#)
    }
}

/// Logs N events with the collector unreachable, then reports peak memory as JSON.
struct Offline: AsyncParsableCommand {
    @OptionGroup var common: Common
    @Option var events: Int

    func run() async throws {
        var configuration = common.configuration()
        configuration.upload.interval = 3600  // the collector is down anyway; keep it quiet
        let logger = try NFLogger(configuration: configuration)
        let window = DispatchSemaphore(value: 5_000)
        let done = DispatchSemaphore(value: 0)
        let total = events
        DispatchQueue.global().async {
            for index in 0..<total {
                window.wait()
                logger.logEvent(name: "offline.point", parameters: ["index": index]) { _ in
                    window.signal()
                    if index == total - 1 { done.signal() }
                }
            }
        }
        await withCheckedContinuation { (finished: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async { done.wait(); finished.resume() }
        }
        let diagnostics = await logger.diagnostics()
        await logger.close()
        print(#"{"recorded":\#(diagnostics.recorded),"stored":\#(diagnostics.storedPointEvents),"pruned":\#(diagnostics.prunedEvents),"peak_rss_kb":\#(peakRSSKilobytes())}"#)
    }

    /// This process's own peak RSS: VmHWM, not getrusage's ru_maxrss, which exec carries over
    /// from the spawning process (posix_spawn shares the parent's memory until exec), so a child
    /// of a large test process would report the parent's peak.
    func peakRSSKilobytes() -> Int {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }) ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? .max
    }
}

/// Logs N events, flushes once, lets the uploader deliver the rest on its own schedule (its timer,
/// its backoff, the collector's `Retry-After`; no `flush()` polling that would hurry it), then prints what it cost
/// this process as JSON: wall seconds from the first log call to the last delivery, and the CPU
/// seconds of every thread (`getrusage`), so a test can compare a faulty network with a clean one.
struct Deliver: AsyncParsableCommand {
    @OptionGroup var common: Common
    @Option var events: Int
    @Option var receipts: String?
    @Option(help: "Give up (exit 1, still printing the figures) after this many seconds without progress: nothing more delivered.")
    var deadlineSeconds: Double = 120

    func run() async throws {
        var configuration = common.configuration()
        configuration.limits.maxPendingEvents = max(configuration.limits.maxPendingEvents, events)
        let logger = try NFLogger(configuration: configuration)
        let receipts = receipts.map(Receipts.init(path:))
        let start = ContinuousClock.now
        // About progress, not the machine's speed: a loaded machine delivers slower, not never.
        let patience = Duration.milliseconds(Int(deadlineSeconds * 1000))
        let window = DispatchSemaphore(value: 5_000)
        let total = events
        await withCheckedContinuation { (logged: CheckedContinuation<Void, Never>) in
            DispatchQueue.global().async {
                for index in 0..<total {
                    window.wait()
                    logger.logEvent(name: "deliver.point", parameters: ["index": index, "screen": "home"]) { status in
                        if case .recorded(let id) = status { receipts?.add(id) }
                        window.signal()
                        if index == total - 1 { logged.resume() }
                    }
                }
                if total == 0 { logged.resume() }
            }
        }
        // As an app going to the background would: send what is stored now; the uploader's own
        // schedule retries whatever fails.
        let flushed = await logger.flush()
        var elapsed = ContinuousClock.now - start
        var diagnostics = await logger.diagnostics()
        if flushed.remainingEvents > 0 || flushed.error != nil {
            // Looks that grow sparser (50 ms up to a second): each one counts rows in SQLite,
            // which a tight loop would add to the very CPU time this measures.
            var pause = 50.0
            var progressAt = start
            while diagnostics.waitingForUpload > 0 && ContinuousClock.now - progressAt < patience {
                try await Task.sleep(for: .milliseconds(Int(pause)))
                pause = min(pause * 1.25, 1_000)
                let uploaded = diagnostics.uploadedEvents
                diagnostics = await logger.diagnostics()
                if diagnostics.uploadedEvents > uploaded { progressAt = .now }
            }
            elapsed = ContinuousClock.now - start
        }
        await logger.close()
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
        let wall = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print(#"{"recorded":\#(diagnostics.recorded),"remaining":\#(diagnostics.waitingForUpload),"uploaded":\#(diagnostics.uploadedEvents),"batches":\#(diagnostics.uploadedBatches),"retried":\#(diagnostics.retriedUploads),"seconds":\#(wall),"cpu_user":\#(seconds(usage.ru_utime)),"cpu_system":\#(seconds(usage.ru_stime)),"cpu":\#(seconds(usage.ru_utime) + seconds(usage.ru_stime))}"#)
        if diagnostics.waitingForUpload > 0 { throw ExitCode.failure }
    }
}
