import CollectorTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import nflog_demo

/// An executable run to its end (or stopped at `cap`, which only bounds a hang), its standard
/// output and errors kept apart.
struct FinishedRun {
    let exited: Bool
    let status: Int32
    let output: String
    let errors: String
    var lines: [String] { output.split(separator: "\n").map(String.init) }

    static func of(_ name: String, _ arguments: [String], in scratch: TemporaryDirectory, cap: Double) async throws -> FinishedRun {
        let tag = UUID().uuidString
        let outURL = scratch.url.appendingPathComponent("\(name)-\(tag).out"), errURL = scratch.url.appendingPathComponent("\(name)-\(tag).err")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let process = ChildProcess()
        process.executableURL = Executables.url(name)
        process.arguments = arguments
        process.standardOutput = try FileHandle(forWritingTo: outURL)
        process.standardError = try FileHandle(forWritingTo: errURL)
        try process.run()
        let exited = await Executables.waitForExit(process, seconds: cap)
        if !exited {
            process.terminate()
            _ = await Executables.waitForExit(process, seconds: 30)
        }
        let output = (try? String(contentsOf: outURL, encoding: .utf8)) ?? ""
        let errors = (try? String(contentsOf: errURL, encoding: .utf8)) ?? ""
        return FinishedRun(exited: exited, status: exited ? process.terminationStatus : -1, output: output, errors: errors)
    }
}

/// A running `nflog-collector serve --port 0` or `nflog-fault-proxy`, and the URL it printed first.
struct Listening {
    let process: ChildProcess
    let output: Pipe
    let url: String

    static func start(_ name: String, _ arguments: [String]) async throws -> Listening {
        let started = try Executables.start(name, arguments)
        let first = await Child.firstLine(of: started.output)
        guard first.hasPrefix("listening on ") else {
            if started.process.isRunning { started.process.terminate() }
            throw DemoTestError("\(name) said '\(first)' first, not 'listening on URL'")
        }
        return Listening(process: started.process, output: started.output, url: String(first.dropFirst("listening on ".count)))
    }

    func stop() async {
        if process.isRunning { process.terminate() }
        _ = await Executables.waitForExit(process, seconds: 30)
    }
}

struct DemoTestError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

@Suite("The demo: DEMO.md's walk-through, errors that say what to do, output that adds up")
struct DemoTests {
    static let policies = Executables.repositoryRoot.appendingPathComponent("Policies").path

