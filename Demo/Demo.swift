import ArgumentParser
import Foundation
import NFLogger

/// `nflog-demo`: logs point events and spans through the SDK into a local database and prints
/// what became of each call.
@main
struct Demo: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "nflog-demo",
        abstract: "Exercise the NFLogger SDK: log point events and spans into a local SQLite database and show each outcome.")

    @Option(name: .long, help: "Keep the database at this path (default: a fresh temporary directory).")
    var db: String?

    @Option(name: .long, help: "The mode to start in: disabled, active or specific.")
    var mode: ModeOption = .active

    @Option(name: .long, help: "After the walkthrough, log this many extra point events as fast as possible and report the rate at which they are committed (and delivered, with --collector).")
    var events: Int = 0

    @Option(name: .long, help: "Upload to this running nflog-collector (its base URL, as `serve` prints it).")
    var collector: String?

    @Option(name: .long, help: "The app key for --collector.")
    var appKey: String = "dev-key"

    enum ModeOption: String, ExpressibleByArgument, CaseIterable {
        case disabled, active, specific
    }

    func validate() throws {
        guard events >= 0 else { throw ValidationError("--events must be zero or more") }
        if let collector {
            guard let url = URL(string: collector), url.scheme == "http" || url.scheme == "https", url.host != nil else {
                throw ValidationError("--collector must be an http(s) URL such as http://127.0.0.1:8080")
            }
        }
    }

    func run() async throws {
        let databaseURL: URL
        if let db {
            databaseURL = URL(fileURLWithPath: db)
        } else {
            databaseURL = FileManager.default.temporaryDirectory
                .appendingPathComponent("nflog-demo-\(UUID().uuidString)")
                .appendingPathComponent("events.sqlite")
        }
        var configuration = Configuration(databaseURL: databaseURL, appID: "com.example.nflog-demo", appVersion: NFLogger.sdkVersion)
        configuration.mode = try Self.mode(mode)
        if let collector, let base = URL(string: collector) {
            configuration.uploadURL = base.appendingPathComponent("v1/events")
            configuration.appKey = appKey
        }
        let logger = try NFLogger(configuration: configuration)
        print("NFLogger \(NFLogger.sdkVersion) demo: database \(databaseURL.path), mode \(logger.mode)")

        var report = Report()
        try await walkthrough(logger, &report)
        if events > 0 { await burst(logger, count: events, &report) }

        if collector != nil { await deliver(logger, &report) }
        let diagnostics = await logger.diagnostics()
        await logger.close()
        print("")
        print(diagnostics)
        let expected = report.recorded
        let stored = diagnostics.recorded
        if db == nil { try? FileManager.default.removeItem(at: databaseURL.deletingLastPathComponent()) }
        guard stored == expected else {
            print("FAILED: \(expected) calls reported .recorded to the demo, the SDK counted \(stored)")
            throw ExitCode.failure
        }
        if collector != nil && diagnostics.waitingForUpload > 0 {
            print("FAILED: \(diagnostics.waitingForUpload) events were not delivered")
            throw ExitCode.failure
        }
        guard report.failed == report.failedOnPurpose else {
            print("FAILED: \(report.failed - report.failedOnPurpose) calls failed unexpectedly")
            throw ExitCode.failure
        }
        print("OK: \(report.recorded) recorded, \(report.filtered) filtered, \(report.disabled) disabled, \(report.failed) failed (of which \(report.failedOnPurpose) on purpose)")
    }

    static func mode(_ option: ModeOption) throws -> LogMode {
        switch option {
        case .disabled: .disabled
        case .active: .active
        case .specific: .specific(try EventRules(allow: ["app.**", "screen.*", "ui.**"]))
        }
    }

    struct Report {
        var recorded = 0, filtered = 0, disabled = 0, failed = 0, failedOnPurpose = 0

        mutating func note(_ call: String, _ status: LogStatus, expectFailure: Bool = false) {
            switch status {
            case .recorded: recorded += 1
            case .filtered: filtered += 1
            case .disabled: disabled += 1
            case .failed:
                failed += 1
                if expectFailure { failedOnPurpose += 1 }
            }
            print("  \(call.padding(toLength: 44, withPad: " ", startingAt: 0)) → \(status)")
        }
    }

    /// A short, scripted session of an app: launch, a screen, taps, a request, a form, mistakes.
    func walkthrough(_ logger: NFLogger, _ report: inout Report) async throws {
        print("\nA session:")
        report.note("logEvent app.launch", await logger.logEvent(name: "app.launch", type: "lifecycle", parameters: ["cold": true]))
        let (screen, screenStatus) = await logger.startEvent(name: "screen.home", type: "screen")
        report.note("startEvent screen.home", screenStatus)
        for button in ["search", "cart", "profile"] {
            report.note("logEvent ui.tap {button: \(button)}", await logger.logEvent(name: "ui.tap", type: "interaction", parameters: ["button": button]))
        }
        let (request, requestStatus) = await logger.startEvent(name: "net.request", type: "network", parameters: ["method": "GET", "path": "/cart"])
        report.note("startEvent net.request", requestStatus)
        try? await Task.sleep(for: .milliseconds(25))
        report.note("end net.request {status: 200}", await request.end(parameters: ["status": 200, "bytes": 5120]))
        let (form, formStatus) = await logger.startEvent(name: "form.signup", type: "form")
        report.note("startEvent form.signup", formStatus)
        try? await Task.sleep(for: .milliseconds(10))
        report.note("endEvent(id:) form.signup {completed}", await logger.endEvent(id: form.id, parameters: ["completed": true]))
        report.note("end screen.home", await screen.end())

        print("\nMistakes the SDK refuses (nothing is stored):")
        report.note("logEvent \"ui tap\" (space in name)", await logger.logEvent(name: "ui tap"), expectFailure: true)
        report.note("logEvent ui.tap {at: Date()}", await logger.logEvent(name: "ui.tap", parameters: ["at": Date()]), expectFailure: true)
        report.note("logEvent ui.tap {ratio: NaN}", await logger.logEvent(name: "ui.tap", parameters: ["ratio": Double.nan]), expectFailure: true)
        report.note("end form.signup again", await form.end(), expectFailure: true)

        let original = logger.mode
        print("\nMode switches at runtime:")
        logger.mode = .specific(try EventRules(allow: ["ui.**"]))
        report.note("specific(ui.**): logEvent ui.tap", await logger.logEvent(name: "ui.tap", parameters: ["button": "buy"]))
        report.note("specific(ui.**): logEvent net.error", await logger.logEvent(name: "net.error"))
        logger.mode = .disabled
        report.note("disabled: logEvent ui.tap", await logger.logEvent(name: "ui.tap"))
        logger.mode = original

        logger.suspend()
        logger.resume()
    }

    /// Uploads everything recorded, retrying until the collector has it all (or 60 s pass).
    func deliver(_ logger: NFLogger, _ report: inout Report) async {
        let start = ContinuousClock.now
        var result = await logger.flush()
        while (result.remainingEvents > 0 || result.error != nil) && ContinuousClock.now - start < .seconds(60) {
            try? await Task.sleep(for: .milliseconds(50))
            result = await logger.flush()
        }
        print("\nDelivery to \(collector ?? ""): \(result.remainingEvents == 0 ? "everything delivered" : "\(result.remainingEvents) not delivered (\(result.error.map { "\($0)" } ?? "?"))") after \(Self.format(ContinuousClock.now - start)) of flushing")
    }

    static func format(_ duration: Duration) -> String {
        String(format: "%.3f s", Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18)
    }

    /// Logs `count` events from one thread as fast as the SDK commits them, keeping at most
    /// `window` calls in flight (below the SDK's in-memory bound, as a well-behaved producer does),
    /// and times first call to last commit.
    func burst(_ logger: NFLogger, count: Int, _ report: inout Report) async {
        let window = min(10_000, logger.configuration.limits.maxPendingEvents / 2)
        print("\nA burst of \(count) point events (at most \(window) in flight):")
        let tally = BurstTally(expected: count)
        let start = ContinuousClock.now
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            tally.onFinished = { done.resume() }
            let inFlight = DispatchSemaphore(value: window)
            DispatchQueue.global().async {
                for index in 0..<count {
                    inFlight.wait()
                    logger.logEvent(name: "bench.event", type: "bench", parameters: ["index": index, "screen": "home"]) {
                        tally.add($0)
                        inFlight.signal()
                    }
                }
            }
        }
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let counts = tally.counts
        report.recorded += counts.recorded
        report.failed += counts.failed
        print("  \(counts.recorded) recorded, \(counts.failed) failed in \(String(format: "%.3f", seconds)) s: \(Int(Double(counts.recorded) / seconds)) events/s from first call to last commit")
        if collector != nil {
            var result = await logger.flush()
            while (result.remainingEvents > 0 || result.error != nil) && ContinuousClock.now - start < .seconds(120) {
                try? await Task.sleep(for: .milliseconds(20))
                result = await logger.flush()
            }
            let total = ContinuousClock.now - start
            let seconds = Double(total.components.seconds) + Double(total.components.attoseconds) / 1e18
            if result.remainingEvents == 0 {
                print("  all \(count) delivered to the collector \(Self.format(total)) after the first call: \(Int(Double(count) / seconds)) events/s end to end")
            } else {
                print("  \(result.remainingEvents) still waiting after \(Self.format(total)): \(result.error.map { "\($0)" } ?? "")")
            }
        }
    }
}

/// Counts a burst's completions; the last one wakes the demo.
final class BurstTally: @unchecked Sendable {
    // @unchecked: the counters are read and written only under `lock`.
    private let lock = NSLock()
    private var recorded = 0, failed = 0, remaining: Int
    var onFinished: (@Sendable () -> Void)?

    init(expected: Int) { remaining = expected }

    func add(_ status: LogStatus) {
        lock.lock()
        if status.isRecorded { recorded += 1 } else { failed += 1 }
        remaining -= 1
        let finished = remaining == 0
        lock.unlock()
        if finished { onFinished?() }
    }

    var counts: (recorded: Int, failed: Int) {
        lock.lock(); defer { lock.unlock() }
        return (recorded, failed)
    }
}