    @Test("DEMO.md's fault-proxy walk-through (serve, nflog-fault-proxy --rate 0.3 --faults dropAfterUpstream,stall, nflog-demo --collector PROXY) exits 0: every event at the collector exactly once")
    func faultProxyWalkThrough() async throws {
        let scratch = TemporaryDirectory()
        let collector = try await Listening.start("nflog-collector", [
            "serve", "--port", "0", "--db", scratch.url.appendingPathComponent("c.sqlite").path, "--policies", Self.policies])
        let proxy: Listening
        do {
            proxy = try await Listening.start("nflog-fault-proxy", ["--upstream", collector.url, "--rate", "0.3", "--faults", "dropAfterUpstream,stall", "--trace"])
        } catch {
            await collector.stop()
            throw error
        }
        // Fewer events than DEMO.md's 20,000, for the suite's time; the same flags and faults.
        let demo = try await FinishedRun.of("nflog-demo", ["--collector", proxy.url, "--events", "3000"], in: scratch, cap: 1_200)
        proxy.process.terminate()
        let counts = await Child.offPool { proxy.output.fileHandleForReading.readDataToEndOfFile() }
        await proxy.stop()
        await collector.stop()

        #expect(demo.exited && demo.status == 0, "exit \(demo.status)\n\(demo.output)")
        let verdict = demo.lines.last ?? ""
        #expect(verdict.hasPrefix("OK: all ") && verdict.contains("exactly once"), "\(demo.output)")
        // The proxy did fault the run: the walk-through is about riding that out.
        let last = String(decoding: counts, as: UTF8.self).split(separator: "\n").last.map(String.init) ?? ""
        let faults = (try? JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any])?["faults"] as? [String: Int] ?? [:]
        #expect(faults.values.reduce(0, +) > 0 && Set(faults.keys).isSubset(of: ["dropAfterUpstream", "stall"]), "the proxy said \(last)")
    }

    @Test("DEMO.md's sample report (scripts/demo-sample) has the shape of a real run, and the numbers the seed decides")
    func sampleMatchesARun() async throws {
        let doc = try String(contentsOf: Executables.repositoryRoot.appendingPathComponent("docs/DEMO.md"), encoding: .utf8)
        let start = try #require(doc.range(of: "<!-- demo-sample:start -->\n```\n"), "no demo-sample block in docs/DEMO.md")
        let end = try #require(doc.range(of: "\n```\n<!-- demo-sample:end -->", range: start.upperBound..<doc.endIndex))
        let sample = doc[start.upperBound..<end.lowerBound].split(separator: "\n").map(String.init)
        let run = try await FinishedRun.of("nflog-demo", [], in: TemporaryDirectory(), cap: 600)
        #expect(run.exited && run.status == 0, "exit \(run.status): \(run.output)")
        let lines = run.lines
        #expect(lines.map(Self.shape) == sample.map(Self.shape), "scripts/demo-sample regenerates the sample; a real run printed:\n\(run.output)")
        // Decided by the seed alone: the header's counts and the SDK's line, but for how many
        // aggregates the folds went into (a suspend closes one open for a second: timing).
        for prefix in ["NFLogger ", "SDK: "] {
            let real = lines.first { $0.hasPrefix(prefix) }.map(Self.seeded), documented = sample.first { $0.hasPrefix(prefix) }.map(Self.seeded)
            #expect(real != nil && real == documented, "run: \(real ?? "none")\nDEMO.md: \(documented ?? "none")")
        }
    }

    /// A line with its numbers, read token and ETag left out.
    static func shape(_ line: String) -> String {
        line.replacing(#/nfr_\S+/#, with: "nfr_…").replacing(#/"[0-9a-f]{32}"/#, with: "ETAG").replacing(#/\d+(\.\d+)?/#, with: "#")
    }

    /// A line with only what timing decides left out: the collector's port, the aggregates' count.
    static func seeded(_ line: String) -> String {
        line.replacing(#/127\.0\.0\.1:\d+/#, with: "127.0.0.1:PORT").replacing(#/folded into \d+ aggregates/#, with: "folded into # aggregates")
    }

    @Test("--collector where nothing listens: refused at once, naming the URL and how to start a collector")
    func nothingListening() async throws {
        let scratch = TemporaryDirectory()
        let port = try ReservedPort()  // bound, not listening: a connection is refused
        let url = "http://127.0.0.1:\(port.port)"
        let run = try await FinishedRun.of("nflog-demo", ["--collector", url], in: scratch, cap: 60)
        #expect(run.exited, "still running after 60 s: \(run.errors)")
        #expect(run.status != 0)
        #expect(run.errors.contains("nothing is listening at \(url)") && run.errors.contains("connection refused")
                && run.errors.contains("nflog-collector serve"), "\(run.errors)")
        #expect(!run.output.contains("OK"))
        port.release()
    }

    @Test("--collector https://… with a self-signed certificate and no --pin-cert: refused at once, naming the URL and --pin-cert")
    func untrustedCertificate() async throws {
        let scratch = TemporaryDirectory()
        let cert = scratch.url.appendingPathComponent("tls.pem").path, key = scratch.url.appendingPathComponent("tls.key").path
        let made = try await Executables.run("nflog-collector", ["tls-cert", "--cert", cert, "--key", key])
        #expect(made.status == 0)
        let collector = try await Listening.start("nflog-collector", [
            "serve", "--port", "0", "--db", scratch.url.appendingPathComponent("tls.sqlite").path, "--tls-cert", cert, "--tls-key", key])
        let run = try await FinishedRun.of("nflog-demo", ["--collector", collector.url], in: scratch, cap: 60)
        // Pinned to another certificate: refused too, naming the pinned file.
        let other = scratch.url.appendingPathComponent("other.pem").path
        _ = try await Executables.run("nflog-collector", ["tls-cert", "--cert", other, "--key", scratch.url.appendingPathComponent("other.key").path])
        let pinned = try await FinishedRun.of("nflog-demo", ["--collector", collector.url, "--pin-cert", other], in: scratch, cap: 60)
        await collector.stop()

        #expect(run.exited && run.status != 0, "exit \(run.status): \(run.errors)")
        #expect(run.errors.contains("the collector at \(collector.url)") && run.errors.contains("--pin-cert FILE")
                && run.errors.contains("CERTIFICATE_VERIFY_FAILED"), "\(run.errors)")
        #expect(pinned.exited && pinned.status != 0, "exit \(pinned.status): \(pinned.errors)")
        #expect(pinned.errors.contains("--pin-cert \(other)") && pinned.errors.contains("not trusted") && pinned.errors.contains("pinned certificates"), "\(pinned.errors)")
    }

    @Test("--policy FILE the SDK would refuse: refused at start with the file's path and the parser's reason")
    func invalidPolicy() async throws {
        let scratch = TemporaryDirectory()
        let bad = scratch.url.appendingPathComponent("bad.json")
        try Data(#"{"version": 1, "mode": "sometimes"}"#.utf8).write(to: bad)
        let run = try await FinishedRun.of("nflog-demo", ["--policy", bad.path], in: scratch, cap: 60)
        #expect(run.exited && run.status != 0, "exit \(run.status): \(run.output)")
        #expect(run.errors.contains("the policy \(bad.path) is not valid") && run.errors.contains("unknown policy mode \"sometimes\""), "\(run.errors)")
        let missing = try await FinishedRun.of("nflog-demo", ["--policy", scratch.url.appendingPathComponent("missing.json").path], in: scratch, cap: 60)
        #expect(missing.exited && missing.status != 0 && missing.errors.contains("cannot read the policy"), "\(missing.errors)")
    }

    @Test("The report adds up: calls recorded = events + span ends + folded; the header's sessions are the report's; --mode disabled says why a call failed, if one did")
    func outputAddsUp() async throws {
        let scratch = TemporaryDirectory()
        let run = try await FinishedRun.of("nflog-demo", ["--sessions", "4", "--events", "400", "--json"], in: scratch, cap: 600)
        #expect(run.exited && run.status == 0, "exit \(run.status): \(run.errors)")
        let summary = try #require(try JSONSerialization.jsonObject(with: Data((run.lines.last ?? "").utf8)) as? [String: Any], "\(run.output)")
        let recorded = summary["recorded"] as? Int ?? -1, spanEnds = summary["span_ends"] as? Int ?? -1
        let aggregated = summary["aggregated"] as? Int ?? -1
        let events = try #require(run.errors.split(separator: "\n").first { $0.hasPrefix("SDK: ") }, "\(run.errors)")
        #expect(events.contains("SDK: \(recorded) calls recorded (") && events.contains(" span ends"), "\(events)")
        let eventCount = Int(events.split(separator: "(")[1].split(separator: " ")[0]) ?? -1
        #expect(recorded == eventCount + spanEnds + aggregated, "\(events)")
        let sessions = summary["sdk_sessions"] as? Int ?? -1
        let report = summary["collector"] as? [String: Any]
        #expect((report?["sessions"] as? [String: Any])?["count"] as? Int == sessions, "\(report?["sessions"] ?? "no sessions")")
        #expect(run.errors.contains("4 foreground periods in \(sessions) sessions"))

        let disabled = try await FinishedRun.of("nflog-demo", ["--mode", "disabled", "--sessions", "2", "--events", "200"], in: scratch, cap: 600)
        let line = disabled.lines.first { $0.hasPrefix("SDK: ") } ?? ""
        #expect(line.contains(" 0 failed") || line.contains(" failed ("), "a failure without its reason: \(line)")
    }

    @Test("--encryption-key-file: no plain-text JSON-lines output beside the sealed database, and the Outputs line says why")
    func encryptionLeavesOutTheFiles() async throws {
        let scratch = TemporaryDirectory()
        let key = scratch.url.appendingPathComponent("events.key")
        try Data((0..<32).map { _ in UInt8.random(in: 0...255) }).write(to: key)
        let db = scratch.url.appendingPathComponent("demo/events.sqlite")
        let run = try await FinishedRun.of("nflog-demo", ["--encryption-key-file", key.path, "--db", db.path, "--sessions", "2", "--events", "200"],
                                           in: scratch, cap: 600)
        #expect(run.exited && run.status == 0, "exit \(run.status): \(run.output)")
        let outputs = run.lines.first { $0.hasPrefix("Outputs: ") } ?? ""
        #expect(outputs.contains("no JSON-lines file output") && outputs.contains("plain text"), "\(run.output)")
        #expect(!FileManager.default.fileExists(atPath: db.deletingLastPathComponent().appendingPathComponent("jsonl").path))
        let plain = try await FinishedRun.of("nflog-demo", ["--db", scratch.url.appendingPathComponent("plain/events.sqlite").path, "--sessions", "2", "--events", "200"],
                                             in: scratch, cap: 600)
        #expect(plain.lines.contains { $0.hasPrefix("Outputs: ") && $0.contains("lines of plain-text JSON in ") }, "\(plain.output)")
    }
}

@Suite("The demo's delivery wait: about progress, not about the machine's speed")
struct DemoDeliveryPatienceTests {
    let patience = DeliveryPatience(quiet: .seconds(60), failedAttempts: 3, limit: .seconds(600))

    @Test("However long the run took before, the wait starts when delivery does, and a delivery restarts it")
    func countsFromProgress() {
        // After a simulation of ten minutes: the wait still begins now.
        let start = ContinuousClock.now + .seconds(600)
        var watch = ProgressWatch(patience: patience, delivered: 100, retries: 0, now: start)
        let early = watch.keepWaiting(delivered: 100, retries: 5, now: start + .seconds(59))
        let delivered = watch.keepWaiting(delivered: 120, retries: 9, now: start + .seconds(90))
        let quietAgain = watch.keepWaiting(delivered: 120, retries: 20, now: start + .seconds(149))
        let givenUp = watch.keepWaiting(delivered: 120, retries: 20, now: start + .seconds(150))
        #expect(early && delivered && quietAgain && !givenUp)
    }

    @Test("Quiet is not enough to give up: it takes failed attempts too, so slow attempts on a slow machine still get their tries")
    func needsFailedAttempts() {
        let start = ContinuousClock.now
        var watch = ProgressWatch(patience: patience, delivered: 0, retries: 4, now: start)
        let oneFailure = watch.keepWaiting(delivered: 0, retries: 5, now: start + .seconds(120))
        let twoFailures = watch.keepWaiting(delivered: 0, retries: 6, now: start + .seconds(300))
        let threeFailures = watch.keepWaiting(delivered: 0, retries: 7, now: start + .seconds(301))
        #expect(oneFailure && twoFailures && !threeFailures)
        var stuck = ProgressWatch(patience: patience, delivered: 0, retries: 0, now: start)
        let beforeLimit = stuck.keepWaiting(delivered: 0, retries: 0, now: start + .seconds(599))
        let atLimit = stuck.keepWaiting(delivered: 0, retries: 0, now: start + .seconds(600))
        #expect(beforeLimit && !atLimit, "the limit bounds a wait in which nothing fails either")
    }

    @Test("An offline period comes first: the quiet minute starts when the network is back")
    func offlineFirst() {
        let start = ContinuousClock.now
        var watch = ProgressWatch(patience: patience, delivered: 0, retries: 0, now: start, notBefore: start + .seconds(120))
        let offline = watch.keepWaiting(delivered: 0, retries: 50, now: start + .seconds(170))
        let quietMinute = watch.keepWaiting(delivered: 0, retries: 50, now: start + .seconds(180))
        #expect(offline && !quietMinute)
    }
}
